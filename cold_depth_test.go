package omnigraph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestColdLookupRoundTrips pins the depth of a cold key lookup — the
// number of requests that wait for one another — on the remote store stack
// (batching, object cache) over a table of three indexed fragments: a
// fresh handle runs one `@key` query, every request held open for 30 ms of
// virtual time (testing/synctest), so requests sent side by side always
// overlap and storage.Recording's depth is exact. The chain is
//
//  1. the format stamp and main's ref (Open);
//  2. the ref afresh, the commit the ref named at open, and the schema and
//     table state its hint names (the query's types);
//  3. the fragment indexes that may hold the key, each whole;
//  4. the fragment that holds it.
//
// A graph whose ref carries no hint (written before hints) asks for the
// schema and the state together once the commit is known: 5.
func TestColdLookupRoundTrips(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "g")
	const rows = 140_000 // three fragments of up to 65,536 rows
	buildPeople(t, ctx, dir, rows)
	// Process-wide state created lazily on a first read (the zstd decoder
	// of fragment indexes) must not belong to one synctest bubble: make it
	// here, outside every bubble.
	g, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	queryOnePerson(t, g, "p1")
	lookup := func(t *testing.T) (depth int, trace string) {
		synctest.Test(t, func(t *testing.T) {
			var rec *storage.Recording
			opts := Options{wrapBackend: func(st storage.Store) storage.Store {
				rec = storage.NewRecording(storage.NewDelayed(st, 30*time.Millisecond))
				return storage.NewBatching(storage.NewCached(rec, storage.CacheOptions{Immutable: ImmutableKey}))
			}}
			t0 := time.Now()
			g, err := Open(ctx, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			queryOnePerson(t, g, "p123456")
			depth, trace = rec.Depth(), rec.Trace()
			if el := time.Since(t0); el != time.Duration(depth)*30*time.Millisecond {
				t.Errorf("virtual time %v for depth %d", el, depth)
			}
		})
		return depth, trace
	}
	t.Run("hinted", func(t *testing.T) {
		if d, trace := lookup(t); d != 4 {
			t.Errorf("cold lookup: %d dependent round trips, want 4:\n%s", d, trace)
		}
	})
	t.Run("ref-without-hint", func(t *testing.T) {
		stripRefHint(t, filepath.Join(dir, "refs", "heads", "main"))
		if d, trace := lookup(t); d != 5 {
			t.Errorf("cold lookup on a ref without a hint: %d dependent round trips, want 5:\n%s", d, trace)
		}
	})
}

// stripRefHint rewrites the ref at path as a build before ref hints wrote
// it: {"commit","seq","sum"}, the sum over the first two.
func stripRefHint(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Commit string `json:"commit"`
		Seq    uint64 `json:"seq"`
		Hint   any    `json:"hint"`
	}
	if err := json.Unmarshal(b, &w); err != nil || w.Hint == nil {
		t.Fatalf("ref %s: %v, hint %v", b, err, w.Hint)
	}
	body := fmt.Sprintf(`{"commit":%q,"seq":%d}`, w.Commit, w.Seq)
	sum := sha256.Sum256([]byte(body))
	out := strings.TrimSuffix(body, "}") + fmt.Sprintf(`,"sum":%q}`, hex.EncodeToString(sum[:])) + "\n"
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStaleRefHintReadsTheHead: a handle whose open-time ref hint names
// states the branch has since replaced still reads the head's states (the
// hint only makes it fetch the stale ones too).
func TestStaleRefHintReadsTheHead(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "g")
	w, err := Init(ctx, dir, "cost.pg", costSchema, "act", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Load(ctx, strings.NewReader(costData), LoadOptions{Mode: Append}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, dir, Options{}) // remembers the ref's hint
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Mutate(ctx, "", costQueries, "add", map[string]any{"name": "Carol"}, MutateOptions{}); err != nil {
		t.Fatal(err)
	}
	queryOnePerson(t, r, "Carol") // written after the reader opened
}

// queryOnePerson runs costQueries' person lookup of name on g and fails t
// unless it finds exactly one row.
func queryOnePerson(t *testing.T, g *Graph, name string) {
	t.Helper()
	res, err := g.Query(context.Background(), Target{}, costQueries, "person", map[string]any{"name": name})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("person %s: %d rows, want 1", name, len(res.Rows))
	}
}
