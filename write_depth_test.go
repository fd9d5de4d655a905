package omnigraph

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestCompactingInsertRoundTrips pins the dependent round trips of
// single-row inserts on a warm remote handle, those that trigger inline
// compaction included: the head GET, one batch of puts (the writes' objects
// and commits, the compaction's objects and commit side by side), the CAS.
// A compacting insert used to cost one more: the writes' commit objects
// waited for the compaction's flush, and the compaction's commit for its
// objects. Measured like TestColdLookupRoundTrips: 30 ms per request in a
// synctest bubble, so side-by-side requests overlap exactly.
func TestCompactingInsertRoundTrips(t *testing.T) {
	// Writes inside a synctest bubble put zstd encoders created there into
	// the process-wide pool of the Parquet writer; any later write outside
	// the bubble that draws one dies. The bubble therefore runs in a child
	// process of its own.
	if os.Getenv(insertDepthEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestCompactingInsertRoundTrips$", "-test.count", "1")
		cmd.Env = append(os.Environ(), insertDepthEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	ctx := context.Background()
	mem := storage.NewMem()
	synctest.Test(t, func(t *testing.T) {
		rec := storage.NewRecording(storage.NewDelayed(mem, 30*time.Millisecond))
		opts := Options{wrapBackend: func(storage.Store) storage.Store {
			return storage.NewBatching(storage.NewCached(rec, storage.CacheOptions{Immutable: ImmutableKey}))
		}}
		g, err := Init(ctx, filepath.Join(t.TempDir(), "g"), "cost.pg", costSchema, "act", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Load(ctx, strings.NewReader(costData), LoadOptions{Mode: Append}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Query(ctx, Target{}, costQueries, "person", map[string]any{"name": "Alice"}); err != nil {
			t.Fatal(err) // a warm handle
		}
		compacted := 0
		for i := range 12 {
			rec.Reset()
			t0 := time.Now()
			if _, _, err := g.Mutate(ctx, "", costQueries, "add", map[string]any{"name": fmt.Sprintf("n-%d", i)}, MutateOptions{}); err != nil {
				t.Fatal(err)
			}
			d, el, trace := rec.Depth(), time.Since(t0), rec.Trace()
			log, err := g.Log(ctx, "main", 1)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(log[0].Message, "auto-compact:") {
				compacted++
			}
			if d != 3 || el != 90*time.Millisecond {
				t.Errorf("insert %d (compacted: %v): %d round trips in %v, want 3:\n%s", i, strings.HasPrefix(log[0].Message, "auto-compact:"), d, el, trace)
			}
		}
		if compacted == 0 {
			t.Fatal("no insert triggered inline compaction: the test proves nothing")
		}
	})
}

// insertDepthEnv marks the child process of TestCompactingInsertRoundTrips.
const insertDepthEnv = "OMNIGRAPH_TEST_INSERT_DEPTH_CHILD"
