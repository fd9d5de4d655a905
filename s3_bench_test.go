package omnigraph

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// BenchmarkRemoteLatency runs the hot operations on the remote store stack
// (batching, object cache) over an in-memory store with 30 ms injected per
// request, i.e. as on S3 at a 30 ms round trip, next to the same stack
// with no latency (the CPU part, measured in the same run). It reports the
// mean (ms/op, including the automatic compactions every few inserts
// trigger), the median (p50-ms) and the median in round trips (p50-rtts).
// Branch create runs interleaved with its baseline, the same create on a
// stack without the store's server-side copy (read-*: the source ref's GET,
// then the PutIfAbsent).
// Targets (issue 12): single-row write <= 100 ms, branch create <= 40 ms.
func BenchmarkRemoteLatency(b *testing.B) {
	for _, rtt := range []time.Duration{0, 30 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) { benchRemote(b, rtt) })
	}
}

// noCopier hides a store's server-side copy (storage.Copier).
type noCopier struct{ storage.Store }

func benchRemote(b *testing.B, rtt time.Duration) {
	ctx := context.Background()
	// The backend is replaced by memory so that only the injected latency
	// counts (a local directory would add its fsyncs).
	mem := storage.NewMem()
	opts := Options{wrapBackend: func(storage.Store) storage.Store {
		return storage.NewBatching(storage.NewCached(storage.NewDelayed(mem, rtt), storage.CacheOptions{Immutable: ImmutableKey}))
	}}
	uri := filepath.Join(b.TempDir(), "g")
	g, err := Init(ctx, uri, "cost.pg", costSchema, "act", opts)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(costData), LoadOptions{Mode: Append}); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	timed := func(fn func()) {
		t0 := time.Now()
		fn()
		lat = append(lat, time.Since(t0))
	}
	report := func(b *testing.B, start time.Time) {
		per := time.Since(start) / time.Duration(b.N)
		slices.Sort(lat)
		p50 := lat[len(lat)/2]
		lat = lat[:0]
		b.ReportMetric(float64(per)/float64(time.Millisecond), "ms/op")
		b.ReportMetric(float64(p50)/float64(time.Millisecond), "p50-ms")
		if rtt > 0 {
			b.ReportMetric(float64(p50)/float64(rtt), "p50-rtts")
		}
	}
	n := 0
	b.Run("insert-1-row", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			n++
			timed(func() {
				if _, _, err := g.Mutate(ctx, "", costQueries, "add", map[string]any{"name": fmt.Sprintf("b-%d", n)}, MutateOptions{}); err != nil {
					b.Fatal(err)
				}
			})
		}
		report(b, start)
	})
	// The baseline of the same run: the same stack without the store's
	// server-side copy (as on a local directory, or an S3 server without
	// conditional copies), on a second handle of the same graph.
	g2, err := Open(ctx, uri, Options{wrapBackend: func(storage.Store) storage.Store {
		return storage.NewBatching(storage.NewCached(storage.NewDelayed(noCopier{mem}, rtt), storage.CacheOptions{Immutable: ImmutableKey}))
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("branch-create", func(b *testing.B) {
		// Interleaved: each iteration creates one branch by copy (g) and
		// one by read + PutIfAbsent (g2).
		var byRead []time.Duration
		var copyTotal time.Duration
		for b.Loop() {
			n++
			t0 := time.Now()
			if err := g.CreateBranch(ctx, fmt.Sprintf("br-%d", n), "main", "act"); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			copyTotal += d
			lat = append(lat, d)
			t0 = time.Now()
			if err := g2.CreateBranch(ctx, fmt.Sprintf("rd-%d", n), "main", "act"); err != nil {
				b.Fatal(err)
			}
			byRead = append(byRead, time.Since(t0))
		}
		slices.Sort(lat)
		slices.Sort(byRead)
		p50, r50 := lat[len(lat)/2], byRead[len(byRead)/2]
		lat = lat[:0]
		b.ReportMetric(float64(copyTotal/time.Duration(b.N))/float64(time.Millisecond), "ms/op")
		b.ReportMetric(float64(p50)/float64(time.Millisecond), "p50-ms")
		b.ReportMetric(float64(r50)/float64(time.Millisecond), "read-p50-ms")
		b.ReportMetric(float64(r50)/float64(max(p50, 1)), "read/copy")
		if rtt > 0 {
			b.ReportMetric(float64(p50)/float64(rtt), "p50-rtts")
			b.ReportMetric(float64(r50)/float64(rtt), "read-p50-rtts")
		}
	})
	b.Run("warm-query", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			timed(func() {
				if _, err := g.Query(ctx, Target{}, costQueries, "person", map[string]any{"name": "Alice"}); err != nil {
					b.Fatal(err)
				}
			})
		}
		report(b, start)
	})
}
