package table

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestFragmentStatsFromIndexMatchComputeStats: the statistics a fragment
// records take the bounds of the columns its index sorted from the
// index's sections; they must be exactly computeStats' over every row —
// for an edge record shaped like a load's (with an empty key and keys
// past maxStatString), and for node records whose id column has a null
// (then computed as before) or a key longer than maxStatString.
func TestFragmentStatsFromIndexMatchComputeStats(t *testing.T) {
	schema, rec := fidxStableRecord(5000)
	defer rec.Release()
	checkIndexStats(t, "edges", schema, rec)

	long := strings.Repeat("z", maxStatString+5)
	for _, tc := range []struct {
		name string
		ids  []*string
	}{
		{"nodes", strs("p3", "p10", "", "p2", "a")},
		{"long max", strs("p3", long, "p1")},
		{"long min", strs(long, long+"a")},
		{"null id", strs("p3", "", "p1")},
	} {
		nullable := tc.name == "null id"
		schema := Schema{Columns: []Column{
			{Name: "id", Type: ColumnType{Kind: String, Nullable: nullable}},
			{Name: "name", Type: ColumnType{Kind: String, Nullable: true}},
		}}
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema())
		for i, id := range tc.ids {
			if nullable && i == 1 {
				rb.Field(0).(*array.StringBuilder).AppendNull()
			} else {
				rb.Field(0).(*array.StringBuilder).Append(*id)
			}
			rb.Field(1).(*array.StringBuilder).Append("n" + *id)
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		checkIndexStats(t, tc.name, schema, rec)
		rec.Release()
	}
}

func checkIndexStats(t *testing.T, name string, schema Schema, rec arrow.RecordBatch) {
	t.Helper()
	idx, got := fragmentIndexStats(schema, rec)
	if len(idx) == 0 {
		t.Fatalf("%s: no index", name)
	}
	for i, c := range schema.Columns {
		if want := computeStats(c.Type, rec.Column(i)); !reflect.DeepEqual(got[i], want) {
			t.Errorf("%s: column %s stats %+v, computeStats %+v", name, c.Name, got[i], want)
		}
	}
}

func strs(s ...string) []*string {
	out := make([]*string, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// TestParquetStatsWhereTheStateLacksThem pins which column chunks carry
// Parquet statistics: in a fragment of one row group the columns an index
// section sorted, whose exact bounds the state holds, carry none; every
// other column does, and so does every column of a fragment of several
// row groups (rowGroupMayMatch prunes those by them) and a key too long
// for the state's bounds.
func TestParquetStatsWhereTheStateLacksThem(t *testing.T) {
	edges, erec := fidxStableRecord(3000)
	defer erec.Release()
	long := strings.Repeat("k", maxStatString+1)
	nodes := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String, Nullable: true}},
	}}
	nodeRec := func(ids ...string) arrow.RecordBatch {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, nodes.ArrowSchema())
		defer rb.Release()
		for _, id := range ids {
			rb.Field(0).(*array.StringBuilder).Append(id)
			rb.Field(1).(*array.StringBuilder).Append("n" + id)
		}
		return rb.NewRecordBatch()
	}
	short, longRec := nodeRec("p2", "p1", "p3"), nodeRec("p1", long)
	defer short.Release()
	defer longRec.Release()
	for _, tc := range []struct {
		name    string
		schema  Schema
		rec     arrow.RecordBatch
		rgRows  int64
		without []string
	}{
		{"edges, one row group", edges, erec, 0, []string{"id", "src", "dst"}},
		{"edges, three row groups", edges, erec, 1000, nil},
		{"nodes, one row group", nodes, short, 0, []string{"id"}},
		{"nodes, a key past the state's bound", nodes, longRec, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.NewMem()
			fr, err := WriteFragment(context.Background(), st, "t", tc.schema, tc.rec, WriteOptions{RowGroupRows: tc.rgRows})
			if err != nil {
				t.Fatal(err)
			}
			data, _, err := st.Get(context.Background(), fr.Key)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := file.NewParquetReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			md := pf.MetaData()
			for rg := range md.NumRowGroups() {
				for ci, c := range tc.schema.Columns {
					cc, err := md.RowGroup(rg).ColumnChunk(ci)
					if err != nil {
						t.Fatal(err)
					}
					ts, _ := cc.Statistics()
					has := ts != nil && ts.HasMinMax()
					if want := !slices.Contains(tc.without, c.Name); has != want {
						t.Errorf("row group %d column %s: statistics %v, want %v", rg, c.Name, has, want)
					}
				}
			}
		})
	}
}
