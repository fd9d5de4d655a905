package storage

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestRecordingDepth: requests sent one after another are one level each;
// requests sent side by side over a store that holds them open (Delayed,
// virtual time) share a level.
func TestRecordingDepth(t *testing.T) {
	ctx := context.Background()
	synctest.Test(t, func(t *testing.T) {
		mem := NewMem()
		for _, k := range []string{"a", "b", "c"} {
			if _, err := mem.Put(ctx, k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
		rec := NewRecording(NewDelayed(mem, 30*time.Millisecond))
		if _, _, err := rec.Get(ctx, "a"); err != nil { // level 1
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, k := range []string{"b", "c"} { // level 2, together
			wg.Go(func() {
				if _, err := rec.GetRange(ctx, k, 0, 1); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		r, err := rec.OpenReadAtSize(ctx, "a", 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadAt(make([]byte, 1), 0); err != nil { // level 3
			t.Fatal(err)
		}
		if d := rec.Depth(); d != 3 {
			t.Fatalf("depth %d, want 3:\n%s", d, rec.Trace())
		}
		if n := len(rec.Requests()); n != 4 {
			t.Fatalf("%d requests, want 4", n)
		}
		rec.Reset()
		if d := rec.Depth(); d != 0 {
			t.Fatalf("depth after Reset %d, want 0", d)
		}
	})
}
