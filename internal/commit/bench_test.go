package commit

import (
	"context"
	"fmt"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

// BenchmarkPublish measures one durable publish (commit object + ref CAS) on
// the local backend next to the raw floor of the same run: one file
// write+fsync+rename+dir-fsync (a publish needs two such durable steps).
func BenchmarkPublish(b *testing.B) {
	ctx := context.Background()
	b.Run("fsync-floor", func(b *testing.B) {
		dir := b.TempDir()
		data := []byte(`{"commit":"01JGQ5Z8M0AAAAAAAAAAAAAAAA","seq":1}`)
		for i := 0; b.Loop(); i++ {
			storagetest.WriteFileDurably(b, dir, "tmp", fmt.Sprint("obj", i%64), data)
		}
	})
	for _, backend := range []string{"local", "mem"} {
		b.Run("publish/"+backend, func(b *testing.B) {
			r, h := initGraph(b, backendStore(b, backend))
			var err error
			for i := 0; b.Loop(); i++ {
				if h, _, err = r.Publish(ctx, PublishRequest{Branch: MainBranch, Base: h, Kind: KindMutate,
					Tables: map[string]string{"node:Person": fmt.Sprintf("tables/node:Person/state/%d.json", i)}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResolve measures head resolution: warm (commit cached, 1 GET of the
// ref) and cold (a fresh handle each time: ref + commit).
func BenchmarkResolve(b *testing.B) {
	ctx := context.Background()
	for _, backend := range []string{"local", "mem"} {
		st := backendStore(b, backend)
		w, h := initGraph(b, st)
		for range 100 {
			var err error
			if h, _, err = w.Publish(ctx, PublishRequest{Branch: MainBranch, Base: h, Kind: KindMutate}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("warm/"+backend, func(b *testing.B) {
			r := newRepo(st, Options{})
			for b.Loop() {
				if _, _, err := r.Resolve(ctx, MainBranch); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("cold/"+backend, func(b *testing.B) {
			for b.Loop() {
				r := newRepo(st, Options{})
				if _, _, err := r.Resolve(ctx, MainBranch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
