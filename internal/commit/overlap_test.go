package commit

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// pairStore makes every Get whose key starts with one of two prefixes
// wait until a Get of the other prefix is in flight too (or a timeout,
// which the test reports): it proves two reads are sent side by side
// without timing anything.
type pairStore struct {
	storage.Store
	a, b    string
	mu      sync.Mutex
	waiting map[string]chan struct{}
	alone   []string // keys whose partner never came
}

func newPairStore(st storage.Store, a, b string) *pairStore {
	return &pairStore{Store: st, a: a, b: b, waiting: map[string]chan struct{}{}}
}

func (p *pairStore) Get(ctx context.Context, key string) ([]byte, storage.Info, error) {
	side, other := "", ""
	switch {
	case strings.HasPrefix(key, p.a):
		side, other = p.a, p.b
	case strings.HasPrefix(key, p.b):
		side, other = p.b, p.a
	}
	if side != "" {
		p.mu.Lock()
		if ch, ok := p.waiting[other]; ok {
			delete(p.waiting, other)
			close(ch)
			p.mu.Unlock()
		} else {
			ch := make(chan struct{})
			p.waiting[side] = ch
			p.mu.Unlock()
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				p.mu.Lock()
				delete(p.waiting, side)
				p.alone = append(p.alone, key)
				p.mu.Unlock()
			}
		}
	}
	return p.Store.Get(ctx, key)
}

// TestRemoteReadsOverlap pins the two overlaps of a cold read: Open sends
// the format stamp and main's ref together, and the first Resolve fetches
// the commit the ref named at open while it reads the ref afresh.
func TestRemoteReadsOverlap(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	w, h := historyGraph(t, mem, 3)
	t.Run("open", func(t *testing.T) {
		ps := newPairStore(mem, StampKey, RefKey(MainBranch))
		if _, err := Open(ctx, ps, Options{}); err != nil {
			t.Fatal(err)
		}
		if len(ps.alone) > 0 {
			t.Fatalf("read alone (not side by side): %v", ps.alone)
		}
	})
	t.Run("resolve", func(t *testing.T) {
		r := openRepo(t, mem)
		ps := newPairStore(mem, RefKey(MainBranch), commitPrefix)
		r.store = ps
		_, c, err := r.Resolve(ctx, MainBranch)
		if err != nil || c.ID != h.Commit {
			t.Fatalf("resolve = %v, %v; want %s", c, err, h.Commit)
		}
		if len(ps.alone) > 0 {
			t.Fatalf("read alone (not side by side): %v", ps.alone)
		}
	})
	t.Run("moved", func(t *testing.T) {
		// The branch moved after open: the hint is wrong, the answer is
		// still the new head (one wasted commit GET).
		cs := storage.NewCounting(mem)
		r := openRepo(t, cs)
		nh, _ := publishPerson(t, w, h, 99)
		cs.Reset()
		_, c, err := r.Resolve(ctx, MainBranch)
		if err != nil || c.ID != nh.Commit {
			t.Fatalf("resolve = %v, %v; want the new head %s", c, err, nh.Commit)
		}
		if n := cs.Snapshot().Requests(); n != 3 {
			t.Fatalf("resolve after a move: %d requests, want 3 (ref, the stale hinted commit, the new one)", n)
		}
	})
}
