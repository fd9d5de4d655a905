package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
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

// stateNames memoizes the cache names of commits' tables (commitNames),
// by commit id; it is cleared when it grows past maxStateNames commits.
type stateNames struct {
	mu sync.Mutex
	m  map[commit.ID]*commitNames
}

const maxStateNames = 4096

// commitNames are the names a commit's table states go by in cache keys,
// built once per commit: a warm read of an unmoved head looks its cache
// keys up instead of hashing inline states and concatenating keys on
// every query. Everything here derives from the commit's immutable state
// keys and schema key.
type commitNames struct {
	c      *commit.Commit // the commit they were built from (ids of hand-made commits may repeat)
	tables map[string]*tableNames
	nodes  map[string]*tableNames // by node type name (table key NodeKey(name))
	edges  map[string]*tableNames // by edge type name (table key EdgeKey(name))
}

// tableNames are the cache names of one table of a commit.
type tableNames struct {
	tk    string // the table key
	name  string // StateName of its state ("" when the commit names none)
	state string // the state's cache key (stateCacheKey)
	image string // ImageKey
}

// names returns (built once per commit) the cache names of the snapshot's
// tables.
func (s *Snapshot) names() *commitNames {
	if cn := s.cnames.Load(); cn != nil {
		return cn
	}
	n := &s.l.names
	n.mu.Lock()
	cn := n.m[s.c.ID]
	n.mu.Unlock()
	if cn == nil || cn.c != s.c {
		cn = buildNames(s.c)
		n.mu.Lock()
		if n.m == nil || len(n.m) >= maxStateNames {
			n.m = map[commit.ID]*commitNames{}
		}
		n.m[s.c.ID] = cn
		n.mu.Unlock()
	}
	s.cnames.Store(cn)
	return cn
}

func buildNames(c *commit.Commit) *commitNames {
	cn := &commitNames{c: c, tables: make(map[string]*tableNames, len(c.Tables)),
		nodes: map[string]*tableNames{}, edges: map[string]*tableNames{}}
	for tk, key := range c.Tables {
		tn := &tableNames{tk: tk}
		if key != "" {
			tn.name = StateName(key)
			tn.state = stateCacheKey(tn.name)
		}
		tn.image = imageKey(c.Schema, tk, tn.name)
		cn.tables[tk] = tn
		if name, ok := strings.CutPrefix(tk, "node:"); ok && NodeKey(name) == tk {
			cn.nodes[name] = tn
		} else if name, ok := strings.CutPrefix(tk, "edge:"); ok && EdgeKey(name) == tk {
			cn.edges[name] = tn
		}
	}
	return cn
}

// stateName is StateName of table tk's state in the snapshot's commit ("" if
// the commit names none).
func (s *Snapshot) stateName(tk string) string {
	if tn := s.names().tables[tk]; tn != nil {
		return tn.name
	}
	return ""
}

// stateOf is Loader.State for table tk of the snapshot, keyed by its name.
func (s *Snapshot) stateOf(ctx context.Context, tk, key string) (*table.State, error) {
	if tn := s.names().tables[tk]; tn != nil && tn.name != "" {
		return s.l.stateCached(ctx, tn.state, key)
	}
	return s.l.stateCached(ctx, stateCacheKey(StateName(key)), key)
}

// nodeKey is NodeKey(name), built once per commit for its node types.
func (s *Snapshot) nodeKey(name string) string {
	if tn := s.names().nodes[name]; tn != nil {
		return tn.tk
	}
	return NodeKey(name)
}

// edgeKey is EdgeKey(name), built once per commit for its edge types.
func (s *Snapshot) edgeKey(name string) string {
	if tn := s.names().edges[name]; tn != nil {
		return tn.tk
	}
	return EdgeKey(name)
}
