package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// TestImageAssemblyMatchesScan pins that an image assembled from cached
// fragment images and deletion vectors equals a from-scratch decode of the
// state, after random inserts, updates and deletes leave the tables with
// several fragments and deletion vectors (auto-compaction off). It also
// pins the @key shortcut of LookupUnique against the per-image hash index.
func TestImageAssemblyMatchesScan(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	g, err := Init(ctx, st, "test.pg", engSchema, "tester", Options{NoAutoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engCheck(t, st) })
	rng := rand.New(rand.NewPCG(5, 6))
	// One bulk load first: multi-row fragments, which later writes hide
	// rows of with deletion vectors (a fragment whose rows are all hidden
	// is dropped instead).
	var bulk strings.Builder
	for i := range 25 {
		fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"n%d","age":%d}}`+"\n", i, i)
	}
	for range 40 {
		fmt.Fprintf(&bulk, `{"edge":"Knows","from":"n%d","to":"n%d"}`+"\n", rng.IntN(25), rng.IntN(25))
	}
	if _, err := g.Load(ctx, strings.NewReader(bulk.String()), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	dvs := 0
	plans := map[string]string{"ins": "insert_person", "set": "set_age", "del": "remove_person", "friend": "add_friend", "unfriend": "remove_friendship"}
	for step := range 60 {
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
		// Referential errors (a friend that does not exist) are expected.
		_, _ = g.Mutate(ctx, "main", engPlan(t, g, plans[op]), params, MutateOptions{})
		snap, err := g.Resolve(ctx, Target{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tableKeys(snap.cat) {
			state, err := snap.state(ctx, tk)
			if err != nil {
				t.Fatal(err)
			}
			kind, tname := splitTableKey(tk)
			edge := kind == "edge"
			var p []*schema.Property
			if edge {
				et, _ := snap.cat.Edge(tname)
				p = et.Props
			} else {
				nt, _ := snap.cat.Node(tname)
				p = nt.Props
			}
			for _, f := range state.Fragments() {
				if f.DV != "" {
					dvs++
				}
			}
			want, err := snap.decodeState(ctx, state, p, edge)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := snap.assembleImage(ctx, tk, state, p, edge)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.ids, want.ids) || !reflect.DeepEqual(got.src, want.src) ||
				!reflect.DeepEqual(got.dst, want.dst) || !reflect.DeepEqual(got.cols, want.cols) {
				t.Fatalf("step %d %s (%d fragments): assembled image differs\n got %+v\nwant %+v", step, tk, state.NumFragments(), got, want)
			}
		}
		c := snapshotCommitted{s: snap}
		for i := range 27 {
			tuple := []any{fmt.Sprintf("n%d", i)}
			got, ok, err := c.lookupKey(ctx, "node:Person", []string{"name"}, tuple)
			if err != nil || !ok {
				t.Fatalf("lookupKey: ok=%v err=%v", ok, err)
			}
			idx, err := c.uniqueIndex(ctx, "node:Person", []string{"name"})
			if err != nil {
				t.Fatal(err)
			}
			if want := idx[value.TupleKey(tuple)]; !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: lookupKey(%v) = %v, index %v", step, tuple, got, want)
			}
		}
	}
	if dvs == 0 {
		t.Fatal("no state had a deletion vector: the test is vacuous")
	}
}
