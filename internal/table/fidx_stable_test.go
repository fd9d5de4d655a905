package table

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fidxStableRecord is a deterministic edge record shaped like a bulk
// load's (increasing ids, sources in runs, random destinations), plus a
// few keys that share long prefixes and an empty one.
func fidxStableRecord(n int) (Schema, arrow.RecordBatch) {
	schema := edgeKeySchema()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema())
	defer rb.Release()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		id := fmt.Sprintf("01JQZX%020d", i*7+rng.IntN(7))
		src := fmt.Sprintf("p%d", 100000+i/5)
		dst := fmt.Sprintf("p%d", rng.IntN(1_000_000))
		switch i % 997 {
		case 3:
			dst = ""
		case 5:
			src = "a-very-long-shared-prefix-" + src
		}
		rb.Field(0).(*array.StringBuilder).Append(id)
		rb.Field(1).(*array.StringBuilder).Append(src)
		rb.Field(2).(*array.StringBuilder).Append(dst)
	}
	return schema, rb.NewRecordBatch()
}

// TestFragmentIndexBytesStable pins the exact bytes the fragment index
// encoder writes (a SHA-256 of the objects of two deterministic records):
// encoder changes meant to be faster must not change the format. (An
// upgrade of the zstd library may change the compressed bytes without
// changing the format: then check old objects still read and re-pin.)
func TestFragmentIndexBytesStable(t *testing.T) {
	for _, tc := range []struct {
		rows int
		want string
	}{
		{1 << 16, "1bfb7f15ba4b63e422d3836cae7c3461eb8cd8a2caa944e4f4fd7ac064dfda69"},
		{1000, "0ea9a788c3c196b237ae763f02c5253eea01ce18089b9d6acdc407ae8d1e5670"},
	} {
		schema, rec := fidxStableRecord(tc.rows)
		sum := sha256.Sum256(encodeFragmentIndex(schema, rec))
		rec.Release()
		if got := hex.EncodeToString(sum[:]); got != tc.want {
			t.Errorf("%d rows: index object hash %s, want %s", tc.rows, got, tc.want)
		}
	}
}
