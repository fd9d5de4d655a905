package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

var errDiskFull = errors.New("disk full")

func TestBatchingConformance(t *testing.T) {
	// Without a batch in the context Batching is a pass-through.
	storagetest.Run(t, func(t *testing.T) storage.Store { return storage.NewBatching(newLocal(t)) })
}

// TestBatching: puts in a batch run concurrently (one round trip for all of
// them on a delayed store), are readable by the writer before Flush, are
// durable when Flush returns, and report their errors at Flush.
func TestBatching(t *testing.T) {
	const rtt = 20 * time.Millisecond
	mem := storage.NewMem()
	cs := storage.NewCounting(mem)
	s := storage.NewBatching(storage.NewDelayed(cs, rtt))
	ctx := storage.WithBatch(context.Background())
	start := time.Now()
	for i := range 10 {
		if _, err := s.Put(ctx, "frag/"+string(rune('a'+i)), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutIfAbsent(ctx, "state/x", []byte("s")); err != nil {
		t.Fatal(err)
	}
	if b, _, err := s.Get(ctx, "state/x"); err != nil || string(b) != "s" {
		t.Fatalf("read own pending write: %q %v", b, err)
	}
	if err := storage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// 11 puts in about one round trip, not eleven.
	if el := time.Since(start); el > 5*rtt {
		t.Fatalf("batch of 11 puts took %v (rtt %v): not concurrent", el, rtt)
	}
	if n := cs.Snapshot()[storage.OpPut].Requests; n != 10 {
		t.Fatalf("%d puts reached the store, want 10", n)
	}
	for _, k := range []string{"frag/a", "frag/j", "state/x"} {
		if _, _, err := mem.Get(context.Background(), k); err != nil {
			t.Fatalf("%s not durable after Flush: %v", k, err)
		}
	}
	// PutIfAbsent of existing content-addressed bytes is success in a batch.
	if _, err := s.PutIfAbsent(ctx, "state/x", []byte("s")); err != nil {
		t.Fatal(err)
	}
	if err := storage.Flush(ctx); err != nil {
		t.Fatalf("ensure-exists of an existing state: %v", err)
	}
	// Errors surface at Flush.
	f := storage.NewFaulty(mem)
	f.Inject(storage.Fault{Op: storage.OpPut, Prefix: "e/2", Err: errDiskFull})
	fb := storage.NewBatching(f)
	ctx = storage.WithBatch(context.Background())
	for _, k := range []string{"e/1", "e/2", "e/3"} {
		if _, err := fb.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := storage.Flush(ctx); !errors.Is(err, errDiskFull) {
		t.Fatalf("Flush = %v, want the injected error", err)
	}
	// Outside a batch, and after WithoutBatch, puts are synchronous.
	sync := storage.WithoutBatch(ctx)
	if _, err := s.PutIfAbsent(sync, "state/x", []byte("other")); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("PutIfAbsent without batch: %v, want ErrExists", err)
	}
}
