package exec

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestPointWriteReadBytesFlat pins that a keyed one-row update followed by
// a key lookup allocates O(changed rows + n/8) bytes, not a copy of the
// table (derive.go, rowspace.go): the bytes one write+read allocates on
// a table of bigN rows exceed those on one of smallN rows by less than
// maxBytesPerRow per extra row. Copying the live rows of the image (ids
// and two columns of boxed values, 16 bytes a cell) costs 48 bytes a
// row; the dead bitmap costs 1/8. Bytes are counted, not timed.
func TestPointWriteReadBytesFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("loads two tables of 5k and 40k rows")
	}
	const smallN, bigN, ops, maxBytesPerRow = 5_000, 40_000, 40, 4.0
	perOp := func(n int) float64 {
		ctx := context.Background()
		g, err := Init(ctx, storage.NewMem(), "test.pg", engSchema, "tester", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var bulk strings.Builder
		for i := range n {
			fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"n%d","age":%d}}`+"\n", i, i%90)
		}
		appendJSONL(t, g, bulk.String())
		set, pk := engPlan(t, g, "set_age"), headPlan(t, g, `query pk($n: String) { match { $p: Person { name: $n } } return { $p.age } }`, "pk")
		step := func(i int) {
			name := fmt.Sprintf("n%d", (i*7919)%n)
			if _, err := g.Mutate(ctx, "main", set, map[string]any{"name": name, "age": i % 90}, MutateOptions{}); err != nil {
				t.Fatal(err)
			}
			res, _, err := g.Query(ctx, Target{}, pk, map[string]any{"n": name})
			if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(i%90) {
				t.Fatalf("pk %s after its update: %v %v", name, res, err)
			}
		}
		// Warm: the first reads are partial (snapshot.partialBeforeImages),
		// then one assembles the image; later ones derive.
		for i := range 16 {
			step(i)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range ops {
			step(16 + i)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / ops
	}
	small, big := perOp(smallN), perOp(bigN)
	growth := (big - small) / (bigN - smallN)
	t.Logf("write+read: %.0f B at %d rows, %.0f B at %d rows: %.2f B per extra row", small, smallN, big, bigN, growth)
	if growth > maxBytesPerRow {
		t.Fatalf("a write+read allocates %.2f B per table row (%.0f B at %d rows, %.0f B at %d): more than %.1f, a copy of the table",
			growth, small, smallN, big, bigN, maxBytesPerRow)
	}
}
