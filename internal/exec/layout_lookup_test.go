package exec

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// lookupQueries chain keyed updates with inserts of the same keys, and
// keyed deletes with each other, in one mutation, so the key path meets
// pending, shadowed and deleted rows.
const lookupQueries = `
query ins($name: String, $age: I32) { insert Person { name: $name, age: $age } }
query set($name: String, $age: I32) { update Person set { age: $age } where name = $name }
query del($name: String) { delete Person where name = $name }
query friend($from: String, $to: String) { insert Knows { from: $from, to: $to } }
query unfriend($from: String) { delete Knows where from = $from }
query ins_set($name: String, $age: I32) {
    insert Person { name: $name, age: $age }  update Person set { age: 77 } where name = $name }
query set_set($name: String, $other: String, $age: I32) {
    update Person set { age: $age } where name = $name  update Person set { age: 6 } where name = $other
    update Person set { age: 8 } where name = $name }
query ins_ins_set($name: String, $other: String, $age: I32) {
    insert Person { name: $name, age: $age }  insert Person { name: $other, age: 3 }
    update Person set { age: 4 } where name = $other }
query del_del($name: String, $other: String) {
    delete Person where name = $name  delete Person where name = $other  delete Person where name = $name }
query del_co($name: String) { delete Company where name = $name }
`

// lookupGraph returns a graph with a bulk-loaded Person/Knows table and a
// function that applies one random mutation (errors such as a missing
// friend are expected and ignored).
func lookupGraph(t *testing.T, o Options) (*Graph, func(rng *rand.Rand)) {
	t.Helper()
	ctx := context.Background()
	g, _, _ := peopleGraph(t, o, 7, 30, 50)
	step := func(rng *rand.Rand) {
		name, other := fmt.Sprintf("n%d", rng.IntN(32)), fmt.Sprintf("n%d", rng.IntN(32))
		var q string
		params := map[string]any{"name": name, "age": rng.IntN(90)}
		switch rng.IntN(7) {
		case 0, 1:
			q = "ins"
		case 2:
			q = "set"
		case 3:
			q = "del"
		case 4:
			q, params = "friend", map[string]any{"from": name, "to": other}
		case 5:
			q, params = "unfriend", map[string]any{"from": name}
		default:
			q, params["other"] = []string{"set_set", "ins_ins_set", "del_del"}[rng.IntN(3)], other
		}
		_, _ = g.Mutate(ctx, "main", lookupPlan(t, g, q), params, MutateOptions{})
	}
	return g, step
}

// peopleGraph initializes a graph of engSchema with options o on an
// in-memory store (checked after the test) and bulk-loads persons n0…
// (age i) and knows random Knows edges among them, drawn from a source
// seeded by seed, which it returns for the test's further draws.
func peopleGraph(t *testing.T, o Options, seed uint64, persons, knows int) (*Graph, storage.Store, *rand.Rand) {
	t.Helper()
	st := storage.NewMem()
	g := mustInit(t, st, "test.pg", engSchema, "tester", o)
	t.Cleanup(func() { engCheck(t, st) })
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var bulk strings.Builder
	for i := range persons {
		fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"n%d","age":%d}}`+"\n", i, i)
	}
	for range knows {
		fmt.Fprintf(&bulk, `{"edge":"Knows","from":"n%d","to":"n%d"}`+"\n", rng.IntN(persons), rng.IntN(persons))
	}
	appendJSONL(t, g, bulk.String())
	return g, st, rng
}

func lookupPlan(t *testing.T, g *Graph, name string) *query.Plan {
	t.Helper()
	return headPlan(t, g, lookupQueries, name)
}

// compactionModes are the two write layouts the image and lookup tests
// run under: every write a fragment of its own (deletion vectors pile
// up), and automatic compaction into 8-row fragments.
var compactionModes = []struct {
	name string
	o    Options
}{
	{"no-compaction", Options{NoAutoCompact: true}},
	{"auto-compaction", Options{CompactTargetRows: 8}},
}

// TestFragSetMatchesImage pins every fragment-index lookup of the write
// path against the reference it replaced, after random writes that leave
// tables with several fragments and deletion vectors: locate/imageRow and
// NodeTable.Row (both its fragment and its flat path) against a
// from-scratch decode of the state; NodeExists/EdgeEnds against that
// decode; committedRows against the id-column scan table.Delete runs; the
// layout's key-canonical check against the per-image one.
func TestFragSetMatchesImage(t *testing.T) {
	for _, cfg := range compactionModes {
		t.Run(cfg.name, func(t *testing.T) {
			g, step := lookupGraph(t, cfg.o)
			rng := rand.New(rand.NewPCG(11, 12))
			dvs := 0
			seen := map[string]bool{"absent": true} // every id ever committed: deleted ones are probed too
			for s := range 50 {
				step(rng)
				snap := resolve(t, g, Target{})
				for _, tk := range []string{snapshot.NodeKey("Person"), snapshot.EdgeKey("Knows")} {
					st, n := stateWithDVs(t, snap, tk)
					dvs += n
					checkFragSet(t, snap, st, tk, fmt.Sprintf("step %d %s", s, tk), rng, seen)
				}
			}
			if cfg.o.NoAutoCompact && dvs == 0 {
				t.Fatal("no deletion vector: the test is vacuous")
			}
		})
	}
}

// stateWithDVs reads table state tk of snap and counts its fragments
// with a deletion vector.
func stateWithDVs(t *testing.T, snap *snapshot.Snapshot, tk string) (*table.State, int) {
	t.Helper()
	st, err := snap.State(context.Background(), tk)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range st.Fragments() {
		if f.DV != "" {
			n++
		}
	}
	return st, n
}

func checkFragSet(t *testing.T, snap *snapshot.Snapshot, st *table.State, tk, where string, rng *rand.Rand, seen map[string]bool) {
	t.Helper()
	ctx := context.Background()
	want, err := snap.Decode(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range want.IDs {
		seen[id] = true
	}
	var probe []string
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		if rng.IntN(3) == 0 {
			probe = append(probe, id)
		}
	}
	if err := snap.Check(ctx, tk, probe); err != nil {
		t.Fatalf("%s (%d fragments): %v", where, st.NumFragments(), err)
	}
}

// TestMatchingNodesKeyPath runs random multi-statement mutations twice on
// the same snapshot, with and without the key lookup of matchingNodes, and
// compares the staged deltas, counts and row-level read sets.
func TestMatchingNodesKeyPath(t *testing.T) {
	ctx := context.Background()
	g, step := lookupGraph(t, Options{NoAutoCompact: true})
	rng := rand.New(rand.NewPCG(13, 14))
	names := []string{"set", "del", "ins_set", "set_set", "ins_ins_set", "del_del", "del_co"}
	plans := map[string]*query.Plan{}
	for _, n := range names {
		plans[n] = lookupPlan(t, g, n)
	}
	keyHits := 0
	for s := range 60 {
		step(rng)
		snap := resolve(t, g, Target{})
		for range 4 {
			q := names[rng.IntN(len(names))]
			params := map[string]any{"name": fmt.Sprintf("n%d", rng.IntN(32)), "other": fmt.Sprintf("n%d", rng.IntN(32)), "age": rng.IntN(90)}
			if q == "del_co" {
				params = map[string]any{"name": []string{"Acme", "Globex", "n1"}[rng.IntN(3)]}
			}
			var out [2]string
			for i, off := range []bool{true, false} {
				x := &mutExec{noKeyPath: off, snap: snap, cat: snap.Catalog(), vals: newMutValues(plans[q], params, g.now().UTC()),
					nodes: map[string]*mutTable{}, edges: map[string]*mutTable{}}
				err := x.run(ctx, plans[q])
				var d *Delta
				if err == nil {
					d, err = x.delta(ctx)
				}
				out[i] = fmt.Sprintf("err=%v nodes=%d edges=%d", err, x.affectedNodes, x.affectedEdges)
				if d != nil {
					for _, n := range slices.Sorted(maps.Keys(d.Nodes)) {
						td := d.Nodes[n]
						out[i] += fmt.Sprintf("\n%s upserts=%v deletes=%v", n, td.Upserts, td.Deletes)
					}
					for _, n := range slices.Sorted(maps.Keys(d.Edges)) {
						out[i] += fmt.Sprintf("\n%s edge upserts=%d deletes=%v", n, len(d.Edges[n].Upserts), d.Edges[n].Deletes)
					}
				}
				// The row-level read set is the same on both paths too.
				for _, r := range x.reads {
					out[i] += fmt.Sprintf("\nread %s", r.tk)
					for _, id := range slices.Sorted(maps.Keys(r.rows)) {
						out[i] += fmt.Sprintf(" %s=%x", id, r.rows[id])
					}
				}
				if !off && x.affectedNodes > 0 {
					keyHits++
				}
			}
			if out[0] != out[1] {
				t.Fatalf("step %d %s %v:\nreference %s\nkey path  %s", s, q, params, out[0], out[1])
			}
		}
	}
	if keyHits == 0 {
		t.Fatal("no mutation matched a row: the test is vacuous")
	}
}
