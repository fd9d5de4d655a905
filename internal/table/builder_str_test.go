package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestStrColumnMatchesStringBuilder pins that a strColumn builds the
// array an Arrow StringBuilder builds from the same appends (array.Equal,
// the same nulls and values row by row): with no nulls, with the first
// null early or late, all nulls, empty strings, across byte boundaries of
// the bitmap and a load's record size, record after record from one
// column (reserved like the last, as a load does).
func TestStrColumnMatchesStringBuilder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type gen struct {
		name  string
		value func(i, n int) (string, bool) // value, null
	}
	word := func() string {
		if rng.IntN(6) == 0 {
			return ""
		}
		return fmt.Sprintf("v%d", rng.IntN(1<<rng.IntN(20)))
	}
	gens := []gen{
		{"no nulls", func(int, int) (string, bool) { return word(), false }},
		{"some nulls", func(int, int) (string, bool) { return word(), rng.IntN(3) == 0 }},
		{"first null last", func(i, n int) (string, bool) { return word(), i == n-1 }},
		{"first null mid", func(i, n int) (string, bool) { return word(), i >= n/2 && rng.IntN(2) == 0 }},
		{"all nulls", func(int, int) (string, bool) { return "", true }},
		{"all empty", func(int, int) (string, bool) { return "", false }},
		{"long", func(int, int) (string, bool) { return string(make([]byte, rng.IntN(300))), false }},
	}
	for _, g := range gens {
		c := newStrColumn()
		var last arrow.Array
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 1000, 1 << 16, 3} {
			t.Run(fmt.Sprintf("%s/%d", g.name, n), func(t *testing.T) {
				if last != nil {
					c.reserve(last.Len(), len(last.(*array.String).ValueBytes()))
					last.Release()
				}
				sb := array.NewStringBuilder(memory.DefaultAllocator)
				defer sb.Release()
				for i := range n {
					s, null := g.value(i, n)
					if null {
						sb.AppendNull()
						c.appendNull()
					} else {
						sb.Append(s)
						if err := c.room(s); err != nil {
							t.Fatal(err)
						}
						c.append(s)
					}
				}
				if cap(c.data)-len(c.data) < strColumnPad || 4*(cap(c.offs)-len(c.offs)) < strColumnPad ||
					(c.valid != nil && cap(c.valid)-len(c.valid) < strColumnPad) {
					t.Fatalf("padding lost: data %d/%d offs %d/%d valid %d/%d", len(c.data), cap(c.data),
						len(c.offs), cap(c.offs), len(c.valid), cap(c.valid))
				}
				want := sb.NewStringArray()
				defer want.Release()
				got := c.newArray()
				last = got
				if !array.Equal(got, want) {
					t.Fatalf("arrays differ:\n got %v\nwant %v", got, want)
				}
				gs := got.(*array.String)
				if gs.Len() != n || gs.NullN() != want.NullN() {
					t.Fatalf("len %d nulls %d, want %d and %d", gs.Len(), gs.NullN(), n, want.NullN())
				}
				for i := range n {
					if gs.IsValid(i) != want.IsValid(i) || gs.Value(i) != want.Value(i) {
						t.Fatalf("row %d: (%v %q), want (%v %q)", i, gs.IsValid(i), gs.Value(i), want.IsValid(i), want.Value(i))
					}
				}
				if c.rows() != 0 || len(c.data) != 0 || c.valid != nil || c.nulls != 0 {
					t.Fatal("column not emptied by newArray")
				}
			})
		}
		if last != nil {
			last.Release()
		}
	}
}

// TestBatchBuilderMatchesRecordBuilder pins a BatchBuilder's records,
// string columns built by strColumn, to the record an Arrow
// RecordBuilder makes from the same rows with its own builders.
func TestBatchBuilderMatchesRecordBuilder(t *testing.T) {
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String, Nullable: true}},
		{Name: "age", Type: ColumnType{Kind: I32, Nullable: true}},
		{Name: "mood", Type: ColumnType{Kind: Enum, Nullable: true}},
		{Name: "tags", Type: ColumnType{Kind: List, Elem: String, Nullable: true}},
		{Name: "city", Type: ColumnType{Kind: String, Nullable: true}}, // never null
	}}
	rng := rand.New(rand.NewPCG(5, 6))
	b, err := NewBatchBuilder(nil, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	for _, n := range []int{5, 70000, 0, 1} {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema())
		for i := range n {
			id := fmt.Sprintf("n%d", i)
			var name, mood, age, tags any
			if rng.IntN(3) > 0 {
				name = fmt.Sprintf("p%d", rng.IntN(100))
			}
			if rng.IntN(5) == 0 {
				name = ""
			}
			if rng.IntN(2) == 0 {
				mood = "glad"
			}
			if rng.IntN(2) == 0 {
				age = int64(i)
			}
			if rng.IntN(2) == 0 {
				tags = []string{"a", ""}
			}
			switch i % 3 {
			case 0:
				err = b.Append([]any{id, name, age, mood, tags, "c"})
			case 1:
				err = b.AppendStrings([]string{id}, []any{name, age, mood, tags, "c"})
			default:
				cells := []Cell{{}, {}, {}}
				if name != nil {
					cells[0] = StringCell(name.(string))
				}
				if age != nil {
					cells[1] = IntCell(age.(int64))
				}
				if mood != nil {
					cells[2] = StringCell(mood.(string))
				}
				if tags != nil {
					err = b.AppendStrings([]string{id}, []any{name, age, mood, tags, "c"})
				} else {
					err = b.AppendCells([]string{id}, append(cells, Cell{}, StringCell("c")))
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			for j, v := range []any{id, name, age, mood, tags, "c"} {
				appendValue(rb.Field(j), schema.Columns[j].Type, v)
			}
		}
		want := rb.NewRecordBatch()
		rb.Release()
		got := b.NewRecord()
		if !array.RecordEqual(got, want) {
			t.Fatalf("%d rows: records differ", n)
		}
		if n > 0 {
			// The fragment and index objects, byte for byte (the
			// Parquet writer sees no validity bitmap where no row
			// is null, and padding of its own choosing).
			g, w := fragmentObjects(t, schema, got), fragmentObjects(t, schema, want)
			if len(g) != len(w) {
				t.Fatalf("%d rows: %d objects, want %d", n, len(g), len(w))
			}
			for i := range g {
				if !bytes.Equal(g[i], w[i]) {
					t.Fatalf("%d rows: object %d differs", n, i)
				}
			}
		}
		b.ReserveLike(got)
		got.Release()
		want.Release()
	}
}

// fragmentObjects writes rec as a fragment and returns its objects'
// bytes, the fragment first, then its index.
func fragmentObjects(t *testing.T, schema Schema, rec arrow.RecordBatch) [][]byte {
	t.Helper()
	ctx := context.Background()
	st := storage.NewMem()
	f, err := WriteFragment(ctx, st, testPrefix, schema, rec, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, k := range []string{f.Key, f.Index} {
		b, _, err := st.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestBatchBuilderRefusesOversizeStrings pins that a row whose string
// would take its column past maxStrColumnBytes in one record is refused
// (ErrValue) on every append path and leaves the builder's record as it
// was.
func TestBatchBuilderRefusesOversizeStrings(t *testing.T) {
	defer func(m int) { maxStrColumnBytes = m }(maxStrColumnBytes)
	maxStrColumnBytes = 100
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String, Nullable: true}},
	}}
	big := string(make([]byte, 60))
	for _, path := range []string{"Append", "AppendStrings", "AppendCells"} {
		b, err := NewBatchBuilder(nil, schema)
		if err != nil {
			t.Fatal(err)
		}
		add := func(id, name string) error {
			switch path {
			case "Append":
				return b.Append([]any{id, name})
			case "AppendStrings":
				return b.AppendStrings([]string{id}, []any{name})
			}
			return b.AppendCells([]string{id}, []Cell{StringCell(name)})
		}
		if err := add("a", big); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := add("b", big); !errors.Is(err, ErrValue) {
			t.Fatalf("%s: second 60 bytes: %v, want ErrValue", path, err)
		}
		if err := add(string(make([]byte, 100)), "c"); !errors.Is(err, ErrValue) {
			t.Fatalf("%s: 101 id bytes: %v, want ErrValue", path, err)
		}
		if err := add("d", string(make([]byte, 40))); err != nil {
			t.Fatalf("%s: up to the limit: %v", path, err)
		}
		rec := b.NewRecord()
		want := `["a" "d"]`
		if got := fmt.Sprint(rec.Column(0)); got != want || rec.NumRows() != 2 {
			t.Fatalf("%s: ids %s, want %s", path, got, want)
		}
		rec.Release()
		b.Release()
	}
}
