package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnigraph-go/omnigraph/internal/mcp"
	"github.com/omnigraph-go/omnigraph/internal/remote"
	"github.com/omnigraph-go/omnigraph/internal/server"
	"github.com/omnigraph-go/omnigraph/internal/server/servertest"
)

// The tests drive the MCP server with the SDK's own client over both
// transports: Streamable HTTP at POST /graphs/{id}/mcp of an
// omnigraph-server, and an in-memory pipe to the server New builds over a
// network remote.Client (what `omnigraph mcp --server` runs). The stdio
// transport of the binary is tested in internal/cli.

const (
	findPerson = `query find($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }`
	allPeople  = `query people() { match { $p: Person } return { $p.name } order { $p.name asc } }`
	addPerson  = `query add($name: String, $age: I32) { insert Person { name: $name, age: $age } }`
	setAge     = `query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }`
)

var stored = []server.StoredQuery{
	{Name: "find", Source: findPerson, Description: "Find a person by name."},
	{Name: "people", Source: allPeople},
	{Name: "add", Source: addPerson},
	// A stored query whose tool name a built-in holds is renamed.
	{Name: "schema_get", Source: allPeople, Query: "people"},
}

// readerOnly lets the actor "reader" read and invoke stored queries, and
// nothing else; every other actor may do everything.
type readerOnly struct{}

func (readerOnly) Authorize(_ context.Context, r server.AuthzRequest) (server.Decision, error) {
	if r.Actor == "reader" && r.Action != server.ActionRead && r.Action != server.ActionInvokeQuery {
		return server.Decision{Allowed: false, RuleID: "reader-only"}, nil
	}
	return server.Decision{Allowed: true, RuleID: "allow"}, nil
}

// newServer serves a fresh loaded social graph as "social" with tokens
// for "writer" and "reader".
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	ctx := context.Background()
	g := servertest.SocialGraph(t, filepath.Join(t.TempDir(), "g.omni"), "test")
	s, err := server.New(ctx, server.Config{
		Graphs:     []server.GraphConfig{{ID: "social", Graph: g, Queries: stored}},
		Tokens:     []server.Token{{Actor: "writer", Token: "writer-token"}, {Actor: "reader", Token: "reader-token"}},
		Authorizer: readerOnly{},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// bearer adds a bearer token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

type transport struct {
	name    string
	connect func(t *testing.T, ts *httptest.Server, token string) *sdk.ClientSession
}

// eachTransport runs f once per transport, each time against a fresh
// served graph, with a client session of token.
func eachTransport(t *testing.T, token string, f func(t *testing.T, cs *sdk.ClientSession)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f(t, tr.connect(t, newServer(t), token))
		})
	}
}

var transports = []transport{
	{"streamable-http", func(t *testing.T, ts *httptest.Server, token string) *sdk.ClientSession {
		return connect(t, &sdk.StreamableClientTransport{Endpoint: ts.URL + "/graphs/social/mcp",
			HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1})
	}},
	{"in-memory-remote", func(t *testing.T, ts *httptest.Server, token string) *sdk.ClientSession {
		ctx := context.Background()
		srv, err := mcp.New(ctx, remote.New(ts.URL, "social", token, nil), mcp.Options{Graph: "social", Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		st, ct := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		return connect(t, ct)
	}},
}

func connect(t *testing.T, tr sdk.Transport) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "omnigraph-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call runs one tool and returns its structured content, text and result.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (map[string]any, string, *sdk.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v (failures must be tool errors)", tool, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content is not an object: %s", tool, b)
	}
	return out, text, res
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func TestInitializeAndListTools(t *testing.T) {
	eachTransport(t, "writer-token", func(t *testing.T, cs *sdk.ClientSession) {
		info := cs.InitializeResult()
		if info.ServerInfo.Name != "omnigraph" || info.Capabilities.Tools == nil || info.Capabilities.Resources == nil ||
			!strings.Contains(info.Instructions, "'social'") {
			t.Fatalf("initialize: %+v", info)
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		tools := map[string]*sdk.Tool{}
		var names []string
		for _, tl := range res.Tools {
			tools[tl.Name] = tl
			names = append(names, tl.Name)
		}
		// The SDK lists tools sorted by name.
		want := []string{"add", "branches_create", "branches_delete", "branches_list", "branches_merge", "changes_poll",
			"commit_changes", "commits_list", "diff", "find", "load", "mutate", "people", "query", "schema_get", "stored_schema_get"}
		if !slices.Equal(names, want) {
			t.Fatalf("tools = %v, want %v", names, want)
		}
		cases := []struct {
			tool, prop, typ string
			required        bool
		}{
			{"find", "name", "string", true},
			{"find", "branch", "string", false},
			{"find", "snapshot", "string", false},
			{"add", "age", "integer", true},
			{"add", "if_commit", "string", false},
			{"query", "query", "string", true},
			{"load", "data", "string", true},
		}
		for _, c := range cases {
			sch, _ := tools[c.tool].InputSchema.(map[string]any)
			props, _ := sch["properties"].(map[string]any)
			p, _ := props[c.prop].(map[string]any)
			req, _ := sch["required"].([]any)
			if p["type"] != c.typ || slices.Contains(req, any(c.prop)) != c.required {
				t.Errorf("%s.%s: schema %v, required %v", c.tool, c.prop, p, req)
			}
		}
		if _, ok := tools["add"].InputSchema.(map[string]any)["properties"].(map[string]any)["snapshot"]; ok {
			t.Error("a stored mutation offers snapshot")
		}
		if tools["find"].Description != "Find a person by name." || !tools["find"].Annotations.ReadOnlyHint || tools["add"].Annotations.ReadOnlyHint {
			t.Errorf("find: %q %+v; add %+v", tools["find"].Description, tools["find"].Annotations, tools["add"].Annotations)
		}
	})
}

// step is one tool call of a scenario; wantStatus 0 means success.
type step struct {
	name string
	tool string
	args map[string]any
	// lazy, when set, gives args from what earlier steps returned.
	lazy       func() map[string]any
	wantStatus int
	wantCode   string
	check      func(t *testing.T, out map[string]any, text string)
}

func TestEveryTool(t *testing.T) {
	eachTransport(t, "writer-token", func(t *testing.T, cs *sdk.ClientSession) {
		var loadCommit string
		steps := []step{
			{name: "schema", tool: "schema_get", check: func(t *testing.T, out map[string]any, text string) {
				if !strings.Contains(out["schema_source"].(string), "node Person") || !strings.Contains(text, "edge Knows") {
					t.Errorf("schema: %v", out)
				}
			}},
			{name: "read query", tool: "query", args: map[string]any{"query": findPerson, "params": map[string]any{"name": "Alice"}},
				check: func(t *testing.T, out map[string]any, text string) {
					rows := out["rows"].([]any)
					if num(out["row_count"]) != 1 || num(rows[0].(map[string]any)["p.age"]) != 30 ||
						!strings.Contains(text, "find: 1 row") || !strings.Contains(text, `"Alice" | 30`) {
						t.Errorf("query: %v %q", out, text)
					}
				}},
			{name: "stored read", tool: "find", args: map[string]any{"name": "Bob"}, check: func(t *testing.T, out map[string]any, text string) {
				if num(out["row_count"]) != 1 || !strings.Contains(text, `"Bob" | 25`) {
					t.Errorf("find: %v %q", out, text)
				}
			}},
			{name: "stored read without params", tool: "people", check: func(t *testing.T, out map[string]any, _ string) {
				if num(out["row_count"]) != 4 {
					t.Errorf("people: %v", out)
				}
			}},
			{name: "renamed stored query", tool: "stored_schema_get", check: func(t *testing.T, out map[string]any, _ string) {
				if num(out["row_count"]) != 4 {
					t.Errorf("stored_schema_get: %v", out)
				}
			}},
			{name: "create branch", tool: "branches_create", args: map[string]any{"name": "feat"}, check: func(t *testing.T, out map[string]any, text string) {
				if out["name"] != "feat" || out["actor_id"] != "writer" || text != "created branch feat from main" {
					t.Errorf("create: %v %q", out, text)
				}
			}},
			{name: "mutation", tool: "mutate", args: map[string]any{"query": addPerson, "params": map[string]any{"name": "Eve", "age": 50}, "branch": "feat"},
				check: func(t *testing.T, out map[string]any, text string) {
					if num(out["affected_nodes"]) != 1 || out["actor_id"] != "writer" || !strings.Contains(text, "add on feat: 1 node and 0 edges affected; commit ") {
						t.Errorf("mutate: %v %q", out, text)
					}
				}},
			{name: "stored mutation", tool: "add", args: map[string]any{"name": "Frank", "age": 60, "branch": "feat"},
				check: func(t *testing.T, out map[string]any, _ string) {
					if num(out["affected_nodes"]) != 1 || out["branch"] != "feat" {
						t.Errorf("add: %v", out)
					}
				}},
			{name: "load", tool: "load", args: map[string]any{"data": `{"type":"Person","data":{"name":"Gina","age":22}}` + "\n", "branch": "feat", "mode": "append"},
				check: func(t *testing.T, out map[string]any, text string) {
					loadCommit, _ = out["commit"].(map[string]any)["graph_commit_id"].(string)
					if num(out["total_entities"]) != 1 || text != "loaded 1 entity into feat (append); commit "+loadCommit {
						t.Errorf("load: %v %q", out, text)
					}
				}},
			{name: "list branches", tool: "branches_list", check: func(t *testing.T, out map[string]any, text string) {
				if b := out["branches"].([]any); len(b) != 2 || b[0] != "feat" || b[1] != "main" || text != "branches: feat, main" {
					t.Errorf("branches: %v %q", out, text)
				}
			}},
			{name: "diff", tool: "diff", args: map[string]any{"from_branch": "main", "to_branch": "feat"}, check: func(t *testing.T, out map[string]any, text string) {
				if num(out["total"]) != 3 || out["truncated"] != false || !strings.Contains(text, "insert node Person Gina") {
					t.Errorf("diff: %v %q", out, text)
				}
			}},
			{name: "diff truncated", tool: "diff", args: map[string]any{"to_branch": "feat", "limit": 1}, check: func(t *testing.T, out map[string]any, _ string) {
				if num(out["total"]) != 3 || out["truncated"] != true || len(out["changes"].([]any)) != 1 {
					t.Errorf("diff: %v", out)
				}
			}},
			{name: "list commits", tool: "commits_list", args: map[string]any{"branch": "feat"}, check: func(t *testing.T, out map[string]any, text string) {
				// Automatic compaction may add a maintenance commit.
				if cs := out["commits"].([]any); len(cs) < 5 || !strings.Contains(text, loadCommit+" by writer") {
					t.Errorf("commits: %v %q", out, text)
				}
			}},
			{name: "commit changes", tool: "commit_changes", lazy: func() map[string]any { return map[string]any{"commit": loadCommit} }, check: func(t *testing.T, out map[string]any, text string) {
				chs := out["changes"].([]any)
				if len(chs) != 1 || out["cause"].(map[string]any)["graph_commit_id"] != loadCommit || !strings.Contains(text, "insert node Person Gina") {
					t.Errorf("changes: %v %q", out, text)
				}
			}},
			{name: "change feed", tool: "changes_poll", args: map[string]any{"branch": "feat", "start": "beginning", "kind": []any{"node"}},
				check: func(t *testing.T, out map[string]any, text string) {
					if len(out["blocks"].([]any)) == 0 || out["cursor"] == nil || !strings.Contains(text, "insert node Person Gina") {
						t.Errorf("feed: %v %q", out, text)
					}
				}},
			{name: "merge", tool: "branches_merge", args: map[string]any{"source": "feat", "delete_branch": true}, check: func(t *testing.T, out map[string]any, text string) {
				if out["outcome"] != "fast_forward" || out["branch_deleted"] != true || !strings.HasSuffix(text, "branch feat deleted") {
					t.Errorf("merge: %v %q", out, text)
				}
			}},
			{name: "create scratch", tool: "branches_create", args: map[string]any{"name": "tmp", "from": "main"}},
			{name: "delete branch", tool: "branches_delete", args: map[string]any{"name": "tmp"}, check: func(t *testing.T, out map[string]any, text string) {
				if out["name"] != "tmp" || text != "deleted branch tmp" {
					t.Errorf("delete: %v %q", out, text)
				}
			}},
			{name: "merged data on main", tool: "people", check: func(t *testing.T, out map[string]any, _ string) {
				if num(out["row_count"]) != 7 {
					t.Errorf("people after merge: %v", out)
				}
			}},
		}
		run(t, cs, steps)
	})
}

func run(t *testing.T, cs *sdk.ClientSession, steps []step) {
	t.Helper()
	for _, s := range steps {
		if s.lazy != nil {
			s.args = s.lazy()
		}
		out, text, res := call(t, cs, s.tool, s.args)
		if s.wantStatus == 0 {
			if res.IsError {
				t.Fatalf("%s: tool error %q %v", s.name, text, out)
			}
		} else {
			status := num(res.Meta[mcp.StatusMeta])
			code, _ := out["code"].(string)
			if !res.IsError || int(status) != s.wantStatus || code != s.wantCode || out["error"] != text || text == "" {
				t.Fatalf("%s: IsError=%v status %v body %v text %q; want status %d code %q", s.name, res.IsError, status, out, text, s.wantStatus, s.wantCode)
			}
		}
		if s.check != nil {
			s.check(t, out, text)
		}
	}
}

// TestToolErrors: refused input and every refusal of the route are tool
// errors carrying the route's ErrorOutput, structured fields included.
func TestToolErrors(t *testing.T) {
	eachTransport(t, "writer-token", func(t *testing.T, cs *sdk.ClientSession) {
		mergeConflict := func(t *testing.T, out map[string]any, _ string) {
			mc, _ := out["merge_conflicts"].([]any)
			if len(mc) != 1 || mc[0].(map[string]any)["kind"] != "divergent_update" || mc[0].(map[string]any)["entity_id"] != "Alice" {
				t.Errorf("merge conflicts: %v", out)
			}
		}
		steps := []step{
			{name: "missing required argument", tool: "query", args: map[string]any{}, wantStatus: 400, wantCode: "bad_request",
				check: func(t *testing.T, out map[string]any, _ string) {
					if !strings.Contains(out["error"].(string), "query") {
						t.Errorf("error does not name the missing field: %v", out)
					}
				}},
			{name: "unknown argument", tool: "branches_list", args: map[string]any{"nope": 1}, wantStatus: 400, wantCode: "bad_request"},
			{name: "wrong enum", tool: "load", args: map[string]any{"data": "", "mode": "replace"}, wantStatus: 400, wantCode: "bad_request"},
			{name: "stored param of the wrong type", tool: "find", args: map[string]any{"name": 42}, wantStatus: 400, wantCode: "bad_request"},
			{name: "stored param missing", tool: "add", args: map[string]any{"name": "Zed"}, wantStatus: 400, wantCode: "bad_request"},
			{name: "parse error", tool: "query", args: map[string]any{"query": "query broken( {"}, wantStatus: 400, wantCode: "bad_request"},
			{name: "read sent to mutate", tool: "mutate", args: map[string]any{"query": allPeople}, wantStatus: 400, wantCode: "bad_request"},
			{name: "bad load line", tool: "load", args: map[string]any{"data": `{"type":"Nope","data":{}}` + "\n"}, wantStatus: 400, wantCode: "bad_request"},
			{name: "unknown commit", tool: "commit_changes", args: map[string]any{"commit": "nope"}, wantStatus: 404, wantCode: "not_found"},
			{name: "unknown branch", tool: "commits_list", args: map[string]any{"branch": "nope"}, wantStatus: 404, wantCode: "not_found"},
			{name: "main is protected", tool: "branches_delete", args: map[string]any{"name": "main"}, wantStatus: 409, wantCode: "conflict"},
			{name: "key conflict", tool: "load", args: map[string]any{"data": `{"type":"Person","data":{"name":"Alice"}}` + "\n", "mode": "append"},
				wantStatus: 409, wantCode: "conflict", check: func(t *testing.T, out map[string]any, _ string) {
					if kc, _ := out["key_conflict"].(map[string]any); kc["entity_id"] != "Alice" {
						t.Errorf("key conflict: %v", out)
					}
				}},
			{name: "stale conditional write", tool: "mutate", args: map[string]any{"query": addPerson, "params": map[string]any{"name": "Zed", "age": 1}, "if_commit": "01AAAAAAAAAAAAAAAAAAAAAAAA"},
				wantStatus: 412, check: func(t *testing.T, out map[string]any, _ string) {
					if pf, _ := out["precondition_failure"].(map[string]any); pf["expected"] != "01AAAAAAAAAAAAAAAAAAAAAAAA" {
						t.Errorf("precondition failure: %v", out)
					}
				}},
			{name: "diff limit over the maximum", tool: "diff", args: map[string]any{"limit": 9000}, wantStatus: 413, check: func(t *testing.T, out map[string]any, _ string) {
				if rl, _ := out["resource_limit"].(map[string]any); rl["resource"] != "diff_changes" {
					t.Errorf("resource limit: %v", out)
				}
			}},
			{name: "branch a", tool: "branches_create", args: map[string]any{"name": "a"}},
			{name: "branch b", tool: "branches_create", args: map[string]any{"name": "b"}},
			{name: "update on a", tool: "mutate", args: map[string]any{"query": setAge, "params": map[string]any{"name": "Alice", "age": 31}, "branch": "a"}},
			{name: "update on b", tool: "mutate", args: map[string]any{"query": setAge, "params": map[string]any{"name": "Alice", "age": 32}, "branch": "b"}},
			{name: "merge a", tool: "branches_merge", args: map[string]any{"source": "a"}},
			{name: "merge conflict", tool: "branches_merge", args: map[string]any{"source": "b"}, wantStatus: 409, wantCode: "conflict", check: mergeConflict},
		}
		run(t, cs, steps)
	})
}

// TestPolicyDenial: what the policy refuses is a tool error with the
// route's 403 body; what it allows still runs.
func TestPolicyDenial(t *testing.T) {
	eachTransport(t, "reader-token", func(t *testing.T, cs *sdk.ClientSession) {
		forbidden := func(t *testing.T, out map[string]any, _ string) {
			if !strings.Contains(out["error"].(string), "actor 'reader' may not") {
				t.Errorf("denial: %v", out)
			}
		}
		run(t, cs, []step{
			{name: "read allowed", tool: "find", args: map[string]any{"name": "Alice"}},
			{name: "mutation denied", tool: "mutate", args: map[string]any{"query": addPerson, "params": map[string]any{"name": "Zed", "age": 1}},
				wantStatus: 403, wantCode: "forbidden", check: forbidden},
			{name: "stored mutation denied", tool: "add", args: map[string]any{"name": "Zed", "age": 1}, wantStatus: 403, wantCode: "forbidden", check: forbidden},
			{name: "branch create denied", tool: "branches_create", args: map[string]any{"name": "x"}, wantStatus: 403, wantCode: "forbidden", check: forbidden},
			{name: "load denied", tool: "load", args: map[string]any{"data": `{"type":"Person","data":{"name":"Zed"}}` + "\n"}, wantStatus: 403, wantCode: "forbidden"},
			{name: "nothing was written", tool: "people", check: func(t *testing.T, out map[string]any, _ string) {
				if num(out["row_count"]) != 4 {
					t.Errorf("people: %v", out)
				}
			}},
		})
	})
}

func TestResources(t *testing.T) {
	eachTransport(t, "reader-token", func(t *testing.T, cs *sdk.ClientSession) {
		ctx := context.Background()
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		if !slices.Equal(uris, []string{mcp.BranchesURI, mcp.SchemaURI}) {
			t.Fatalf("resources = %v", uris)
		}
		cases := []struct{ uri, mime, want string }{
			{mcp.SchemaURI, "text/plain", "node Person"},
			{mcp.BranchesURI, "application/json", `{"branches":["main"]}`},
		}
		for _, c := range cases {
			res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: c.uri})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 || res.Contents[0].MIMEType != c.mime || !strings.Contains(res.Contents[0].Text, c.want) {
				t.Errorf("%s: %+v", c.uri, res.Contents)
			}
		}
	})
}

// TestHTTPRouteAuth: the MCP route authenticates like every route; an
// unknown graph is the usual 404.
func TestHTTPRouteAuth(t *testing.T) {
	ts := newServer(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cases := []struct {
		name, method, path, token string
		status                    int
		code                      string
	}{
		{"no token", "POST", "/graphs/social/mcp", "", 401, "unauthorized"},
		{"bad token", "POST", "/graphs/social/mcp", "nope", 401, "unauthorized"},
		{"unknown graph", "POST", "/graphs/nope/mcp", "reader-token", 404, "not_found"},
		{"no server-initiated stream", "GET", "/graphs/social/mcp", "reader-token", 405, "method_not_allowed"},
		{"no session to delete", "DELETE", "/graphs/social/mcp", "reader-token", 405, "method_not_allowed"},
		{"initialize", "POST", "/graphs/social/mcp", "reader-token", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != c.status || (c.code != "" && body["code"] != c.code) || (c.status == 405 && resp.Header.Get("Allow") != "POST") {
				t.Fatalf("status %d body %v", resp.StatusCode, body)
			}
			if c.status == 200 && body["result"].(map[string]any)["serverInfo"].(map[string]any)["name"] != "omnigraph" {
				t.Fatalf("initialize: %v", body)
			}
		})
	}
}
