package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

const testSchema = `node Person {
    name: String @key
    age: I32?
}

edge Knows: Person -> Person
`

const testQueries = fixture.PersonQueries

const testPolicy = `version: 1
groups:
  writers: [act-writer]
  readers: [act-reader]
protected_branches: [main]
rules:
  - id: read-all
    allow:
      actors: { group: readers }
      actions: [read, export, invoke_query]
  - id: write-all
    allow:
      actors: { group: writers }
      actions: [read, change, invoke_query, branch_create, branch_merge, branch_delete]
`

const testClusterYAML = `version: 1
metadata: { name: test-brain }
graphs:
  knowledge:
    schema: knowledge.pg
    queries: queries/
policies:
  base:
    file: base.policy.yaml
    applies_to: [knowledge]
`

// withScratch is testClusterYAML with a second graph, scratch.
var withScratch = strings.Replace(testClusterYAML, "graphs:\n", "graphs:\n  scratch:\n    schema: knowledge.pg\n", 1)

// approvedScratchDelete applies withScratch, then drops scratch from the
// config and approves its deletion: the next apply deletes the graph.
func approvedScratchDelete(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	dir := writeCluster(t, map[string]string{"cluster.yaml": withScratch})
	mustOK(t, Import(ctx, dir, Options{}).Report)
	mustOK(t, Apply(ctx, dir, "op", Options{}).Report)
	writeFile(t, dir, "cluster.yaml", testClusterYAML)
	mustOK(t, Approve(ctx, dir, "graph.scratch", "op", Options{}).Report)
	return dir
}

// writeCluster lays out a config directory; files maps relative paths to
// contents and overrides the defaults.
func writeCluster(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{
		"cluster.yaml":      testClusterYAML,
		"knowledge.pg":      testSchema,
		"queries/people.gq": testQueries,
		"base.policy.yaml":  testPolicy,
	}
	for k, v := range files {
		all[k] = v
	}
	return fixture.WriteFiles(t, dir, all)
}

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func codes(ds []Diagnostic) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Severity+":"+d.Code)
	}
	return strings.Join(out, ",")
}

func mustOK(t *testing.T, r Report) {
	t.Helper()
	if !r.OK {
		t.Fatalf("%s not ok: %v", r.Command, r.Diagnostics)
	}
}

func readRaw(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
