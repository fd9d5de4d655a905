package storage

import (
	"context"
	"time"
)

// Delayed is a Store decorator that adds a fixed latency to every request,
// to measure round trips on a fast local store as if it were remote (DESIGN
// §9: a write is one batch of parallel puts plus the CAS). Concurrent
// requests wait concurrently, as they would on a network. Cancelling the
// context ends the wait with ctx.Err() and sends nothing.
//
// Request model: as Counting's — each Store call is one round trip, an
// OpenReadAt is one (the HEAD) and each ReadAt on its reader one.
type Delayed struct {
	wrapper
	rtt time.Duration
}

var (
	_ Store             = (*Delayed)(nil)
	_ ReadAtOpener      = (*Delayed)(nil)
	_ SizedReadAtOpener = (*Delayed)(nil)
)

// NewDelayed wraps inner with rtt of latency per request.
func NewDelayed(inner Store, rtt time.Duration) *Delayed {
	return &Delayed{wrapper: wrapper{inner}, rtt: rtt}
}

func (d *Delayed) wait(ctx context.Context) error {
	if d.rtt <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d.rtt)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Get implements Store.
func (d *Delayed) Get(ctx context.Context, key string) ([]byte, Info, error) {
	if err := d.wait(ctx); err != nil {
		return nil, Info{}, opErr(OpGet, key, err)
	}
	return d.inner.Get(ctx, key)
}

// GetRange implements Store.
func (d *Delayed) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := d.wait(ctx); err != nil {
		return nil, opErr(OpGetRange, key, err)
	}
	return d.inner.GetRange(ctx, key, off, length)
}

// Stat implements Store.
func (d *Delayed) Stat(ctx context.Context, key string) (Info, error) {
	if err := d.wait(ctx); err != nil {
		return Info{}, opErr(OpStat, key, err)
	}
	return d.inner.Stat(ctx, key)
}

// Put implements Store.
func (d *Delayed) Put(ctx context.Context, key string, data []byte) (Info, error) {
	if err := d.wait(ctx); err != nil {
		return Info{}, opErr(OpPut, key, err)
	}
	return d.inner.Put(ctx, key, data)
}

// PutIfAbsent implements Store.
func (d *Delayed) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	if err := d.wait(ctx); err != nil {
		return Info{}, opErr(OpPutIfAbsent, key, err)
	}
	return d.inner.PutIfAbsent(ctx, key, data)
}

// PutIfMatch implements Store.
func (d *Delayed) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	if err := d.wait(ctx); err != nil {
		return Info{}, opErr(OpPutIfMatch, key, err)
	}
	return d.inner.PutIfMatch(ctx, key, data, etag)
}

// List implements Store (one round trip per call, like Counting).
func (d *Delayed) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	if err := d.wait(ctx); err != nil {
		return opErr(OpList, prefix, err)
	}
	return d.inner.List(ctx, prefix, startAfter, fn)
}

// Delete implements Store.
func (d *Delayed) Delete(ctx context.Context, key string) error {
	if err := d.wait(ctx); err != nil {
		return opErr(OpDelete, key, err)
	}
	return d.inner.Delete(ctx, key)
}

// OpenReadAt implements ReadAtOpener: one round trip to open, one per ReadAt.
func (d *Delayed) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	if err := d.wait(ctx); err != nil {
		return nil, opErr(OpStat, key, err)
	}
	r, err := OpenReadAt(ctx, d.inner, key)
	if err != nil {
		return nil, err
	}
	return &delayedReader{ReadAtCloser: r, ctx: ctx, d: d}, nil
}

// OpenReadAtSize implements SizedReadAtOpener: the open waits for nothing
// (it sends no request); each ReadAt waits one round trip.
func (d *Delayed) OpenReadAtSize(ctx context.Context, key string, size int64) (ReadAtCloser, error) {
	r, err := OpenReadAtSize(ctx, d.inner, key, size)
	if err != nil {
		return nil, err
	}
	return &delayedReader{ReadAtCloser: r, ctx: ctx, d: d}, nil
}

type delayedReader struct {
	ReadAtCloser
	ctx context.Context
	d   *Delayed
}

func (r *delayedReader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.d.wait(r.ctx); err != nil {
		return 0, err
	}
	return r.ReadAtCloser.ReadAt(p, off)
}
