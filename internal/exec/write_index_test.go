package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestIndexLookupsMatchFragSet runs one random mutation stream twice: on a
// graph whose every write comes from a fresh handle (nothing decoded, so
// NodeExists, the @key check, keyed update/delete, EdgeEnds and the rows a
// write hides go through the persisted fragment indexes) and on one
// handle with the index path off (the fragment view). Every write must
// succeed or fail alike, and the graphs must end with the same rows.
func TestIndexLookupsMatchFragSet(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	var bulk strings.Builder
	// Enough rows that fragments outgrow one tail read and are probed.
	for i := range 3000 {
		fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"n%d","age":%d}}`+"\n", i, rng.IntN(1<<30))
	}
	for range 4000 {
		fmt.Fprintf(&bulk, `{"edge":"Knows","from":"n%d","to":"n%d"}`+"\n", rng.IntN(3000), rng.IntN(3000))
	}
	mk := func() (storage.Store, *Graph) {
		st := storage.NewMem()
		g := mustInit(t, st, "test.pg", engSchema, "tester", Options{})
		appendJSONL(t, g, bulk.String())
		return st, g
	}
	stA, _ := mk()
	_, gB := mk()
	gB.snaps.SetIndexPath(false)
	for i := range 60 {
		name, other := fmt.Sprintf("n%d", rng.IntN(3010)), fmt.Sprintf("n%d", rng.IntN(3010))
		q := []string{"ins", "set", "del", "friend", "unfriend", "set_set", "del_del", "ins_set"}[rng.IntN(8)]
		params := map[string]any{"name": name, "age": rng.IntN(90), "other": other, "from": name, "to": other}
		switch q {
		case "ins", "set", "ins_set", "del":
			delete(params, "other")
			delete(params, "from")
			delete(params, "to")
			if q == "del" {
				delete(params, "age")
			}
		case "friend":
			params = map[string]any{"from": name, "to": other}
		case "unfriend":
			params = map[string]any{"from": name}
		case "del_del":
			delete(params, "age")
			delete(params, "from")
			delete(params, "to")
		default:
			delete(params, "from")
			delete(params, "to")
		}
		gA := mustOpen(t, stA, Options{})
		_, errA := gA.Mutate(ctx, "main", lookupPlan(t, gA, q), params, MutateOptions{})
		_, errB := gB.Mutate(ctx, "main", lookupPlan(t, gB, q), params, MutateOptions{})
		if (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
			t.Fatalf("step %d %s %v: indexed err %v, fragment view err %v", i, q, params, errA, errB)
		}
	}
	gA := mustOpen(t, stA, Options{})
	if a, b := graphRows(t, gA), graphRows(t, gB); !reflect.DeepEqual(a, b) {
		t.Fatalf("graphs differ: %d vs %d rows", len(a), len(b))
	}
}

// graphRows renders every Person (id, age) and Knows (src→dst) row, sorted.
func graphRows(t *testing.T, g *Graph) []string {
	t.Helper()
	_, nt := headNodes(t, g, "Person")
	var out []string
	for i, id := range nt.IDs {
		if !nt.Alive(i) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %v", id, nt.Value(i, "age")))
	}
	out = append(out, engEdgesAt(t, g, Target{}, "Knows")...)
	slices.Sort(out)
	return out
}
