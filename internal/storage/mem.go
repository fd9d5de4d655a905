package storage

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mem is an in-memory Store for tests. All operations are atomic with respect
// to each other (one mutex); conditional puts are linearizable.
//
// ETags are "m<generation>" from a store-wide counter, so an ETag never repeats
// for any key, even if the same bytes are written again.
type Mem struct {
	now func() time.Time

	mu struct {
		sync.Mutex
		objs map[string]*memObject
		// keys is objs' key set in lexical order.
		// INVARIANT: keys is sorted and equals the key set of objs (TestMemSortedKeys).
		keys []string
		gen  uint64
	}
}

type memObject struct {
	data []byte // never mutated after insertion
	info Info
}

var _ Store = (*Mem)(nil)

// NewMem returns an empty in-memory store.
func NewMem() *Mem { return NewMemClock(time.Now) }

// NewMemClock returns an empty in-memory store whose ModTimes come from now,
// so tests of grace periods (cleanup) can control time.
func NewMemClock(now func() time.Time) *Mem {
	m := &Mem{now: now}
	m.mu.objs = make(map[string]*memObject)
	return m
}

func (m *Mem) begin(ctx context.Context, op Op, key string) error {
	if err := checkKey(op, key); err != nil {
		return err
	}
	return opErr(op, key, ctx.Err())
}

// Get implements Store.
func (m *Mem) Get(ctx context.Context, key string) ([]byte, Info, error) {
	if err := m.begin(ctx, OpGet, key); err != nil {
		return nil, Info{}, err
	}
	m.mu.Lock()
	o, ok := m.mu.objs[key]
	m.mu.Unlock()
	if !ok {
		return nil, Info{}, opErr(OpGet, key, ErrNotFound)
	}
	return bytes.Clone(o.data), o.info, nil
}

// GetRange implements Store.
func (m *Mem) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := m.begin(ctx, OpGetRange, key); err != nil {
		return nil, err
	}
	if err := checkRange(off, length); err != nil {
		return nil, opErr(OpGetRange, key, err)
	}
	m.mu.Lock()
	o, ok := m.mu.objs[key]
	m.mu.Unlock()
	if !ok {
		return nil, opErr(OpGetRange, key, ErrNotFound)
	}
	return bytes.Clone(clipRange(o.data, off, length)), nil
}

// Stat implements Store.
func (m *Mem) Stat(ctx context.Context, key string) (Info, error) {
	if err := m.begin(ctx, OpStat, key); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	o, ok := m.mu.objs[key]
	m.mu.Unlock()
	if !ok {
		return Info{}, opErr(OpStat, key, ErrNotFound)
	}
	return o.info, nil
}

// Put implements Store.
func (m *Mem) Put(ctx context.Context, key string, data []byte) (Info, error) {
	if err := m.begin(ctx, OpPut, key); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.storeLocked(key, data), nil
}

// PutIfAbsent implements Store.
func (m *Mem) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	if err := m.begin(ctx, OpPutIfAbsent, key); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.objs[key]; ok {
		return Info{}, opErr(OpPutIfAbsent, key, ErrExists)
	}
	return m.storeLocked(key, data), nil
}

// PutIfMatch implements Store.
func (m *Mem) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	if err := m.begin(ctx, OpPutIfMatch, key); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.mu.objs[key]
	if !ok {
		return Info{}, opErr(OpPutIfMatch, key, ErrNotFound)
	}
	if o.info.ETag != etag {
		return Info{}, opErr(OpPutIfMatch, key, ErrPrecondition)
	}
	return m.storeLocked(key, data), nil
}

func (m *Mem) storeLocked(key string, data []byte) Info {
	m.mu.gen++
	o := &memObject{
		data: bytes.Clone(data),
		info: Info{Key: key, Size: int64(len(data)), ETag: "m" + strconv.FormatUint(m.mu.gen, 10), ModTime: m.now()},
	}
	if _, ok := m.mu.objs[key]; !ok {
		i, _ := slices.BinarySearch(m.mu.keys, key)
		m.mu.keys = slices.Insert(m.mu.keys, i, key)
	}
	m.mu.objs[key] = o
	return o.info
}

// memListBatch bounds how many entries List copies per lock hold; fn runs
// without the lock so it may call back into the store.
const memListBatch = 64

// List implements Store. Like S3 it is not a snapshot: it pages through the
// key space, so objects changed during the listing may or may not appear.
func (m *Mem) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	cursor := startAfter
	batch := make([]Info, 0, memListBatch)
	for {
		if err := ctx.Err(); err != nil {
			return opErr(OpList, prefix, err)
		}
		batch = batch[:0]
		m.mu.Lock()
		i, _ := slices.BinarySearch(m.mu.keys, max(prefix, cursor))
		for ; i < len(m.mu.keys) && len(batch) < memListBatch; i++ {
			k := m.mu.keys[i]
			if k <= cursor {
				continue // only when cursor == k (BinarySearch found it)
			}
			if !strings.HasPrefix(k, prefix) {
				break
			}
			batch = append(batch, m.mu.objs[k].info)
		}
		m.mu.Unlock()
		for _, info := range batch {
			if err := fn(info); err != nil {
				return err
			}
		}
		if len(batch) < memListBatch {
			return nil
		}
		cursor = batch[len(batch)-1].Key
	}
}

// Delete implements Store.
func (m *Mem) Delete(ctx context.Context, key string) error {
	if err := m.begin(ctx, OpDelete, key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.objs[key]; ok {
		delete(m.mu.objs, key)
		i, _ := slices.BinarySearch(m.mu.keys, key)
		m.mu.keys = slices.Delete(m.mu.keys, i, i+1)
	}
	return nil
}

// OpenReadAt implements ReadAtOpener: the reader sees the object as it was at
// open time, whatever happens to the key afterwards.
func (m *Mem) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	if err := m.begin(ctx, OpStat, key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	o, ok := m.mu.objs[key]
	m.mu.Unlock()
	if !ok {
		return nil, opErr(OpStat, key, ErrNotFound)
	}
	return bytesReadAt{bytes.NewReader(o.data)}, nil
}

type bytesReadAt struct{ *bytes.Reader }

func (bytesReadAt) Close() error { return nil }

// checkRange rejects negative offsets and lengths.
func checkRange(off, length int64) error {
	if off < 0 || length < 0 {
		return &RangeError{Off: off, Length: length}
	}
	return nil
}

// clipRange returns data[off:off+length], clipped to the object (empty past the end).
func clipRange(data []byte, off, length int64) []byte {
	n := int64(len(data))
	if off >= n {
		return nil
	}
	end := n
	if length < n-off {
		end = off + length
	}
	return data[off:end]
}

// RangeError reports a GetRange with a negative offset or length.
type RangeError struct{ Off, Length int64 }

func (e *RangeError) Error() string {
	return "invalid range: offset " + strconv.FormatInt(e.Off, 10) + ", length " + strconv.FormatInt(e.Length, 10)
}
