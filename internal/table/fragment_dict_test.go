package table

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestEdgeEndpointsWithoutDictionary: an edge fragment's id, src and dst
// are written without a dictionary even where the endpoints repeat (a
// source's edges listed together), while another column of few distinct
// values keeps one; the rows read back as written.
func TestEdgeEndpointsWithoutDictionary(t *testing.T) {
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "src", Type: ColumnType{Kind: String}},
		{Name: "dst", Type: ColumnType{Kind: String}},
		{Name: "kind", Type: ColumnType{Kind: String, Nullable: true}},
	}}
	var rows [][]any
	// Past one row group (65,536 rows): the endpoints' plain encoding
	// must read back row for row in every group.
	for i := range 70_000 {
		rows = append(rows, []any{fmt.Sprintf("e%05d", i), fmt.Sprintf("p%d", i/16), fmt.Sprintf("p%d", i%5), fmt.Sprintf("k%d", i%3)})
	}
	st := storage.NewMem()
	f := writeRows(t, st, schema, rows, WriteOptions{})
	data, _, err := st.Get(context.Background(), f.Key)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rg := pf.MetaData().RowGroup(0)
	for i, want := range []bool{false, false, false, true} {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if got := cc.HasDictionaryPage(); got != want {
			t.Errorf("column %s: dictionary page %v, want %v", schema.Columns[i].Name, got, want)
		}
	}
	s, _ := NewState(schema)
	if s, err = s.Append(f); err != nil {
		t.Fatal(err)
	}
	if n := pf.NumRowGroups(); n < 2 {
		t.Fatalf("%d row groups, want at least 2", n)
	}
	got, _ := scanAll(t, st, s, ScanOptions{})
	if len(got) != len(rows) {
		t.Fatalf("read back %d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if fmt.Sprint(got[i]) != fmt.Sprint(rows[i]) {
			t.Fatalf("row %d: read back %v, want %v", i, got[i], rows[i])
		}
	}
}

// TestHighCardinalityMatchesCount: the early-stopping check decides as a
// full count of the first 4,096 values does, around the n/4 threshold,
// with nulls, and for short and long columns.
func TestHighCardinalityMatchesCount(t *testing.T) {
	for _, rows := range []int{63, 64, 100, 4096, 5000} {
		for _, distinct := range []int{1, 15, 16, 17, 25, 26, 1023, 1024, 1025, 1026, 4096} {
			b := array.NewStringBuilder(memory.DefaultAllocator)
			for i := range rows {
				if i%11 == 5 {
					b.AppendNull()
					continue
				}
				b.Append(fmt.Sprintf("v%d", i%distinct))
			}
			arr := b.NewStringArray()
			b.Release()
			n := min(arr.Len(), 4096)
			seen := map[string]bool{}
			for i := range n {
				seen[arr.ValueStr(i)] = true
			}
			want := n >= 64 && len(seen) > n/4
			if got := highCardinality(arr); got != want {
				t.Errorf("%d rows, %d distinct: highCardinality %v, want %v", rows, distinct, got, want)
			}
			arr.Release()
		}
	}
}
