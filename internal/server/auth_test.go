package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func withTokens(ts ...Token) func(*Config) {
	return func(c *Config) { c.Tokens = ts; c.Unauthenticated = false }
}

func TestBearerAuth(t *testing.T) {
	ts := start(t, Config{}, withTokens(Token{Actor: "alice", Token: "tok-a"}, Token{Actor: "bob", Token: "tok-b"}))
	cases := []struct {
		name, auth string
		status     int
		msg        string
	}{
		{"missing", "", 401, "missing bearer token"},
		{"not bearer", "Basic dG9rLWE=", 401, "missing bearer token"},
		{"lowercase scheme", "bearer tok-a", 401, "missing bearer token"},
		{"empty token", "Bearer ", 401, "missing bearer token"},
		{"unknown", "Bearer tok-c", 401, "invalid bearer token"},
		{"prefix of a token", "Bearer tok-", 401, "invalid bearer token"},
		{"valid", "Bearer tok-b", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts.tok = ""
			r := ts.req("GET", "/graphs/g/branches", nil, "Authorization", c.auth)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.msg != "" {
				if e := r.errOut(t); e.Error != c.msg || e.Code != codeUnauthorized {
					t.Errorf("error = %+v", e)
				}
			}
		})
	}
	// Public routes are never gated.
	ts.tok = ""
	for _, p := range []string{"/healthz", "/openapi.json"} {
		if r := ts.req("GET", p, nil); r.status != 200 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	// The actor comes from the token only: a client-supplied identity is ignored.
	ts.tok = "tok-b"
	r := ts.req("POST", "/graphs/g/branches", map[string]any{"name": "x", "actor_id": "alice"}, "X-Actor-Id", "alice")
	if r.status != 403 || !strings.Contains(r.errOut(t).Error, "'bob'") {
		t.Errorf("default deny as bob: %d %s", r.status, r.body)
	}
}

// TestDefaultDeny: tokens without a policy permit read and nothing else,
// graph_list included.
func TestDefaultDeny(t *testing.T) {
	ts := start(t, Config{}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
	if ts.s.Mode() != ModeDefaultDeny {
		t.Fatalf("mode %s", ts.s.Mode())
	}
	for _, c := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"GET", "/graphs/g/snapshot", nil, 200},
		{"POST", "/graphs/g/query", map[string]any{"query": allPeople}, 200},
		{"GET", "/graphs/g/commits", nil, 200},
		{"GET", "/graphs", nil, 403},
		{"POST", "/graphs/g/mutate", map[string]any{"query": addPerson}, 403},
		{"POST", "/graphs/g/export", map[string]any{}, 403},
		{"POST", "/graphs/g/branches", map[string]any{"name": "x"}, 403},
		{"POST", "/graphs/g/queries/find", map[string]any{}, 404}, // invoke_query denied = unknown
	} {
		r := ts.req(c.method, c.path, c.body)
		if r.status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.status, c.status, r.body)
		} else if r.status == 403 && r.errOut(t).Code != codeForbidden {
			t.Errorf("%s %s: %s", c.method, c.path, r.body)
		}
	}
}

// TestAuthorizationRequests pins the question each route asks: action,
// branch and target branch exactly as spec/surfaces.md §2.4 lists them, in
// order, and that a denial stops the request before any effect.
func TestAuthorizationRequests(t *testing.T) {
	type q = AuthzRequest
	cases := []struct {
		name         string
		method, path string
		body         any
		hdr          []string
		want         []q
	}{
		{"graphs", "GET", "/graphs", nil, nil, []q{{Action: ActionGraphList}}},
		{"snapshot", "GET", "/graphs/g/snapshot?branch=main", nil, nil, []q{{Action: ActionRead, Graph: "g", Branch: "main"}}},
		{"query", "POST", "/graphs/g/query", map[string]any{"query": allPeople, "branch": "main"}, nil, []q{{Action: ActionRead, Graph: "g", Branch: "main"}}},
		{"read", "POST", "/graphs/g/read", map[string]any{"query_source": allPeople}, nil, []q{{Action: ActionRead, Graph: "g", Branch: "main"}}},
		{"schema", "GET", "/graphs/g/schema", nil, nil, []q{{Action: ActionRead, Graph: "g", Branch: "main"}}},
		{"mutate", "POST", "/graphs/g/mutate", map[string]any{"query": addPerson, "branch": "dev", "params": map[string]any{"name": "X", "age": 1}}, nil, []q{{Action: ActionChange, Graph: "g", Branch: "dev"}}},
		{"change", "POST", "/graphs/g/change", map[string]any{"query": addPerson}, nil, []q{{Action: ActionChange, Graph: "g", Branch: "main"}}},
		{"queries", "GET", "/graphs/g/queries", nil, nil, []q{{Action: ActionRead, Graph: "g", Branch: "main"}}},
		{"invoke read", "POST", "/graphs/g/queries/find", map[string]any{"branch": "dev"}, nil, []q{{Action: ActionInvokeQuery, Graph: "g"}, {Action: ActionRead, Graph: "g", Branch: "dev"}}},
		{"invoke mutation", "POST", "/graphs/g/queries/add", map[string]any{}, nil, []q{{Action: ActionInvokeQuery, Graph: "g"}, {Action: ActionChange, Graph: "g", Branch: "main"}}},
		{"load", "POST", "/graphs/g/load", map[string]any{"data": "", "branch": "main"}, nil, []q{{Action: ActionChange, Graph: "g", Branch: "main"}}},
		{"load fork", "POST", "/graphs/g/load", map[string]any{"data": "", "branch": "new", "from": "main"}, nil,
			[]q{{Action: ActionChange, Graph: "g", Branch: "new"}, {Action: ActionBranchCreate, Graph: "g", Branch: "main", TargetBranch: "new"}}},
		{"load ndjson", "POST", "/graphs/g/load/ndjson?branch=main", []byte(""), []string{"Content-Type", "application/x-ndjson"}, []q{{Action: ActionChange, Graph: "g", Branch: "main"}}},
		{"ingest", "POST", "/graphs/g/ingest", map[string]any{"data": "", "branch": "new"}, nil,
			[]q{{Action: ActionChange, Graph: "g", Branch: "new"}, {Action: ActionBranchCreate, Graph: "g", Branch: "main", TargetBranch: "new"}}},
		{"export", "POST", "/graphs/g/export", map[string]any{"branch": "main"}, nil, []q{{Action: ActionExport, Graph: "g", Branch: "main"}}},
		{"branches", "GET", "/graphs/g/branches", nil, nil, []q{{Action: ActionRead, Graph: "g"}}},
		{"branch create", "POST", "/graphs/g/branches", map[string]any{"name": "x", "from": "dev"}, nil, []q{{Action: ActionBranchCreate, Graph: "g", Branch: "dev", TargetBranch: "x"}}},
		{"branch delete", "DELETE", "/graphs/g/branches/dev", nil, nil, []q{{Action: ActionBranchDelete, Graph: "g", TargetBranch: "dev"}}},
		{"merge", "POST", "/graphs/g/branches/merge", map[string]any{"source": "dev", "target": "main"}, nil, []q{{Action: ActionBranchMerge, Graph: "g", Branch: "dev", TargetBranch: "main"}}},
		{"commits", "GET", "/graphs/g/commits?branch=dev", nil, nil, []q{{Action: ActionRead, Graph: "g", Branch: "dev"}}},
		{"commit", "GET", "/graphs/g/commits/01HXXXXXXXXXXXXXXXXXXXXXXX", nil, nil, []q{{Action: ActionRead, Graph: "g"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			ts := start(t, Config{Authorizer: rec}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
			// dev exists, so every write reaches the engine.
			if err := ts.g.CreateBranch(context.Background(), "dev", "", ""); err != nil {
				t.Fatal(err)
			}
			ts.req(c.method, c.path, c.body, c.hdr...)
			for i := range c.want {
				c.want[i].Actor = "alice"
			}
			// The route asks first; then the engine's writers ask the same
			// write questions again (defense in depth, engine_authz.go).
			want := slices.Clone(c.want)
			for _, w := range c.want {
				if engineAction(w.Action) {
					w.Engine = true
					want = append(want, w)
				}
			}
			got := rec.requests()
			if len(got) != len(want) {
				t.Fatalf("asked %+v, want %+v", got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("question %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			// Denying the first question refuses the request and changes nothing.
			deny := &recorder{deny: map[string]bool{string(c.want[0].Action): true}}
			ts2 := start(t, Config{Authorizer: deny}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
			before, _ := ts2.g.Branches(context.Background())
			head := ts2.head("main")
			r := ts2.req(c.method, c.path, c.body, c.hdr...)
			wantStatus := http.StatusForbidden
			if c.want[0].Action == ActionInvokeQuery {
				wantStatus = http.StatusNotFound
			}
			if r.status != wantStatus {
				t.Errorf("denied: status %d, want %d: %s", r.status, wantStatus, r.body)
			}
			after, _ := ts2.g.Branches(context.Background())
			if ts2.head("main") != head || len(after) != len(before) {
				t.Error("a denied request changed the graph")
			}
		})
	}
}

// TestInvokeDenialIsUnknown: a caller without invoke_query cannot tell a
// stored query that exists from one that does not.
func TestInvokeDenialIsUnknown(t *testing.T) {
	deny := &recorder{deny: map[string]bool{"invoke_query": true}}
	ts := start(t, Config{Authorizer: deny}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
	known := ts.req("POST", "/graphs/g/queries/find", map[string]any{})
	unknown := ts.req("POST", "/graphs/g/queries/nope", map[string]any{})
	if known.status != 404 || unknown.status != 404 {
		t.Fatalf("statuses %d %d", known.status, unknown.status)
	}
	norm := func(b []byte) string { return strings.Replace(string(b), "find", "NAME", 1) }
	if norm(known.body) != strings.Replace(string(unknown.body), "nope", "NAME", 1) {
		t.Errorf("denied %s vs unknown %s", known.body, unknown.body)
	}
	// Inner denial is an ordinary 403.
	inner := &recorder{deny: map[string]bool{"read": true}}
	ts2 := start(t, Config{Authorizer: inner}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
	if r := ts2.req("POST", "/graphs/g/queries/find", map[string]any{}); r.status != 403 {
		t.Errorf("inner denial: %d %s", r.status, r.body)
	}
}

func TestMergeDeleteDeniedKeepsMerge(t *testing.T) {
	rec := &recorder{deny: map[string]bool{"branch_delete": true}}
	ts := start(t, Config{Authorizer: rec}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
	if err := ts.g.CreateBranch(context.Background(), "feat", "main", ""); err != nil {
		t.Fatal(err)
	}
	r := ts.req("POST", "/graphs/g/branches/merge", map[string]any{"source": "feat", "delete_branch": true})
	var out BranchMergeOutput
	r.decode(t, &out)
	if r.status != 200 || out.BranchDeleted == nil || *out.BranchDeleted || out.BranchDeleteError == nil {
		t.Fatalf("merge = %d %s", r.status, r.body)
	}
	if names, _ := ts.g.Branches(context.Background()); len(names) != 2 {
		t.Errorf("branches %v", names)
	}
}

func TestAuthorizerErrorIs500(t *testing.T) {
	ts := start(t, Config{Authorizer: failing{}}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
	if r := ts.req("GET", "/graphs/g/branches", nil); r.status != 500 || r.errOut(t).Code != codeInternal {
		t.Errorf("%d %s", r.status, r.body)
	}
}

type failing struct{}

func (failing) Authorize(context.Context, AuthzRequest) (Decision, error) {
	return Decision{}, errors.New("policy store unreachable")
}

func TestBundles(t *testing.T) {
	allow := AllowAll{}
	b := Bundles{Graphs: map[string]Authorizer{"a": allow}}
	ctx := context.Background()
	for _, c := range []struct {
		req  AuthzRequest
		want bool
	}{
		{AuthzRequest{Action: ActionChange, Graph: "a"}, true},
		{AuthzRequest{Action: ActionChange, Graph: "b"}, false}, // no bundle: read only
		{AuthzRequest{Action: ActionRead, Graph: "b"}, true},
		{AuthzRequest{Action: ActionGraphList}, false}, // no server bundle
	} {
		d, err := b.Authorize(ctx, c.req)
		if err != nil || d.Allowed != c.want || d.RuleID == "" {
			t.Errorf("%+v: %+v %v", c.req, d, err)
		}
	}
	b.Server = allow
	if d, _ := b.Authorize(ctx, AuthzRequest{Action: ActionGraphList}); !d.Allowed {
		t.Error("server bundle not consulted")
	}
}

// TestBootRefusals: the runtime-state matrix of spec §2.1 and config errors.
func TestBootRefusals(t *testing.T) {
	g := newGraph(t)
	graphs := []GraphConfig{{ID: "g", Graph: g}}
	tok := []Token{{Actor: "a", Token: "t"}}
	cases := []struct {
		name string
		cfg  Config
		err  error
		mode Mode
	}{
		{"no auth", Config{Graphs: graphs}, ErrNoAuth, ""},
		{"open", Config{Graphs: graphs, Unauthenticated: true}, nil, ModeOpen},
		{"default deny", Config{Graphs: graphs, Tokens: tok}, nil, ModeDefaultDeny},
		{"tokens win over unauthenticated", Config{Graphs: graphs, Tokens: tok, Unauthenticated: true}, nil, ModeDefaultDeny},
		{"policy", Config{Graphs: graphs, Tokens: tok, Authorizer: AllowAll{}}, nil, ModePolicy},
		{"policy without tokens", Config{Graphs: graphs, Authorizer: AllowAll{}, Unauthenticated: true}, ErrPolicyWithoutTokens, ""},
		{"no graphs", Config{Unauthenticated: true}, ErrNoHealthyGraph, ""},
		{"bad id", Config{Graphs: []GraphConfig{{ID: "a b", Graph: g}}, Unauthenticated: true}, ErrInvalidConfig, ""},
		{"reserved id", Config{Graphs: []GraphConfig{{ID: "graphs", Graph: g}}, Unauthenticated: true}, ErrInvalidConfig, ""},
		{"duplicate id", Config{Graphs: []GraphConfig{{ID: "g", Graph: g}, {ID: "g", Graph: g}}, Unauthenticated: true}, ErrInvalidConfig, ""},
		{"blank token", Config{Graphs: graphs, Tokens: []Token{{Actor: "a", Token: " "}}}, ErrInvalidConfig, ""},
		{"duplicate token", Config{Graphs: graphs, Tokens: []Token{{Actor: "a", Token: "t"}, {Actor: "b", Token: "t"}}}, ErrInvalidConfig, ""},
		{"only graph quarantined", Config{Graphs: []GraphConfig{{ID: "x", URI: filepath.Join(t.TempDir(), "missing")}}, Unauthenticated: true}, ErrNoHealthyGraph, ""},
		{"require all graphs", Config{Graphs: []GraphConfig{{ID: "g", Graph: g}, {ID: "x", URI: filepath.Join(t.TempDir(), "missing")}}, Unauthenticated: true, RequireAllGraphs: true}, ErrGraphQuarantined, ""},
		{"quarantined by source", Config{Graphs: []GraphConfig{{ID: "g", Graph: g}, {ID: "x", Quarantine: "pending recovery"}}, Unauthenticated: true, RequireAllGraphs: true}, ErrGraphQuarantined, ""},
		{"stale stored query", Config{Graphs: []GraphConfig{{ID: "g", Graph: g, Queries: []StoredQuery{{Name: "q", Source: `query q() { match { $c: Nope } return { $c.name } }`}}}}, Unauthenticated: true, RequireAllGraphs: true}, ErrGraphQuarantined, ""},
		{"duplicate stored query", Config{Graphs: []GraphConfig{{ID: "g", Graph: g, Queries: []StoredQuery{{Name: "find", Source: findPerson}, {Name: "find", Source: findPerson}}}}, Unauthenticated: true, RequireAllGraphs: true}, ErrGraphQuarantined, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(context.Background(), c.cfg)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err == nil && s.Mode() != c.mode {
				t.Errorf("mode %s, want %s", s.Mode(), c.mode)
			}
		})
	}
}

// TestQuarantine: a graph that fails to open is logged and answers 404
// like an unknown id; the healthy ones are served.
func TestQuarantine(t *testing.T) {
	ts := open(t, func(c *Config) {
		c.Graphs = append(c.Graphs, GraphConfig{ID: "broken", URI: filepath.Join(t.TempDir(), "missing")})
	})
	if q := ts.s.Quarantined(); len(q) != 1 || q["broken"] == nil {
		t.Fatalf("quarantined = %v", q)
	}
	if r := ts.req("GET", "/graphs/broken/snapshot", nil); r.status != 404 || r.errOut(t).Error != "graph 'broken' not found" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if r := ts.req("GET", "/graphs/g/snapshot", nil); r.status != 200 {
		t.Errorf("healthy graph: %d", r.status)
	}
}

func TestTokensFromEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(file, []byte(`{"ops":"tok-ops"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		want []Token
		err  bool
	}{
		{"none", nil, nil, false},
		{"single", map[string]string{EnvBearerToken: " tok "}, []Token{{"default", "tok"}}, false},
		{"json", map[string]string{EnvBearerTokensJSON: `{"alice":"a","bob":" b "}`}, []Token{{"alice", "a"}, {"bob", "b"}}, false},
		{"combined", map[string]string{EnvBearerToken: "d", EnvBearerTokensJSON: `{"alice":"a"}`}, []Token{{"default", "d"}, {"alice", "a"}}, false},
		{"file wins over json", map[string]string{EnvBearerTokensFile: file, EnvBearerTokensJSON: `{"alice":"a"}`}, []Token{{"ops", "tok-ops"}}, false},
		{"missing file", map[string]string{EnvBearerTokensFile: filepath.Join(dir, "nope")}, nil, true},
		{"not an object", map[string]string{EnvBearerTokensJSON: `["a"]`}, nil, true},
		{"non-string token", map[string]string{EnvBearerTokensJSON: `{"a":1}`}, nil, true},
		{"trailing data", map[string]string{EnvBearerTokensJSON: `{"a":"x"} {}`}, nil, true},
		{"duplicate actor", map[string]string{EnvBearerTokensJSON: `{"a":"x","a":"y"}`}, nil, true},
		{"duplicate with default", map[string]string{EnvBearerToken: "x", EnvBearerTokensJSON: `{"default":"y"}`}, nil, true},
		{"duplicate value", map[string]string{EnvBearerTokensJSON: `{"a":"x","b":"x"}`}, nil, true},
		{"blank actor", map[string]string{EnvBearerTokensJSON: `{" ":"x"}`}, nil, true},
		{"blank token", map[string]string{EnvBearerTokensJSON: `{"a":""}`}, nil, true},
		{"aws secret", map[string]string{EnvBearerTokensAWS: "arn:x"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TokensFromEnv(func(k string) string { return c.env[k] })
			if (err != nil) != c.err {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Errorf("untyped error %v", err)
				}
				return
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestTokenSetHoldsNoPlaintext(t *testing.T) {
	s, err := newTokenSet([]Token{{Actor: "a", Token: "secret-token"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.entries {
		if strings.Contains(string(e.digest[:]), "secret-token") {
			t.Error("plaintext kept")
		}
	}
	if a, ok := s.actor("secret-token"); !ok || a != "a" {
		t.Errorf("actor = %q %v", a, ok)
	}
	if _, ok := s.actor("secret-token "); ok {
		t.Error("near miss matched")
	}
}

func TestEnvLimits(t *testing.T) {
	l, err := LimitsFromEnv(func(k string) string {
		return map[string]string{EnvPerActorInflight: "3", EnvPerActorBytes: "1000"}[k]
	})
	if err != nil || l.PerActorInflight != 3 || l.PerActorBytes != 1000 || l.BodyBytes != DefaultBodyBytes {
		t.Errorf("%+v %v", l, err)
	}
	for _, bad := range []string{"0", "-1", "x", "1.5"} {
		if _, err := LimitsFromEnv(func(k string) string {
			if k == EnvPerActorInflight {
				return bad
			}
			return ""
		}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
	for v, want := range map[string]bool{"1": true, "true": true, "YES": true, "": false, "0": false, "no": false} {
		got, err := EnvFlag(func(string) string { return v }, "X")
		if err != nil || got != want {
			t.Errorf("EnvFlag(%q) = %v %v", v, got, err)
		}
	}
	if _, err := EnvFlag(func(string) string { return "maybe" }, "X"); err == nil {
		t.Error("EnvFlag accepted maybe")
	}
}

// engineAction reports whether the engine layer asks about action too.
func engineAction(a Action) bool {
	switch a {
	case ActionChange, ActionBranchCreate, ActionBranchDelete, ActionBranchMerge, ActionSchemaApply:
		return true
	}
	return false
}
