package table

import (
	"fmt"
	"testing"
)

// BenchmarkAppendCells appends a load fragment's worth of edge rows (id,
// src and dst leading, a string and an integer cell) and takes the
// record, as a bulk load does, columns reserved like the last record.
func BenchmarkAppendCells(b *testing.B) {
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "src", Type: ColumnType{Kind: String}},
		{Name: "dst", Type: ColumnType{Kind: String}},
		{Name: "note", Type: ColumnType{Kind: String, Nullable: true}},
		{Name: "w", Type: ColumnType{Kind: I64, Nullable: true}},
	}}
	const n = 1 << 16
	ids, srcs, dsts := make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("01JQZX%020d", i)
		srcs[i], dsts[i] = fmt.Sprintf("p%d", 100000+i/5), fmt.Sprintf("p%d", (i*7919)%1000000)
	}
	bb, err := NewBatchBuilder(nil, schema)
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Release()
	lead := make([]string, 3)
	cells := make([]Cell, 2)
	b.ReportAllocs()
	for b.Loop() {
		for i := range n {
			lead[0], lead[1], lead[2] = ids[i], srcs[i], dsts[i]
			cells[0], cells[1] = StringCell("x"), IntCell(int64(i))
			if i%3 == 0 {
				cells[0] = Cell{}
			}
			if err := bb.AppendCells(lead, cells); err != nil {
				b.Fatal(err)
			}
		}
		rec := bb.NewRecord()
		bb.ReserveLike(rec)
		rec.Release()
	}
}
