package snapshot

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Loader reads and caches the immutable objects snapshots are built from:
// table states, fragment images, deletion vectors, and the images and
// indexes derived from them. One Loader serves every snapshot of a graph
// handle, so snapshots that share a table state share its decoded image.
// Every cache entry is keyed by immutable object names only (see
// Snapshot.ImageKey), so nothing cached ever needs invalidation.
//
// A Loader is safe for concurrent use.
type Loader struct {
	st    storage.Store
	cache *cache.Cache[any]
	tr    *table.Reader // cached reads through fragment indexes (lookup_index.go)
	// noIndexPath answers point lookups through decoded fragments even
	// where persisted indexes could (SetIndexPath).
	noIndexPath bool
	// partials counts reads answered by Partial; past partialBeforeImages
	// the handle is serving many reads and decodes images instead.
	partials atomic.Int64
	// denseReads counts the reads PreferDense sent to dense views.
	denseReads atomic.Int64
	// chunkReads counts the reads RootChunks answered.
	chunkReads atomic.Int64
	// names memoizes the cache names of commits' table states
	// (state_names.go).
	names stateNames
}

// NewLoader returns a loader reading st through c.
func NewLoader(st storage.Store, c *cache.Cache[any]) *Loader {
	return &Loader{st: st, cache: c, tr: table.NewReader(st, c)}
}

// SetIndexPath turns the persisted-index path of point lookups and
// anchored reads on (the default) or off. Both paths answer alike; off,
// every lookup decodes the table's fragments (tests compare the two).
// Call it before the loader is shared.
func (l *Loader) SetIndexPath(on bool) { l.noIndexPath = !on }

// Snapshot returns the snapshot of commit c, whose schema compiles to cat.
// branch is the label the commit was reached through ("" for a pinned
// commit); it is reported back by Branch and changes nothing else.
func (l *Loader) Snapshot(cat *schema.Catalog, c *commit.Commit, branch string) *Snapshot {
	return &Snapshot{l: l, cat: cat, c: c, branch: branch}
}

// Snapshot is one commit of a graph as readers see it: node and edge tables
// are materialized on first use from their immutable table states and
// cached by the loader by (schema, state) key, so a warm query reads
// nothing from the store beyond the ref its caller resolved.
//
// A Snapshot never changes; it is safe for concurrent use.
type Snapshot struct {
	l      *Loader
	cat    *schema.Catalog
	c      *commit.Commit
	branch string
	memo   snapMemo                    // per-snapshot lookups (layout.go)
	cnames atomic.Pointer[commitNames] // s.names(), once looked up
}

// State reads (cached by its immutable key) the table state stored at key.
func (l *Loader) State(ctx context.Context, key string) (*table.State, error) {
	return l.stateCached(ctx, stateCacheKey(StateName(key)), key)
}

// stateCacheKey is the cache key of the state named name (StateName).
func stateCacheKey(name string) string { return "exec/state/" + name }

// stateCached is State with the state's cache key given.
func (l *Loader) stateCached(ctx context.Context, ck, key string) (*table.State, error) {
	v, err := l.cache.GetOrLoad(ctx, ck, func(ctx context.Context) (any, int64, error) {
		st, err := table.ReadState(ctx, l.st, key)
		if err != nil {
			return nil, 0, err
		}
		return st, stateSize(st), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*table.State), nil
}

// AddState caches a table state its writer just stored under key (a
// content address), so reading it back — the inline compaction check of
// the same write, the next snapshot — costs no request.
func (l *Loader) AddState(key string, st *table.State) {
	l.cache.Add(stateCacheKey(StateName(key)), st, stateSize(st))
}

func stateSize(st *table.State) int64 { return int64(512 + 256*st.NumFragments()) }

// Catalog returns the compiled schema of the snapshot's commit.
func (s *Snapshot) Catalog() *schema.Catalog { return s.cat }

// Commit returns the snapshot's commit.
func (s *Snapshot) Commit() *commit.Commit { return s.c }

// Branch returns the branch the commit was reached through ("" if pinned).
func (s *Snapshot) Branch() string { return s.branch }

// StateKey returns the table-state key of a table ("" if the commit has none,
// which reads as empty).
func (s *Snapshot) StateKey(tk string) string { return s.c.Tables[tk] }

// State reads (cached by key) the table state of tk, or an empty state when
// the commit names none.
func (s *Snapshot) State(ctx context.Context, tk string) (*table.State, error) {
	key := s.StateKey(tk)
	if key == "" {
		ts, err := TableSchema(s.cat, tk)
		if err != nil {
			return nil, err
		}
		return table.NewState(ts)
	}
	st, err := s.stateOf(ctx, tk, key)
	if errors.Is(err, storage.ErrNotFound) {
		// A missing state is damage unless cleanup reclaimed the commit;
		// exec's time-travel check tells the two apart (commit.Repo.Reclaimed).
		return nil, commit.MissingObject(s.c, key, err)
	}
	return st, err
}

// Nodes returns the image of node type typ (exact name).
func (s *Snapshot) Nodes(ctx context.Context, typ string) (*NodeTable, error) {
	nt, ok := s.cat.Node(typ)
	if !ok {
		return nil, &UnknownTypeError{Kind: "node", Name: typ}
	}
	return cachedImage(ctx, s, s.nodeKey(nt.Name), nt.Props, false, func(img *Rows, rs rowSpace) *NodeTable {
		return &NodeTable{Type: nt, IDs: img.IDs, Cols: img.Cols, rowSpace: rs}
	})
}

// Edges returns the image of edge type typ; the edge name matches case-insensitively as in
// the catalog.
func (s *Snapshot) Edges(ctx context.Context, typ string) (*EdgeTable, error) {
	et, ok := s.cat.Edge(typ)
	if !ok {
		return nil, &UnknownTypeError{Kind: "edge", Name: typ}
	}
	return cachedImage(ctx, s, s.edgeKey(et.Name), et.Props, true, func(img *Rows, rs rowSpace) *EdgeTable {
		return &EdgeTable{Type: et, IDs: img.IDs, Src: img.Src, Dst: img.Dst, Cols: img.Cols, rowSpace: rs}
	})
}

// cachedImage returns the image of table tk from the read cache; on a
// miss it materializes the table's rows (props, and the edge ends when
// edge), wraps them with wrap, and retires the images of older states of
// the table.
func cachedImage[T any](ctx context.Context, s *Snapshot, tk string, props []*schema.Property, edge bool, wrap func(img *Rows, rs rowSpace) *T) (*T, error) {
	v, err := s.l.cache.GetOrLoad(ctx, s.ImageKey(tk), func(ctx context.Context) (any, int64, error) {
		img, rs, size, err := s.materialize(ctx, tk, props, edge)
		if err != nil {
			return nil, 0, err
		}
		s.retireImages(ctx, tk)
		return wrap(img, rs), size, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*T), nil
}

// ImageKey names a decoded table image.
//
// INVARIANT: images are keyed by immutable names only, so a warm read of an
// unchanged table costs no store request (TestEngineWarmSnapshotReadsOnlyRef). The schema key is part of it
// because the image carries catalog pointers (the same state may be read
// under two schemas that differ only in constraints).
func (s *Snapshot) ImageKey(tk string) string {
	if tn := s.names().tables[tk]; tn != nil {
		return tn.image
	}
	return imageKey(s.c.Schema, tk, "")
}

// imageKey is ImageKey of table tk whose state is named name ("" when the
// commit names none) under schema key schema.
func imageKey(schema, tk, name string) string {
	if name == "" {
		name = "empty:" + tk
	}
	return "exec/image/" + schema + "/" + name
}

// materialize builds the image of a table in the value model. Fragments
// are decoded whole (deletion vectors ignored) and cached by their
// immutable key (image.go); the image of a state that differs from a
// recent one by a few fragments or deletion vectors — every write — is
// derived from it by marking hidden rows dead and appending new ones
// (derive.go), and otherwise assembled from the fragments' live rows. It
// returns the image's rows, its row space (rowspace.go) and its size.
func (s *Snapshot) materialize(ctx context.Context, tk string, props []*schema.Property, edge bool) (*Rows, rowSpace, int64, error) {
	st, err := s.State(ctx, tk)
	if err != nil {
		return nil, rowSpace{}, 0, err
	}
	fs, err := s.buildFragSet(ctx, tk, st, props, edge)
	if err != nil {
		return nil, rowSpace{}, 0, err
	}
	img, rs, ok := s.deriveImage(tk, fs, props, edge)
	if !ok {
		// Room for the next writes' rows only on a table images were
		// built for before on this handle (one being written).
		img, rs = assembleFrom(fs, props, edge, len(s.recentImages(tk)) > 0)
	}
	// Charged by capacity: the spare room of a table being written is
	// memory too (a derived image shares its parent's arrays and is
	// charged for them again, an overestimate while both are cached).
	size := imageSize(cap(img.IDs), len(props), edge) + int64(len(rs.dead))*8
	return img, rs, size, nil
}

// imageSize estimates the memory of a decoded image of rows rows.
func imageSize(rows, props int, edge bool) int64 {
	size := int64(rows) * int64(64+32*props)
	if edge {
		size += int64(rows) * 64
	}
	return size + 256
}

// decodeState decodes every live row of a table state.
func (s *Snapshot) decodeState(ctx context.Context, st *table.State, props []*schema.Property, edge bool) (*Rows, error) {
	d := newRows(int(st.Rows()), props, edge)
	sc, err := table.Scan(ctx, s.l.st, st, table.ScanOptions{})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	schemaCols := st.Schema().Columns
	for sc.Next() {
		rec := sc.Record()
		rows := int(rec.NumRows())
		for ci, c := range schemaCols {
			arr := rec.Column(ci)
			switch {
			case c.Name == table.KeyColumn:
				for i := range rows {
					d.IDs = append(d.IDs, table.Value(arr, i).(string))
				}
			case edge && c.Name == "src":
				for i := range rows {
					d.Src = append(d.Src, table.Value(arr, i).(string))
				}
			case edge && c.Name == "dst":
				for i := range rows {
					d.Dst = append(d.Dst, table.Value(arr, i).(string))
				}
			default:
				p := PropByName(props, c.Name)
				if p == nil {
					continue // a column the schema no longer declares
				}
				col := d.Cols[c.Name]
				for i := range rows {
					col = append(col, value.FromColumn(p.Type, table.Value(arr, i)))
				}
				d.Cols[c.Name] = col
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// Properties declared but absent from the stored table read as null.
	for _, p := range props {
		if len(d.Cols[p.Name]) != len(d.IDs) {
			d.Cols[p.Name] = make([]any, len(d.IDs))
		}
	}
	return d, nil
}

func PropByName(props []*schema.Property, name string) *schema.Property {
	for _, p := range props {
		if p.Name == name {
			return p
		}
	}
	return nil
}
