package snapshot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// TestPairIndexMatchesIntersect: for every pair of equality constants
// (present, absent and of another kind) the pair index's rows are the
// intersection of the two sorted indexes' equality intervals, row order
// included — over integers, strings, floats with -0, 0 and NaN, and
// dates, with nulls and dead rows; and the index is built only on the
// request after IndexAfterScans.
func TestPairIndexMatchesIntersect(t *testing.T) {
	cat, err := schema.Compile("t.pg", `node T { k: String @key  n: I32?  s: String?  f: F64?  d: Date? }`)
	if err != nil {
		t.Fatal(err)
	}
	nt, _ := cat.Node("T")
	rng := rand.New(rand.NewPCG(7, 7))
	const rows = 3000
	cols := map[string][]any{"n": nil, "s": nil, "f": nil, "d": nil}
	ids := make([]string, rows)
	maybe := func(v any) any {
		if rng.IntN(8) == 0 {
			return nil
		}
		return v
	}
	floats := []float64{0, math.Copysign(0, -1), 1.5, -2, math.NaN(), 3}
	for i := range ids {
		ids[i] = fmt.Sprint(i)
		cols["n"] = append(cols["n"], maybe(int64(rng.IntN(12))))
		cols["s"] = append(cols["s"], maybe(fmt.Sprintf("c%d", rng.IntN(9))))
		cols["f"] = append(cols["f"], maybe(floats[rng.IntN(len(floats))]))
		cols["d"] = append(cols["d"], maybe(int32(19000+rng.IntN(5))))
	}
	tbl := &NodeTable{Type: nt, IDs: ids, Cols: cols}
	tbl.dead = newDeadBits(rows)
	for range rows / 10 {
		tbl.dead.set(rng.IntN(rows))
	}
	consts := map[string][]any{
		"n": {int64(0), int64(5), int64(11), int64(12), 3.0, 2.5, "x"},
		"s": {"c0", "c4", "c8", "c9", "", int64(1)},
		"f": {0.0, math.Copysign(0, -1), 1.5, math.NaN(), 3.0, int64(3), 7.0},
		"d": {int32(19000), int32(19004), int32(18000)},
	}
	props := []string{"d", "f", "n", "s"} // sorted: a pair is (a, b), a < b
	for _, p := range props {
		for range IndexAfterScans + 1 {
			tbl.SortedIndex(p)
		}
		if tbl.SortedIndex(p) == nil {
			t.Fatalf("%s: no sorted index", p)
		}
	}
	for i, a := range props {
		for _, b := range props[i+1:] {
			for range IndexAfterScans {
				if tbl.PairIndex(a, b) != nil {
					t.Fatalf("(%s, %s): pair index before request %d", a, b, IndexAfterScans+1)
				}
			}
			pi := tbl.PairIndex(a, b)
			if pi == nil {
				t.Fatalf("(%s, %s): no pair index", a, b)
			}
			sa, sb := tbl.SortedIndex(a), tbl.SortedIndex(b)
			for _, ca := range consts[a] {
				loA, hiA, _ := sa.Interval(0, len(sa.Perm), query.OpEq, ca)
				for _, cb := range consts[b] {
					loB, hiB, _ := sb.Interval(0, len(sb.Perm), query.OpEq, cb)
					if loA == hiA || loB == hiB {
						continue // Rows is asked only for non-empty intervals
					}
					want := index.Intersect(sa.Perm[loA:hiA], sb.Perm[loB:hiB])
					got := pi.Rows(loA, loB)
					if !slices.Equal(got, want) && len(got)+len(want) > 0 {
						t.Fatalf("(%s = %v, %s = %v): pair rows %v, intersection %v", a, ca, b, cb, got, want)
					}
				}
			}
		}
	}
	if tbl.PairIndex("s", "n") != nil || tbl.PairIndex("n", "missing") != nil {
		t.Fatal("pair index for an unordered pair or a property without a sorted index")
	}
}
