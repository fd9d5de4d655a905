package storage

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// Batching is a Store decorator that lets one write send its new objects
// concurrently (DESIGN §9: a write is one parallel batch of puts, then the
// CAS). A context returned by WithBatch makes Put and PutIfAbsent through a
// Batching store return at once while the request runs in the background;
// Flush(ctx) waits for all of them and returns the first error. Without a
// batch in the context every call is passed straight through.
//
// Inside a batch:
//
//   - Put and PutIfAbsent return an Info with only Key and Size;
//   - PutIfAbsent means "make sure this object exists": ErrExists counts as
//     success, so only content-addressed keys (same key, same bytes) may be
//     written that way in a batch. Refs must be written with a context
//     without the batch (WithoutBatch) — commit.Publish does so for its CAS;
//   - reads of a key whose put is still pending are served from the pending
//     bytes (read your own writes), and so are reads of small objects (up
//     to keepWrittenBytes) after their put completed, so that request
//     counts do not depend on timing.
//
// INVARIANT: Flush returns nil only when every deferred put of the batch is
// durable (TestBatching).
type Batching struct {
	wrapper
}

var (
	_ Store        = (*Batching)(nil)
	_ ReadAtOpener = (*Batching)(nil)
)

// NewBatching wraps inner.
func NewBatching(inner Store) *Batching { return &Batching{wrapper: wrapper{inner}} }

// Batch is the set of deferred puts of one write.
type Batch struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
	pending map[string][]byte
	sem     chan struct{}
	// parent, for a sub-batch (WithSubBatch) or a held batch
	// (WithHeldBatch), is the batch whose pending puts it reads too.
	parent *Batch
	// held: puts are kept in pending and listed in order, never sent
	// (WithHeldBatch); those larger than maxHeld go to spill instead.
	held    bool
	order   []HeldObject
	maxHeld int
	spill   *Batch
	// lazy are objects of a held batch whose bytes are made on first read
	// (HoldLazy); never sent, never listed by Held.
	lazy map[string]func() ([]byte, error)
}

// HeldObject is one put a held batch kept (WithHeldBatch): its key and
// bytes, whether it was a PutIfAbsent (a content-addressed object), and the
// ledger of the context it was put under (nil without one), which tells
// whose write it belongs to.
type HeldObject struct {
	Key      string
	Data     []byte
	IfAbsent bool
	Ledger   *Ledger
}

type batchKey struct{}

// keepWrittenBytes: written objects up to this size stay readable from
// their batch (Batch.defer_).
const keepWrittenBytes = 64 << 10

// maxBatchInFlight bounds the concurrent puts of one batch (a group
// commit's batch holds the objects of many writes).
const maxBatchInFlight = 128

// WithBatch returns a context carrying a new batch.
func WithBatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, &Batch{pending: map[string][]byte{}, sem: make(chan struct{}, maxBatchInFlight)})
}

// WithSubBatch returns a context carrying a new batch that also reads the
// pending puts of ctx's batch (read your own writes across both) but is
// flushed on its own: a part of a write whose failure must not fail the
// rest (an inline compaction) flushes its sub-batch and learns its own
// errors only. Without a batch in ctx it is WithBatch.
func WithSubBatch(ctx context.Context) context.Context {
	b := &Batch{pending: map[string][]byte{}, sem: make(chan struct{}, maxBatchInFlight), parent: batchOf(ctx)}
	return context.WithValue(ctx, batchKey{}, b)
}

// WithHeldBatch returns a context carrying a new held batch: Put and
// PutIfAbsent through a Batching store keep the object in memory, readable
// through the batch like a pending put, and send nothing; Held lists them.
// The caller decides later which to send (through another batch) and which
// to drop — a group commit's leader stages its writes that way and then
// replaces their one-row fragments by one per table (docs/write-path.md).
// It also reads the objects held by over's batch (the previous round's,
// whose stagings a rebase compares with), if over carries one.
//
// Objects larger than maxHeld are not held but put at once into the batch
// of spill (which must carry one), so that a held batch never keeps large
// objects in memory (a load's last chunk); Held does not list them.
func WithHeldBatch(ctx, over, spill context.Context, maxHeld int) context.Context {
	b := &Batch{pending: map[string][]byte{}, held: true, maxHeld: maxHeld, spill: batchOf(spill)}
	if over != nil {
		b.parent = batchOf(over)
	}
	return context.WithValue(ctx, batchKey{}, b)
}

// Held returns the objects ctx's held batch kept, in put order (nil
// without a held batch).
func Held(ctx context.Context) []HeldObject {
	b := batchOf(ctx)
	if b == nil || !b.held {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.order)
}

// WithoutBatch returns ctx with no batch: puts through it are synchronous.
func WithoutBatch(ctx context.Context) context.Context {
	if batchOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, batchKey{}, (*Batch)(nil))
}

// ShareBatch returns ctx carrying the batch of from (or none): operations
// under ctx keep ctx's cancellation and values but read (and join) from's
// pending puts. A group commit's leader uses it so that each queued write
// runs under its own context yet sees the chain's unflushed objects.
func ShareBatch(ctx, from context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, batchOf(from))
}

func batchOf(ctx context.Context) *Batch {
	b, _ := ctx.Value(batchKey{}).(*Batch)
	return b
}

// Flush waits for every deferred put of ctx's batch and returns the first
// error (joined with the others). It is a no-op without a batch. A batch
// can be flushed more than once; later puts join the next Flush.
func Flush(ctx context.Context) error {
	b := batchOf(ctx)
	if b == nil {
		return nil
	}
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	err := errors.Join(b.errs...)
	b.errs = nil
	return err
}

func (b *Batch) defer_(ctx context.Context, key string, data []byte, ifAbsent bool, put func(ctx context.Context, data []byte) error) {
	b.deferKeys(ctx, []string{key}, data, ifAbsent, put)
}

// deferShared defers one request that stores data under every key
// (Batching.PutShared).
func (b *Batch) deferShared(ctx context.Context, keys []string, data []byte, put func(ctx context.Context, data []byte) error) {
	b.deferKeys(ctx, keys, data, false, put)
}

// deferKeys defers put, one request storing data under keys: each key
// reads data from the batch until the request is over.
func (b *Batch) deferKeys(ctx context.Context, keys []string, data []byte, ifAbsent bool, put func(ctx context.Context, data []byte) error) {
	if b.held && len(data) > b.maxHeld && b.spill != nil {
		b.spill.deferKeys(ctx, keys, data, ifAbsent, put)
		return
	}
	data = append([]byte(nil), data...) // the caller may reuse its buffer
	b.mu.Lock()
	if b.held {
		for _, key := range keys {
			if _, dup := b.pending[key]; !dup || !ifAbsent {
				b.order = append(b.order, HeldObject{Key: key, Data: data, IfAbsent: ifAbsent, Ledger: LedgerOf(ctx)})
			}
			b.pending[key] = data
		}
		b.mu.Unlock()
		return
	}
	for _, key := range keys {
		b.pending[key] = data
	}
	b.mu.Unlock()
	b.wg.Add(1)
	b.sem <- struct{}{}
	go func() {
		defer b.wg.Done()
		defer func() { <-b.sem }()
		err := put(ctx, data)
		b.mu.Lock()
		// Small objects (states, indexes, commits) stay readable from the
		// batch once written, so whether a read of one is a request never
		// depends on how fast its put completed (request counts are
		// deterministic); large ones (fragments) are dropped, keeping a
		// long batch's memory bounded.
		if err != nil || len(data) > keepWrittenBytes {
			for _, key := range keys {
				delete(b.pending, key)
			}
		}
		if err != nil {
			b.errs = append(b.errs, err)
		}
		b.mu.Unlock()
	}()
}

func (b *Batch) lookup(key string) ([]byte, bool) {
	if b == nil {
		return nil, false
	}
	b.mu.Lock()
	d, ok := b.pending[key]
	make_ := b.lazy[key]
	b.mu.Unlock()
	if !ok && make_ != nil {
		// Made outside the lock (it may be an encoding); a failure reads
		// as a missing object, which the reader reports.
		var err error
		d, err = make_()
		ok = err == nil
	}
	if !ok && b.spill != nil {
		d, ok = b.spill.lookup(key)
	}
	if !ok {
		return b.parent.lookup(key)
	}
	return d, ok
}

// Put implements Store.
func (s *Batching) Put(ctx context.Context, key string, data []byte) (Info, error) {
	return s.deferPut(ctx, OpPut, key, data, s.inner.Put)
}

// PutIfAbsent implements Store; see the batch rules on Batching.
func (s *Batching) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	return s.deferPut(ctx, OpPutIfAbsent, key, data, s.inner.PutIfAbsent)
}

// deferPut is Put and PutIfAbsent (op): straight to put outside a batch;
// inside one, the key is checked now and the write deferred to the flush,
// where an object a PutIfAbsent finds already there counts as written.
func (s *Batching) deferPut(ctx context.Context, op Op, key string, data []byte, put func(context.Context, string, []byte) (Info, error)) (Info, error) {
	b := batchOf(ctx)
	if b == nil {
		return put(ctx, key, data)
	}
	if err := checkKey(op, key); err != nil {
		return Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return Info{}, opErr(op, key, err)
	}
	ifAbsent := op == OpPutIfAbsent
	b.defer_(ctx, key, data, ifAbsent, func(ctx context.Context, data []byte) error {
		_, err := put(ctx, key, data)
		if ifAbsent && errors.Is(err, ErrExists) {
			return nil
		}
		return err
	})
	return Info{Key: key, Size: int64(len(data))}, nil
}

// PutIfMatch implements Store (never deferred).
func (s *Batching) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	return s.inner.PutIfMatch(ctx, key, data, etag)
}

// Get implements Store.
func (s *Batching) Get(ctx context.Context, key string) ([]byte, Info, error) {
	if d, ok := batchOf(ctx).lookup(key); ok {
		return append([]byte(nil), d...), Info{Key: key, Size: int64(len(d))}, nil
	}
	return s.inner.Get(ctx, key)
}

// GetRange implements Store.
func (s *Batching) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if d, ok := batchOf(ctx).lookup(key); ok && off >= 0 && length >= 0 {
		return append([]byte(nil), clipRange(d, off, length)...), nil
	}
	return s.inner.GetRange(ctx, key, off, length)
}

// Stat implements Store.
func (s *Batching) Stat(ctx context.Context, key string) (Info, error) {
	if d, ok := batchOf(ctx).lookup(key); ok {
		return Info{Key: key, Size: int64(len(d))}, nil
	}
	return s.inner.Stat(ctx, key)
}

// List implements Store (pending puts are not listed).
func (s *Batching) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	return s.inner.List(ctx, prefix, startAfter, fn)
}

// Delete implements Store.
func (s *Batching) Delete(ctx context.Context, key string) error {
	return s.inner.Delete(ctx, key)
}

// OpenReadAtSize implements SizedReadAtOpener.
func (s *Batching) OpenReadAtSize(ctx context.Context, key string, size int64) (ReadAtCloser, error) {
	if d, ok := batchOf(ctx).lookup(key); ok {
		return bytesReadAt{bytes.NewReader(append([]byte(nil), d...))}, nil
	}
	return OpenReadAtSize(ctx, s.inner, key, size)
}

// OpenReadAt implements ReadAtOpener.
func (s *Batching) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	if d, ok := batchOf(ctx).lookup(key); ok {
		return bytesReadAt{bytes.NewReader(append([]byte(nil), d...))}, nil
	}
	return OpenReadAt(ctx, s.inner, key)
}

// SweepTemp implements TempSweeper by sweeping the wrapped store (a
// batching layer over a local directory must not hide its leftovers from
// cleanup).
func (s *Batching) SweepTemp(ctx context.Context, olderThan time.Time, dryRun bool) (TempSweep, error) {
	return SweepTemp(ctx, s.inner, olderThan, dryRun)
}
