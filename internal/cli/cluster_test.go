package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

const clusterSchema = `node Person {
    name: String @key
    age: I32?
}
`

const clusterQueries = `query get_person($name: String) {
    match {
        $p: Person { name: $name }
    }
    return { $p.name, $p.age }
}
`

const clusterPolicy = `version: 1
groups:
  admins: [act-andrew]
  readers: [act-reader]
protected_branches: [main]
rules:
  - id: read-data
    allow:
      actors: { group: readers }
      actions: [read, export]
      branch_scope: any
  - id: admin-merge
    allow:
      actors: { group: admins }
      actions: [branch_merge]
      target_branch_scope: protected
`

const clusterServerPolicy = `version: 1
groups:
  admins: [act-andrew]
rules:
  - id: list
    allow:
      actors: { group: admins }
      actions: [graph_list]
`

const clusterYAML = `version: 1
graphs:
  knowledge:
    schema: knowledge.pg
    queries: queries/
policies:
  base:
    file: base.policy.yaml
    applies_to: [knowledge]
  server:
    file: server.policy.yaml
    applies_to: [cluster]
`

func writeClusterDir(t *testing.T) string {
	t.Helper()
	return fixture.WriteFiles(t, t.TempDir(), map[string]string{
		"cluster.yaml": clusterYAML, "knowledge.pg": clusterSchema, "queries/people.gq": clusterQueries,
		"base.policy.yaml": clusterPolicy, "server.policy.yaml": clusterServerPolicy,
	})
}

func TestClusterCommands(t *testing.T) {
	t.Setenv("OMNIGRAPH_HOME", t.TempDir())
	dir := writeClusterDir(t)

	code, out, errs := runCLI(t, "cluster", "validate", "--config", dir)
	if code != 0 || !strings.Contains(out, "cluster valid:") {
		t.Fatalf("validate: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "cluster", "apply", "--config", dir, "--json")
	var ap struct {
		OK          bool `json:"ok"`
		Diagnostics []struct{ Code string }
	}
	if code != 1 || json.Unmarshal([]byte(out), &ap) != nil || ap.OK || ap.Diagnostics[0].Code != "state_missing" {
		t.Fatalf("apply before import: %d %s", code, out)
	}
	if code, out, errs = runCLI(t, "cluster", "import", "--config", dir); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errs)
	}
	code, out, _ = runCLI(t, "cluster", "plan", "--config", dir)
	if code != 0 || !strings.Contains(out, "+ create graph.knowledge [applied]") || !strings.Contains(out, "+ create policy.server [applied]") {
		t.Fatalf("plan: %d\n%s", code, out)
	}
	code, out, errs = runCLI(t, "--as", "act-andrew", "cluster", "apply", "--config", dir)
	if code != 0 || !strings.Contains(out, "converged: true") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCLI(t, "cluster", "status", "--config", dir, "--json")
	var st struct {
		OK            bool  `json:"ok"`
		StateRevision int64 `json:"state_revision"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.OK || st.StateRevision != 2 {
		t.Fatalf("status: %d %s", code, out)
	}
	// The graph is a normal graph at the derived root.
	code, out, _ = runCLI(t, "schema", "show", filepath.Join(dir, "graphs", "knowledge.omni"))
	if code != 0 || out != clusterSchema {
		t.Fatalf("schema show of the created graph: %d %q", code, out)
	}
	if code, _, errs = runCLI(t, "cluster", "force-unlock", "01NOPE", "--config", dir); code != 1 || !strings.Contains(errs, "lock_missing") {
		t.Fatalf("force-unlock without a lock: %d %s", code, errs)
	}
	if code, _, _ = runCLI(t, "cluster", "approve", "graph.knowledge", "--config", dir); code != 1 {
		t.Fatalf("approve without actor: %d", code)
	}
	// --as is refused on commands that record no actor.
	if code, _, _ = runCLI(t, "--as", "x", "cluster", "plan", "--config", dir); code != 2 {
		t.Fatalf("plan --as: %d", code)
	}

	// Policy commands read the applied bundles.
	code, out, errs = runCLI(t, "policy", "validate", "--cluster", dir)
	if code != 0 || out != "policy valid: bundle 'base' [2 actors]\npolicy valid: bundle 'server' [1 actors]\n" {
		t.Fatalf("policy validate: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "policy", "explain", "--cluster", dir, "--actor", "act-andrew", "--action", "branch_merge", "--branch", "dev", "--target-branch", "main")
	if code != 0 || !strings.HasPrefix(out, "allow: rule 'admin-merge'") {
		t.Fatalf("explain allow: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "policy", "explain", "--cluster", dir, "--actor", "act-reader", "--action", "change", "--branch", "main", "--json")
	var ex struct {
		Allowed  bool   `json:"allowed"`
		Decision string `json:"decision"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ex) != nil || ex.Allowed || ex.Decision != "deny" {
		t.Fatalf("explain deny: %d %s", code, out)
	}
	tests := writeFile(t, t.TempDir(), "tests.yaml", `version: 1
cases:
  - {id: reader-reads, actor: act-reader, action: read, branch: main, expect: allow}
  - {id: reader-merges, actor: act-reader, action: branch_merge, branch: dev, target_branch: main, expect: deny}
  - {id: admin-lists, actor: act-andrew, action: graph_list, expect: allow}
`)
	if code, out, errs = runCLI(t, "policy", "test", "--cluster", dir, "--tests", tests); code != 0 || out != "3 passed, 0 failed\n" {
		t.Fatalf("policy test: %d %q %q", code, out, errs)
	}
	bad := writeFile(t, t.TempDir(), "bad.yaml", "version: 1\ncases:\n  - {id: wrong, actor: act-reader, action: change, branch: main, expect: allow}\n")
	if code, out, _ = runCLI(t, "policy", "test", "--cluster", dir, "--tests", bad); code != 1 || !strings.Contains(out, "FAIL wrong: expected allow, got deny") {
		t.Fatalf("failing policy test: %d %q", code, out)
	}
	if code, _, _ = runCLI(t, "policy", "validate"); code != 2 {
		t.Fatalf("policy validate without --cluster: %d", code)
	}
}

func TestQueriesCluster(t *testing.T) {
	t.Setenv("OMNIGRAPH_HOME", t.TempDir())
	dir := writeClusterDir(t)
	for _, args := range [][]string{{"cluster", "import", "--config", dir}, {"cluster", "apply", "--config", dir}} {
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Fatal(errs)
		}
	}
	code, out, errs := runCLI(t, "queries", "list", "--cluster", dir)
	if code != 0 || out != "knowledge.get_person (read) ($name: string)\n" {
		t.Fatalf("queries list: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "queries", "list", "--cluster", dir, "--graph", "knowledge", "--json")
	if code != 0 || !strings.Contains(out, `"mcp_expose": true`) || !strings.Contains(out, `"kind": "string"`) {
		t.Fatalf("queries list --json: %d %s", code, out)
	}
	if code, out, _ = runCLI(t, "queries", "validate", "--cluster", dir); code != 0 || out != "1 stored queries valid, 0 broken\n" {
		t.Fatalf("queries validate: %d %q", code, out)
	}
	if code, _, _ = runCLI(t, "queries", "validate"); code != 2 {
		t.Fatalf("validate without --cluster: %d", code)
	}
}
