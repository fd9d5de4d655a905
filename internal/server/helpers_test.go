package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/server/servertest"
)

const testSchema = fixture.SocialSchema

const (
	findPerson = `query find($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }`
	allPeople  = `query people() { match { $p: Person } return { $p.name } order { $p.name asc } }`
	addPerson  = `query add($name: String, $age: I32) { insert Person { name: $name, age: $age } }`
	setAge     = `query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }`
)

// newGraph creates a loaded graph in a temp dir and returns its handle.
func newGraph(t testing.TB) *omnigraph.Graph {
	t.Helper()
	return servertest.SocialGraph(t, filepath.Join(t.TempDir(), "g.omni"), "test")
}

var testStored = []StoredQuery{
	{Name: "find", Source: findPerson},
	{Name: "add", Source: addPerson, Description: "Add a person."},
	{Name: "people", Source: allPeople},
}

// recorder is an Authorizer that records every question and answers from
// a deny set ("action" or "action@branch").
type recorder struct {
	mu   sync.Mutex
	seen []AuthzRequest
	deny map[string]bool
}

func (r *recorder) Authorize(_ context.Context, req AuthzRequest) (Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req)
	if r.deny[string(req.Action)] || r.deny[string(req.Action)+"@"+req.Branch] {
		return Decision{Allowed: false, RuleID: "test-deny"}, nil
	}
	return Decision{Allowed: true, RuleID: "test-allow"}, nil
}

func (r *recorder) requests() []AuthzRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]AuthzRequest(nil), r.seen...)
}

type testServer struct {
	t   testing.TB
	s   *Server
	hs  *httptest.Server
	g   *omnigraph.Graph
	tok string // default bearer token ("" on an open server)
}

// open starts an open (unauthenticated) server on a fresh graph.
func open(t testing.TB, mod ...func(*Config)) *testServer {
	return start(t, Config{Unauthenticated: true}, mod...)
}

func start(t testing.TB, cfg Config, mod ...func(*Config)) *testServer {
	t.Helper()
	g := newGraph(t)
	cfg.Graphs = append([]GraphConfig{{ID: "g", Graph: g, URI: g.URI(), Queries: testStored}}, cfg.Graphs...)
	for _, m := range mod {
		m(&cfg)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	ts := &testServer{t: t, s: s, hs: hs, g: g}
	if len(cfg.Tokens) > 0 {
		ts.tok = cfg.Tokens[0].Token
	}
	return ts
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) errOut(t testing.TB) ErrorOutput {
	t.Helper()
	var e ErrorOutput
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" {
		t.Fatalf("status %d: body is not an ErrorOutput: %q", r.status, r.body)
	}
	return e
}

func (r resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

// req sends a request. body may be a string (sent as is) or a value
// (JSON-encoded); JSON content type is set for non-nil bodies unless hdr
// sets one. hdr pairs are "Name", "value".
func (ts *testServer) req(method, path string, body any, hdr ...string) resp {
	ts.t.Helper()
	var rd io.Reader
	isJSON := false
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
		isJSON = true
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
		isJSON = true
	}
	r, err := http.NewRequest(method, ts.hs.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if isJSON {
		r.Header.Set("Content-Type", "application/json")
	}
	if ts.tok != "" {
		r.Header.Set("Authorization", "Bearer "+ts.tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			r.Header.Del(hdr[i])
		} else {
			r.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := ts.hs.Client().Do(r)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// head returns the commit id of a branch head.
func (ts *testServer) head(branch string) string {
	ts.t.Helper()
	log, err := ts.g.Log(context.Background(), branch, 1)
	if err != nil || len(log) == 0 {
		ts.t.Fatalf("log %s: %v", branch, err)
	}
	return log[0].ID
}
