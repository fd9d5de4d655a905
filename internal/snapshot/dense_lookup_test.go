package snapshot

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestDenseRowsOfMatchesRow pins the batched lookup to Row: present and
// absent ids, the empty id, repeats, chunk boundaries, an empty view.
func TestDenseRowsOfMatchesRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, lookupChunk, 3*lookupChunk + 5} {
		ids := []string{""}
		for i := range n {
			ids = append(ids, fmt.Sprintf("p%d", i))
		}
		d := NewDenseNodes("P", ids)
		var q []string
		for range 4*lookupChunk + 3 {
			switch rng.IntN(4) {
			case 0:
				q = append(q, fmt.Sprintf("missing%d", rng.IntN(100)))
			case 1:
				q = append(q, "")
			default:
				q = append(q, ids[rng.IntN(len(ids))])
			}
		}
		rows := make([]int32, len(q))
		found := make([]bool, len(q))
		for i := range found {
			rows[i], found[i] = -7, true // garbage RowsOf must overwrite
		}
		d.RowsOf(q, rows, found)
		hits := 0
		for i, id := range q {
			r, ok := d.Row(id)
			if ok != found[i] || ok && r != rows[i] {
				t.Fatalf("n=%d: id %q: RowsOf %d,%v, Row %d,%v", n, id, rows[i], found[i], r, ok)
			}
			if ok {
				hits++
				if ids[r] != id {
					t.Fatalf("n=%d: Row(%q) = %d holds %q", n, id, r, ids[r])
				}
			}
		}
		if hits == 0 {
			t.Fatalf("n=%d: no id found: the test is vacuous", n)
		}
	}
	var empty DenseNodes
	found := []bool{true}
	empty.RowsOf([]string{"x"}, make([]int32, 1), found)
	if found[0] {
		t.Fatal("an empty view found an id")
	}
}
