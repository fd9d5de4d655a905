package server

import (
	"context"
	"sync"
)

// writeGate serializes this process's writes to one branch ref of one
// graph. The ref CAS stays the only authority (other processes, and
// maintenance, still race and rebase); the gate only keeps a server's own
// concurrent writers from spending their rebase budgets against each other,
// so sixteen clients writing to main queue instead of failing with
// too much contention (TestLoadLoopback). Mutations do not take it: the
// engine's group commit queues them per branch and publishes each queue's
// batch with one CAS (docs/write-path.md); loads, merges and branch
// operations do.
type writeGate struct {
	mu sync.Mutex
	// INVARIANT: an entry exists iff a request holds or waits for it, so
	// the map does not grow with the branches ever written.
	refs map[string]*gateEntry
}

type gateEntry struct {
	ch    chan struct{} // capacity 1: holding the token is holding the ref
	users int
}

func newWriteGate() *writeGate { return &writeGate{refs: map[string]*gateEntry{}} }

// enter waits for the ref key (or ctx's end) and returns the release.
func (g *writeGate) enter(ctx context.Context, key string) (func(), error) {
	g.mu.Lock()
	e := g.refs[key]
	if e == nil {
		e = &gateEntry{ch: make(chan struct{}, 1)}
		g.refs[key] = e
	}
	e.users++
	g.mu.Unlock()
	leave := func() {
		g.mu.Lock()
		e.users--
		if e.users == 0 {
			delete(g.refs, key)
		}
		g.mu.Unlock()
	}
	select {
	case e.ch <- struct{}{}:
		return func() { <-e.ch; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

func (g *writeGate) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.refs)
}
