package index

import (
	"context"
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// putObject stores data as a fresh index object <prefix>/index/<ulid>.<ext>
// (the one durable recipe: a new name, never overwritten) and returns ref
// with its Key set: what a table state carries for it.
func putObject(ctx context.Context, st storage.Store, prefix, ext string, data []byte, ref table.IndexRef) (table.IndexRef, error) {
	key := prefix + "/index/" + ulid.Make().String() + "." + ext
	if _, err := storage.PutFresh(ctx, st, key, data); err != nil {
		return table.IndexRef{}, fmt.Errorf("index: write %s: %w", key, err)
	}
	ref.Key = key
	return ref, nil
}

// fragmentColumn is the reference of an index over one column of one
// fragment (scalar, full-text and vector indexes), before its Key is known.
func fragmentColumn(kind, name, fragKey, col string) table.IndexRef {
	return table.IndexRef{Name: name, Kind: kind, Columns: []string{col}, Fragments: []string{fragKey}}
}

// getObject reads index object key and decodes it.
func getObject[X any](ctx context.Context, st storage.Store, key string, decode func(key string, data []byte) (X, error)) (X, error) {
	data, _, err := st.Get(ctx, key)
	if err != nil {
		var zero X
		return zero, fmt.Errorf("index: read %s: %w", key, err)
	}
	return decode(key, data)
}

// frontOr returns bytes [off, off+n) of object key: from front (the
// object's first bytes, already read) when it holds them, else by one
// ranged read of st; a short read is a *table.CorruptError naming what
// (e.g. "full-text index truncated").
func frontOr(ctx context.Context, st storage.Store, key string, front []byte, off, n uint64, what string) ([]byte, error) {
	if off+n <= uint64(len(front)) {
		return front[off : off+n], nil
	}
	var b []byte
	if st != nil {
		var err error
		if b, err = st.GetRange(ctx, key, int64(off), int64(n)); err != nil {
			return nil, fmt.Errorf("index: read %s: %w", key, err)
		}
	}
	if uint64(len(b)) != n {
		return nil, &table.CorruptError{Key: key, Offset: int64(off), Reason: what}
	}
	return b, nil
}

// Intersect returns the row offsets in both ascending lists, ascending
// (a new slice): the rows that pass two indexes' conditions.
func Intersect[T int32 | int64](a, b []T) []T {
	out := make([]T, 0, min(len(a), len(b)))
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}
