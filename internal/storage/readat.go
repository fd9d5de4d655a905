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

// SizedReadAtOpener is implemented by stores that can open an object of a
// size the caller already knows without asking for it. On a remote store
// that saves the HEAD request a plain open costs: the table state records
// every fragment's size, so opening a fragment costs nothing before its
// first ranged read.
type SizedReadAtOpener interface {
	OpenReadAtSize(ctx context.Context, key string, size int64) (ReadAtCloser, error)
}

// OpenReadAtSize opens key, which the caller knows to be size bytes long,
// for random access. Stores with a native reader (Local, Mem) open it as
// OpenReadAt does, so the reader's Size is the object's real size and the
// caller can compare; remote stores send nothing until the first ReadAt,
// and an object shorter than size shows up as a short read. A sized open is
// no request in the counting model; its reads are.
func OpenReadAtSize(ctx context.Context, s Store, key string, size int64) (ReadAtCloser, error) {
	if o, ok := s.(SizedReadAtOpener); ok {
		return o.OpenReadAtSize(ctx, key, size)
	}
	if o, ok := s.(ReadAtOpener); ok {
		return o.OpenReadAt(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, opErr(OpGetRange, key, err)
	}
	return &rangeReader{ctx: ctx, s: s, key: key, size: size}, nil
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
