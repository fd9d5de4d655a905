package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeServer answers the routes of spec/surfaces.md §2.4 with the spec's
// shapes, recording what it was sent. It stands in for omnigraph-server to
// pin the client half of the contract.
type fakeServer struct {
	mu       sync.Mutex
	requests []string
	bodies   map[string]string
	auth     []string
}

func (f *fakeServer) handler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	rec := func(r *http.Request) string {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		key := r.Method + " " + r.URL.Path
		f.requests = append(f.requests, key+"?"+r.URL.RawQuery)
		f.bodies[key] = string(b)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		return string(b)
	}
	reply := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	mux.HandleFunc("GET /graphs", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 200, `{"graphs":[{"graph_id":"knowledge","uri":"/c/graphs/knowledge.omni"},{"graph_id":"spike","uri":"/c/graphs/spike.omni"}]}`)
	})
	read := `{"query_name":"get_person","target":{"branch":"main"},"row_count":1,"columns":["p.name","p.age"],"rows":[{"p.name":"Ada","p.age":36}],"graph_commit_id":"01C"}`
	mux.HandleFunc("POST /graphs/knowledge/query", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 200, read)
	})
	mux.HandleFunc("POST /graphs/{g}/queries/{name}", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		if r.PathValue("name") == "secret" {
			reply(w, 404, `{"error":"stored query 'secret' not found","code":"not_found"}`)
			return
		}
		reply(w, 200, read)
	})
	mux.HandleFunc("POST /graphs/knowledge/mutate", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 200, `{"query_name":"add","branch":"main","affected_nodes":1,"affected_edges":0,"actor_id":"act-writer","commit":{"graph_commit_id":"01D","graph_branch":"main","graph_manifest_version":3,"parent_commit_id":"01C","merged_parent_commit_id":null,"actor_id":"act-writer","created_at":1}}`)
	})
	mux.HandleFunc("POST /graphs/knowledge/mutate/if-graph-commit", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		if r.Header.Get("Omnigraph-If-Graph-Commit") != "01OLD" {
			t.Errorf("if-commit header %q", r.Header.Get("Omnigraph-If-Graph-Commit"))
		}
		reply(w, 412, `{"error":"branch 'main' head moved","precondition_failure":{"expected":"01OLD","actual":"01NEW"}}`)
	})
	mux.HandleFunc("POST /graphs/knowledge/load/ndjson", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/x-ndjson" {
			reply(w, 415, `{"error":"want application/x-ndjson"}`)
			return
		}
		rec(r)
		reply(w, 200, `{"branch":"main","mode":"merge","branch_created":false,"nodes":[{"name":"Person","entities_loaded":2}],"edges":[],"total_entities":2,"actor_id":"act-writer","commit":null}`)
	})
	mux.HandleFunc("POST /graphs/knowledge/export", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"type":"Person","data":{"id":"Ada","name":"Ada"}}`+"\n")
	})
	mux.HandleFunc("GET /graphs/knowledge/branches", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 200, `{"branches":["main","dev"]}`)
	})
	mux.HandleFunc("DELETE /graphs/knowledge/branches/{b}", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 404, `{"error":"branch 'gone' not found","code":"not_found"}`)
	})
	mux.HandleFunc("POST /graphs/knowledge/branches/merge", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 409, `{"error":"merge conflicts","code":"conflict","merge_conflicts":[{"entity_kind":"node","type_name":"Person","entity_id":"Ada","kind":"divergent_update","message":"Person Ada changed on both sides"}]}`)
	})
	mux.HandleFunc("GET /graphs/knowledge/schema", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 200, `{"schema_source":"node Person {\n    name: String @key\n}\n"}`)
	})
	mux.HandleFunc("GET /graphs/knowledge/queries", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 200, `{"queries":[{"name":"get_person","tool_name":"get_person","mutation":false,"params":[{"name":"name","kind":"string","nullable":false}]}]}`)
	})
	mux.HandleFunc("GET /graphs/knowledge/commits", func(w http.ResponseWriter, r *http.Request) {
		rec(r)
		reply(w, 200, `{"commits":[{"graph_commit_id":"01D","graph_branch":"main","graph_manifest_version":3,"parent_commit_id":"01C","actor_id":"act-writer","created_at":2},{"graph_commit_id":"01C","graph_branch":"main","graph_manifest_version":2,"created_at":1}]}`)
	})
	return mux
}

func TestServedMode(t *testing.T) {
	home := freshHome(t)
	t.Setenv("OMNIGRAPH_BEARER_TOKEN", "")
	f := &fakeServer{bodies: map[string]string{}}
	srv := httptest.NewServer(f.handler(t))
	defer srv.Close()
	cfg := "operator: { actor: act-op }\nservers:\n  dev: { url: " + srv.URL + " }\nprofiles:\n  work: { server: dev, default_graph: knowledge }\naliases:\n  who: { server: dev, graph: spike, query: get_person, args: [name], params: { limit: 5 } }\n  bad: { server: dev, graph: spike, query: add, command: mutate }\n"
	writeFile(t, home, "config.yaml", cfg)
	t.Setenv("OMNIGRAPH_TOKEN_DEV", "tok-dev")
	data := writeFile(t, t.TempDir(), "d.jsonl", `{"type":"Person","data":{"name":"Ada"}}`+"\n")

	cases := []struct {
		name    string
		args    []string
		code    int
		out     string // substring of stdout
		errOut  string // substring of stderr
		request string // a request the server must have seen
	}{
		{"ad-hoc query", []string{"query", "--server", "dev", "--graph", "knowledge", "-e", "query q() { match { $p: Person } return { $p.name } }", "--json"}, 0, `"p.name": "Ada"`, "", "POST /graphs/knowledge/query?"},
		{"catalog lane", []string{"query", "get_person", "--profile", "work", "--params", `{"name":"Ada"}`, "--format", "csv"}, 0, "p.name,p.age\nAda,36\n", "", "POST /graphs/knowledge/queries/get_person?"},
		{"catalog lane denied is 404", []string{"query", "secret", "--profile", "work"}, 1, "", "error: stored query 'secret' not found", ""},
		{"no graph lists candidates", []string{"branch", "list", "--server", srv.URL}, 2, "", "knowledge, spike", "GET /graphs?"},
		{"mutate", []string{"mutate", "--profile", "work", "-e", "query add() { insert Person { name: \"Bo\" } }"}, 0, "add: 1 nodes and 0 edges affected on branch main, commit 01D", "", "POST /graphs/knowledge/mutate?"},
		{"mutate lost CAS exits 4", []string{"mutate", "--profile", "work", "-e", "query add() { insert Person { name: \"Bo\" } }", "--if-commit", "01OLD", "--json"}, 4, `"expected": "01OLD"`, "", ""},
		{"mutate --as refused", []string{"--as", "me", "mutate", "--profile", "work", "-e", "x"}, 2, "", "actor from the bearer token", ""},
		{"load", []string{"load", "--profile", "work", "--data", data, "--mode", "merge", "--json"}, 0, `"uri": "` + srv.URL + `/graphs/knowledge"`, "(served)", "POST /graphs/knowledge/load/ndjson?branch=main&mode=merge"},
		{"load overwrite needs --yes", []string{"load", "--profile", "work", "--data", data, "--mode", "overwrite"}, 2, "", "--yes", ""},
		{"export", []string{"export", "--profile", "work", "--type", "Person"}, 0, `{"type":"Person","data":{"id":"Ada","name":"Ada"}}`, "", "POST /graphs/knowledge/export?"},
		{"branch list", []string{"branch", "list", "--profile", "work", "--json"}, 0, "\"dev\",\n    \"main\"", "", ""},
		{"branch delete error", []string{"branch", "delete", "gone", "--profile", "work", "--yes"}, 1, "", "error: branch 'gone' not found", ""},
		{"merge conflicts", []string{"branch", "merge", "dev", "--profile", "work"}, 1, "", "conflict: Person Ada changed on both sides", ""},
		{"schema show", []string{"schema", "show", "--profile", "work"}, 0, "node Person {", "", ""},
		{"queries list", []string{"queries", "list", "--profile", "work"}, 0, "get_person (read) ($name: string)", "", ""},
		{"commit list", []string{"commit", "list", "--profile", "work", "--limit", "1", "--json"}, 0, `"graph_commit_id": "01D"`, "", "GET /graphs/knowledge/commits?"},
		{"graphs list", []string{"graphs", "list", "--server", "dev", "--json"}, 0, `"graph_id": "spike"`, "", ""},
		{"alias", []string{"alias", "who", "Ada", "--json"}, 0, `"row_count": 1`, "", "POST /graphs/spike/queries/get_person?"},
		{"alias is read-only", []string{"alias", "bad"}, 1, "", "read-only", ""},
		{"server and store conflict", []string{"branch", "list", "--server", "dev", "--store", "/x"}, 2, "", "cannot be combined", ""},
		{"unknown server name", []string{"branch", "list", "--server", "nope", "--graph", "g"}, 2, "", `unknown server "nope"`, ""},
		{"graph on a store", []string{"branch", "list", "--store", "/x", "--graph", "g"}, 2, "", "single-graph", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errs, c.errOut) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			if c.request != "" {
				f.mu.Lock()
				seen := strings.Join(f.requests, "\n")
				f.mu.Unlock()
				if !strings.Contains(seen, c.request) {
					t.Fatalf("server never saw %q:\n%s", c.request, seen)
				}
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.auth {
		if a != "Bearer tok-dev" {
			t.Fatalf("a request carried Authorization %q", a)
		}
	}
	var body struct {
		Params         map[string]any `json:"params"`
		ExpectMutation *bool          `json:"expect_mutation"`
	}
	if err := json.Unmarshal([]byte(f.bodies["POST /graphs/spike/queries/get_person"]), &body); err != nil || body.Params["name"] != "Ada" || body.Params["limit"] != float64(5) || body.ExpectMutation == nil || *body.ExpectMutation {
		t.Fatalf("alias body %s", f.bodies["POST /graphs/spike/queries/get_person"])
	}
	if f.bodies["POST /graphs/knowledge/load/ndjson"] != `{"type":"Person","data":{"name":"Ada"}}`+"\n" {
		t.Fatalf("load body %q", f.bodies["POST /graphs/knowledge/load/ndjson"])
	}
}

// TestProfileStoreFallback: a profile binding a store (or a cluster graph)
// is the embedded default address.
func TestProfileStoreFallback(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OMNIGRAPH_HOME", home)
	dir := t.TempDir()
	schema := writeFile(t, dir, "s.pg", "node Person {\n    name: String @key\n}\n")
	uri := filepath.Join(dir, "g.omni")
	if code, _, errs := runCLI(t, "init", "--schema", schema, uri); code != 0 {
		t.Fatalf("init: %s", errs)
	}
	if err := os.MkdirAll(filepath.Join(dir, "c", "graphs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(uri, filepath.Join(dir, "c", "graphs", "k.omni")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, home, "config.yaml", "clusters: { brain: { root: "+filepath.Join(dir, "c")+" } }\nprofiles:\n  admin: { cluster: brain, default_graph: k }\n")
	code, out, errs := runCLI(t, "branch", "list", "--profile", "admin")
	if code != 0 || out != "main\n" {
		t.Fatalf("branch list via a cluster profile: %d %q %q", code, out, errs)
	}
}
