package storage

import (
	"context"
	"sync/atomic"
)

// Counting is a Store decorator that counts requests and bytes by kind, so
// tests can pin the cost of an operation in object-store requests (DESIGN §7).
// It is safe for concurrent use.
//
// Request model: every Store method is one request of its Op, whatever its
// outcome (errors count too: a 412 costs a request on S3). Bytes are payload
// bytes: returned by Get/GetRange, sent by the puts. List is one request per
// call — on S3 it is one per 1000 keys; Omnigraph never lists on a hot path.
// OpenReadAt counts one OpStat (the HEAD an S3 reader needs), and each ReadAt
// on the returned reader one OpGetRange with the bytes read, even when the
// inner store serves it from an open file.
type Counting struct {
	wrapper
	counts [len(allOps)]struct{ requests, bytes atomic.Int64 }
}

var (
	_ Store        = (*Counting)(nil)
	_ ReadAtOpener = (*Counting)(nil)
)

// NewCounting wraps inner.
func NewCounting(inner Store) *Counting { return &Counting{wrapper: wrapper{inner}} }

// OpCount is the tally for one Op.
type OpCount struct {
	Requests int64
	Bytes    int64
}

// Counts is a snapshot of a Counting's tallies.
type Counts map[Op]OpCount

// Requests is the total number of requests of all kinds.
func (c Counts) Requests() int64 {
	var n int64
	for _, v := range c {
		n += v.Requests
	}
	return n
}

// Bytes is the total payload of all kinds.
func (c Counts) Bytes() int64 {
	var n int64
	for _, v := range c {
		n += v.Bytes
	}
	return n
}

// Sub returns c minus earlier, per Op (for "what did this operation cost").
func (c Counts) Sub(earlier Counts) Counts {
	out := make(Counts, len(allOps))
	for _, op := range allOps {
		out[op] = OpCount{c[op].Requests - earlier[op].Requests, c[op].Bytes - earlier[op].Bytes}
	}
	return out
}

// Snapshot returns the current tallies; every Op is present. Counters are read
// one by one, so a snapshot taken during concurrent requests need not be a
// consistent cut.
func (c *Counting) Snapshot() Counts {
	out := make(Counts, len(allOps))
	for i, op := range allOps {
		out[op] = OpCount{c.counts[i].requests.Load(), c.counts[i].bytes.Load()}
	}
	return out
}

// Reset zeroes every tally.
func (c *Counting) Reset() {
	for i := range c.counts {
		c.counts[i].requests.Store(0)
		c.counts[i].bytes.Store(0)
	}
}

func (c *Counting) add(op Op, n int) {
	for i, o := range allOps {
		if o == op {
			c.counts[i].requests.Add(1)
			c.counts[i].bytes.Add(int64(n))
			return
		}
	}
	panic("storage: unknown op " + string(op))
}

// Get implements Store.
func (c *Counting) Get(ctx context.Context, key string) ([]byte, Info, error) {
	b, info, err := c.inner.Get(ctx, key)
	c.add(OpGet, len(b))
	return b, info, err
}

// GetRange implements Store.
func (c *Counting) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	b, err := c.inner.GetRange(ctx, key, off, length)
	c.add(OpGetRange, len(b))
	return b, err
}

// Stat implements Store.
func (c *Counting) Stat(ctx context.Context, key string) (Info, error) {
	c.add(OpStat, 0)
	return c.inner.Stat(ctx, key)
}

// Put implements Store.
func (c *Counting) Put(ctx context.Context, key string, data []byte) (Info, error) {
	c.add(OpPut, len(data))
	return c.inner.Put(ctx, key, data)
}

// PutIfAbsent implements Store.
func (c *Counting) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	c.add(OpPutIfAbsent, len(data))
	return c.inner.PutIfAbsent(ctx, key, data)
}

// PutIfMatch implements Store.
func (c *Counting) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	c.add(OpPutIfMatch, len(data))
	return c.inner.PutIfMatch(ctx, key, data, etag)
}

// List implements Store.
func (c *Counting) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	c.add(OpList, 0)
	return c.inner.List(ctx, prefix, startAfter, fn)
}

// Delete implements Store.
func (c *Counting) Delete(ctx context.Context, key string) error {
	c.add(OpDelete, 0)
	return c.inner.Delete(ctx, key)
}

// OpenReadAt implements ReadAtOpener; see the request model on Counting.
func (c *Counting) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	c.add(OpStat, 0)
	r, err := OpenReadAt(ctx, c.inner, key)
	if err != nil {
		return nil, err
	}
	return &countingReader{ReadAtCloser: r, c: c}, nil
}

// OpenReadAtSize implements SizedReadAtOpener: the open is no request,
// each ReadAt one.
func (c *Counting) OpenReadAtSize(ctx context.Context, key string, size int64) (ReadAtCloser, error) {
	r, err := OpenReadAtSize(ctx, c.inner, key, size)
	if err != nil {
		return nil, err
	}
	return &countingReader{ReadAtCloser: r, c: c}, nil
}

type countingReader struct {
	ReadAtCloser
	c *Counting
}

func (r *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.ReadAtCloser.ReadAt(p, off)
	r.c.add(OpGetRange, n)
	return n, err
}
