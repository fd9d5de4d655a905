package exec

import (
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// DefaultCacheBytes is the cache budget of a handle opened without one.
// The cache holds decoded table images, and a read needs the whole image of
// every table it touches: an image that does not fit is re-decoded by every
// query (the 500k-edge peer graph's Knows image is ~80 MB; docs/performance.md,
// Engine). 512 MiB keeps graphs of a few million entities warm; the budget is
// a bound, not a reservation, and Options.CacheBytes changes it.
const DefaultCacheBytes = 512 << 20

// GraphSnapshot is one commit of a graph as the executor reads it. It
// implements Snapshot: node and edge tables are materialized on first use
// from their immutable table states and cached on the handle by (schema,
// state) key, so every snapshot sharing a table state shares its image and
// a warm query reads nothing from the store beyond the ref.
//
// A GraphSnapshot never changes; it is safe for concurrent use.
type GraphSnapshot struct {
	g      *Graph
	cat    *schema.Catalog
	c      *commit.Commit
	branch string
	memo   snapMemo // per-snapshot lookups (write_lookup.go)
}

// Resolve pins a target to one commit and returns its snapshot. For a branch
// target this reads the ref (one request on a warm handle).
func (g *Graph) Resolve(ctx context.Context, t Target) (*GraphSnapshot, error) {
	c, branch, err := g.resolveCommit(ctx, t)
	if err != nil {
		return nil, err
	}
	return g.snapshotOf(ctx, c, branch)
}

func (g *Graph) snapshotOf(ctx context.Context, c *commit.Commit, branch string) (*GraphSnapshot, error) {
	cat, err := g.catalog(ctx, c.Schema)
	if err != nil {
		return nil, err
	}
	if err := commit.CheckTables(c, TableStatePrefixes(cat)); err != nil {
		return nil, err
	}
	return &GraphSnapshot{g: g, cat: cat, c: c, branch: branch}, nil
}

// catalog compiles (once per handle and schema key) a stored schema.
func (g *Graph) catalog(ctx context.Context, key string) (*schema.Catalog, error) {
	v, err := g.cache.GetOrLoad(ctx, "exec/catalog/"+key, func(ctx context.Context) (any, int64, error) {
		src, err := g.repo.Schema(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		cat, err := schema.Compile("schema.pg", string(src))
		if err != nil {
			return nil, 0, fmt.Errorf("exec: stored schema %s: %w", key, err)
		}
		return cat, int64(len(src))*8 + 1024, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*schema.Catalog), nil
}

// Catalog implements Snapshot.
func (s *GraphSnapshot) Catalog() *schema.Catalog { return s.cat }

// Commit describes the snapshot's commit.
func (s *GraphSnapshot) Commit() CommitInfo { return commitInfo(s.c, s.branch) }

// stateKey returns the table-state key of a table ("" if the commit has none,
// which reads as empty).
func (s *GraphSnapshot) stateKey(tk string) string { return s.c.Tables[tk] }

// state reads (cached by key) the table state of tk, or an empty state when
// the commit names none.
func (s *GraphSnapshot) state(ctx context.Context, tk string) (*table.State, error) {
	key := s.stateKey(tk)
	if key == "" {
		ts, err := tableSchemaOf(s.cat, tk)
		if err != nil {
			return nil, err
		}
		return table.NewState(ts)
	}
	v, err := s.g.cache.GetOrLoad(ctx, "exec/state/"+key, func(ctx context.Context) (any, int64, error) {
		st, err := table.ReadState(ctx, s.g.st, key)
		if err != nil {
			return nil, 0, err
		}
		return st, int64(512 + 256*st.NumFragments()), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*table.State), nil
}

// Nodes implements Snapshot.
func (s *GraphSnapshot) Nodes(ctx context.Context, typ string) (*NodeTable, error) {
	nt, ok := s.cat.Node(typ)
	if !ok {
		return nil, &UnknownTypeError{Kind: "node", Name: typ}
	}
	tk := NodeKey(nt.Name)
	v, err := s.g.cache.GetOrLoad(ctx, s.imageKey(tk), func(ctx context.Context) (any, int64, error) {
		img, layout, grow, size, err := s.materialize(ctx, tk, nt.Props, false)
		if err != nil {
			return nil, 0, err
		}
		s.retireImages(ctx, tk)
		return &NodeTable{Type: nt, IDs: img.ids, Cols: img.cols, layout: layout, grow: grow}, size, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*NodeTable), nil
}

// Edges implements Snapshot; the edge name matches case-insensitively as in
// the catalog.
func (s *GraphSnapshot) Edges(ctx context.Context, typ string) (*EdgeTable, error) {
	et, ok := s.cat.Edge(typ)
	if !ok {
		return nil, &UnknownTypeError{Kind: "edge", Name: typ}
	}
	tk := EdgeKey(et.Name)
	v, err := s.g.cache.GetOrLoad(ctx, s.imageKey(tk), func(ctx context.Context) (any, int64, error) {
		img, layout, grow, size, err := s.materialize(ctx, tk, et.Props, true)
		if err != nil {
			return nil, 0, err
		}
		s.retireImages(ctx, tk)
		return &EdgeTable{Type: et, IDs: img.ids, Src: img.src, Dst: img.dst, Cols: img.cols, layout: layout, grow: grow}, size, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*EdgeTable), nil
}

// imageKey names a decoded table image.
//
// INVARIANT: images are keyed by immutable names only, so a warm read of an
// unchanged table costs no store request (TestEngineWarmSnapshotReadsOnlyRef). The schema key is part of it
// because the image carries catalog pointers (the same state may be read
// under two schemas that differ only in constraints).
func (s *GraphSnapshot) imageKey(tk string) string {
	key := s.stateKey(tk)
	if key == "" {
		key = "empty:" + tk
	}
	return "exec/image/" + s.c.Schema + "/" + key
}

// materialize decodes every live row of a table into the value model.
// Fragments are decoded whole (deletion vectors ignored) and cached by
// their immutable key (perf_image.go), so the image of a state that differs
// from a cached one by a few fragments or deletion vectors — every write —
// costs a copy of the live rows, not a decode of the whole table; and when
// the state only adds rows at the end of a recent image (an insert, a
// compaction), not even that (write_derive.go). It returns the image, the
// fragment view it was built from and the image's grow token (nil if the
// image has no spare room to hand on).
func (s *GraphSnapshot) materialize(ctx context.Context, tk string, props []*schema.Property, edge bool) (*decodedRows, *fragSet, *growToken, int64, error) {
	st, err := s.state(ctx, tk)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	fs, err := s.buildFragSet(ctx, tk, st, props, edge)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	img, grow, ok := s.deriveImage(tk, fs, props, edge)
	if !ok {
		img, grow = assembleFrom(fs, props, edge), nil
	}
	return img, fs, grow, imageSize(len(img.ids), len(props), edge), nil
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
func (s *GraphSnapshot) decodeState(ctx context.Context, st *table.State, props []*schema.Property, edge bool) (*decodedRows, error) {
	n := st.Rows()
	d := &decodedRows{ids: make([]string, 0, n), cols: make(map[string][]any, len(props))}
	if edge {
		d.src = make([]string, 0, n)
		d.dst = make([]string, 0, n)
	}
	for _, p := range props {
		d.cols[p.Name] = make([]any, 0, n)
	}
	sc, err := table.Scan(ctx, s.g.st, st, table.ScanOptions{})
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
					d.ids = append(d.ids, table.Value(arr, i).(string))
				}
			case edge && c.Name == "src":
				for i := range rows {
					d.src = append(d.src, table.Value(arr, i).(string))
				}
			case edge && c.Name == "dst":
				for i := range rows {
					d.dst = append(d.dst, table.Value(arr, i).(string))
				}
			default:
				p := propByName(props, c.Name)
				if p == nil {
					continue // a column the schema no longer declares
				}
				col := d.cols[c.Name]
				for i := range rows {
					col = append(col, value.FromColumn(p.Type, table.Value(arr, i)))
				}
				d.cols[c.Name] = col
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// Properties declared but absent from the stored table read as null.
	for _, p := range props {
		if len(d.cols[p.Name]) != len(d.ids) {
			d.cols[p.Name] = make([]any, len(d.ids))
		}
	}
	return d, nil
}

func propByName(props []*schema.Property, name string) *schema.Property {
	for _, p := range props {
		if p.Name == name {
			return p
		}
	}
	return nil
}
