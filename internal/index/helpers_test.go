package index

import (
	"context"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// memWith is a memory store holding one object: data under key.
func memWith(t testing.TB, key string, data []byte) *storage.Mem {
	t.Helper()
	mem := storage.NewMem()
	if _, err := mem.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
	return mem
}
