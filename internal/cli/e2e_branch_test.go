package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func personNames(t *testing.T, dir, branch string) []string {
	t.Helper()
	args := []string{"query", "--store", dir, "--json", "-e", `query q() { match { $p: Person } return { $p.name } order { $p.name asc } }`}
	if branch != "" {
		args = append(args, "--branch", branch)
	}
	var names []string
	for _, r := range rowsOf(t, mustRun(t, args...)) {
		names = append(names, r["p.name"].(string))
	}
	return names
}

const insertPerson = `query add($name: String, $age: I32) { insert Person { name: $name, age: $age } }`
const setAge = `query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }`

func TestE2EBranchLifecycle(t *testing.T) {
	dir := newSocialGraph(t)
	m := mustRun(t, "branch", "create", "--uri", dir, "--from", "main", "feature", "--json", "--as", "ann")
	if m["name"] != "feature" || m["from"] != "main" || m["actor_id"] != "ann" {
		t.Fatalf("branch create JSON = %v", m)
	}
	if got := mustRun(t, "branch", "list", "--uri", dir, "--json")["branches"]; fmt.Sprint(got) != "[feature main]" {
		t.Fatalf("branch list = %v", got)
	}
	// Writes on the branch stay there.
	mustRun(t, "mutate", "--store", dir, "--branch", "feature", "-e", insertPerson, "--params", `{"name":"Eve","age":22}`, "--json")
	if got := personNames(t, dir, "feature"); fmt.Sprint(got) != "[Alice Bob Charlie Diana Eve]" {
		t.Fatalf("feature persons = %v", got)
	}
	if got := personNames(t, dir, ""); fmt.Sprint(got) != "[Alice Bob Charlie Diana]" {
		t.Fatalf("main persons = %v", got)
	}
	// Fast-forward merge: one commit on main with both parents.
	mainHead := mustRun(t, "commit", "list", dir, "--json")["commits"].([]any)[0].(map[string]any)["graph_commit_id"]
	featHead := mustRun(t, "commit", "list", dir, "--branch", "feature", "--json")["commits"].([]any)[0].(map[string]any)["graph_commit_id"]
	m = mustRun(t, "branch", "merge", "--uri", dir, "feature", "--into", "main", "--json")
	if m["outcome"] != "fast_forward" {
		t.Fatalf("merge = %v", m)
	}
	c := m["commit"].(map[string]any)
	if c["parent_commit_id"] != mainHead || c["merged_parent_commit_id"] != featHead {
		t.Fatalf("fast-forward commit = %v (want parents %v, %v)", c, mainHead, featHead)
	}
	if got := personNames(t, dir, ""); fmt.Sprint(got) != "[Alice Bob Charlie Diana Eve]" {
		t.Fatalf("main after merge = %v", got)
	}
	if m = mustRun(t, "branch", "merge", "--uri", dir, "feature", "--json"); m["outcome"] != "already_up_to_date" {
		t.Fatalf("re-merge = %v", m)
	}
	// Refusals that concern names: exit 1, nothing changed.
	for _, args := range [][]string{
		{"branch", "create", "--uri", dir, "main"},
		{"branch", "delete", "--uri", dir, "main"},
		{"branch", "create", "--uri", dir, "bad branch"},
		{"branch", "create", "--uri", dir, "feature"},
		{"branch", "merge", "--uri", dir, "main", "--into", "main"},
		{"branch", "delete", "--uri", dir, "nope"},
	} {
		if r := runBin(t, args...); r.code != 1 {
			t.Errorf("%v: exit %d, want 1 (%s)", args, r.code, r.stderr)
		}
	}
	// A branch others were created from can be deleted; they keep their history.
	mustRun(t, "branch", "create", "--uri", dir, "--from", "feature", "child", "--json")
	mustRun(t, "branch", "delete", "--uri", dir, "feature", "--json")
	if got := personNames(t, dir, "child"); fmt.Sprint(got) != "[Alice Bob Charlie Diana Eve]" {
		t.Fatalf("child after deleting its parent branch = %v", got)
	}
}

func TestE2EMergeConflict(t *testing.T) {
	dir := newSocialGraph(t)
	mustRun(t, "branch", "create", "--uri", dir, "feature", "--json")
	mustRun(t, "mutate", "--store", dir, "-e", setAge, "--params", `{"name":"Bob","age":26}`, "--json")
	mustRun(t, "mutate", "--store", dir, "--branch", "feature", "-e", setAge, "--params", `{"name":"Bob","age":27}`, "--json")
	before := mustRun(t, "commit", "list", dir, "--json")
	r := runBin(t, "branch", "merge", "--uri", dir, "feature", "--json")
	if r.code != 1 {
		t.Fatalf("conflicting merge: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Conflicts []map[string]any `json:"merge_conflicts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Conflicts) != 1 {
		t.Fatalf("conflict JSON: %v\n%s", err, r.stdout)
	}
	c := out.Conflicts[0]
	if c["kind"] != "divergent_update" || c["type_name"] != "Person" || c["entity_id"] != "Bob" || c["entity_kind"] != "node" {
		t.Fatalf("conflict = %v", c)
	}
	after := mustRun(t, "commit", "list", dir, "--json")
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("a refused merge changed main's history")
	}
	// Non-conflicting divergence merges with a two-parent commit.
	mustRun(t, "mutate", "--store", dir, "--branch", "feature", "-e", setAge, "--params", `{"name":"Bob","age":26}`, "--json")
	mustRun(t, "mutate", "--store", dir, "--branch", "feature", "-e", insertPerson, "--params", `{"name":"Eve","age":22}`, "--json")
	m := mustRun(t, "branch", "merge", "--uri", dir, "feature", "--delete-branch", "--json")
	if m["outcome"] != "merged" || m["branch_deleted"] != true {
		t.Fatalf("merge = %v", m)
	}
	if got := personNames(t, dir, ""); fmt.Sprint(got) != "[Alice Bob Charlie Diana Eve]" {
		t.Fatalf("main after merge = %v", got)
	}
}

func TestE2ELoadFromAndChanges(t *testing.T) {
	dir := newSocialGraph(t)
	data := filepath.Join(t.TempDir(), "eve.jsonl")
	if err := os.WriteFile(data, []byte(`{"type":"Person","data":{"name":"Eve","age":22}}`+"\n"+`{"edge":"Knows","from":"Eve","to":"Alice"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, "load", "--data", data, "--mode", "append", "--branch", "staging", dir); r.code != 1 {
		t.Fatalf("load into a missing branch without --from: exit %d", r.code)
	}
	m := mustRun(t, "load", "--data", data, "--mode", "append", "--branch", "staging", "--from", "main", dir, "--json")
	if m["branch_created"] != true || m["base_branch"] != "main" || m["branch"] != "staging" {
		t.Fatalf("load --from = %v", m)
	}
	id := m["commit"].(map[string]any)["graph_commit_id"].(string)
	ch := mustRun(t, "commit", "changes", "--uri", dir, id, "--json")
	changes := ch["changes"].([]any)
	if len(changes) != 2 {
		t.Fatalf("changes = %v", ch)
	}
	first := changes[0].(map[string]any)
	if first["kind"] != "node" || first["id"] != "Eve" || first["op"] != "insert" || first["before"] != nil {
		t.Fatalf("first change = %v", first)
	}
	if ch["cause"].(map[string]any)["graph_commit_id"] != id {
		t.Fatalf("cause = %v", ch["cause"])
	}
	// Paging: one change per page, tokens bound to the commit.
	p1 := mustRun(t, "commit", "changes", "--uri", dir, id, "--limit", "1", "--page-token=", "--json")
	tok, _ := p1["next_page_token"].(string)
	if len(p1["changes"].([]any)) != 1 || tok == "" {
		t.Fatalf("page 1 = %v", p1)
	}
	p2 := mustRun(t, "commit", "changes", "--uri", dir, id, "--limit", "1", "--page-token", tok, "--json")
	if len(p2["changes"].([]any)) != 1 || p2["next_page_token"] != nil {
		t.Fatalf("page 2 = %v", p2)
	}
	if r := runBin(t, "commit", "changes", "--uri", dir, id, "--page-token", "garbage!"); r.code != 1 || !strings.Contains(r.stderr, "change cursor rejected") {
		t.Fatalf("bad token: exit %d %s", r.code, r.stderr)
	}
	// The first commit has no parent.
	log := mustRun(t, "commit", "list", dir, "--json")["commits"].([]any)
	genesis := log[len(log)-1].(map[string]any)["graph_commit_id"].(string)
	if r := runBin(t, "commit", "changes", "--uri", dir, genesis); r.code != 1 {
		t.Fatalf("changes of the first commit: exit %d", r.code)
	}
}

func TestE2EMaintenance(t *testing.T) {
	dir := newSocialGraph(t)
	for i := 0; i < 6; i++ {
		mustRun(t, "mutate", "--store", dir, "-e", insertPerson, "--params", fmt.Sprintf(`{"name":"P%d","age":%d}`, i, 20+i), "--json")
	}
	m := mustRun(t, "optimize", dir, "--json")
	if _, ok := m["datasets"].([]any); !ok || m["uri"] != dir {
		t.Fatalf("optimize = %v", m)
	}
	again := mustRun(t, "optimize", dir, "--json")
	if again["commit"] != nil {
		t.Fatalf("second optimize committed: %v", again)
	}
	want := personNames(t, dir, "")
	if len(want) != 10 {
		t.Fatalf("persons = %v", want)
	}
	if r := runBin(t, "cleanup", dir); r.code != 2 {
		t.Fatalf("cleanup without a policy: exit %d", r.code)
	}
	prev := mustRun(t, "cleanup", dir, "--keep", "1", "--json")
	if prev["preview"] != true {
		t.Fatalf("cleanup preview = %v", prev)
	}
	done := mustRun(t, "cleanup", dir, "--keep", "1", "--confirm", "--json")
	if done["preview"] != false {
		t.Fatalf("cleanup = %v", done)
	}
	if got := personNames(t, dir, ""); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after cleanup persons = %v, want %v", got, want)
	}
}

// TestE2EConcurrentProcesses runs 8 omnigraph processes inserting into one
// branch at once: every row lands and history stays linear.
func TestE2EConcurrentProcesses(t *testing.T) {
	dir := newSocialGraph(t)
	const procs, each = 8, 3
	var wg sync.WaitGroup
	errs := make(chan string, procs*each)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := runBin(t, "mutate", "--store", dir, "-e", insertPerson, "--params", fmt.Sprintf(`{"name":"W%d_%d","age":%d}`, p, i, i), "--json")
				if r.code != 0 {
					errs <- fmt.Sprintf("writer %d/%d: exit %d %s", p, i, r.code, r.stderr)
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := personNames(t, dir, ""); len(got) != 4+procs*each {
		t.Fatalf("%d persons after concurrent inserts, want %d: %v", len(got), 4+procs*each, got)
	}
	commits := mustRun(t, "commit", "list", dir, "--json")["commits"].([]any)
	for i, c := range commits {
		cm := c.(map[string]any)
		if cm["merged_parent_commit_id"] != nil {
			t.Fatalf("commit %v has two parents", cm)
		}
		if i+1 < len(commits) && cm["parent_commit_id"] != commits[i+1].(map[string]any)["graph_commit_id"] {
			t.Fatalf("history is not a chain at %d", i)
		}
	}
}
