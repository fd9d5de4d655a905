package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// fixtureSchemas returns every cookbook and upstream .pg fixture.
func fixtureSchemas(tb testing.TB) []string {
	tb.Helper()
	cook, _ := filepath.Glob(filepath.Join(fixture.Dir(tb, "cookbooks"), "*", "schema.pg"))
	up, _ := filepath.Glob(filepath.Join(fixture.Dir(tb, "upstream"), "*.pg"))
	return append(cook, up...)
}

// TestFixturesCompile checks that every reference schema compiles, and pins
// a few facts about each so a silently-wrong parse cannot pass.
func TestFixturesCompile(t *testing.T) {
	files := fixtureSchemas(t)
	if len(files) < 12 {
		t.Fatalf("found only %d fixture schemas", len(files))
	}
	want := map[string][2]int{ // nodes, edges
		"industry-intel": {10, 23}, "pharma-intel": {15, 38}, "second-brain": {13, 43}, "vc-os": {17, 67},
		"chain": {1, 1}, "filtered_nearest": {1, 0}, "metric": {2, 1}, "ranked_edge": {1, 1},
		"search": {1, 0}, "signals": {4, 6}, "test": {2, 2}, "truth": {1, 1},
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pg")
		if name == "schema" {
			name = filepath.Base(filepath.Dir(f))
		}
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c := mustCompile(t, string(src))
			if got := [2]int{len(c.Nodes), len(c.Edges)}; got != want[name] {
				t.Errorf("nodes, edges = %v, want %v", got, want[name])
			}
			for _, n := range c.Nodes {
				for _, p := range n.Props {
					if p.ID == 0 {
						t.Errorf("%s.%s has no id", n.Name, p.Name)
					}
				}
			}
			for _, e := range c.Edges {
				if _, ok := c.Node(e.From); !ok {
					t.Errorf("edge %s from unknown %s", e.Name, e.From)
				}
			}
		})
	}
}

func TestFixtureDetails(t *testing.T) {
	dir := fixture.Dir(t, "upstream")
	src, err := os.ReadFile(filepath.Join(dir, "test.pg"))
	if err != nil {
		t.Fatal(err)
	}
	c := mustCompile(t, string(src))
	p, _ := c.Node("Person")
	if len(p.Key) != 1 || p.Key[0] != "name" {
		t.Errorf("Person key = %v", p.Key)
	}
	if id, err := p.NodeID(map[string]any{"name": "Alice", "age": int64(30)}); err != nil || id != "Alice" {
		t.Errorf("NodeID = %q, %v", id, err)
	}
	if e, ok := c.Edge("worksAt"); !ok || e.Name != "WorksAt" || e.To != "Company" {
		t.Errorf("Edge(worksAt) = %+v, %v", e, ok)
	}

	cook := fixture.Dir(t, "cookbooks", "industry-intel", "schema.pg")
	src, err = os.ReadFile(cook)
	if err != nil {
		t.Fatal(err)
	}
	c = mustCompile(t, string(src))
	e, _ := c.Edge("PartOfArtifact")
	if e.Card != (Card{Min: 1, Max: 1}) || len(e.Uniques) != 1 || e.Uniques[0][0] != "src" {
		t.Errorf("PartOfArtifact = card %v uniques %v", e.Card, e.Uniques)
	}
}
