package index

import (
	"context"
	"fmt"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// putObject stores data as a fresh index object <prefix>/index/<ulid>.<ext>
// (the one durable recipe: a new name, never overwritten) and returns its
// key.
func putObject(ctx context.Context, st storage.Store, prefix, ext string, data []byte) (string, error) {
	key := prefix + "/index/" + ulid.Make().String() + "." + ext
	if _, err := storage.PutFresh(ctx, st, key, data); err != nil {
		return "", fmt.Errorf("index: write %s: %w", key, err)
	}
	return key, nil
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
