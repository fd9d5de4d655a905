package table

import (
	"bytes"
	"context"
	"fmt"
	"testing"

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
	for i := range 8192 {
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
	got, _ := scanAll(t, st, s, ScanOptions{})
	if len(got) != len(rows) || fmt.Sprint(got[77]) != fmt.Sprint(rows[77]) || fmt.Sprint(got[8191]) != fmt.Sprint(rows[8191]) {
		t.Fatalf("read back %d rows (%v, %v), want %d (%v, %v)", len(got), got[77], got[8191], len(rows), rows[77], rows[8191])
	}
}
