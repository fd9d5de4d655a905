package exec

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// BenchmarkPeerWrite isolates the single-row write path on the peer graph
// (local disk, durable) under two auto-compaction settings:
//
//   - default: the handle's defaults (BenchmarkPeer's setting). The load
//     leaves Person fragments under DefaultCompactTargetRows, so every
//     inline compaction also rewrites tens of thousands of loaded rows.
//
//   - target4k: CompactTargetRows 4096, so only the small fragments the
//     writes themselves add are merged; this is the write path proper.
//
//     go test -run '^$' -bench 'PeerWrite' -benchtime 200x ./internal/exec
func BenchmarkPeerWrite(b *testing.B) {
	for _, cfg := range []struct {
		name string
		o    Options
	}{
		{"default", Options{CacheBytes: 1 << 30}},
		{"target4k", Options{CacheBytes: 1 << 30, CompactTargetRows: 4096}},
	} {
		b.Run(cfg.name, func(b *testing.B) {
			st, err := storage.NewLocal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			g, err := Init(ctx, st, "peer.pg", peerSchema, "bench", cfg.o)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := g.Load(ctx, bytes.NewReader(peerJSONL()), LoadRequest{Mode: LoadAppend}); err != nil {
				b.Fatal(err)
			}
			snap, err := g.Resolve(ctx, Target{})
			if err != nil {
				b.Fatal(err)
			}
			ps, err := snap.State(ctx, snapshot.NodeKey("Person"))
			if err != nil {
				b.Fatal(err)
			}
			var sizes []int64
			for _, f := range ps.Fragments() {
				sizes = append(sizes, f.Live())
			}
			b.Logf("Person fragments after load: %v", sizes)
			starts := make([]string, 2000)
			r := rand.New(rand.NewPCG(9, 9))
			for i := range starts {
				starts[i] = fmt.Sprintf("p%d", r.IntN(peerNodes))
			}
			// Warm the images the writes and reads use, as BenchmarkPeer's
			// reads do before its writes.
			pk := peerPlan(b, g, "pk")
			if _, _, err := g.Query(ctx, Target{}, pk, map[string]any{"n": starts[0]}); err != nil {
				b.Fatal(err)
			}
			b.Run("upsert", func(b *testing.B) {
				p := peerPlan(b, g, "upsert")
				i := 0
				for b.Loop() {
					i++
					if _, err := g.Mutate(ctx, "main", p, map[string]any{"name": fmt.Sprintf("w%d", i), "age": 40}, MutateOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("set_age", func(b *testing.B) {
				p := peerPlan(b, g, "set_age")
				i := 0
				for b.Loop() {
					i++
					if _, err := g.Mutate(ctx, "main", p, map[string]any{"name": starts[i%len(starts)], "age": 20 + i%50}, MutateOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			// An insert then a read of it: the new image is derived from
			// the previous one (write_derive.go).
			b.Run("pk-after-upsert", func(b *testing.B) {
				w := peerPlan(b, g, "upsert")
				i := 0
				for b.Loop() {
					i++
					n := fmt.Sprintf("v%d", i)
					if _, err := g.Mutate(ctx, "main", w, map[string]any{"name": n, "age": 40}, MutateOptions{}); err != nil {
						b.Fatal(err)
					}
					if _, _, err := g.Query(ctx, Target{}, pk, map[string]any{"n": n}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("pk-after-write", func(b *testing.B) {
				w := peerPlan(b, g, "set_age")
				i := 0
				for b.Loop() {
					i++
					n := starts[i%len(starts)]
					if _, err := g.Mutate(ctx, "main", w, map[string]any{"name": n, "age": 20 + i%50}, MutateOptions{}); err != nil {
						b.Fatal(err)
					}
					if _, _, err := g.Query(ctx, Target{}, pk, map[string]any{"n": n}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
