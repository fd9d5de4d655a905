package snapshot

import (
	"fmt"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// TestTypedColumn: a typed column is built on the request after
// IndexAfterScans, holds every live cell (nulls and dead rows null) as
// table.Value reads it back in the value model, and is absent for a
// property the image lacks, a list, or a cell of another type.
func TestTypedColumn(t *testing.T) {
	cat, err := schema.Compile("t.pg", `node T { k: String @key  n: I32?  d: Date?  u: U64?  f: F32?  s: String?  b: Bool?  l: [String]?  x: I64? }`)
	if err != nil {
		t.Fatal(err)
	}
	nt, _ := cat.Node("T")
	tbl := &NodeTable{Type: nt, IDs: []string{"a", "b", "c", "d"}, Cols: map[string][]any{
		"n": {int64(-5), nil, int64(7), int64(9)},
		"d": {int32(19000), int32(1), nil, int32(3)},
		"u": {uint64(1 << 63), uint64(0), uint64(2), nil},
		"f": {1.5, nil, -0.0, 2.0},
		"s": {"x", "", nil, "zz"},
		"b": {true, false, nil, true},
		"l": {[]any{"a"}, nil, nil, nil},
		"x": {int64(1), "not an int", nil, nil},
	}}
	tbl.dead = newDeadBits(4)
	tbl.dead.set(3) // row d is dead: its cell reads null
	for _, p := range []string{"n", "d", "u", "f", "s", "b"} {
		for range IndexAfterScans {
			if tbl.TypedColumn(p) != nil {
				t.Fatalf("%s: typed column before request %d", p, IndexAfterScans+1)
			}
		}
		arr := tbl.TypedColumn(p)
		if arr == nil || arr.Len() != 4 {
			t.Fatalf("%s: no typed column of 4 rows: %v", p, arr)
		}
		for r, want := range tbl.Cols[p] {
			if r == 3 {
				want = nil
			}
			got := table.Value(arr, r)
			if fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", want, want) {
				t.Fatalf("%s row %d: %T %v, want %T %v", p, r, got, got, want, want)
			}
		}
	}
	for _, p := range []string{"l", "x", "missing"} {
		for range IndexAfterScans + 1 {
			if arr := tbl.TypedColumn(p); arr != nil {
				t.Fatalf("%s: typed column %v, want none", p, arr)
			}
		}
	}
}
