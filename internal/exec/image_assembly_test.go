package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// TestImageAssemblyMatchesScan pins that an image assembled from cached
// fragment images and deletion vectors equals a from-scratch decode of the
// state, after random inserts, updates and deletes leave the tables with
// several fragments and deletion vectors (auto-compaction off). It also
// pins the @key shortcut of LookupUnique against the per-image hash index.
func TestImageAssemblyMatchesScan(t *testing.T) {
	ctx := context.Background()
	// One bulk load first: multi-row fragments, which later writes hide
	// rows of with deletion vectors (a fragment whose rows are all hidden
	// is dropped instead).
	g, _, rng := peopleGraph(t, Options{NoAutoCompact: true}, 5, 25, 40)
	dvs := 0
	for step := range 60 {
		randomPeopleWrite(t, g, rng)
		snap := resolve(t, g, Target{})
		for _, tk := range snapshot.TableKeys(snap.Catalog()) {
			state, n := stateWithDVs(t, snap, tk)
			dvs += n
			probe := make([]string, 27)
			for i := range probe {
				probe[i] = fmt.Sprintf("n%d", i)
			}
			if err := snap.Check(ctx, tk, probe); err != nil {
				t.Fatalf("step %d (%d fragments): %v", step, state.NumFragments(), err)
			}
		}
	}
	if dvs == 0 {
		t.Fatal("no state had a deletion vector: the test is vacuous")
	}
}

// randomPeopleWrite makes one random write to a peopleGraph: an insert,
// keyed update or delete of a person, or an added or removed friendship.
// Referential errors (a friend that does not exist) are expected and
// ignored.
func randomPeopleWrite(t *testing.T, g *Graph, rng *rand.Rand) {
	t.Helper()
	plans := map[string]string{"ins": "insert_person", "set": "set_age", "del": "remove_person", "friend": "add_friend", "unfriend": "remove_friendship"}
	name := fmt.Sprintf("n%d", rng.IntN(25))
	other := fmt.Sprintf("n%d", rng.IntN(25))
	var op string
	var params map[string]any
	switch rng.IntN(6) {
	case 0, 1:
		op, params = "ins", map[string]any{"name": name, "age": rng.IntN(90)}
	case 2:
		op, params = "set", map[string]any{"name": name, "age": rng.IntN(90)}
	case 3:
		op, params = "del", map[string]any{"name": name}
	case 4:
		op, params = "friend", map[string]any{"from": name, "to": other}
	default:
		op, params = "unfriend", map[string]any{"from": name}
	}
	_, _ = g.Mutate(context.Background(), "main", engPlan(t, g, plans[op]), params, MutateOptions{})
}
