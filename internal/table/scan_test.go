package table

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// tenFragments builds a table of 10 fragments × 10 rows with disjoint id
// ranges: fragment k holds p{k}0..p{k}9, ages k*10+j, every 7th age null.
func tenFragments(t *testing.T, st storage.Store, opts WriteOptions) *State {
	t.Helper()
	s, err := NewState(personSchema())
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 10; k++ {
		var rows [][]any
		for j := 0; j < 10; j++ {
			n := k*10 + j
			var age any = int64(n)
			if n%7 == 0 {
				age = nil
			}
			rows = append(rows, []any{fmt.Sprintf("p%02d", n), fmt.Sprintf("name-%d", n), age})
		}
		f := writeRows(t, st, personSchema(), rows, opts)
		if s, err = s.Append(f); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// memTenFragments is tenFragments on a fresh in-memory store, written
// through a checked allocator.
func memTenFragments(t *testing.T) (*memory.CheckedAllocator, storage.Store, *State) {
	t.Helper()
	mem := checkedAlloc(t)
	st := storage.NewMem()
	return mem, st, tenFragments(t, st, WriteOptions{Alloc: mem})
}

// INVARIANT pin: a point lookup on a 10-fragment table opens only the one
// fragment whose id range holds the id; the others cost no request at all.
func TestPointLookupOpensOneFragment(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewCounting(storage.NewMem())
	s := tenFragments(t, st, WriteOptions{Alloc: mem})
	st.Reset()

	rec, err := LookupIDs(context.Background(), st, s, []string{"p43"}, []string{"name", "age"}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if got := rowsOf(rec); !reflect.DeepEqual(got, [][]any{{"name-43", int64(43)}}) {
		t.Fatalf("lookup = %v", got)
	}
	c := st.Snapshot()
	// Opening a fragment sends nothing (its size is in the table state);
	// the one fragment read costs one tail read (footer; this small file
	// fits in it whole), and nothing else is sent.
	if n := c[storage.OpGetRange].Requests; n != 1 {
		t.Errorf("%d ranged reads, want 1 (one fragment)", n)
	}
	if n := c.Requests(); n != 1 {
		t.Errorf("%d requests, want 1: %v", n, c)
	}
}

func TestScanPruningStats(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	s := tenFragments(t, st, WriteOptions{Alloc: mem, RowGroupRows: 3})
	tests := []struct {
		name            string
		filters         []Filter
		fragsPruned     int
		rowGroupsPruned int
		rows            int
	}{
		{"none", nil, 0, 0, 100},
		{"id eq", []Filter{{Column: "id", Op: OpEq, Value: "p42"}}, 9, 3, 1},
		{"id in two fragments", []Filter{In("id", "p05", "p93", "zz")}, 8, 6, 2},
		{"id in none", []Filter{In("id", "a", "q")}, 10, 0, 0},
		{"age lt", []Filter{{Column: "age", Op: OpLt, Value: 15}}, 8, 2, 12},
		{"age ge", []Filter{{Column: "age", Op: OpGe, Value: int64(95)}}, 9, 1, 4},
		{"age is null", []Filter{{Column: "age", Op: OpIsNull}}, 0, 25, 15},
		{"and", []Filter{{Column: "age", Op: OpGt, Value: 20}, {Column: "id", Op: OpLe, Value: "p23"}}, 9, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, stats := scanAll(t, st, s, ScanOptions{Filters: tc.filters, Alloc: mem})
			if len(rows) != tc.rows {
				t.Errorf("got %d rows, want %d: %v", len(rows), tc.rows, rows)
			}
			if stats.FragmentsPruned != tc.fragsPruned {
				t.Errorf("pruned %d fragments, want %d", stats.FragmentsPruned, tc.fragsPruned)
			}
			if stats.RowGroupsPruned != tc.rowGroupsPruned {
				t.Errorf("pruned %d row groups, want %d (stats %+v)", stats.RowGroupsPruned, tc.rowGroupsPruned, stats)
			}
		})
	}
}

// TestScanPruningMatchesFullScan pins that pruning never drops a matching row:
// every filter's result equals a brute-force evaluation over all rows.
// Fragments of one row group (the second round) write no Parquet
// statistics for the id column (WriteFragment): the state's bounds prune
// alone.
func TestScanPruningMatchesFullScan(t *testing.T) {
	for _, rgRows := range []int64{6, 0} {
		t.Run(fmt.Sprintf("row groups of %d", rgRows), func(t *testing.T) { scanPruningMatchesFullScan(t, rgRows) })
	}
}

func scanPruningMatchesFullScan(t *testing.T, rgRows int64) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "i", Type: ColumnType{Kind: I32, Nullable: true}},
		{Name: "u", Type: ColumnType{Kind: U64}},
		{Name: "f", Type: ColumnType{Kind: F32, Nullable: true}},
		{Name: "b", Type: ColumnType{Kind: Bool}},
		{Name: "d", Type: ColumnType{Kind: Date}},
	}}
	s, _ := NewState(schema)
	var all [][]any
	for k := 0; k < 4; k++ {
		var rows [][]any
		for j := 0; j < 25; j++ {
			n := k*25 + j
			var i any = int32(n*37%101 - 50)
			if n%9 == 0 {
				i = nil
			}
			var f any = float32(n) / 10
			switch n % 13 {
			case 0:
				f = nil
			case 5:
				f = float32(math.NaN())
			case 6:
				f = float32(math.Inf(1))
			}
			rows = append(rows, []any{fmt.Sprintf("k%03d", n*7%100), i, uint64(math.MaxUint64 - uint64(n%5)), f, n%3 == 0, int32(19000 + n)})
		}
		all = append(all, rows...)
		fr := writeRows(t, st, schema, rows, WriteOptions{Alloc: mem, RowGroupRows: rgRows})
		s, _ = s.Append(fr)
	}
	filters := []Filter{
		{Column: "i", Op: OpEq, Value: 3}, {Column: "i", Op: OpNe, Value: 3}, {Column: "i", Op: OpLt, Value: -40},
		{Column: "i", Op: OpLe, Value: -40}, {Column: "i", Op: OpGt, Value: 45}, {Column: "i", Op: OpGe, Value: 45},
		{Column: "i", Op: OpIsNull}, {Column: "i", Op: OpNotNull}, {Column: "i", Op: OpIn, Values: []any{1, 2, -50, 50}},
		{Column: "u", Op: OpEq, Value: uint64(math.MaxUint64)}, {Column: "u", Op: OpLt, Value: uint64(math.MaxUint64 - 3)},
		{Column: "f", Op: OpGt, Value: 9.0}, {Column: "f", Op: OpEq, Value: 0.1}, {Column: "f", Op: OpNe, Value: 0.1},
		{Column: "f", Op: OpEq, Value: math.NaN()}, {Column: "f", Op: OpGe, Value: math.Inf(1)},
		{Column: "b", Op: OpEq, Value: true}, {Column: "b", Op: OpLt, Value: true},
		{Column: "d", Op: OpGe, Value: int32(19090)}, {Column: "id", Op: OpGt, Value: "k090"},
		{Column: "id", Op: OpIn, Values: []any{"k000", "k007", "k099", "nope"}},
	}
	for _, f := range filters {
		t.Run(fmt.Sprintf("%s %v %v%v", f.Column, f.Op, f.Value, f.Values), func(t *testing.T) {
			scanMatchesBrute(t, st, s, schema, all, f, mem)
		})
	}
}

// scanMatchesBrute scans s with filter f and requires the ids of exactly
// the rows of all (id first) that f matches by brute force, in order.
func scanMatchesBrute(t *testing.T, st storage.Store, s *State, schema Schema, all [][]any, f Filter, mem memory.Allocator) ScanStats {
	t.Helper()
	cf, err := compileFilter(schema, f)
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, r := range all {
		if bruteMatch(cf, r[cf.col]) {
			want = append(want, r[0])
		}
	}
	got, stats := scanAll(t, st, s, ScanOptions{Columns: []string{"id"}, Filters: []Filter{f}, Alloc: mem})
	var gotIDs []any
	for _, r := range got {
		gotIDs = append(gotIDs, r[0])
	}
	if !reflect.DeepEqual(gotIDs, want) {
		t.Errorf("got %d rows %.5v\nwant %d %.5v", len(gotIDs), gotIDs, len(want), want)
	}
	return stats
}

// bruteMatch evaluates a compiled filter on one Go value, independently of
// the vectorised evaluator.
func bruteMatch(cf compiledFilter, v any) bool {
	switch cf.op {
	case OpIsNull:
		return v == nil
	case OpNotNull:
		return v != nil
	}
	if v == nil {
		return false
	}
	c, _ := scalarValue(cf.kind, v)
	if b, ok := c.(bool); ok {
		c = boolInt(b)
	}
	if x, ok := c.(float64); ok && math.IsNaN(x) {
		return cf.op == OpNe
	}
	if cf.op == OpIn {
		for _, l := range cf.in {
			if cmpCanon(c, l) == 0 {
				return true
			}
		}
		return false
	}
	if cf.nan {
		return cf.op == OpNe
	}
	r := cmpCanon(c, cf.lit)
	switch cf.op {
	case OpEq:
		return r == 0
	case OpNe:
		return r != 0
	case OpLt:
		return r < 0
	case OpLe:
		return r <= 0
	case OpGt:
		return r > 0
	case OpGe:
		return r >= 0
	}
	return false
}

func TestScanRejectsBadOptions(t *testing.T) {
	s, _ := NewState(allTypesSchema())
	st := storage.NewMem()
	tests := []struct {
		name string
		opts ScanOptions
		want error
	}{
		{"unknown projection", ScanOptions{Columns: []string{"nope"}}, ErrSchema},
		{"duplicate projection", ScanOptions{Columns: []string{"id", "id"}}, ErrSchema},
		{"unknown filter column", ScanOptions{Filters: []Filter{{Column: "nope", Op: OpEq, Value: 1}}}, ErrFilter},
		{"filter on vector", ScanOptions{Filters: []Filter{{Column: "v", Op: OpEq, Value: []float32{1, 2, 3}}}}, ErrFilter},
		{"wrong literal type", ScanOptions{Filters: []Filter{{Column: "i64", Op: OpEq, Value: "x"}}}, ErrFilter},
		{"null literal", ScanOptions{Filters: []Filter{{Column: "s", Op: OpEq}}}, ErrFilter},
		{"bad op", ScanOptions{Filters: []Filter{{Column: "s", Op: 99, Value: "x"}}}, ErrFilter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Scan(context.Background(), st, s, tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestScanBatchesAndOffsets(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	s := tenFragments(t, st, WriteOptions{Alloc: mem, RowGroupRows: 4})
	sc, err := Scan(context.Background(), st, s, ScanOptions{Columns: []string{"id"}, BatchSize: 3, RowOffsets: true, Alloc: mem,
		Filters: []Filter{{Column: "id", Op: OpGe, Value: "p95"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var ids []any
	var offs []int64
	for sc.Next() {
		if sc.Record().NumRows() > 3 {
			t.Errorf("batch of %d rows exceeds BatchSize 3", sc.Record().NumRows())
		}
		if sc.Fragment() != s.Fragments()[9].Key {
			t.Errorf("fragment %s, want the last one", sc.Fragment())
		}
		for _, r := range rowsOf(sc.Record()) {
			ids = append(ids, r[0])
		}
		offs = append(offs, sc.Offsets()...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []any{"p95", "p96", "p97", "p98", "p99"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids = %v", ids)
	}
	if want := []int64{5, 6, 7, 8, 9}; !reflect.DeepEqual(offs, want) {
		t.Errorf("offsets = %v, want %v", offs, want)
	}
}

func TestScanCancelled(t *testing.T) {
	mem, st, s := memTenFragments(t)
	ctx, cancel := context.WithCancel(context.Background())
	sc, err := Scan(ctx, st, s, ScanOptions{Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if !sc.Next() {
		t.Fatal(sc.Err())
	}
	cancel()
	for sc.Next() {
	}
	if !errors.Is(sc.Err(), context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", sc.Err())
	}
}

// TestDictionaryFilterMatchesBrute: filters on String/Enum columns that a
// scan reads only for filtering are evaluated on dictionary indices; they
// must keep exactly the rows a value-by-value
// evaluation keeps, with nulls, empty strings, several fragments and a
// column whose dictionary overflows into plain pages mid-chunk, and the
// content checksums must verify. (ScanStats.DictBatches pins that the
// dictionary path ran.)
func TestDictionaryFilterMatchesBrute(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "city", Type: ColumnType{Kind: String, Nullable: true}},
		{Name: "e", Type: ColumnType{Kind: Enum}},
		{Name: "big", Type: ColumnType{Kind: String}},
	}}
	s, _ := NewState(schema)
	var all [][]any
	pad := strings.Repeat("x", 1300)
	for k := 0; k < 3; k++ {
		var rows [][]any
		for j := 0; j < 4000; j++ {
			n := k*4000 + j
			var city any = fmt.Sprintf("c%d", n*31%17)
			switch n % 23 {
			case 0:
				city = nil
			case 7:
				city = ""
			}
			// big repeats (dictionary encoded) until well into the last row
			// group, then turns distinct and long: that chunk's dictionary
			// outgrows its page limit and the writer falls back to plain
			// pages inside it.
			big := fmt.Sprintf("b%d", n%5)
			if j >= 3100 {
				big = fmt.Sprintf("%s%06d", pad, n)
			}
			rows = append(rows, []any{fmt.Sprintf("k%05d", n), city, []string{"red", "green", "blue"}[n%3], big})
		}
		all = append(all, rows...)
		fr := writeRows(t, st, schema, rows, WriteOptions{Alloc: mem, RowGroupRows: 1500})
		s, _ = s.Append(fr)
	}
	filters := []Filter{
		{Column: "city", Op: OpEq, Value: "c3"}, {Column: "city", Op: OpNe, Value: "c3"},
		{Column: "city", Op: OpLt, Value: "c2"}, {Column: "city", Op: OpGe, Value: "c5"},
		{Column: "city", Op: OpEq, Value: ""}, {Column: "city", Op: OpEq, Value: "nowhere"},
		{Column: "city", Op: OpIsNull}, {Column: "city", Op: OpNotNull},
		{Column: "city", Op: OpIn, Values: []any{"c1", "c16", "", "zz"}},
		{Column: "e", Op: OpEq, Value: "green"}, {Column: "e", Op: OpNe, Value: "red"},
		{Column: "big", Op: OpEq, Value: "b3"}, {Column: "big", Op: OpGt, Value: pad + "005000"},
	}
	for _, f := range filters {
		t.Run(fmt.Sprintf("%s %v %v%v", f.Column, f.Op, f.Value, f.Values), func(t *testing.T) {
			stats := scanMatchesBrute(t, st, s, schema, all, f, mem)
			if stats.DictBatches == 0 && stats.FragmentsPruned < stats.Fragments {
				t.Errorf("no column was decoded as a dictionary: %+v", stats)
			}
		})
	}
}
