package table

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
