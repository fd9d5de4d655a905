package table

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// randomAllTypesRows returns n rows of allTypesSchema with random values and
// about one null in four in every nullable column. Floats are finite so rows
// compare with reflect.DeepEqual.
func randomAllTypesRows(r *rand.Rand, n int) [][]any {
	maybe := func(v any) any {
		if r.IntN(4) == 0 {
			return nil
		}
		return v
	}
	str := func() string { return fmt.Sprintf("s%x", r.Uint64()>>r.IntN(64)) }
	dt := func() time.Time { return time.UnixMilli(r.Int64N(1 << 42)).UTC() }
	rows := make([][]any, n)
	for i := range rows {
		var tags []any
		for range r.IntN(4) {
			tags = append(tags, maybe(str()))
		}
		rows[i] = []any{
			fmt.Sprintf("id%06d", i), maybe(str()), maybe(r.IntN(2) == 0), maybe(int32(r.Uint32())), maybe(int64(r.Uint64())),
			maybe(r.Uint32()), maybe(r.Uint64()), maybe(r.Float32()*1e3 - 500), maybe(r.NormFloat64()), maybe(int32(r.IntN(40000) - 20000)),
			maybe(dt()), maybe([]float32{r.Float32(), r.Float32(), r.Float32()}), maybe([]byte(str())), maybe(tags),
			maybe([]time.Time{dt(), dt()}), maybe([]string{"red", "green", "blue"}[r.IntN(3)]),
		}
	}
	return rows
}

// TestReadRowsMatchesScan pins that ReadRows returns exactly the rows a full
// scan has at those offsets, over every column type, nulls, several row
// groups, projections, duplicates and deleted rows.
func TestReadRowsMatchesScan(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	ctx := context.Background()
	schema := allTypesSchema()
	r := rand.New(rand.NewPCG(1, 2))
	const n = 500
	s, f := allTypesFragment(t, st, mem, r, n)
	all, _ := scanAll(t, st, s, ScanOptions{Alloc: mem})
	// Hide some rows: ReadRows addresses the file, so it still returns them.
	sDel, err := DeleteRows(ctx, st, testPrefix, s, map[string][]int64{f.Key: {0, 36, 37, 250}})
	if err != nil {
		t.Fatal(err)
	}
	random := func(k int) []int64 {
		out := make([]int64, k)
		for i := range out {
			out[i] = r.Int64N(n)
		}
		return out
	}
	every := make([]int64, n)
	for i := range every {
		every[i] = int64(i)
	}
	tests := []struct {
		name    string
		state   *State
		offsets []int64
		columns []string
	}{
		{"one row", s, []int64{42}, nil},
		{"first and last", s, []int64{n - 1, 0}, nil},
		{"row group edges", s, []int64{36, 37, 73, 74}, nil},
		{"random unsorted with repeats", s, append(random(20), 5, 5, 5), nil},
		{"random many", s, random(200), nil},
		{"every row", s, every, nil},
		{"none", s, nil, nil},
		{"projection", s, random(15), []string{"tags", "id", "v", "dt"}},
		{"deleted rows are returned", sDel, []int64{0, 1, 36, 37, 250, 499}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := ReadRows(ctx, st, tc.state, f.Key, tc.offsets, tc.columns, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Release()
			want := slices.Clone(tc.offsets)
			slices.Sort(want)
			want = slices.Compact(want)
			cols := tc.columns
			if cols == nil {
				for _, c := range schema.Columns {
					cols = append(cols, c.Name)
				}
			}
			if int(rec.NumCols()) != len(cols) {
				t.Fatalf("got %d columns, want %d", rec.NumCols(), len(cols))
			}
			for j, name := range cols {
				if got := rec.Schema().Field(j).Name; got != name {
					t.Fatalf("column %d is %q, want %q", j, got, name)
				}
			}
			got := rowsOf(rec)
			if len(got) != len(want) {
				t.Fatalf("got %d rows, want %d", len(got), len(want))
			}
			for i, off := range want {
				for j, name := range cols {
					w := all[off][schema.Index(name)]
					if !reflect.DeepEqual(got[i][j], w) {
						t.Errorf("offset %d column %s: got %#v, want %#v", off, name, got[i][j], w)
					}
				}
			}
		})
	}
}

func TestReadRowsErrors(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewCounting(storage.NewMem())
	s := tenFragments(t, st, WriteOptions{Alloc: mem})
	key := s.Fragments()[3].Key
	st.Reset()
	tests := []struct {
		name    string
		key     string
		offsets []int64
		columns []string
		is      error
		off     int64 // for *RowOffsetError
	}{
		{"unknown fragment", "tables/node-Person/data/nope.parquet", []int64{0}, nil, ErrUnknownFragment, 0},
		{"negative offset", key, []int64{3, -1}, nil, ErrValue, -1},
		{"offset past the end", key, []int64{10}, nil, ErrValue, 10},
		{"unknown column", key, []int64{1}, []string{"nope"}, ErrSchema, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadRows(context.Background(), st, s, tc.key, tc.offsets, tc.columns, mem)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			var oe *RowOffsetError
			if errors.As(err, &oe) && (oe.Offset != tc.off || oe.Rows != 10 || oe.Key != key) {
				t.Errorf("offset error %+v", oe)
			}
		})
	}
	if n := st.Snapshot().Requests(); n != 0 {
		t.Errorf("invalid reads made %d requests, want 0", n)
	}
}

// TestReadRowsReadsOnlyTheirRowGroup pins the cost of ReadRows: three rows of
// one row group of a 16-row-group fragment cost the footer plus that row
// group's chunks, far less than reading the same columns whole.
func TestReadRowsReadsOnlyTheirRowGroup(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewCounting(storage.NewMem())
	ctx := context.Background()
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "payload", Type: ColumnType{Kind: String}},
		{Name: "n", Type: ColumnType{Kind: I64}},
	}}
	const groups, perGroup = 16, 4000
	r := rand.New(rand.NewPCG(3, 4))
	rows := make([][]any, groups*perGroup)
	for i := range rows {
		// Incompressible payloads, so the file is far bigger than the
		// footer read and byte counts mean something.
		rows[i] = []any{fmt.Sprintf("id%06d", i), fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64()), int64(i)}
	}
	f := writeRows(t, st, schema, rows, WriteOptions{Alloc: mem, RowGroupRows: perGroup})
	s := stateOf(t, schema, f)
	cols := []string{"id", "payload"}
	cost := func(read func() (int64, error)) int64 {
		t.Helper()
		before := st.Snapshot()
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		d := st.Snapshot().Sub(before)
		if got == 0 {
			t.Fatal("read no rows")
		}
		return d[storage.OpGet].Bytes + d[storage.OpGetRange].Bytes
	}
	few := cost(func() (int64, error) {
		rec, err := ReadRows(ctx, st, s, f.Key, []int64{5*perGroup + 1, 5*perGroup + 500, 5*perGroup + 999}, cols, mem)
		if err != nil {
			return 0, err
		}
		defer rec.Release()
		if got := rowsOf(rec); got[1][0] != "id020500" || got[1][1] != rows[20500][1] {
			t.Errorf("row = %v", got[1])
		}
		return rec.NumRows(), nil
	})
	whole := cost(func() (int64, error) {
		rec, err := Collect(ctx, st, s, ScanOptions{Columns: cols, Alloc: mem})
		if err != nil {
			return 0, err
		}
		defer rec.Release()
		return rec.NumRows(), nil
	})
	t.Logf("fragment %d bytes; 3 rows read %d bytes, whole columns %d", f.Bytes, few, whole)
	// The footer read is 64 KiB; one row group's two chunks are 1/16 of the rest.
	if few >= whole/4 || few > tailPrefetch+whole/groups*2 {
		t.Fatalf("3 rows of one row group read %d bytes, the whole columns %d", few, whole)
	}
}
