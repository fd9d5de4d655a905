package cache

import (
	"container/list"
	"context"
	"errors"
	"sync"
)

// Stats are cumulative counters since the cache was created.
type Stats struct {
	Hits      uint64 // lookups answered from memory
	Misses    uint64 // lookups that found nothing (GetOrLoad then loads)
	Loads     uint64 // loader invocations (deduplicated)
	Evictions uint64 // entries dropped to stay within budget
	Entries   int    // resident entries now
	Bytes     int64  // resident bytes now
}

type entry[V any] struct {
	key  string
	val  V
	size int64
}

// call is one in-flight load shared by every concurrent GetOrLoad of a key.
type call[V any] struct {
	done chan struct{}
	val  V
	err  error
}

// Cache is a byte-bounded LRU map from object name to an immutable value.
// The zero value is not usable; call New.
type Cache[V any] struct {
	budget int64

	mu struct {
		sync.Mutex
		// INVARIANT: bytes == sum of size over ll and bytes <= budget once a
		// public method returns (TestBudgetNeverExceeded).
		bytes    int64
		ll       *list.List // front = most recently used; elements hold *entry[V]
		items    map[string]*list.Element
		inflight map[string]*call[V]
		stats    Stats
	}
}

// New returns a cache that retains at most budget bytes. A budget <= 0 makes
// a cache that retains nothing but still deduplicates concurrent loads.
func New[V any](budget int64) *Cache[V] {
	c := &Cache[V]{budget: budget}
	c.mu.ll = list.New()
	c.mu.items = make(map[string]*list.Element)
	c.mu.inflight = make(map[string]*call[V])
	return c
}

// Budget returns the byte budget given to New.
func (c *Cache[V]) Budget() int64 { return c.budget }

// Get returns the value for key and marks it recently used.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(key)
}

func (c *Cache[V]) getLocked(key string) (V, bool) {
	if el, ok := c.mu.items[key]; ok {
		c.mu.ll.MoveToFront(el)
		c.mu.stats.Hits++
		return el.Value.(*entry[V]).val, true
	}
	c.mu.stats.Misses++
	var zero V
	return zero, false
}

// Add stores val under key with the given size, evicting least recently used
// entries as needed. Adding a key that is already present replaces it: callers
// only do that with an equal value, since objects are immutable.
func (c *Cache[V]) Add(key string, val V, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(key, val, size)
}

func (c *Cache[V]) addLocked(key string, val V, size int64) {
	if size < 0 {
		size = 0
	}
	if el, ok := c.mu.items[key]; ok {
		c.removeLocked(el)
	}
	if size > c.budget {
		return // would evict everything and still not fit
	}
	el := c.mu.ll.PushFront(&entry[V]{key: key, val: val, size: size})
	c.mu.items[key] = el
	c.mu.bytes += size
	for c.mu.bytes > c.budget {
		back := c.mu.ll.Back()
		c.removeLocked(back)
		c.mu.stats.Evictions++
	}
}

func (c *Cache[V]) removeLocked(el *list.Element) {
	e := el.Value.(*entry[V])
	c.mu.ll.Remove(el)
	delete(c.mu.items, e.key)
	c.mu.bytes -= e.size
}

// Remove drops key if present. Only tests and memory-pressure handling need
// it: immutable objects never go stale.
func (c *Cache[V]) Remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.mu.items[key]; ok {
		c.removeLocked(el)
	}
}

// Stats returns a snapshot of the counters.
func (c *Cache[V]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.stats
	s.Entries = c.mu.ll.Len()
	s.Bytes = c.mu.bytes
	return s
}

// Loader produces the value for a missing key and its size in bytes.
type Loader[V any] func(ctx context.Context) (V, int64, error)

// GetOrLoad returns the cached value for key, or runs load once for all
// concurrent callers of the same key and caches a successful result. Errors
// are not cached. A caller whose ctx ends while waiting returns ctx.Err();
// if the loading caller's own context ends, waiters with live contexts retry
// instead of inheriting that cancellation.
func (c *Cache[V]) GetOrLoad(ctx context.Context, key string, load Loader[V]) (V, error) {
	var zero V
	for {
		c.mu.Lock()
		if v, ok := c.getLocked(key); ok {
			c.mu.Unlock()
			return v, nil
		}
		if cl, ok := c.mu.inflight[key]; ok {
			c.mu.Unlock()
			select {
			case <-cl.done:
			case <-ctx.Done():
				return zero, ctx.Err()
			}
			if cl.err != nil && isContextErr(cl.err) && ctx.Err() == nil {
				continue // the leader was cancelled, not the load: try again
			}
			return cl.val, cl.err
		}
		cl := &call[V]{done: make(chan struct{})}
		c.mu.inflight[key] = cl
		c.mu.stats.Loads++
		c.mu.Unlock()

		c.runLoad(ctx, key, cl, load)
		return cl.val, cl.err
	}
}

// runLoad executes load for cl, making sure waiters are released even if the
// loader panics (the panic still propagates to the leader).
func (c *Cache[V]) runLoad(ctx context.Context, key string, cl *call[V], load Loader[V]) {
	var size int64
	finished := false
	defer func() {
		c.mu.Lock()
		delete(c.mu.inflight, key)
		if finished && cl.err == nil {
			c.addLocked(key, cl.val, size)
		}
		if !finished {
			cl.err = errLoaderPanicked
		}
		c.mu.Unlock()
		close(cl.done)
	}()
	cl.val, size, cl.err = load(ctx)
	finished = true
}

var errLoaderPanicked = errors.New("cache: loader panicked")

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
