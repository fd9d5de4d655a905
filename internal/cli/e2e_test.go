package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// The end-to-end tests run the real omnigraph binary, built once per test
// process, with --json, and compare the parsed output.

// cliBinary is the omnigraph binary the subprocess tests run.
var cliBinary = &fixture.Binary{Pkg: "../../cmd/omnigraph", Name: "omnigraph"}

func omnigraphBin(t *testing.T) string { return cliBinary.Path(t) }

type runResult struct {
	code           int
	stdout, stderr string
}

func runBin(t *testing.T, args ...string) runResult {
	t.Helper()
	return runBinEnv(t, nil, args...)
}

// runBinEnv runs the binary with env added to this process's environment.
func runBinEnv(t *testing.T, env []string, args ...string) runResult {
	t.Helper()
	r, err := procRun(omnigraphBin(t), env, args...)
	if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return r
}

func mustRun(t *testing.T, args ...string) map[string]any {
	t.Helper()
	r := runBin(t, args...)
	if r.code != 0 {
		t.Fatalf("omnigraph %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("omnigraph %s: bad JSON %v:\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return m
}

// newSocialGraph initializes and loads examples/social into a temp dir.
func newSocialGraph(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "social.omni")
	mustRun(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), dir, "--json")
	mustRun(t, "load", "--data", filepath.Join(exampleDir, "data.jsonl"), "--mode", "overwrite", dir, "--json", "--quiet")
	return dir
}

func rowsOf(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	raw, _ := json.Marshal(m["rows"])
	var rows []map[string]any
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestE2EInitLoadQuery(t *testing.T) {
	dir := newSocialGraph(t)
	q := filepath.Join(exampleDir, "queries.gq")
	tests := []struct {
		name    string
		params  string
		want    []map[string]any
		ordered bool
	}{
		{"get_person", `{"name":"Alice"}`, []map[string]any{{"p.name": "Alice", "p.age": 30.0}}, true},
		{"get_person", `{"name":"Nobody"}`, []map[string]any{}, true},
		{"friends_of", `{"name":"Alice"}`, []map[string]any{{"f.name": "Bob", "f.age": 25.0}, {"f.name": "Charlie", "f.age": 35.0}}, true},
		{"friend_counts", ``, []map[string]any{{"p.name": "Alice", "friends": 2.0}, {"p.name": "Bob", "friends": 1.0}}, true},
		{"unemployed", ``, []map[string]any{{"p.name": "Charlie"}, {"p.name": "Diana"}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name+tc.params, func(t *testing.T) {
			args := []string{"query", tc.name, "--query", q, "--store", dir, "--json"}
			if tc.params != "" {
				args = append(args, "--params", tc.params)
			}
			m := mustRun(t, args...)
			got := rowsOf(t, m)
			if !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("rows = %v, want %v", got, tc.want)
			}
			if m["query_name"] != tc.name || int(m["row_count"].(float64)) != len(tc.want) {
				t.Fatalf("header = %v", m)
			}
			if id, _ := m["graph_commit_id"].(string); id == "" {
				t.Fatalf("graph_commit_id missing: %v", m)
			}
		})
	}
}

func TestE2EMutateAndTimeTravel(t *testing.T) {
	dir := newSocialGraph(t)
	mq := filepath.Join(exampleDir, "mutations.gq")
	rq := filepath.Join(exampleDir, "queries.gq")

	before := mustRun(t, "query", "get_person", "--query", rq, "--store", dir, "--params", `{"name":"Alice"}`, "--json")
	snap := before["graph_commit_id"].(string)

	m := mustRun(t, "mutate", "set_age", "--query", mq, "--store", dir, "--params", `{"name":"Alice","age":31}`, "--json", "--as", "tester")
	if m["affected_nodes"].(float64) != 1 || m["commit"] == nil {
		t.Fatalf("set_age result = %v", m)
	}
	c := m["commit"].(map[string]any)
	if c["parent_commit_id"] != snap || c["actor_id"] != "tester" {
		t.Fatalf("commit = %v (want parent %s, actor tester)", c, snap)
	}

	now := rowsOf(t, mustRun(t, "query", "get_person", "--query", rq, "--store", dir, "--params", `{"name":"Alice"}`, "--json"))
	if now[0]["p.age"] != 31.0 {
		t.Fatalf("after update: %v", now)
	}
	old := rowsOf(t, mustRun(t, "query", "get_person", "--query", rq, "--store", dir, "--params", `{"name":"Alice"}`, "--snapshot", snap, "--json"))
	if old[0]["p.age"] != 30.0 {
		t.Fatalf("time travel: %v", old)
	}

	// A mutation that matches nothing publishes nothing.
	m = mustRun(t, "mutate", "set_age", "--query", mq, "--store", dir, "--params", `{"name":"Nobody","age":1}`, "--json")
	if m["commit"] != nil || m["affected_nodes"].(float64) != 0 {
		t.Fatalf("no-op mutation = %v", m)
	}

	// A stale --if-commit exits 4 with the precondition_failure shape.
	r := runBin(t, "mutate", "set_age", "--query", mq, "--store", dir, "--params", `{"name":"Alice","age":40}`, "--if-commit", snap, "--json")
	if r.code != 4 || !strings.Contains(r.stdout, "precondition_failure") {
		t.Fatalf("stale if-commit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Commit list: newest first, init + load + one mutation.
	log := mustRun(t, "commit", "list", dir, "--json")
	commits := log["commits"].([]any)
	if len(commits) != 3 {
		t.Fatalf("commit list has %d commits, want 3: %v", len(commits), log)
	}
	if commits[0].(map[string]any)["graph_commit_id"] != c["graph_commit_id"] {
		t.Fatalf("newest commit is not first: %v", commits)
	}
	show := mustRun(t, "commit", "show", "--uri", dir, c["graph_commit_id"].(string), "--json")
	if show["graph_commit_id"] != c["graph_commit_id"] {
		t.Fatalf("commit show = %v", show)
	}
}

func TestE2EExportRoundTrip(t *testing.T) {
	dir := newSocialGraph(t)
	r := runBin(t, "export", dir)
	if r.code != 0 {
		t.Fatalf("export: exit %d %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 11 {
		t.Fatalf("export has %d lines, want 11:\n%s", len(lines), r.stdout)
	}
	dump := filepath.Join(t.TempDir(), "dump.jsonl")
	if err := os.WriteFile(dump, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	dir2 := filepath.Join(t.TempDir(), "copy.omni")
	mustRun(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), dir2, "--json")
	mustRun(t, "load", "--data", dump, "--mode", "overwrite", dir2, "--json")
	r2 := runBin(t, "export", dir2)
	a, b := strings.Split(strings.TrimSpace(r.stdout), "\n"), strings.Split(strings.TrimSpace(r2.stdout), "\n")
	sort.Strings(a)
	sort.Strings(b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("export after round trip differs:\n%s\n---\n%s", r.stdout, r2.stdout)
	}
}

func TestE2EBadInputChangesNothing(t *testing.T) {
	dir := newSocialGraph(t)
	head := func() string {
		log := mustRun(t, "commit", "list", dir, "--json")
		return log["commits"].([]any)[0].(map[string]any)["graph_commit_id"].(string)
	}
	h0 := head()
	tmp := t.TempDir()
	tests := []struct {
		name, data, want string
	}{
		{"malformed json", `{"type":"Person","data":{"name":"Zed"`, "line 1"},
		{"unknown type", `{"type":"Robot","data":{"name":"R2"}}`, "Robot"},
		{"unknown property", `{"type":"Person","data":{"name":"Zed","height":2}}`, "height"},
		{"type mismatch", `{"type":"Person","data":{"name":"Zed","age":"old"}}`, "age"},
		{"dangling edge", `{"edge":"Knows","from":"Alice","to":"Ghost"}`, "Ghost"},
		{"second line bad", "{\"type\":\"Person\",\"data\":{\"name\":\"Ok\"}}\n{\"type\":\"Person\",\"data\":{\"nam\":\"x\"}}", "line 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(tmp, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
			if err := os.WriteFile(p, []byte(tc.data+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := runBin(t, "load", "--data", p, "--mode", "merge", dir, "--quiet")
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q (want exit 1 mentioning %q)", r.code, r.stderr, tc.want)
			}
			if h := head(); h != h0 {
				t.Fatalf("head moved from %s to %s after a rejected load", h0, h)
			}
		})
	}
}

func TestE2EUsage(t *testing.T) {
	dir := newSocialGraph(t)
	for _, args := range [][]string{
		{"load", "--data", "x.jsonl", dir},                           // --mode missing
		{"load", "--data", "x.jsonl", "--mode", "upsert", dir},       // bad mode
		{"query", "-e", "q", "--query", "f.gq", "--store", dir},      // conflicting sources
		{"query", "x", "--store", dir, "--format", "xml", "-e", "q"}, // bad format
		{"query", "x", "--store", dir, "--branch", "a", "--snapshot", "b", "-e", "q"},
	} {
		if r := runBin(t, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	if r := runBin(t, "query", "x", "-e", "q", "--store", filepath.Join(t.TempDir(), "nothing")); r.code != 1 {
		t.Errorf("query on a missing graph: exit %d, want 1", r.code)
	}
	if r := runBin(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), dir); r.code != 1 {
		t.Errorf("init over an existing graph: exit %d, want 1", r.code)
	}
}

func TestE2ELintAgainstGraph(t *testing.T) {
	dir := newSocialGraph(t)
	m := mustRun(t, "lint", dir, "--query", filepath.Join(exampleDir, "queries.gq"), "--json")
	if m["status"] != "ok" || m["schema_source"] != dir {
		t.Fatalf("graph-backed lint = %v", m)
	}
	bad := filepath.Join(t.TempDir(), "bad.gq")
	if err := os.WriteFile(bad, []byte(`query q() { match { $r: Robot } return { $r.name } }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, "lint", "--store", dir, "--query", bad, "--json"); r.code != 1 || !strings.Contains(r.stdout, "T1") {
		t.Fatalf("graph-backed lint of a bad query: exit %d\n%s", r.code, r.stdout)
	}
}
