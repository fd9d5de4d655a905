package boot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/cluster"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/server"
)

const schemaSrc = "node Person {\n    name: String @key\n    age: I32?\n}\n"

const queriesSrc = fixture.PersonQueries

const graphPolicy = `version: 1
groups:
  writers: [act-writer]
  readers: [act-reader]
protected_branches: [main]
rules:
  - id: readers-read
    allow:
      actors: { group: readers }
      actions: [read, invoke_query]
  - id: writers-write
    allow:
      actors: { group: writers }
      actions: [read, change, invoke_query]
`

const serverPolicy = `version: 1
groups:
  ops: [act-writer]
rules:
  - id: ops-list
    allow:
      actors: { group: ops }
      actions: [graph_list]
`

const clusterYAML = `version: 1
graphs:
  knowledge:
    schema: knowledge.pg
    queries: queries/
  plain:
    schema: knowledge.pg
policies:
  base: { file: base.policy.yaml, applies_to: [knowledge] }
  server: { file: server.policy.yaml, applies_to: [cluster] }
`

// applyCluster lays out the test cluster (applyClusterFiles), imports and
// applies it.
func applyCluster(t *testing.T) string {
	t.Helper()
	dir := applyClusterFiles(t)
	ctx := context.Background()
	if r := cluster.Import(ctx, dir, cluster.Options{}); !r.OK {
		t.Fatal(r.Diagnostics)
	}
	if r := cluster.Apply(ctx, dir, "act-op", cluster.Options{}); !r.OK || !r.Converged {
		t.Fatal(r.Diagnostics)
	}
	return dir
}

type client struct {
	t   *testing.T
	url string
}

func (c client) do(token, method, path string, body any) (int, string) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestBootFromCluster(t *testing.T) {
	dir := applyCluster(t)
	ctx := context.Background()
	base := server.Config{Tokens: []server.Token{{Actor: "act-writer", Token: "tw"}, {Actor: "act-reader", Token: "tr"}, {Actor: "act-stranger", Token: "ts"}}}
	cfg, err := FromCluster(ctx, dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Graphs) != 2 || cfg.Authorizer == nil || len(cfg.Graphs[0].Queries) != 2 {
		t.Fatalf("config %+v", cfg)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Mode() != server.ModePolicy {
		t.Fatalf("mode %s", srv.Mode())
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	c := client{t, hs.URL}

	cases := []struct {
		name, token, method, path string
		body                      any
		status                    int
		contains                  string
	}{
		{"writer invokes stored mutation", "tw", "POST", "/graphs/knowledge/queries/add_person", map[string]any{"params": map[string]any{"name": "Ada"}}, 200, `"affected_nodes":1`},
		{"reader invokes stored read", "tr", "POST", "/graphs/knowledge/queries/get_person", map[string]any{"params": map[string]any{"name": "Ada"}}, 200, `"Ada"`},
		{"reader cannot mutate", "tr", "POST", "/graphs/knowledge/queries/add_person", map[string]any{"params": map[string]any{"name": "Bo"}}, 403, "forbidden"},
		{"stranger cannot invoke (404 like unknown)", "ts", "POST", "/graphs/knowledge/queries/get_person", map[string]any{}, 404, "not_found"},
		{"graph without bundle is read-only", "tw", "POST", "/graphs/plain/mutate", map[string]any{"query": "query a() { insert Person { name: \"X\" } }"}, 403, "forbidden"},
		{"graph without bundle allows read", "tr", "GET", "/graphs/plain/branches", nil, 200, "main"},
		{"graph_list granted by the cluster bundle", "tw", "GET", "/graphs", nil, 200, `"knowledge"`},
		{"graph_list denied otherwise", "tr", "GET", "/graphs", nil, 403, "forbidden"},
		{"no token", "", "GET", "/graphs/knowledge/branches", nil, 401, "missing bearer token"},
		{"stored queries listed", "tr", "GET", "/graphs/knowledge/queries", nil, 200, "get_person"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := c.do(tc.token, tc.method, tc.path, tc.body)
			if status != tc.status || !strings.Contains(body, tc.contains) {
				t.Fatalf("%s %s: %d %s", tc.method, tc.path, status, body)
			}
		})
	}
}

func TestBootRefusals(t *testing.T) {
	ctx := context.Background()
	dir := applyCluster(t)
	// A policy without tokens is refused by the server.
	cfg, err := FromCluster(ctx, dir, server.Config{Unauthenticated: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(ctx, cfg); !errors.Is(err, server.ErrPolicyWithoutTokens) {
		t.Fatalf("policy without tokens: %v", err)
	}
	// No ledger: refused.
	if _, err := FromCluster(ctx, t.TempDir(), server.Config{}); !errors.Is(err, cluster.ErrState) {
		t.Fatalf("empty dir: %v", err)
	}
	// A pending recovery sidecar quarantines its graph, or refuses with
	// RequireAllGraphs.
	side := filepath.Join(dir, "__cluster", "recoveries", "01TEST.json")
	if err := os.MkdirAll(filepath.Dir(side), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(side, []byte(`{"version":1,"id":"01TEST","operation":"graph_create","graph":"plain","root":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tokens := []server.Token{{Actor: "act-writer", Token: "tw"}}
	cfg, err = FromCluster(ctx, dir, server.Config{Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q := srv.Quarantined(); len(q) != 1 || q["plain"] == nil || !strings.Contains(q["plain"].Error(), "cluster_recovery_pending") {
		t.Fatalf("quarantined %v", q)
	}
	if ids := strings.Join(srv.GraphIDs(), ","); ids != "knowledge" {
		t.Fatalf("served graphs %s", ids)
	}
	cfg, err = FromCluster(ctx, dir, server.Config{Tokens: tokens, RequireAllGraphs: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(ctx, cfg); !errors.Is(err, server.ErrGraphQuarantined) {
		t.Fatalf("require-all-graphs: %v", err)
	}
	// A tampered catalog payload refuses the whole boot.
	_ = os.Remove(side)
	err = filepath.WalkDir(filepath.Join(dir, "__cluster", "resources", "query"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			return os.WriteFile(p, []byte("query x() { match { $p: Person } return { $p.name } }\n"), 0o644)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromCluster(ctx, dir, server.Config{}); !errors.Is(err, cluster.ErrState) {
		t.Fatalf("tampered catalog: %v", err)
	}
}
