package storage_test

import (
	"errors"
	"maps"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestCountingTallies(t *testing.T) {
	ctx := t.Context()
	for _, inner := range []struct {
		name string
		s    storage.Store
	}{
		{"mem", storage.NewMem()},
		{"fallback", plainStore{storage.NewMem()}},
	} {
		t.Run(inner.name, func(t *testing.T) {
			c := storage.NewCounting(inner.s)
			info, _ := c.Put(ctx, "a", []byte("12345"))
			c.PutIfAbsent(ctx, "a", []byte("xx"))            // loses: still a request
			c.PutIfMatch(ctx, "a", []byte("abc"), info.ETag) // wins
			c.Get(ctx, "a")
			c.Get(ctx, "missing")
			c.GetRange(ctx, "a", 1, 10)
			c.Stat(ctx, "a")
			c.List(ctx, "", "", func(storage.Info) error { return nil })
			c.Delete(ctx, "nothing")
			r, err := c.OpenReadAt(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			p := make([]byte, 2)
			r.ReadAt(p, 0)
			r.ReadAt(p, 2) // short: 1 byte + EOF
			r.Close()

			want := storage.Counts{
				storage.OpGet:          {Requests: 2, Bytes: 3},
				storage.OpGetRange:     {Requests: 3, Bytes: 2 + 2 + 1},
				storage.OpStat:         {Requests: 2},
				storage.OpPut:          {Requests: 1, Bytes: 5},
				storage.OpPutIfAbsent:  {Requests: 1, Bytes: 2},
				storage.OpPutIfMatch:   {Requests: 1, Bytes: 3},
				storage.OpList:         {Requests: 1},
				storage.OpDelete:       {Requests: 1},
				storage.OpSweepTemp:    {},
				storage.OpCopyIfAbsent: {},
				storage.OpPutShared:    {},
			}
			got := c.Snapshot()
			if !maps.Equal(got, want) {
				t.Fatalf("Snapshot =\n%v\nwant\n%v", got, want)
			}
			if got.Requests() != 12 {
				t.Fatalf("Requests() = %d, want 12", got.Requests())
			}
			before := c.Snapshot()
			c.Stat(ctx, "a")
			if d := c.Snapshot().Sub(before); d.Requests() != 1 || d[storage.OpStat].Requests != 1 {
				t.Fatalf("Sub = %v", d)
			}
			c.Reset()
			if n := c.Snapshot().Requests(); n != 0 {
				t.Fatalf("after Reset: %d requests", n)
			}
		})
	}
}

func TestCountingConcurrent(t *testing.T) {
	ctx := t.Context()
	c := storage.NewCounting(storage.NewMem())
	const workers, each = 8, 100
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := c.Put(ctx, "k", []byte{byte(w), byte(i)}); err != nil {
					t.Error(err)
				}
				if _, _, err := c.Get(ctx, "k"); err != nil && !errors.Is(err, storage.ErrNotFound) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got := c.Snapshot()
	if got[storage.OpPut] != (storage.OpCount{Requests: workers * each, Bytes: 2 * workers * each}) ||
		got[storage.OpGet] != (storage.OpCount{Requests: workers * each, Bytes: 2 * workers * each}) {
		t.Fatalf("Snapshot = %v", got)
	}
}
