package table

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func allTypesSchema() Schema {
	return Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "s", Type: ColumnType{Kind: String, Nullable: true}},
		{Name: "b", Type: ColumnType{Kind: Bool, Nullable: true}},
		{Name: "i32", Type: ColumnType{Kind: I32, Nullable: true}},
		{Name: "i64", Type: ColumnType{Kind: I64, Nullable: true}},
		{Name: "u32", Type: ColumnType{Kind: U32, Nullable: true}},
		{Name: "u64", Type: ColumnType{Kind: U64, Nullable: true}},
		{Name: "f32", Type: ColumnType{Kind: F32, Nullable: true}},
		{Name: "f64", Type: ColumnType{Kind: F64, Nullable: true}},
		{Name: "d", Type: ColumnType{Kind: Date, Nullable: true}},
		{Name: "dt", Type: ColumnType{Kind: DateTime, Nullable: true}},
		{Name: "v", Type: ColumnType{Kind: Vector, Dim: 3, Nullable: true}},
		{Name: "blob", Type: ColumnType{Kind: Blob, Nullable: true}},
		{Name: "tags", Type: ColumnType{Kind: List, Elem: String, Nullable: true}},
		{Name: "when", Type: ColumnType{Kind: List, Elem: DateTime, Nullable: true}},
		{Name: "e", Type: ColumnType{Kind: Enum, Nullable: true}},
	}}
}

func TestRoundTripAllTypes(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	schema := allTypesSchema()
	dt := time.Date(2024, 6, 1, 12, 34, 56, 789e6, time.UTC)
	in := [][]any{
		{"a", "héllo wörld ✓ 日本", true, int32(-7), int64(math.MinInt64), uint32(math.MaxUint32), uint64(math.MaxUint64),
			float32(0.1), math.Inf(-1), dt, dt, []float32{1, 2.5, -3}, []byte{0, 1, 255}, []string{"x", "", "ü"}, []time.Time{dt}, "red"},
		{"b", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{"c", "", false, int32(math.MaxInt32), int64(42), uint32(0), uint64(1), float32(-0.5), math.NaN(), int32(-1), int64(-1),
			[]float32{0, 0, 0}, []byte{}, []any{"y", nil}, []any{}, "green"},
	}
	want := [][]any{
		{"a", "héllo wörld ✓ 日本", true, int32(-7), int64(math.MinInt64), uint32(math.MaxUint32), uint64(math.MaxUint64),
			float32(0.1), math.Inf(-1), int32(19875), dt.UnixMilli(), []float32{1, 2.5, -3}, []byte{0, 1, 255}, []any{"x", "", "ü"}, []any{dt.UnixMilli()}, "red"},
		{"b", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{"c", "", false, int32(math.MaxInt32), int64(42), uint32(0), uint64(1), float32(-0.5), math.NaN(), int32(-1), int64(-1),
			[]float32{0, 0, 0}, []byte{}, []any{"y", nil}, []any{}, "green"},
	}
	f := writeRows(t, st, schema, in, WriteOptions{Alloc: mem})
	s := stateOf(t, schema, f)
	got, _ := scanAll(t, st, s, ScanOptions{Alloc: mem})
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			g, w := got[i][j], want[i][j]
			if gf, ok := g.(float64); ok && math.IsNaN(gf) {
				if wf, ok := w.(float64); ok && math.IsNaN(wf) {
					continue
				}
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("row %d column %s: got %#v, want %#v", i, schema.Columns[j].Name, g, w)
			}
		}
	}
	// Statistics recorded in the state.
	if got := f.Stats[schema.Index("id")]; got.Min != "a" || got.Max != "c" || got.Nulls != 0 {
		t.Errorf("id stats = %+v", got)
	}
	if got := f.Stats[schema.Index("f64")]; got.Min != math.Inf(-1) || got.Max != math.Inf(-1) || got.Nulls != 1 {
		t.Errorf("f64 stats = %+v (NaN must be excluded)", got)
	}
	if got := f.Stats[schema.Index("u64")]; got.Min != uint64(1) || got.Max != uint64(math.MaxUint64) {
		t.Errorf("u64 stats = %+v", got)
	}
}

func TestProjectionReturnsOnlyRequestedColumns(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	schema := allTypesSchema()
	rows := [][]any{{"a", "s", true, 1, 2, 3, 4, float32(5), 6.0, 7, 8, []float32{1, 2, 3}, []byte("x"), []string{"t"}, nil, "e"}}
	f := writeRows(t, st, schema, rows, WriteOptions{Alloc: mem})
	s := stateOf(t, schema, f)
	tests := []struct {
		name string
		cols []string
		want []any
	}{
		{"one", []string{"i64"}, []any{int64(2)}},
		{"reordered", []string{"v", "id"}, []any{[]float32{1, 2, 3}, "a"}},
		{"nested", []string{"tags", "blob"}, []any{[]any{"t"}, []byte("x")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Scan(context.Background(), st, s, ScanOptions{Columns: tc.cols, Alloc: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			if !sc.Next() {
				t.Fatal(sc.Err())
			}
			rec := sc.Record()
			if int(rec.NumCols()) != len(tc.cols) {
				t.Fatalf("got %d columns, want %d", rec.NumCols(), len(tc.cols))
			}
			for j, name := range tc.cols {
				if rec.ColumnName(j) != name {
					t.Errorf("column %d = %q, want %q", j, rec.ColumnName(j), name)
				}
			}
			if got := rowsOf(rec)[0]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}
