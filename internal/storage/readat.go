package storage

import (
	"context"
	"io"
)

// ReadAtCloser is random access to one version of an object, as Parquet
// readers need. Close releases it; Size is the object's size at open time.
type ReadAtCloser interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// ReadAtOpener is implemented by stores with a native random-access reader
// (Local: an *os.File; Mem: the bytes). Decorators implement it by forwarding,
// so OpenReadAt keeps working — and keeps being counted — through them.
type ReadAtOpener interface {
	OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error)
}

// OpenReadAt opens key for random access. It uses the store's ReadAtOpener if
// it has one, and otherwise falls back to one Stat plus one GetRange per ReadAt.
//
// The fallback does not pin a version: it is meant for immutable objects
// (fragments, indexes), which is all Omnigraph reads this way. If the object is
// replaced while open, reads may mix versions; if it is deleted, ReadAt fails
// with ErrNotFound.
func OpenReadAt(ctx context.Context, s Store, key string) (ReadAtCloser, error) {
	if o, ok := s.(ReadAtOpener); ok {
		return o.OpenReadAt(ctx, key)
	}
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	return &rangeReader{ctx: ctx, s: s, key: key, size: info.Size}, nil
}

// rangeReader is the fallback ReadAtCloser. It keeps the ctx of OpenReadAt
// because io.ReaderAt has no ctx parameter; cancelling it fails later reads.
type rangeReader struct {
	ctx  context.Context
	s    Store
	key  string
	size int64
}

func (r *rangeReader) Size() int64 { return r.size }

func (r *rangeReader) Close() error { return nil }

func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &Error{Op: OpGetRange, Key: r.key, Err: &RangeError{Off: off, Length: int64(len(p))}}
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	b, err := r.s.GetRange(r.ctx, r.key, off, want)
	if err != nil {
		return 0, err
	}
	n := copy(p, b)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
