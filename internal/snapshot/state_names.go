package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// State names in cache keys. A table state's key names it in every cache
// key derived from it (the state itself, its image, its dense views). An
// inline state's key is its bytes (table.InlineStateKey: up to 16 KiB of
// base64), and a warm read builds and looks up several such cache keys per
// query: building, hashing and comparing them was a third of a warm key
// lookup's time once states of up to 12 KiB rode inline. Cache keys name
// an inline state by a digest of its key instead, computed once per commit.

// StateName is the name of the state at key in cache keys: key itself, or
// for an inline state a digest of it (equal keys, equal names).
func StateName(key string) string {
	if !table.IsInlineState(key) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "inline-sha256:" + hex.EncodeToString(sum[:])
}

// stateNames memoizes StateName for the inline states of commits, by
// commit id; it is cleared when it grows past maxStateNames commits.
type stateNames struct {
	mu sync.Mutex
	m  map[commit.ID]map[string]string // table key → name, inline states only
}

const maxStateNames = 4096

// stateName is StateName of table tk's state in the snapshot's commit ("" if
// the commit names none).
func (s *Snapshot) stateName(tk string) string {
	key := s.c.Tables[tk]
	if !table.IsInlineState(key) {
		return key
	}
	n := &s.l.names
	n.mu.Lock()
	names, ok := n.m[s.c.ID]
	n.mu.Unlock()
	if ok {
		return names[tk]
	}
	names = map[string]string{}
	for t, k := range s.c.Tables {
		if table.IsInlineState(k) {
			names[t] = StateName(k)
		}
	}
	n.mu.Lock()
	if n.m == nil || len(n.m) >= maxStateNames {
		n.m = map[commit.ID]map[string]string{}
	}
	n.m[s.c.ID] = names
	n.mu.Unlock()
	return names[tk]
}

// stateOf is Loader.State for table tk of the snapshot, keyed by its name.
func (s *Snapshot) stateOf(ctx context.Context, tk, key string) (*table.State, error) {
	return s.l.stateNamed(ctx, s.stateName(tk), key)
}
