package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// TestCompactedImageMatchesDecode pins the images of compacted fragments
// (snapshot/moved.go): an inline compaction reads its run from the
// cached fragment images, caches the images of the fragments it writes
// without decoding them, and the next image maps those fragments onto the
// rows the previous image held. Across random inserts, keyed updates and
// deletes on main and on a branch forked from it (both deriving from the
// images they share), every head's image after every write equals a
// from-scratch decode of its state and passes snapshot.Check (every
// lookup, Row path and index against the decode); at the end so does
// every commit of both logs read by time travel, before and after each
// compaction. The run is not vacuous: compactions happened, and images
// were derived with moved fragments.
func TestCompactedImageMatchesDecode(t *testing.T) {
	ctx := context.Background()
	g, _, _ := peopleGraph(t, Options{CompactTargetRows: 8}, 11, 40, 60)
	rng := rand.New(rand.NewPCG(31, 32))
	tables := []string{snapshot.NodeKey("Person"), snapshot.EdgeKey("Knows")}
	moved := 0
	check := func(where string, at Target) {
		t.Helper()
		snap := resolve(t, g, at)
		for _, tk := range tables {
			want, err := snap.Decode(ctx, tk)
			if err != nil {
				t.Fatal(err)
			}
			var got *snapshot.Rows
			if tk == tables[0] {
				nt, err := snap.Nodes(ctx, "Person")
				if err != nil {
					t.Fatal(err)
				}
				got, moved = nt.Compact(), moved+nt.MovedParts()
			} else {
				et, err := snap.Edges(ctx, "Knows")
				if err != nil {
					t.Fatal(err)
				}
				got, moved = et.Compact(), moved+et.MovedParts()
			}
			if !reflect.DeepEqual(got.IDs, want.IDs) || !reflect.DeepEqual(got.Src, want.Src) ||
				!reflect.DeepEqual(got.Dst, want.Dst) || !reflect.DeepEqual(got.Cols, want.Cols) {
				t.Fatalf("%s %s: image's live rows differ from a decode of its state", where, tk)
			}
			if err := snap.Check(ctx, tk, []string{"n1", "n39", "m3", "gone"}); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		}
	}
	branches := []string{"main"}
	for s := range 160 {
		if s == 40 {
			if err := g.CreateBranch(ctx, "side", "main", "tester"); err != nil {
				t.Fatal(err)
			}
			branches = append(branches, "side")
		}
		// One to three writes between reads: an image is then derived
		// across a compaction and the writes after it (which hide rows of
		// the fragments it wrote).
		for range 1 + rng.IntN(3) {
			branch := branches[rng.IntN(len(branches))]
			params := map[string]any{"name": fmt.Sprintf("m%d", rng.IntN(300)), "age": rng.IntN(90)}
			q := "ins"
			switch r := rng.IntN(10); {
			case r < 3:
			case r < 7:
				q, params["name"] = "set", fmt.Sprintf("n%d", rng.IntN(40))
			case r < 8:
				q, params = "del", map[string]any{"name": fmt.Sprintf("n%d", rng.IntN(40))}
			default:
				q, params = "friend", map[string]any{"from": fmt.Sprintf("n%d", rng.IntN(40)), "to": fmt.Sprintf("n%d", rng.IntN(40))}
			}
			_, _ = g.Mutate(ctx, branch, lookupPlan(t, g, q), params, MutateOptions{})
		}
		for _, b := range branches {
			check(fmt.Sprintf("step %d %s", s, b), Target{Branch: b})
		}
	}
	compactions := 0
	for _, b := range branches {
		log := commitLog(t, g, b, 0)
		for _, c := range log {
			if c.Kind == string(commit.KindMaintenance) {
				compactions++
			}
			check(fmt.Sprintf("%s commit %s (%s)", b, c.ID, c.Kind), Target{Snapshot: c.ID})
		}
	}
	if compactions == 0 || moved == 0 {
		t.Fatalf("%d compactions, %d moved fragments in the images read: the test is vacuous", compactions, moved)
	}
	t.Logf("%d compactions; %d moved fragments in the images read", compactions, moved)
}
