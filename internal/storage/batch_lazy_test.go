package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestHoldLazy: a lazy object of a held batch is made on its first read
// only, reads back through the batch and through a held batch built over
// it (a rebase's), at its actual size whatever size the reader asks for;
// it reaches no store, Held does not list it, a failure to make it reads
// as a missing object, and outside a held batch nothing is recorded.
func TestHoldLazy(t *testing.T) {
	ctx := context.Background()
	cnt := storage.NewCounting(storage.NewMem())
	st := storage.NewBatching(cnt)
	if storage.CanHoldLazy(ctx) || storage.HoldLazy(storage.WithBatch(ctx), "l/x", nil) {
		t.Fatal("recorded a lazy object without a held batch")
	}
	spill := storage.WithBatch(ctx)
	h1 := storage.WithHeldBatch(ctx, nil, spill, 1<<10)
	made := 0
	if !storage.CanHoldLazy(h1) || !storage.HoldLazy(h1, "l/x", func() ([]byte, error) { made++; return []byte("lazy bytes"), nil }) {
		t.Fatal("held batch refused a lazy object")
	}
	storage.HoldLazy(h1, "l/bad", func() ([]byte, error) { return nil, errors.New("cannot encode") })
	if made != 0 {
		t.Fatalf("made %d times before any read", made)
	}
	h2 := storage.WithHeldBatch(ctx, h1, spill, 1<<10)
	for _, c := range []context.Context{h1, h2} {
		if b, _, err := st.Get(c, "l/x"); err != nil || string(b) != "lazy bytes" {
			t.Errorf("Get = %q, %v", b, err)
		}
		ra, err := st.OpenReadAtSize(c, "l/x", 1)
		if err != nil || ra.Size() != int64(len("lazy bytes")) {
			t.Errorf("OpenReadAtSize: %v, %v", ra, err)
		} else {
			_ = ra.Close()
		}
	}
	if made != 4 {
		t.Errorf("made %d times for 4 reads, want each read to ask (callers keep it once)", made)
	}
	if _, _, err := st.Get(h1, "l/bad"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a lazy object that cannot be made: %v, want not found", err)
	}
	if _, _, err := st.Get(spill, "l/x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the spill batch reads the lazy object: %v", err)
	}
	if err := storage.Flush(spill); err != nil {
		t.Fatal(err)
	}
	if len(storage.Held(h1)) != 0 {
		t.Errorf("Held lists %+v", storage.Held(h1))
	}
	if n := cnt.Snapshot()[storage.OpPut].Requests; n != 0 {
		t.Errorf("%d puts reached the store", n)
	}
}
