package omnigraph_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

// TestDiffBetweenRevisions: both sides of a diff take revisions (a branch,
// BRANCH~N, an id prefix), and the set names the commits they resolved to.
func TestDiffBetweenRevisions(t *testing.T) {
	ctx := context.Background()
	g, err := omnigraph.Init(ctx, filepath.Join(t.TempDir(), "d.omni"), "d.pg",
		"node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n", "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	load := func(data string) string {
		res, err := g.Load(ctx, strings.NewReader(data), omnigraph.LoadOptions{Mode: omnigraph.Merge})
		if err != nil {
			t.Fatal(err)
		}
		return res.Commit.ID
	}
	first := load(`{"type":"Person","data":{"name":"Ada","age":36}}` + "\n" + `{"type":"Person","data":{"name":"Bo","age":1}}` + "\n")
	last := load(`{"type":"Person","data":{"name":"Ada","age":37}}` + "\n" + `{"edge":"Knows","from":"Ada","to":"Bo"}` + "\n")
	cases := []struct {
		name, from, to string
		wantFrom       string
	}{
		{"ids", first, last, first},
		{"prefix and branch", first[:10], "main", first},
		{"first-parent step", "main~1", "main", first},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := g.DiffBetween(ctx, omnigraph.Target{Snapshot: tc.from}, omnigraph.Target{Snapshot: tc.to}, omnigraph.ChangeScope{})
			if err != nil {
				t.Fatal(err)
			}
			if cs.From.ID != tc.wantFrom || cs.To.ID != last || cs.Stats != (omnigraph.ChangeStats{Inserts: 1, Updates: 1}) {
				t.Fatalf("diff %s..%s: %s..%s %+v", tc.from, tc.to, cs.From.ID, cs.To.ID, cs.Stats)
			}
			edge, ada := cs.Changes[0], cs.Changes[1] // edges sort before nodes
			if edge.Kind != "edge" || edge.Src != "Ada" || edge.Dst != "Bo" || ada.ID != "Ada" || strings.Join(ada.ChangedProperties(), ",") != "age" {
				t.Fatalf("changes %+v", cs.Changes)
			}
		})
	}
	if _, err := g.DiffBetween(ctx, omnigraph.Target{Snapshot: "nope"}, omnigraph.Target{}, omnigraph.ChangeScope{}); !errors.Is(err, omnigraph.ErrCommitNotFound) {
		t.Fatalf("bad revision: %v", err)
	}
}
