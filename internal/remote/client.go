package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// IfGraphCommitHeader carries the expected branch head of a conditional write.
const IfGraphCommitHeader = "Omnigraph-If-Graph-Commit"

// Client talks to one server, and optionally one graph on it.
type Client struct {
	base  string // server URL without trailing slash
	graph string
	token string
	http  *http.Client
}

// New returns a client for the server at baseURL. graph may be "" for
// server-level calls (Graphs).
func New(baseURL, graph, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), graph: graph, token: token, http: hc}
}

// Graph returns the selected graph id.
func (c *Client) Graph() string { return c.graph }

// WithGraph returns a copy of the client addressing graph.
func (c *Client) WithGraph(graph string) *Client {
	cp := *c
	cp.graph = graph
	return &cp
}

// URL is the server-side address of the selected graph (for messages).
func (c *Client) URL() string {
	if c.graph == "" {
		return c.base
	}
	return c.base + "/graphs/" + url.PathEscape(c.graph)
}

// ErrorOutput is the server's error body (spec/surfaces.md §2.5). Fields
// the CLI does not interpret are kept raw in Extra.
type ErrorOutput struct {
	Error               string               `json:"error"`
	Code                string               `json:"code,omitempty"`
	PreconditionFailure *PreconditionFailure `json:"precondition_failure,omitempty"`
	MergeConflicts      json.RawMessage      `json:"merge_conflicts,omitempty"`
	Extra               map[string]json.RawMessage
}

// PreconditionFailure is a lost conditional write (HTTP 412).
type PreconditionFailure struct {
	Expected string  `json:"expected"`
	Actual   *string `json:"actual,omitempty"`
}

// Error is a non-2xx response.
type Error struct {
	Status int
	Body   *ErrorOutput // nil when the body is not an ErrorOutput
	Raw    string
}

func (e *Error) Error() string {
	if e.Body != nil && e.Body.Error != "" {
		return e.Body.Error
	}
	return fmt.Sprintf("server returned %d: %s", e.Status, strings.TrimSpace(e.Raw))
}

// ErrUnreachable wraps transport failures (connection refused, DNS, TLS).
var ErrUnreachable = errors.New("server unreachable")

func decodeError(status int, raw []byte) *Error {
	e := &Error{Status: status, Raw: string(raw)}
	var body ErrorOutput
	if json.Unmarshal(raw, &body) == nil && body.Error != "" {
		var all map[string]json.RawMessage
		_ = json.Unmarshal(raw, &all)
		for _, k := range []string{"error", "code", "precondition_failure", "merge_conflicts"} {
			delete(all, k)
		}
		if len(all) > 0 {
			body.Extra = all
		}
		e.Body = &body
	}
	return e
}

// request is one call.
type request struct {
	method   string
	path     string // relative to the graph ("" prefix for server-level paths starting with "/")
	query    url.Values
	body     io.Reader
	ctype    string
	ifCommit string
	server   bool // path is server-level (no /graphs/{id} prefix)
	header   http.Header
	// noRedirect returns a 3xx response as is instead of following it
	// (an external blob's Location is reported, never fetched).
	noRedirect bool
}

func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	u := c.base
	if !r.server {
		if c.graph == "" {
			return nil, errors.New("no graph selected: give --graph ID")
		}
		u += "/graphs/" + url.PathEscape(c.graph)
	}
	u += r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, r.body)
	if err != nil {
		return nil, err
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if r.ifCommit != "" {
		req.Header.Set(IfGraphCommitHeader, r.ifCommit)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	hc := c.http
	if r.noRedirect {
		cp := *hc
		cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		hc = &cp
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrUnreachable, r.method, u, err)
	}
	if resp.StatusCode/100 != 2 && !(r.noRedirect && resp.StatusCode/100 == 3) {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, decodeError(resp.StatusCode, raw)
	}
	return resp, nil
}

// callRaw is call keeping the response verbatim.
func (c *Client) callRaw(ctx context.Context, r request, in any) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, r, in, &out)
	return out, err
}

// branchQuery is the ?branch= of a read that defaults to main ("" sends none).
func branchQuery(branch string) url.Values {
	q := url.Values{}
	if branch != "" {
		q.Set("branch", branch)
	}
	return q
}

// call sends a JSON body (nil = none) and decodes a JSON response into out
// (a json.RawMessage keeps it verbatim).
func (c *Client) call(ctx context.Context, r request, in, out any) error {
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		r.body, r.ctype = bytes.NewReader(b), "application/json"
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode %s %s response: %w", r.method, r.path, err)
	}
	return nil
}
