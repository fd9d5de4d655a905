package table

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testPrefix = "tables/node-Person"

// checkedAlloc returns an allocator that fails the test if any Arrow buffer
// allocated from it is still live when the test ends.
func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// buildRecord appends rows through a BatchBuilder and returns the record.
func buildRecord(t *testing.T, mem memory.Allocator, schema Schema, rows [][]any) arrow.RecordBatch {
	t.Helper()
	b, err := NewBatchBuilder(mem, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	for _, r := range rows {
		if err := b.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.NewRecord()
}

// writeRows writes one fragment of rows and returns it.
func writeRows(t *testing.T, st storage.Store, schema Schema, rows [][]any, opts WriteOptions) Fragment {
	t.Helper()
	rec := buildRecord(t, opts.Alloc, schema, rows)
	defer rec.Release()
	f, err := WriteFragment(context.Background(), st, testPrefix, schema, rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// stateOf returns a fresh state of schema holding frags, in order.
func stateOf(t *testing.T, schema Schema, frags ...Fragment) *State {
	t.Helper()
	s, err := NewState(schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frags {
		if s, err = s.Append(f); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// rowsOf converts a record into Go rows via Value.
func rowsOf(rec arrow.RecordBatch) [][]any {
	out := make([][]any, rec.NumRows())
	for i := range out {
		row := make([]any, rec.NumCols())
		for j := range row {
			row[j] = Value(rec.Column(j), i)
		}
		out[i] = row
	}
	return out
}

// scanAll collects a scan as Go rows.
func scanAll(t *testing.T, st storage.Store, s *State, opts ScanOptions) ([][]any, ScanStats) {
	t.Helper()
	sc, err := Scan(context.Background(), st, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var out [][]any
	for sc.Next() {
		out = append(out, rowsOf(sc.Record())...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, sc.Stats()
}

func personSchema() Schema {
	return Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String}},
		{Name: "age", Type: ColumnType{Kind: I64, Nullable: true}},
	}}
}

// drainWithOffsets collects what sc returns, rows and their offsets
// (ScanOptions.RowOffsets), and its stats, then closes it.
func drainWithOffsets(t *testing.T, sc *Scanner) ([][]any, []int64, ScanStats) {
	t.Helper()
	defer sc.Close()
	var rows [][]any
	var offs []int64
	for sc.Next() {
		rows = append(rows, rowsOf(sc.Record())...)
		offs = append(offs, sc.Offsets()...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, offs, sc.Stats()
}
