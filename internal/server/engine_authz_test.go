package server

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

// bypassHTTPChecks strips every route's authorization checks: the
// handlers then run as if their authors had forgotten them, which is what
// the engine layer must still catch.
func bypassHTTPChecks(ts *testServer) {
	for _, rt := range ts.s.routes {
		h := rt.handle
		rt.handle = func(c *call) (*plan, error) {
			p, err := h(c)
			if p != nil {
				p.checks = nil
			}
			return p, err
		}
	}
	ts.s.mux = ts.s.buildMux()
	hs := httptest.NewServer(ts.s.Handler())
	ts.t.Cleanup(hs.Close)
	ts.hs = hs
}

// TestEngineLayerRefusesBypass: with the HTTP layer's checks removed, every
// write route is still refused by the engine's own check (spec/surfaces.md
// §3.3): 403 forbidden, nothing written, and the only questions asked are
// the engine's.
func TestEngineLayerRefusesBypass(t *testing.T) {
	writes := []struct {
		name, method, path string
		body               any
		hdr                []string
		action             Action
	}{
		{"mutate", "POST", "/graphs/g/mutate", map[string]any{"query": addPerson, "params": map[string]any{"name": "X", "age": 1}}, nil, ActionChange},
		{"stored mutation", "POST", "/graphs/g/queries/add", map[string]any{"params": map[string]any{"name": "X", "age": 1}}, nil, ActionChange},
		{"load", "POST", "/graphs/g/load", map[string]any{"data": `{"type":"Person","data":{"name":"X"}}`}, nil, ActionChange},
		{"load ndjson", "POST", "/graphs/g/load/ndjson", []byte(`{"type":"Person","data":{"name":"X"}}`), []string{"Content-Type", "application/x-ndjson"}, ActionChange},
		{"branch create", "POST", "/graphs/g/branches", map[string]any{"name": "x"}, nil, ActionBranchCreate},
		{"branch delete", "DELETE", "/graphs/g/branches/dev", nil, nil, ActionBranchDelete},
		{"merge", "POST", "/graphs/g/branches/merge", map[string]any{"source": "dev"}, nil, ActionBranchMerge},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			rec := &recorder{deny: map[string]bool{string(w.action): true}}
			ts := start(t, Config{Authorizer: rec}, withTokens(Token{Actor: "alice", Token: "tok-a"}))
			ctx := context.Background()
			if err := ts.g.CreateBranch(ctx, "dev", "", ""); err != nil {
				t.Fatal(err)
			}
			if _, _, err := ts.g.Mutate(ctx, "dev", addPerson, "", map[string]any{"name": "D", "age": 2}, omnigraph.MutateOptions{}); err != nil {
				t.Fatal(err)
			}
			bypassHTTPChecks(ts)
			main, dev := ts.head("main"), ts.head("dev")
			branches, _ := ts.g.Branches(ctx)

			r := ts.req(w.method, w.path, w.body, w.hdr...)
			if r.status != 403 || r.errOut(t).Code != codeForbidden {
				t.Fatalf("bypassed %s: %d %s, want 403 forbidden", w.name, r.status, r.body)
			}
			if after, _ := ts.g.Branches(ctx); ts.head("main") != main || ts.head("dev") != dev || len(after) != len(branches) {
				t.Fatal("a refused write changed the graph")
			}
			// The stored query's own catalog question (invoke_query) is
			// asked inside its handler; the write question only by the engine.
			var engine []AuthzRequest
			for _, q := range rec.requests() {
				if q.Engine {
					engine = append(engine, q)
				} else if q.Action == w.action {
					t.Fatalf("the bypassed route asked %+v", q)
				}
			}
			if len(engine) != 1 || engine[0].Action != w.action || engine[0].Actor != "alice" || engine[0].Graph != "g" {
				t.Fatalf("engine asked %+v, want one %s question", engine, w.action)
			}
		})
	}
	// An open server has no policy, so its engine asks nothing.
	ts := open(t)
	bypassHTTPChecks(ts)
	if r := ts.req("POST", "/graphs/g/branches", map[string]any{"name": "y"}); r.status != 200 {
		t.Fatalf("open server: %d %s", r.status, r.body)
	}
}
