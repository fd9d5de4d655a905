package table

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestStrViewMatchesValue pins that a view reads what (*array.String).Value
// reads, on whole arrays and slices of them (a non-zero offset), with empty
// strings and nulls, and that equal agrees with comparing every row.
func TestStrViewMatchesValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	build := func(vals []string, nulls []bool) *array.String {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		for i, v := range vals {
			if nulls != nil && nulls[i] {
				b.AppendNull()
			} else {
				b.Append(v)
			}
		}
		return b.NewStringArray()
	}
	brute := func(a, b *array.String) bool {
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if a.Value(i) != b.Value(i) {
				return false
			}
		}
		return true
	}
	for _, n := range []int{0, 1, 2, 9, 300} {
		vals := make([]string, n)
		for i := range vals {
			if rng.IntN(5) > 0 {
				vals[i] = fmt.Sprintf("k%d", rng.IntN(1000))
			}
		}
		// Variants: the same values, one value changed, one value's
		// boundary moved (same bytes end to end), all empty.
		moved := append([]string(nil), vals...)
		other := append([]string(nil), vals...)
		empty := make([]string, n)
		if n > 0 {
			other[n-1] += "x"
		}
		// The boundary between the last two rows moved by one byte.
		if n > 2 {
			moved[n-2], moved[n-1] = "ab", "c"
			vals[n-2], vals[n-1] = "a", "bc"
		}
		nulls := make([]bool, n)
		for i := range nulls {
			nulls[i] = rng.IntN(4) == 0
		}
		arrs := []*array.String{build(vals, nil), build(vals, nil), build(other, nil), build(moved, nil), build(empty, nil), build(vals, nulls)}
		// Slices at every start, so views of unequal offsets meet.
		var all []*array.String
		for _, a := range arrs {
			all = append(all, a)
			for lo := 1; lo <= min(3, n); lo++ {
				all = append(all, array.NewSlice(a, int64(lo), int64(n)).(*array.String))
			}
		}
		for _, a := range all {
			v := newStrView(a)
			if v.len() != a.Len() {
				t.Fatalf("n=%d: len %d, want %d", n, v.len(), a.Len())
			}
			for i := range a.Len() {
				if v.at(i) != a.Value(i) {
					t.Fatalf("n=%d row %d: %q, want %q", n, i, v.at(i), a.Value(i))
				}
			}
			for _, b := range all {
				if got, want := v.equal(newStrView(b)), brute(a, b); got != want {
					t.Fatalf("n=%d: equal = %v, want %v (%v vs %v)", n, got, want, a, b)
				}
			}
		}
		for _, a := range all {
			a.Release()
		}
	}
}
