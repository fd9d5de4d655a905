package commit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const schemaPrefix = "schemas/"

// SchemaKey returns the content address of a schema source:
// "schemas/<sha256 hex>.pg".
func SchemaKey(src []byte) string {
	sum := sha256.Sum256(src)
	return schemaPrefix + hex.EncodeToString(sum[:]) + ".pg"
}

// PutSchema stores a schema source under its content address and returns the
// key. Storing the same source twice is a no-op, so concurrent writers of one
// schema never conflict.
func (r *Repo) PutSchema(ctx context.Context, src []byte) (string, error) {
	if r.readOnly {
		return "", ErrReadOnly
	}
	return putSchema(ctx, r.store, src)
}

func putSchema(ctx context.Context, st storage.Store, src []byte) (string, error) {
	key := SchemaKey(src)
	// PutIfAbsent rather than Put: an existing object has the same bytes by
	// construction, and we never rewrite a published object in place.
	if _, err := st.PutIfAbsent(ctx, key, src); err != nil && !errors.Is(err, storage.ErrExists) {
		return "", fmt.Errorf("write schema %s: %w", key, err)
	}
	return key, nil
}

// Schema returns the schema source stored under key, verifying its hash. The
// returned slice is shared (cached) and must not be modified.
func (r *Repo) Schema(ctx context.Context, key string) ([]byte, error) {
	if !strings.HasPrefix(key, schemaPrefix) || !strings.HasSuffix(key, ".pg") {
		return nil, fmt.Errorf("%w: %q is not a schema key", ErrInvalidRequest, key)
	}
	v, err := r.cache.GetOrLoad(ctx, key, func(ctx context.Context) (any, int64, error) {
		data, _, err := r.store.Get(ctx, key)
		if err != nil {
			return nil, 0, fmt.Errorf("read schema %s: %w", key, err)
		}
		if SchemaKey(data) != key {
			return nil, 0, corrupt(key, "content hash does not match name")
		}
		return data, int64(len(data)) + 64, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}
