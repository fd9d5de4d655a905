package table

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestAppendCellsMatchesAppend pins AppendCells to Append with each cell's
// Value: the same verdict, an ErrValue on refusal, an unchanged builder
// after a refusal and the same record.
func TestAppendCellsMatchesAppend(t *testing.T) {
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String, Nullable: true}},
		{Name: "mood", Type: ColumnType{Kind: Enum, Nullable: true}},
		{Name: "ok", Type: ColumnType{Kind: Bool, Nullable: true}},
		{Name: "i32", Type: ColumnType{Kind: I32, Nullable: true}},
		{Name: "i64", Type: ColumnType{Kind: I64, Nullable: true}},
		{Name: "u32", Type: ColumnType{Kind: U32, Nullable: true}},
		{Name: "u64", Type: ColumnType{Kind: U64, Nullable: true}},
		{Name: "f32", Type: ColumnType{Kind: F32, Nullable: true}},
		{Name: "f64", Type: ColumnType{Kind: F64, Nullable: true}},
		{Name: "day", Type: ColumnType{Kind: Date, Nullable: true}},
		{Name: "req", Type: ColumnType{Kind: String}},
	}}
	null := Cell{}
	row := func(set map[int]Cell) []Cell {
		out := make([]Cell, len(schema.Columns)-1)
		for i := range out {
			out[i] = null
		}
		out[len(out)-1] = StringCell("r")
		for i, c := range set {
			out[i] = c
		}
		return out
	}
	cases := []struct {
		name  string
		cells []Cell
		ok    bool
	}{
		{"typical", row(map[int]Cell{0: StringCell("ann"), 1: StringCell("glad"), 2: BoolCell(true), 3: IntCell(42),
			4: IntCell(1 << 40), 5: UintCell(7), 6: UintCell(math.MaxUint64), 7: FloatCell(1.5), 8: FloatCell(-2.25)}), true},
		{"nulls", row(nil), true},
		{"null in non-nullable", append(row(nil)[:10], null), false},
		{"i32 edges", row(map[int]Cell{3: IntCell(math.MinInt32), 4: IntCell(math.MinInt64)}), true},
		{"i32 too big", row(map[int]Cell{3: IntCell(math.MaxInt32 + 1)}), false},
		{"u32 too big", row(map[int]Cell{5: UintCell(math.MaxUint32 + 1)}), false},
		{"f32 overflow", row(map[int]Cell{7: FloatCell(math.MaxFloat64)}), false},
		{"f32 infinite", row(map[int]Cell{7: FloatCell(math.Inf(1))}), true},
		{"false", row(map[int]Cell{2: BoolCell(false)}), true},
		{"int in u64 (boxed path)", row(map[int]Cell{6: IntCell(5)}), true},
		{"negative int in u64", row(map[int]Cell{6: IntCell(-5)}), false},
		{"int in date (boxed path)", row(map[int]Cell{9: IntCell(19000)}), true},
		{"string in int", row(map[int]Cell{3: StringCell("7")}), false},
		{"int in string", row(map[int]Cell{0: IntCell(7)}), false},
		{"bool in int", row(map[int]Cell{3: BoolCell(true)}), false},
		{"float in int", row(map[int]Cell{3: FloatCell(1)}), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := NewBatchBuilder(nil, schema)
			b, _ := NewBatchBuilder(nil, schema)
			defer a.Release()
			defer b.Release()
			good := row(map[int]Cell{0: StringCell("bob")})
			vals := func(cs []Cell) []any {
				out := []any{"e"}
				for _, c := range cs {
					out = append(out, c.Value())
				}
				return out
			}
			if err := a.Append(vals(good)); err != nil {
				t.Fatal(err)
			}
			if err := b.AppendCells([]string{"e"}, good); err != nil {
				t.Fatal(err)
			}
			errA := a.Append(vals(tc.cells))
			errB := b.AppendCells([]string{"e"}, tc.cells)
			if (errA == nil) != tc.ok || (errB == nil) != tc.ok {
				t.Fatalf("Append: %v, AppendCells: %v; want ok=%v", errA, errB, tc.ok)
			}
			if !tc.ok && (!errors.Is(errB, ErrValue) || errA.Error() != errB.Error()) {
				t.Fatalf("AppendCells error %v is not ErrValue or differs from Append's %v", errB, errA)
			}
			ra, rb := a.NewRecord(), b.NewRecord()
			defer ra.Release()
			defer rb.Release()
			if !array.RecordEqual(ra, rb) {
				t.Fatalf("records differ:\n%v\n%v", ra, rb)
			}
		})
	}
}
