package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/console"
)

// route is one row of the route table: it drives the ServeMux pattern,
// the handler pipeline and the route's /openapi.json operation, so the
// served API and its document cannot drift.
type route struct {
	method  string
	path    string // full path pattern, e.g. "/graphs/{graph_id}/query"
	opID    string
	tag     string
	summary string
	// public routes skip bearer auth (healthz, openapi).
	public bool
	// perGraph routes resolve {graph_id} to a served graph.
	perGraph bool
	// gated routes are admission-controlled writes.
	gated bool
	// conditional routes require Omnigraph-If-Graph-Commit; every other
	// route refuses it.
	conditional bool
	// body is the request body: a JSON type (a zero value, for the
	// schema), or ndjsonBody; nil for no body. optionalBody accepts an
	// empty body.
	body         any
	optionalBody bool
	// loadLimit selects Limits.LoadBodyBytes instead of BodyBytes.
	loadLimit bool
	query     []param
	headers   []param
	// resp is the 200 JSON body type; stream routes set respType instead.
	resp     any
	respType string
	// respAlt is an alternative 200 body (stored-query invoke).
	respAlt any
	// statuses lists the documented error statuses besides 401/403.
	statuses []int
	// successor, when set, marks the route deprecated in favour of it.
	successor string
	handle    func(c *call) (*plan, error)
}

// param is a query or header parameter.
type param struct {
	name     string
	required bool
	repeat   bool
	desc     string
	enum     []string
}

// ndjsonBody marks a raw application/x-ndjson request body.
type ndjsonBody struct{}

// plan is what a handler's parse step decided: the authorization checks
// the request needs and the work to do once they pass (and, for gated
// routes, once admitted). Splitting the two makes the pipeline order
// structural: nothing in run happens before every check has passed.
type plan struct {
	checks []check
	// admit gates the work by per-actor admission even on a route that is
	// not gated as a whole (a stored query that turns out a mutation).
	admit bool
	run   func() error
}

// check is one authorization question. When hidden is set, a denial is
// answered with it instead of a 403 (stored queries: a denied invoke is
// indistinguishable from an unknown name).
type check struct {
	action         Action
	branch, target string
	hidden         error
}

// call is one request in flight.
type call struct {
	s     *Server
	rt    *route
	w     http.ResponseWriter
	r     *http.Request
	reqID string
	actor string // "" on an open server
	g     *graph
	// ifCommit is the Omnigraph-If-Graph-Commit of a conditional route.
	ifCommit string
	log      *slog.Logger
	status   int
	started  time.Time
}

const requestIDHeader = "X-Request-Id"

// buildMux registers every route of the table, a 405 answer for the other
// usual methods on each served path, and a catch-all 404, all with
// ErrorOutput bodies.
func (s *Server) buildMux() *http.ServeMux {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	var paths []string
	for _, rt := range s.routes {
		mux.HandleFunc(rt.method+" "+rt.path, s.serve(rt))
		if _, ok := methods[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		for _, m := range []string{rt.method, http.MethodHead} {
			if (m == rt.method || rt.method == http.MethodGet) && !slices.Contains(methods[rt.path], m) {
				methods[rt.path] = append(methods[rt.path], m)
			}
		}
	}
	for _, p := range paths {
		allow := strings.Join(methods[p], ", ")
		notAllowed := s.serve(&route{path: p, public: true, handle: func(c *call) (*plan, error) {
			c.w.Header().Set("Allow", allow)
			return nil, newAPIError(http.StatusMethodNotAllowed, codeMethodNotAllowed, "method %s not allowed on %s (allowed: %s)", c.r.Method, c.r.URL.Path, allow)
		}})
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if !slices.Contains(methods[p], m) {
				mux.HandleFunc(m+" "+p, notAllowed)
			}
		}
	}
	// The web console: static files, public (they hold no data); the API
	// calls the page makes are authenticated like any other client's.
	ui := console.Handler()
	mux.Handle(console.Prefix, ui)
	mux.Handle(strings.TrimSuffix(console.Prefix, "/"), ui)
	mux.HandleFunc("/", s.serve(&route{path: "/", public: true, handle: func(c *call) (*plan, error) {
		return nil, notFound("no route for %s %s", c.r.Method, c.r.URL.Path)
	}}))
	return mux
}

// serve is the pipeline every request runs, in this order: request id →
// bearer auth → graph resolution → parse → authorization → admission →
// handler. Each step can end the request with an error response.
func (s *Server) serve(rt *route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := &call{s: s, rt: rt, w: w, r: r, started: time.Now()}
		c.reqID = requestID(r.Header.Get(requestIDHeader))
		w.Header().Set(requestIDHeader, c.reqID)
		c.log = s.log.With("request_id", c.reqID)
		defer c.finish()
		if err := c.pipeline(); err != nil {
			c.fail(err)
		}
	}
}

func (c *call) pipeline() error {
	s, rt := c.s, c.rt
	if !rt.public && s.mode != ModeOpen {
		token, ok := bearerToken(c.r.Header.Values("Authorization"))
		if !ok {
			return newAPIError(http.StatusUnauthorized, codeUnauthorized, "missing bearer token")
		}
		actor, ok := s.tokens.actor(token)
		if !ok {
			return newAPIError(http.StatusUnauthorized, codeUnauthorized, "invalid bearer token")
		}
		c.actor = actor
		c.log = c.log.With("actor", actor)
	}
	if rt.perGraph {
		id := c.r.PathValue("graph_id")
		if err := ValidGraphID(id); err != nil {
			return badRequest("%v", err)
		}
		g, ok := s.graphs[id]
		if !ok {
			return notFound("graph '%s' not found", id)
		}
		c.g = g
		c.log = c.log.With("graph", id)
	}
	// The engine-layer decision log (engine_authz.go) joins this request's.
	c.r = c.r.WithContext(context.WithValue(c.r.Context(), callLogKey{}, c.log))
	if err := c.checkQueryParams(); err != nil {
		return err
	}
	if rt.opID != "" {
		var err error
		if c.ifCommit, err = c.conditionalHead(rt.conditional); err != nil {
			return err
		}
	}
	p, err := rt.handle(c)
	if err != nil || p == nil {
		return err
	}
	for _, ck := range p.checks {
		if err := c.authorize(ck); err != nil {
			return err
		}
	}
	if rt.gated || p.admit {
		n := c.r.ContentLength
		if n < 0 {
			n = c.bodyLimit()
		}
		release, refuse := s.adm.acquire(c.admissionKey(), n)
		if refuse != nil {
			return refuse
		}
		defer release()
	}
	return p.run()
}

func (c *call) admissionKey() string {
	if c.actor == "" {
		return "anonymous"
	}
	return c.actor
}

// authorize asks the authorizer one question and logs the decision.
func (c *call) authorize(ck check) error {
	graphID := ""
	if c.g != nil {
		graphID = c.g.id
	}
	req := AuthzRequest{Actor: c.actor, Action: ck.action, Graph: graphID, Branch: ck.branch, TargetBranch: ck.target}
	d, err := c.s.authz.Authorize(c.r.Context(), req)
	if err != nil {
		c.log.Error("authorization failed", "action", string(ck.action), "branch", ck.branch, "target_branch", ck.target, "error", err.Error())
		return fmt.Errorf("policy evaluation: %w", err)
	}
	c.log.Info("authorization", "action", string(ck.action), "branch", ck.branch,
		"target_branch", ck.target, "allowed", d.Allowed, "rule_id", d.RuleID)
	if d.Allowed {
		return nil
	}
	if ck.hidden != nil {
		return ck.hidden
	}
	msg := fmt.Sprintf("actor '%s' may not %s", c.actor, ck.action)
	if ck.branch != "" {
		msg += fmt.Sprintf(" on branch '%s'", ck.branch)
	}
	if ck.target != "" {
		msg += fmt.Sprintf(" targeting branch '%s'", ck.target)
	}
	if graphID != "" {
		msg += fmt.Sprintf(" of graph '%s'", graphID)
	}
	if d.Reason != "" {
		msg += ": " + d.Reason
	}
	return newAPIError(http.StatusForbidden, codeForbidden, "%s", msg)
}

// checkQueryParams refuses query parameters the route does not declare,
// and repeats of a single-valued one.
func (c *call) checkQueryParams() error {
	q, err := urlQuery(c.r.URL.RawQuery)
	if err != nil {
		return err
	}
	for k, vs := range q {
		var p *param
		for i := range c.rt.query {
			if c.rt.query[i].name == k {
				p = &c.rt.query[i]
			}
		}
		if p == nil {
			return badRequest("unknown query parameter '%s'", k)
		}
		if len(vs) > 1 && !p.repeat {
			return badRequest("query parameter '%s' given %d times", k, len(vs))
		}
	}
	for _, p := range c.rt.query {
		if p.required && q.Get(p.name) == "" {
			return badRequest("query parameter '%s' is required", p.name)
		}
	}
	return nil
}

func (c *call) bodyLimit() int64 {
	if c.rt.loadLimit {
		return c.s.limits.LoadBodyBytes
	}
	return c.s.limits.BodyBytes
}

// decodeJSON reads the request body into v: Content-Type must be JSON
// (415 otherwise), the body is capped (413), and it must hold exactly one
// JSON value. With strict, unknown fields are refused. An empty body
// leaves v untouched when the route's body is optional. Each field of need
// must then be non-empty (400 "field 'name' is required" otherwise).
func (c *call) decodeJSON(v any, strict bool, need ...requiredField) error {
	if err := c.decodeBody(v, strict); err != nil {
		return err
	}
	for _, f := range need {
		if *f.value == "" {
			return badRequest("field '%s' is required", f.name)
		}
	}
	return nil
}

// requiredField is a string field of a request body that must be set,
// under its JSON name.
type requiredField struct {
	name  string
	value *string
}

func (c *call) decodeBody(v any, strict bool) error {
	body := http.MaxBytesReader(c.w, c.r.Body, c.bodyLimit())
	ct := c.r.Header.Get("Content-Type")
	if ct == "" && c.rt.optionalBody {
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			return nil
		}
		return newAPIError(http.StatusUnsupportedMediaType, codeBadRequest, "request body requires Content-Type: application/json")
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return newAPIError(http.StatusUnsupportedMediaType, codeBadRequest, "request body requires Content-Type: application/json")
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if c.rt.optionalBody && len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid request body: %v", jsonErrorText(err))
	}
	if dec.More() {
		return badRequest("invalid request body: trailing data after the JSON value")
	}
	return nil
}

func jsonErrorText(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field != "" {
			return fmt.Sprintf("field '%s' must be %s, not %s", ute.Field, jsonKind(ute.Type.Kind().String()), ute.Value)
		}
		return fmt.Sprintf("expected %s, found %s", jsonKind(ute.Type.Kind().String()), ute.Value)
	}
	return err.Error()
}

func jsonKind(k string) string {
	switch k {
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "string", "ptr":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a " + k
}

// json writes a JSON response.
func (c *call) json(status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	c.w.Header().Set("Content-Type", "application/json")
	c.w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	c.writeHeader(status)
	_, _ = c.w.Write(append(b, '\n'))
	return nil
}

func (c *call) writeHeader(status int) {
	if c.rt.successor != "" {
		c.w.Header().Set("Deprecation", "true")
		c.w.Header().Set("Link", "<"+c.rt.successor+`>; rel="successor-version"`)
	}
	c.status = status
	c.w.WriteHeader(status)
}

// fail writes the error response of err, unless a response has already
// started (then the connection is cut so the client sees a truncated
// body, never a well-formed partial one).
func (c *call) fail(err error) {
	status, out := errorResponse(err)
	if c.status != 0 {
		c.log.Error("request failed after the response started", "error", err.Error())
		panic(http.ErrAbortHandler)
	}
	var api *apiError
	if errors.As(err, &api) {
		for k, vs := range api.header {
			for _, v := range vs {
				c.w.Header().Add(k, v)
			}
		}
	}
	if status >= 500 {
		c.log.Error("request failed", "status", status, "error", err.Error())
	}
	if err := c.json(status, out); err != nil {
		c.log.Error("write error response", "error", err.Error())
	}
}

func (c *call) finish() {
	c.log.Debug("request", "method", c.r.Method, "path", c.r.URL.Path, "status", c.status,
		"duration_ms", float64(time.Since(c.started).Microseconds())/1000)
}

// requestID keeps a caller's X-Request-Id when it is short printable
// ASCII, and mints a random one otherwise.
func requestID(h string) string {
	if n := len(h); n > 0 && n <= 128 {
		ok := true
		for i := 0; i < n; i++ {
			if h[i] < 0x21 || h[i] > 0x7e {
				ok = false
				break
			}
		}
		if ok {
			return h
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
