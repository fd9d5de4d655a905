package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// tailPrefetch is how much of a fragment's end is fetched with the first
// footer read. The Parquet reader asks for the last 8 bytes and then for the
// footer; fetching both in one ranged GET halves the round trips of opening a
// fragment (and small fragments come whole in that one request).
const tailPrefetch = 8 << 10

// smallReadBytes bounds the reads an objectReader memoizes.
const smallReadBytes = 16 << 10

// objectReader adapts a storage.ReadAtCloser to the io.ReaderAt + io.Seeker
// the Parquet reader wants, adding the tail prefetch and error classification.
// Each read that misses the tail is one ranged read of the store, so only the
// column chunks a scan needs are transferred.
//
// It is used by one goroutine at a time (the Parquet reader of one fragment).
type objectReader struct {
	ctx  context.Context
	ra   storage.ReadAtCloser
	key  string
	size int64
	pos  int64

	tail    []byte
	tailOff int64

	// small memoizes reads of up to smallReadBytes (page-index and page
	// header reads repeat while one fragment is open).
	small map[[2]int64][]byte

	// spans hold the pages a page read prefetched (pages.go), sorted by
	// offset; spanEOF is the span end at which the last read stopped short.
	spans   []span
	spanEOF int64
	// dataEnd is where the file's column chunks end (its page index and
	// footer follow): reads at or past it never stop short at a span.
	dataEnd int64

	// err is the first storage or truncation error, kept so that a failure
	// surfacing as a Parquet decode error is reported as what it really was.
	err error
}

// openObject opens key, whose size the table state records as size. A
// different actual size means the object is not the one the state describes
// (typically truncated), which is corruption.
func openObject(ctx context.Context, st storage.Store, key string, size int64) (*objectReader, error) {
	ra, err := storage.OpenReadAtSize(ctx, st, key, size)
	if err != nil {
		return nil, fmt.Errorf("table: open %s: %w", key, err)
	}
	if size == DeferredBytes {
		// A deferred fragment of a staged state (DeferFragment), read from
		// its held batch: the state cannot know the file's size.
		size = ra.Size()
	}
	if ra.Size() != size {
		_ = ra.Close()
		return nil, corrupt(key, min(size, ra.Size()), fmt.Sprintf("object is %d bytes, table state says %d", ra.Size(), size), nil)
	}
	return &objectReader{ctx: ctx, ra: ra, key: key, size: size}, nil
}

func (r *objectReader) Close() error { return r.ra.Close() }

func (r *objectReader) Size() int64 { return r.size }

func (r *objectReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += r.pos
	case io.SeekEnd:
		off += r.size
	default:
		return 0, fmt.Errorf("table: bad whence %d", whence)
	}
	if off < 0 {
		return 0, fmt.Errorf("table: negative seek on %s", r.key)
	}
	r.pos = off
	return off, nil
}

func (r *objectReader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.pos)
	r.pos += int64(n)
	return n, err
}

func (r *objectReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("table: negative offset on %s", r.key)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	if n, ok, err := r.fromSpans(p, off); ok {
		return n, err
	}
	want := min(int64(len(p)), r.size-off)
	if r.tail == nil && off+want > r.size-tailPrefetch {
		start := max(0, r.size-tailPrefetch)
		b, err := r.get(start, r.size-start)
		if err != nil {
			return 0, err
		}
		r.tail, r.tailOff = b, start
	}
	var n int
	if r.tail != nil && off >= r.tailOff && off+want <= r.tailOff+int64(len(r.tail)) {
		n = copy(p[:want], r.tail[off-r.tailOff:])
	} else if b, ok := r.small[[2]int64{off, want}]; ok {
		n = copy(p, b)
	} else {
		b, err := r.get(off, want)
		if err != nil {
			return 0, err
		}
		if want <= smallReadBytes {
			if r.small == nil {
				r.small = map[[2]int64][]byte{}
			}
			r.small[[2]int64{off, want}] = b
		}
		n = copy(p, b)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *objectReader) get(off, n int64) ([]byte, error) {
	b := make([]byte, n)
	m, err := r.ra.ReadAt(b, off)
	if err == io.EOF && int64(m) == n {
		err = nil
	}
	b = b[:m]
	if err != nil && err != io.EOF {
		err = fmt.Errorf("table: read %s [%d,+%d): %w", r.key, off, n, err)
		if r.err == nil {
			r.err = err
		}
		return nil, err
	}
	if int64(len(b)) != n {
		// The object is shorter than the state says: it was truncated.
		err := corrupt(r.key, off+int64(len(b)), fmt.Sprintf("object shorter than the %d bytes recorded in the table state", r.size), io.ErrUnexpectedEOF)
		if r.err == nil {
			r.err = err
		}
		return nil, err
	}
	return b, nil
}

// classify turns an error from the Parquet layer into the right kind: a
// storage failure stays an I/O error, a cancelled context stays that, and
// anything else is corruption of this object.
func (r *objectReader) classify(err error, reason string) error {
	if err == nil {
		return nil
	}
	if r.err != nil {
		return r.err
	}
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return corrupt(r.key, -1, reason, err)
}

// span is a prefetched byte range of the object.
type span struct {
	off int64
	b   []byte
}

// prefetch replaces the prefetched spans with ranges (sorted, disjoint),
// read one ranged read each.
func (r *objectReader) prefetch(ranges []byteRange) error {
	r.spans, r.spanEOF = r.spans[:0], -1
	for _, br := range ranges {
		if br.Off < 0 || br.Len <= 0 || br.Off+br.Len > r.size {
			return corrupt(r.key, br.Off, fmt.Sprintf("page range [%d,+%d) outside the %d-byte object", br.Off, br.Len, r.size), nil)
		}
		b, err := r.get(br.Off, br.Len)
		if err != nil {
			return err
		}
		r.spans = append(r.spans, span{off: br.Off, b: b})
	}
	return nil
}

// fromSpans serves a read from the prefetched spans. The Parquet page
// stream peeks 16 KiB ahead of every page header, far past a small page;
// a read running past a span's end is cut there, and the next read, at
// the span's end, reports io.EOF once, which ends the peek (the stream
// tolerates a short peek and reads on when it really needs the bytes). A
// read at the same offset again goes to the store, so a short span only
// costs a read, never a wrong answer. Only page streams read the column
// chunks' region; reads past it (page index, footer) are never cut.
func (r *objectReader) fromSpans(p []byte, off int64) (int, bool, error) {
	if len(r.spans) == 0 {
		return 0, false, nil
	}
	i := sort.Search(len(r.spans), func(i int) bool { return r.spans[i].off+int64(len(r.spans[i].b)) > off }) // first span ending after off
	if i < len(r.spans) && r.spans[i].off <= off {
		s := r.spans[i]
		r.spanEOF = -1
		n := copy(p, s.b[off-s.off:])
		if n < len(p) {
			return n, true, io.EOF
		}
		return n, true, nil
	}
	if i > 0 && r.spans[i-1].off+int64(len(r.spans[i-1].b)) == off && off < r.dataEnd && r.spanEOF != off {
		r.spanEOF = off
		return 0, true, io.EOF
	}
	r.spanEOF = -1
	return 0, false, nil
}
