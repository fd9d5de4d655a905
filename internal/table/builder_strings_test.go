package table

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestAppendStringsMatchesAppend pins that AppendStrings builds the same
// columns as Append with the leading strings boxed, and rejects the same
// rows (ErrValue), leaving the builder unchanged — including the cells the
// check and append fast paths take (strings, int64 in I32/I64/Date/
// DateTime, the I32 range edges).
func TestAppendStringsMatchesAppend(t *testing.T) {
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "src", Type: ColumnType{Kind: String}},
		{Name: "dst", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String, Nullable: true}},
		{Name: "age", Type: ColumnType{Kind: I32, Nullable: true}},
		{Name: "big", Type: ColumnType{Kind: I64, Nullable: true}},
		{Name: "day", Type: ColumnType{Kind: Date, Nullable: true}},
		{Name: "at", Type: ColumnType{Kind: DateTime, Nullable: true}},
		{Name: "mood", Type: ColumnType{Kind: Enum, Nullable: true}},
	}}
	cases := []struct {
		name string
		rest []any
		ok   bool
	}{
		{"typical", []any{"ann", int64(42), int64(1) << 40, int64(19000), int64(1700000000000), "ok"}, true},
		{"nulls", []any{nil, nil, nil, nil, nil, nil}, true},
		{"i32 edges", []any{"", int64(math.MinInt32), int64(math.MaxInt64), int64(math.MaxInt32), int64(math.MinInt64), nil}, true},
		{"i32 too big", []any{"x", int64(math.MaxInt32) + 1, nil, nil, nil, nil}, false},
		{"i32 too small", []any{"x", int64(math.MinInt32) - 1, nil, nil, nil, nil}, false},
		{"date too big", []any{"x", nil, nil, int64(math.MaxInt32) + 1, nil, nil}, false},
		{"other int types", []any{"x", int32(7), uint64(9), int32(3), int(5), nil}, true},
		{"string in int", []any{"x", "7", nil, nil, nil, nil}, false},
		{"int in string", []any{int64(7), nil, nil, nil, nil, nil}, false},
	}
	lead := []string{"e1", "p1", "p2"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := NewBatchBuilder(nil, schema)
			b, _ := NewBatchBuilder(nil, schema)
			defer a.Release()
			defer b.Release()
			// One good row first, so "unchanged" is checked on a non-empty builder.
			good := []any{"ann", int64(1), nil, nil, nil, nil}
			if err := a.Append(append([]any{"e0", "p0", "p0"}, good...)); err != nil {
				t.Fatal(err)
			}
			if err := b.AppendStrings([]string{"e0", "p0", "p0"}, good); err != nil {
				t.Fatal(err)
			}
			errA := a.Append(append([]any{lead[0], lead[1], lead[2]}, tc.rest...))
			errB := b.AppendStrings(lead, tc.rest)
			if (errA == nil) != tc.ok || (errB == nil) != tc.ok {
				t.Fatalf("Append: %v, AppendStrings: %v; want ok=%v", errA, errB, tc.ok)
			}
			if !tc.ok && !errors.Is(errB, ErrValue) {
				t.Fatalf("AppendStrings error %v is not ErrValue", errB)
			}
			ra, rb := a.NewRecord(), b.NewRecord()
			defer ra.Release()
			defer rb.Release()
			if !array.RecordEqual(ra, rb) {
				t.Fatalf("records differ:\n%v\n%v", ra, rb)
			}
		})
	}
	// A leading column that is not a string is refused.
	bad := Schema{Columns: []Column{{Name: "n", Type: ColumnType{Kind: I64}}}}
	bb, err := NewBatchBuilder(nil, bad)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Release()
	if err := bb.AppendStrings([]string{"x"}, nil); !errors.Is(err, ErrValue) || bb.Len() != 0 {
		t.Fatalf("AppendStrings into an I64 column: %v, %d rows", err, bb.Len())
	}
}

// TestReserveLikeKeepsRecords pins that reserving a builder's columns
// after a record changes no later record: rows built after ReserveLike
// equal the same rows built by a fresh builder, over every column type,
// for a next record smaller, equal and larger than the one reserved for.
func TestReserveLikeKeepsRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	schema := allTypesSchema()
	for _, next := range []int{10, 300, 900} {
		a, _ := NewBatchBuilder(nil, schema)
		for _, row := range randomAllTypesRows(r, 300) {
			if err := a.Append(row); err != nil {
				t.Fatal(err)
			}
		}
		first := a.NewRecord()
		a.ReserveLike(first)
		first.Release()
		b, _ := NewBatchBuilder(nil, schema)
		for _, row := range randomAllTypesRows(r, next) {
			if err := a.Append(row); err != nil {
				t.Fatal(err)
			}
			if err := b.Append(row); err != nil {
				t.Fatal(err)
			}
		}
		got, want := a.NewRecord(), b.NewRecord()
		if !array.RecordEqual(got, want) {
			t.Errorf("next record of %d rows differs after ReserveLike", next)
		}
		got.Release()
		want.Release()
		a.Release()
		b.Release()
	}
}
