package table

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const benchRows = 1_000_000

func benchSchema() Schema {
	return Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String}},
		{Name: "age", Type: ColumnType{Kind: I64}},
		{Name: "score", Type: ColumnType{Kind: F64}},
	}}
}

func benchRecord() arrow.RecordBatch {
	mem := memory.DefaultAllocator
	rb := array.NewRecordBuilder(mem, benchSchema().ArrowSchema())
	defer rb.Release()
	ids := rb.Field(0).(*array.StringBuilder)
	names := rb.Field(1).(*array.StringBuilder)
	ages := rb.Field(2).(*array.Int64Builder)
	scores := rb.Field(3).(*array.Float64Builder)
	for i := 0; i < benchRows; i++ {
		ids.Append(fmt.Sprintf("person-%07d", i))
		names.Append(fmt.Sprintf("name %d of the benchmark", i*7919%benchRows))
		ages.Append(int64(i % 97))
		scores.Append(float64(i) * 0.37)
	}
	return rb.NewRecordBatch()
}

func benchTable(b *testing.B) (storage.Store, *State) {
	b.Helper()
	st := storage.NewMem()
	rec := benchRecord()
	defer rec.Release()
	f, err := WriteFragment(context.Background(), st, testPrefix, benchSchema(), rec, WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := NewState(benchSchema())
	s, err = s.Append(f)
	if err != nil {
		b.Fatal(err)
	}
	return st, s
}

func BenchmarkWrite1M(b *testing.B) {
	rec := benchRecord()
	defer rec.Release()
	st := storage.NewMem()
	b.ResetTimer()
	for b.Loop() {
		f, err := WriteFragment(context.Background(), st, testPrefix, benchSchema(), rec, WriteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(f.Bytes)/1e6, "MB")
	}
}

func benchScan(b *testing.B, cols []string) {
	st, s := benchTable(b)
	b.ResetTimer()
	for b.Loop() {
		sc, err := Scan(context.Background(), st, s, ScanOptions{Columns: cols})
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for sc.Next() {
			n += sc.Record().NumRows()
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		sc.Close()
		if n != benchRows {
			b.Fatalf("read %d rows", n)
		}
	}
}

func BenchmarkScanAll1M(b *testing.B)       { benchScan(b, nil) }
func BenchmarkScanProjected1M(b *testing.B) { benchScan(b, []string{"id", "age"}) }

func BenchmarkLookupID1M(b *testing.B) {
	st, s := benchTable(b)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("person-%07d", (i*104729)%benchRows)
		i++
		rec, err := LookupIDs(context.Background(), st, s, []string{id}, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if rec.NumRows() != 1 {
			b.Fatalf("lookup %s: %d rows", id, rec.NumRows())
		}
		rec.Release()
	}
}
