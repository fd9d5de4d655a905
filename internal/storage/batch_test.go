package storage_test

import (
	"context"
	"errors"
	"sync"
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

// barrierStore holds every put until n puts are in flight at once: it only
// completes if the puts really run concurrently (no timing involved).
type barrierStore struct {
	storage.Store
	n       int
	mu      sync.Mutex
	arrived int
	open    chan struct{}
}

func (b *barrierStore) wait() error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("puts were not concurrent: the barrier never filled")
	}
}

func (b *barrierStore) Put(ctx context.Context, key string, data []byte) (storage.Info, error) {
	if err := b.wait(); err != nil {
		return storage.Info{}, err
	}
	return b.Store.Put(ctx, key, data)
}

func (b *barrierStore) PutIfAbsent(ctx context.Context, key string, data []byte) (storage.Info, error) {
	if err := b.wait(); err != nil {
		return storage.Info{}, err
	}
	return b.Store.PutIfAbsent(ctx, key, data)
}

// TestBatching: puts in a batch run concurrently (all 11 are in flight at
// once), are readable by the writer before Flush, are durable when Flush
// returns, and report their errors at Flush.
func TestBatching(t *testing.T) {
	mem := storage.NewMem()
	cs := storage.NewCounting(mem)
	s := storage.NewBatching(&barrierStore{Store: cs, n: 11, open: make(chan struct{})})
	ctx := storage.WithBatch(context.Background())
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
	if n := cs.Snapshot()[storage.OpPut].Requests; n != 10 {
		t.Fatalf("%d puts reached the store, want 10", n)
	}
	for _, k := range []string{"frag/a", "frag/j", "state/x"} {
		if _, _, err := mem.Get(context.Background(), k); err != nil {
			t.Fatalf("%s not durable after Flush: %v", k, err)
		}
	}
	s = storage.NewBatching(cs)
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

// TestBatchingKeepsSmallWritten: after a batch is flushed, a small object
// it wrote is still read from the batch (no request, whatever the timing
// of its put), a large one from the store.
func TestBatchingKeepsSmallWritten(t *testing.T) {
	counting := storage.NewCounting(storage.NewMem())
	b := storage.NewBatching(counting)
	ctx := storage.WithBatch(context.Background())
	small, large := make([]byte, 64<<10), make([]byte, 64<<10+1)
	if _, err := b.PutIfAbsent(ctx, "small", small); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "large", large); err != nil {
		t.Fatal(err)
	}
	if err := storage.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	counting.Reset()
	if got, _, err := b.Get(ctx, "small"); err != nil || len(got) != len(small) {
		t.Fatalf("small: %d bytes, %v", len(got), err)
	}
	if n := counting.Snapshot().Requests(); n != 0 {
		t.Fatalf("reading the batch's small object made %d requests, want 0", n)
	}
	if got, _, err := b.Get(ctx, "large"); err != nil || len(got) != len(large) {
		t.Fatalf("large: %d bytes, %v", len(got), err)
	}
	if n := counting.Snapshot().Requests(); n != 1 {
		t.Fatalf("reading the batch's large object made %d requests, want 1 (not kept)", n)
	}
	// Outside the batch every read is a request.
	if _, _, err := b.Get(context.Background(), "small"); err != nil {
		t.Fatal(err)
	}
	if n := counting.Snapshot().Requests(); n != 2 {
		t.Fatalf("%d requests after a read outside the batch, want 2", n)
	}
}

// TestHeldBatch: puts in a held batch reach no store, read back from the
// batch (and from a held batch built over it), are listed in put order with
// the ledger of their context, and a content-addressed object put twice is
// listed once.
func TestHeldBatch(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	cnt := storage.NewCounting(mem)
	st := storage.NewBatching(cnt)
	l := storage.NewLedger()
	spill := storage.WithBatch(ctx)
	h1 := storage.WithHeldBatch(ctx, nil, spill, 8)
	if _, err := st.Put(storage.WithLedger(h1, l), "a/1", []byte("one")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := st.PutIfAbsent(h1, "s/x", []byte("state")); err != nil {
			t.Fatal(err)
		}
	}
	h2 := storage.WithHeldBatch(ctx, h1, spill, 8)
	if _, err := st.Put(h2, "a/2", []byte("two")); err != nil {
		t.Fatal(err)
	}
	// Over maxHeld: sent at once through the spill batch, not held.
	if _, err := st.Put(h2, "a/big", []byte("larger than eight")); err != nil {
		t.Fatal(err)
	}
	if b, _, err := st.Get(h2, "a/big"); err != nil || string(b) != "larger than eight" {
		t.Errorf("Get a/big = %q, %v", b, err)
	}
	if err := storage.Flush(spill); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(ctx, "a/big"); err != nil {
		t.Errorf("large object not sent: %v", err)
	}
	if len(storage.Held(h2)) != 1 {
		t.Errorf("h2 holds %+v", storage.Held(h2))
	}
	if n := cnt.Snapshot().Requests(); n != 1 {
		t.Fatalf("%d requests reached the store, want the large put only", n)
	}
	for _, c := range []struct {
		ctx  context.Context
		key  string
		want string
	}{{h1, "a/1", "one"}, {h2, "a/1", "one"}, {h2, "a/2", "two"}, {h2, "s/x", "state"}} {
		if b, _, err := st.Get(c.ctx, c.key); err != nil || string(b) != c.want {
			t.Errorf("Get %s = %q, %v", c.key, b, err)
		}
	}
	if _, _, err := st.Get(h1, "a/2"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the earlier held batch reads the later one's object: %v", err)
	}
	held := storage.Held(h1)
	if len(held) != 2 || held[0].Key != "a/1" || held[0].Ledger != l || held[0].IfAbsent ||
		held[1].Key != "s/x" || !held[1].IfAbsent || held[1].Ledger != nil {
		t.Fatalf("held = %+v", held)
	}
	if err := storage.Flush(h1); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Stat(ctx, "a/1"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a flushed held batch sent its object: %v", err)
	}
	if storage.Held(storage.WithBatch(ctx)) != nil {
		t.Error("a plain batch lists held objects")
	}
}
