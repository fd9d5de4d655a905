package exec

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// genInput produces n node lines of about payload bytes each, lazily, so
// that the input itself never sits in memory. The payload varies per row
// so that fragments do not compress it away.
type genInput struct {
	n, payload int
	i          int
	buf        []byte
	pad        []byte
}

func newGenInput(n, payload int) *genInput {
	pad := make([]byte, payload+64)
	x := uint32(2463534242)
	for i := range pad {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		pad[i] = 'a' + byte(x%26)
	}
	return &genInput{n: n, payload: payload, pad: pad}
}

func (g *genInput) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		off := g.i % 64
		g.buf = fmt.Appendf(g.buf[:0], `{"type":"Doc","data":{"id":"doc-%07d","title":"%s","slug":"s%07d"}}`+"\n",
			g.i, g.pad[off:off+g.payload], g.i)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// size is the total input size in bytes.
func (g *genInput) size() int64 {
	return int64(g.n) * int64(len(`{"type":"Doc","data":{"id":"doc-0000000","title":"","slug":"s0000000"}}`)+1+g.payload)
}

// heapPeaks samples, until stop is called, the peak of two heap measures:
// HeapInuse (every heap span in use: live objects plus garbage not yet
// swept, so up to 1+GOGC/100 times the live heap) and the live heap as of
// the latest GC (/gc/heap/live:bytes: what the process retains, which is
// what a memory limit must cover).
func heapPeaks() (stop func() (inuse, live uint64)) {
	var mu sync.Mutex
	var pInuse, pLive uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			metrics.Read(sample)
			mu.Lock()
			pInuse = max(pInuse, ms.HeapInuse)
			pLive = max(pLive, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return pInuse, pLive
	}
}

// measureLoad loads a generated stream into a fresh graph on a local
// directory (an in-memory store would put the fragments on the measured
// heap). With retained set, it forces two GCs at every progress report
// (every 10,000 records and at the end of the input) and returns the
// largest growth of the heap still allocated then: what the load keeps
// across chunks. Otherwise it returns the peak growth of the live heap and
// of HeapInuse, sampled while the load runs.
func measureLoad(t *testing.T, in *genInput, chunk int64, retained bool) (live, inuse int64) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g, err := Init(ctx, st, "stream.pg", streamSchema, "tester", Options{NoAutoCompact: true, CacheBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	gc := func() runtime.MemStats {
		runtime.GC()
		runtime.GC() // twice: sync.Pool caches (the zstd encoders) survive one
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms
	}
	base := gc()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	baseLive := sample[0].Value.Uint64()
	req := LoadRequest{Mode: LoadAppend, ChunkBytes: chunk}
	var kept uint64
	stop := func() (uint64, uint64) { return 0, 0 }
	if retained {
		req.settleBeforeProgress = true
		req.Progress = func(int64) { kept = max(kept, gc().HeapAlloc) }
	} else {
		stop = heapPeaks()
	}
	res, err := g.Load(ctx, in, req)
	peakInuse, peakLive := stop()
	if err != nil {
		t.Fatal(err)
	}
	if res.Nodes["Doc"] != int64(in.n) {
		t.Fatalf("loaded %v, want %d", res.Nodes, in.n)
	}
	if retained {
		return int64(kept) - int64(base.HeapAlloc), 0
	}
	return int64(peakLive) - int64(baseLive), int64(peakInuse) - int64(base.HeapInuse)
}

// TestLoadStreamBoundedMemory: a load's memory stays far below its input
// size. What it keeps across chunks (per-entity skeletons and the partial
// chunk) must stay under a quarter of the input; the large variant (~200
// MiB of input, 200k entities, 1 MiB chunks; runs without -short) also
// bounds the peak live heap, which adds the chunk's encoding working set,
// the Parquet writer's zstd encoder (~16 MiB of history once pages are
// large) and Validate's transient maps, to half the input. HeapInuse
// (the live heap plus up to GOGC% of garbage) is logged, not asserted.
//
// INVARIANT: a load's memory is O(entities × key size + chunk), not
// O(input) (docs/write-path.md, Load).
func TestLoadStreamBoundedMemory(t *testing.T) {
	cases := []struct {
		name          string
		rows, payload int
		chunk         int64
		large         bool
	}{
		{"small", 20000, 2048, 256 << 10, false},
		{"large", 200000, 1024, 1 << 20, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.large && testing.Short() {
				t.Skip("large streaming load skipped in -short mode")
			}
			measureLoad(t, newGenInput(int(4*tc.chunk)/tc.payload, tc.payload), tc.chunk, true) // first-use allocations
			in := newGenInput(tc.rows, tc.payload)
			kept, _ := measureLoad(t, in, tc.chunk, true)
			t.Logf("input %d MiB, %d rows, chunk %d KiB: kept across chunks %.1f MiB",
				in.size()>>20, tc.rows, tc.chunk>>10, float64(kept)/(1<<20))
			if kept > in.size()/4 {
				t.Fatalf("the load kept %d bytes across chunks for %d bytes of input: not streaming", kept, in.size())
			}
			if !tc.large {
				return
			}
			live, inuse := measureLoad(t, newGenInput(tc.rows, tc.payload), tc.chunk, false)
			t.Logf("peak growth of the live heap %.1f MiB, of HeapInuse %.1f MiB", float64(live)/(1<<20), float64(inuse)/(1<<20))
			if live > in.size()/2 {
				t.Fatalf("peak live heap grew by %d bytes for %d bytes of input: not streaming", live, in.size())
			}
		})
	}
}
