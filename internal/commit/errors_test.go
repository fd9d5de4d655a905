package commit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// TestCorruptErrorIsTheTableShape pins that a corrupt commit-layer object
// reports the one corruption shape every layer uses (table.CorruptError,
// table.ErrCorrupt), with the message it had before the shapes were folded:
// "corrupt object <key>: <what>", no offset.
func TestCorruptErrorIsTheTableShape(t *testing.T) {
	key := CommitKey(mustID(t, idA))
	_, decodeErr := Decode(key, []byte("not json"))
	_, stampErr := decodeStamp([]byte("{}"))
	missing := fmt.Errorf("get: %w", storage.ErrNotFound)
	cases := []struct {
		name    string
		err     error
		key     string
		message string // exact; "" checks only the prefix
		cause   error
	}{
		{"undecodable commit", decodeErr, key, "", nil},
		{"bad stamp", stampErr, StampKey, "", nil},
		{"helper", corrupt(key, "seq %d", 0), key, "corrupt object " + key + ": seq 0", nil},
		{"missing object", MissingObject(&Commit{ID: mustID(t, idA)}, "nodes/Person/state/x.json", missing), key,
			"corrupt object " + key + ": names nodes/Person/state/x.json, which is missing and was not removed by cleanup (run `omnigraph verify`): get: object not found",
			storage.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ce *table.CorruptError
			if !errors.As(c.err, &ce) || ce.Key != c.key || ce.Offset != -1 {
				t.Fatalf("err = %#v, want *table.CorruptError naming %s at offset -1", c.err, c.key)
			}
			if !errors.Is(c.err, ErrCorrupt) || !errors.Is(c.err, table.ErrCorrupt) {
				t.Fatalf("err = %v, want errors.Is ErrCorrupt and table.ErrCorrupt", c.err)
			}
			prefix := "corrupt object " + c.key + ": "
			if msg := c.err.Error(); (c.message != "" && msg != c.message) || len(msg) <= len(prefix) || msg[:len(prefix)] != prefix {
				t.Fatalf("message %q, want %q (prefix %q)", msg, c.message, prefix)
			}
			if c.cause != nil && !errors.Is(c.err, c.cause) {
				t.Fatalf("err = %v, want it to wrap %v", c.err, c.cause)
			}
		})
	}
}
