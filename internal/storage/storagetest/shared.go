package storagetest

import (
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// testPutShared pins storage.PutShared on the store: through its
// SharedPutter when it has one, by one Put per key otherwise. Every key
// then reads the bytes, deleting one name leaves the others, and a bad key
// fails the request with ErrInvalidKey.
func testPutShared(t *testing.T, s storage.Store) {
	ctx := t.Context()
	keys := []string{"commits/c1.json", "commits/c2.json", "elsewhere/deep/c3.json"}
	if err := storage.PutShared(ctx, s, keys, []byte("chain")); err != nil {
		t.Fatalf("PutShared: %v", err)
	}
	for _, k := range keys {
		if got, info := mustGet(t, s, k); got != "chain" || info.Size != 5 {
			t.Fatalf("%s holds %q (%+v)", k, got, info)
		}
	}
	// (Whether the deleted name still reads is the store's business: a
	// cache of immutable objects may serve it; garbage is never read.)
	if err := s.Delete(ctx, keys[1]); err != nil {
		t.Fatal(err)
	}
	if got, _ := mustGet(t, s, keys[2]); got != "chain" {
		t.Fatalf("another name after a delete holds %q", got)
	}
	if err := storage.PutShared(ctx, s, []string{"ok/1", "../bad"}, []byte("x")); !errors.Is(err, storage.ErrInvalidKey) {
		t.Fatalf("PutShared with a bad key: %v, want ErrInvalidKey", err)
	}
}
