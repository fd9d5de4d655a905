package table

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// RowOffsetError reports a row offset outside its fragment. It unwraps to
// ErrValue, like an out-of-range offset given to DeleteRows.
type RowOffsetError struct {
	Key    string // fragment key
	Offset int64
	Rows   int64 // the fragment's row count; valid offsets are [0, Rows)
}

func (e *RowOffsetError) Error() string {
	return fmt.Sprintf("table: row offset %d out of range [0,%d) in fragment %s", e.Offset, e.Rows, e.Key)
}

// Unwrap makes errors.Is(err, ErrValue) hold.
func (e *RowOffsetError) Unwrap() error { return ErrValue }

// ReadRows returns the rows at the given physical offsets of fragment
// fragKey of state s, with the given columns (nil = all, in schema order),
// as one record in ascending offset order that the caller releases.
// Offsets may come unsorted and repeated; each row is returned once. The
// fragment's deletion vector is ignored: a deleted row is still returned,
// since offsets address the file, not the live rows.
//
// Only the row groups holding a wanted offset are read (their boundaries come
// from the Parquet footer), and of those only the requested columns' chunks,
// so the cost follows the row groups touched, not the fragment.
//
// A fragment s does not hold is ErrUnknownFragment; an offset outside the
// fragment is a *RowOffsetError (ErrValue). Both are reported before any read.
func ReadRows(ctx context.Context, st storage.Store, s *State, fragKey string, offsets []int64, columns []string, mem memory.Allocator) (arrow.RecordBatch, error) {
	return NewReader(st, nil).ReadRows(ctx, s, fragKey, offsets, columns, mem)
}

// ReadRows is ReadRows through the reader's caches. A row group holding at
// most maxSeekRows wanted offsets is read row by row through the Parquet
// page index, so only the pages holding those rows are fetched.
func (r *Reader) ReadRows(ctx context.Context, s *State, fragKey string, offsets []int64, columns []string, mem memory.Allocator) (arrow.RecordBatch, error) {
	i := slices.IndexFunc(s.fragments, func(f Fragment) bool { return f.Key == fragKey })
	if i < 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFragment, fragKey)
	}
	f := s.fragments[i].clone()
	want := slices.Clone(offsets)
	slices.Sort(want)
	want = slices.Compact(want)
	for _, o := range want {
		if o < 0 || o >= f.Rows {
			return nil, &RowOffsetError{Key: f.Key, Offset: o, Rows: f.Rows}
		}
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	// A one-fragment state without the deletion vector: offsets are
	// physical, and the vector need not even be fetched.
	f.DV, f.Deleted = "", 0
	if rec, ok, err := r.smallRows(ctx, s, f, want, columns, mem); ok {
		return rec, err
	}
	one := &State{schema: s.schema, fragments: []Fragment{f}}
	sc, err := r.Scan(ctx, one, ScanOptions{Columns: columns, Alloc: mem})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	if len(want) == 0 {
		sc.frags = nil // nothing to read: an empty record of the projection
	}
	sc.want, sc.wantBits = want, newRowBitmap(f.Rows, want)
	return collect(sc, mem)
}

// LiveRows returns the offsets of offs (ascending) that fragment f's
// deletion vector does not hide, reading the vector through the cache
// (offs itself when f has none).
func (r *Reader) LiveRows(ctx context.Context, f Fragment, offs []int64) ([]int64, error) {
	del, err := r.deleted(ctx, f)
	if err != nil || del == nil {
		return offs, err
	}
	out := make([]int64, 0, len(offs))
	for _, o := range offs {
		if o >= 0 && o < f.Rows && !del.has(o) {
			out = append(out, o)
		}
	}
	return out, nil
}
