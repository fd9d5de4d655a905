package omnigraph

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// BenchmarkRemoteColdLookup measures what a fresh CLI process pays for one
// key lookup on a large table in an object store with 30 ms per request
// (issue 12: ≤ 150 ms on a 1M-row table). Each iteration opens a new
// handle with an empty object cache over the remote store stack
// (batching, object cache, injected latency) and runs one `@key` query;
// it reports the median wall time, the requests and bytes the lookup sent
// to the store, and the median in round trips.
//
// The table is built once per run (OMNIGRAPH_BENCH_ROWS rows, default
// 1,000,000; OMNIGRAPH_BENCH_DIR keeps the graph between runs).
func BenchmarkRemoteColdLookup(b *testing.B) {
	ctx := context.Background()
	rows := 1_000_000
	if v := os.Getenv("OMNIGRAPH_BENCH_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("OMNIGRAPH_BENCH_ROWS=%q: want a positive count", v)
		}
		rows = n
	}
	dir := filepath.Join(b.TempDir(), "g")
	if d := os.Getenv("OMNIGRAPH_BENCH_DIR"); d != "" {
		dir = filepath.Join(d, fmt.Sprintf("cold-lookup-%d", rows))
	}
	if _, err := os.Stat(filepath.Join(dir, "refs")); err != nil {
		buildPeople(b, ctx, dir, rows)
	}
	for _, rtt := range []time.Duration{0, 30 * time.Millisecond} {
		b.Run(fmt.Sprintf("rows=%d/rtt=%v", rows, rtt), func(b *testing.B) {
			var lat []time.Duration
			var reqs, bytes int64
			key := 0
			for b.Loop() {
				key = (key*7919 + 104729) % rows
				cnt := &storage.Counting{}
				opts := Options{wrapBackend: func(st storage.Store) storage.Store {
					cnt = storage.NewCounting(st)
					return storage.NewBatching(storage.NewCached(storage.NewDelayed(cnt, rtt), storage.CacheOptions{Immutable: ImmutableKey}))
				}}
				t0 := time.Now()
				g, err := Open(ctx, dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				res, err := g.Query(ctx, Target{}, costQueries, "person", map[string]any{"name": fmt.Sprintf("p%d", key)})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				if len(res.Rows) != 1 {
					b.Fatalf("p%d: %d rows, want 1", key, len(res.Rows))
				}
				c := cnt.Snapshot()
				reqs += c.Requests()
				for _, v := range c {
					bytes += v.Bytes
				}
			}
			slices.Sort(lat)
			p50 := lat[len(lat)/2]
			n := float64(len(lat))
			b.ReportMetric(float64(p50)/float64(time.Millisecond), "p50-ms")
			b.ReportMetric(float64(reqs)/n, "requests/op")
			b.ReportMetric(float64(bytes)/n/1024, "KiB/op")
			if rtt > 0 {
				b.ReportMetric(float64(p50)/float64(rtt), "p50-rtts")
			}
		})
	}
}

// buildPeople initialises dir with costSchema and loads rows Person nodes
// named p0…p<rows-1>.
func buildPeople(b testing.TB, ctx context.Context, dir string, rows int) {
	b.Helper()
	g, err := Init(ctx, dir, "cost.pg", costSchema, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		for i := range rows {
			fmt.Fprintf(w, `{"type":"Person","data":{"name":"p%d","age":%d}}`+"\n", i, i%90)
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := g.Load(ctx, pr, LoadOptions{Mode: Append}); err != nil {
		b.Fatal(err)
	}
}
