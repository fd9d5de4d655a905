package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/server"
)

// TestServedAgainstServer runs the CLI's served mode against the real HTTP
// server (internal/server over an embedded graph), so the client and the
// server agree on routes, shapes and statuses, not just on the spec.
func TestServedAgainstServer(t *testing.T) {
	home := freshHome(t)
	dir := t.TempDir()
	schema := writeFile(t, dir, "s.pg", "node Person {\n    name: String @key\n    age: I32?\n}\n\nedge Knows: Person -> Person\n")
	uri := filepath.Join(dir, "g.omni")
	if code, _, errs := runCLI(t, "init", "--schema", schema, uri); code != 0 {
		t.Fatal(errs)
	}
	stored := "query get_person($name: String) {\n    match {\n        $p: Person { name: $name }\n    }\n    return { $p.name, $p.age }\n}\n"
	srvURL := serve(t, server.Config{
		Graphs:     []server.GraphConfig{{ID: "knowledge", URI: uri, Queries: []server.StoredQuery{{Name: "get_person", Source: stored}}}},
		Tokens:     []server.Token{{Actor: "act-writer", Token: "tw"}},
		Authorizer: server.AllowAll{},
	})
	writeFile(t, home, "config.yaml", "servers:\n  dev: { url: "+srvURL+" }\nprofiles:\n  work: { server: dev, default_graph: knowledge }\n")
	t.Setenv("OMNIGRAPH_TOKEN_DEV", "tw")
	data := writeFile(t, dir, "d.jsonl", `{"type":"Person","data":{"name":"Ada","age":36}}`+"\n"+`{"type":"Person","data":{"name":"Bob","age":41}}`+"\n"+`{"edge":"Knows","from":"Ada","to":"Bob"}`+"\n")

	var head string
	steps := []struct {
		name   string
		args   []string
		code   int
		out    string
		errOut string
	}{
		{"load", []string{"load", "--profile", "work", "--data", data, "--mode", "merge", "--json"}, 0, `"total_entities": 3`, ""},
		{"query", []string{"query", "--profile", "work", "-e", "query q() { match { $p: Person } return { $p.name } order { $p.name asc } }", "--format", "csv"}, 0, "p.name\nAda\nBob\n", ""},
		{"stored query", []string{"query", "get_person", "--profile", "work", "--params", `{"name":"Bob"}`, "--json"}, 0, `"p.age": 41`, ""},
		{"unknown stored query", []string{"query", "nope", "--profile", "work"}, 1, "", "error: "},
		{"mutate", []string{"mutate", "--profile", "work", "-e", "query add() { insert Person { name: \"Cy\" } }", "--json"}, 0, `"affected_nodes": 1`, ""},
		{"branch create", []string{"branch", "create", "dev", "--profile", "work", "--json"}, 0, `"name": "dev"`, ""},
		{"branch list", []string{"branch", "list", "--profile", "work"}, 0, "dev\nmain\n", ""},
		{"mutate on dev", []string{"mutate", "--profile", "work", "--branch", "dev", "-e", "query add() { insert Person { name: \"Di\" } }"}, 0, "on branch dev", ""},
		{"merge", []string{"branch", "merge", "dev", "--profile", "work"}, 0, "merge dev into main: fast_forward", ""},
		{"branch delete", []string{"branch", "delete", "dev", "--profile", "work", "--yes"}, 0, "deleted branch dev", ""},
		{"commit list", []string{"commit", "list", "--profile", "work", "--json"}, 0, `"graph_commit_id"`, ""},
		{"schema show", []string{"schema", "show", "--profile", "work"}, 0, "edge Knows: Person -> Person", ""},
		{"queries list", []string{"queries", "list", "--profile", "work"}, 0, "get_person (read)", ""},
		{"export", []string{"export", "--profile", "work", "--type", "Person"}, 0, `"name":"Di"`, ""},
		{"snapshot", []string{"snapshot", "--profile", "work"}, 0, "graph_branch: main", ""},
		{"bad query is 400 → exit 1", []string{"query", "--profile", "work", "-e", "query q() { match { $p: Nobody } return { $p.name } }"}, 1, "", "error: "},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			code, out, errs := runCLI(t, s.args...)
			if code != s.code || !strings.Contains(out, s.out) || !strings.Contains(errs, s.errOut) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, s.code, out, errs)
			}
		})
	}
	// The text listing shows when each commit was made, as the embedded one
	// does (the server sends created_at).
	if code, out, errs := runCLI(t, "commit", "list", "--profile", "work"); code != 0 || out == "" || strings.Contains(out, "0001-01-01") {
		t.Fatalf("commit list: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ := runCLI(t, "commit", "list", "--profile", "work", "--limit", "1", "--json")
	if code != 0 {
		t.Fatal(out)
	}
	i := strings.Index(out, `"graph_commit_id": "`)
	head = out[i+len(`"graph_commit_id": "`):]
	head = head[:strings.IndexByte(head, '"')]
	// A lost conditional write: exit 4, precondition_failure JSON.
	code, out, errs := runCLI(t, "mutate", "--profile", "work", "-e", "query add() { insert Person { name: \"Ed\" } }", "--if-commit", "01HZZZZZZZZZZZZZZZZZZZZZZZ", "--json")
	if code != 4 || !strings.Contains(out, `"precondition_failure"`) || !strings.Contains(out, head) {
		t.Fatalf("lost CAS: %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs = runCLI(t, "mutate", "--profile", "work", "-e", "query add() { insert Person { name: \"Ed\" } }", "--if-commit", head); code != 0 {
		t.Fatalf("won CAS: %d %s", code, errs)
	}
}
