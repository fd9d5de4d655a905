package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Recording is a Store decorator that records the order in which requests
// start and end, so tests can pin how many requests of an operation depend
// on one another — its depth in round trips — without timing anything.
// Every request is one event pair (the request model of Counting: an
// OpenReadAt is one request, the HEAD; each ReadAt on its reader one).
//
// The depth of a request is 1 + the largest depth among the requests that
// ended before it started; Depth is the largest depth recorded. Two
// requests sent side by side only count as one level when neither ended
// before the other started, so wrap a store that holds each request open
// for a while (Delayed inside a testing/synctest bubble, where time is
// virtual and a parallel batch always overlaps) for an exact figure; over
// an instant store Depth is an upper bound.
type Recording struct {
	wrapper
	mu    sync.Mutex
	seq   int64
	ended []Request // finished requests, in end order
	open  map[int64]Request
}

// Request is one recorded request.
type Request struct {
	Op       Op
	Key      string
	Off, Len int64 // ranged reads; Len -1 when not ranged
	Start    int64 // sequence number of the start event
	End      int64 // sequence number of the end event
	Depth    int   // 1 + the deepest request that ended before Start
}

func (r Request) String() string {
	if r.Len >= 0 {
		return fmt.Sprintf("%d %s %s [%d+%d]", r.Depth, r.Op, r.Key, r.Off, r.Len)
	}
	return fmt.Sprintf("%d %s %s", r.Depth, r.Op, r.Key)
}

var (
	_ Store             = (*Recording)(nil)
	_ ReadAtOpener      = (*Recording)(nil)
	_ SizedReadAtOpener = (*Recording)(nil)
)

// NewRecording wraps inner.
func NewRecording(inner Store) *Recording {
	return &Recording{wrapper: wrapper{inner}, open: map[int64]Request{}}
}

func (r *Recording) start(op Op, key string, off, n int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	d := 0
	for _, e := range r.ended {
		d = max(d, e.Depth)
	}
	r.open[r.seq] = Request{Op: op, Key: key, Off: off, Len: n, Start: r.seq, Depth: d + 1}
	return r.seq
}

func (r *Recording) end(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	q := r.open[id]
	delete(r.open, id)
	q.End = r.seq
	r.ended = append(r.ended, q)
}

// Requests returns the finished requests in the order they ended.
func (r *Recording) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.ended...)
}

// Depth is the number of dependent round trips recorded: the largest
// depth of a finished request (0 when there was none).
func (r *Recording) Depth() int {
	d := 0
	for _, q := range r.Requests() {
		d = max(d, q.Depth)
	}
	return d
}

// Trace renders the finished requests by depth, one a line.
func (r *Recording) Trace() string {
	qs := r.Requests()
	var b strings.Builder
	for d := 1; d <= r.Depth(); d++ {
		for _, q := range qs {
			if q.Depth == d {
				b.WriteString(q.String())
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// Reset forgets every recorded request.
func (r *Recording) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = nil
}

// Get implements Store.
func (r *Recording) Get(ctx context.Context, key string) ([]byte, Info, error) {
	defer r.end(r.start(OpGet, key, 0, -1))
	return r.inner.Get(ctx, key)
}

// GetRange implements Store.
func (r *Recording) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	defer r.end(r.start(OpGetRange, key, off, length))
	return r.inner.GetRange(ctx, key, off, length)
}

// Stat implements Store.
func (r *Recording) Stat(ctx context.Context, key string) (Info, error) {
	defer r.end(r.start(OpStat, key, 0, -1))
	return r.inner.Stat(ctx, key)
}

// Put implements Store.
func (r *Recording) Put(ctx context.Context, key string, data []byte) (Info, error) {
	defer r.end(r.start(OpPut, key, 0, -1))
	return r.inner.Put(ctx, key, data)
}

// PutIfAbsent implements Store.
func (r *Recording) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	defer r.end(r.start(OpPutIfAbsent, key, 0, -1))
	return r.inner.PutIfAbsent(ctx, key, data)
}

// PutIfMatch implements Store.
func (r *Recording) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	defer r.end(r.start(OpPutIfMatch, key, 0, -1))
	return r.inner.PutIfMatch(ctx, key, data, etag)
}

// List implements Store.
func (r *Recording) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	defer r.end(r.start(OpList, prefix, 0, -1))
	return r.inner.List(ctx, prefix, startAfter, fn)
}

// Delete implements Store.
func (r *Recording) Delete(ctx context.Context, key string) error {
	defer r.end(r.start(OpDelete, key, 0, -1))
	return r.inner.Delete(ctx, key)
}

// OpenReadAt implements ReadAtOpener: the open is one request (the HEAD),
// each ReadAt one.
func (r *Recording) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	id := r.start(OpStat, key, 0, -1)
	rd, err := OpenReadAt(ctx, r.inner, key)
	r.end(id)
	if err != nil {
		return nil, err
	}
	return &recordingReader{ReadAtCloser: rd, r: r, key: key}, nil
}

// OpenReadAtSize implements SizedReadAtOpener: the open is no request,
// each ReadAt one.
func (r *Recording) OpenReadAtSize(ctx context.Context, key string, size int64) (ReadAtCloser, error) {
	rd, err := OpenReadAtSize(ctx, r.inner, key, size)
	if err != nil {
		return nil, err
	}
	return &recordingReader{ReadAtCloser: rd, r: r, key: key}, nil
}

type recordingReader struct {
	ReadAtCloser
	r   *Recording
	key string
}

func (rr *recordingReader) ReadAt(p []byte, off int64) (int, error) {
	defer rr.r.end(rr.r.start(OpGetRange, rr.key, off, int64(len(p))))
	return rr.ReadAtCloser.ReadAt(p, off)
}
