package table

import (
	"context"
	"fmt"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestEvolveReadsOldFragments: a state evolved by metadata only (a column
// renamed, one added, one dropped, reordered) reads its old fragments
// through the new schema — renamed values under the new name, the added
// column null, filters on either — next to a fragment written under the
// new schema; the state round-trips through its encoding.
func TestEvolveReadsOldFragments(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	old := personSchema() // id, name, age
	f1 := writeRows(t, st, old, [][]any{{"a", "Alice", int64(30)}, {"b", "Bob", nil}}, WriteOptions{})
	s0, err := NewState(old)
	if err != nil {
		t.Fatal(err)
	}
	if s0, err = s0.Append(f1); err != nil {
		t.Fatal(err)
	}
	next := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "years", Type: ColumnType{Kind: I64, Nullable: true}}, // was age
		{Name: "nick", Type: ColumnType{Kind: String, Nullable: true}},
		// name dropped
	}}
	s1, err := s0.Evolve(next, []int{0, 2, -1})
	if err != nil {
		t.Fatal(err)
	}
	f2 := writeRows(t, st, next, [][]any{{"c", int64(7), "Cy"}}, WriteOptions{})
	if s1, err = s1.Append(f2); err != nil {
		t.Fatal(err)
	}
	key, err := WriteState(ctx, st, testPrefix, s1)
	if err != nil {
		t.Fatal(err)
	}
	s1, err = ReadState(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := scanAll(t, st, s1, ScanOptions{})
	if got := fmt.Sprint(rows); got != "[[a 30 <nil>] [b <nil> <nil>] [c 7 Cy]]" {
		t.Fatalf("rows = %s", got)
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{Column: "years", Op: OpEq, Value: int64(30)}, "[[a 30 <nil>]]"},
		{Filter{Column: "nick", Op: OpEq, Value: "Cy"}, "[[c 7 Cy]]"},
	} {
		if rows, _ := scanAll(t, st, s1, ScanOptions{Filters: []Filter{c.f}}); fmt.Sprint(rows) != c.want {
			t.Errorf("filter %v: %v", c.f, rows)
		}
	}
	// A filter-only string column (decoded as a dictionary where the file
	// has one): absent from the old fragment, present in the new.
	if rows, _ := scanAll(t, st, s1, ScanOptions{Columns: []string{"id"}, Filters: []Filter{{Column: "nick", Op: OpEq, Value: "Cy"}}}); fmt.Sprint(rows) != "[[c]]" {
		t.Errorf("filter-only nick: %v", rows)
	}
	// Renamed filter-only string column: name -> who, read from the old file's "name".
	s2, err := s0.Evolve(Schema{Columns: []Column{{Name: "id", Type: ColumnType{Kind: String}}, {Name: "who", Type: ColumnType{Kind: String}}}}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := scanAll(t, st, s2, ScanOptions{Columns: []string{"id"}, Filters: []Filter{{Column: "who", Op: OpEq, Value: "Bob"}}}); fmt.Sprint(rows) != "[[b]]" {
		t.Errorf("filter-only renamed who: %v", rows)
	}
	// Refusals: a type change, a new required column.
	if _, err := s0.Evolve(Schema{Columns: []Column{{Name: "id", Type: ColumnType{Kind: String}}, {Name: "age", Type: ColumnType{Kind: String, Nullable: true}}}}, []int{0, 2}); err == nil {
		t.Error("type change accepted")
	}
	if _, err := s0.Evolve(Schema{Columns: []Column{{Name: "id", Type: ColumnType{Kind: String}}, {Name: "x", Type: ColumnType{Kind: String}}}}, []int{0, -1}); err == nil {
		t.Error("new non-nullable column accepted")
	}
}
