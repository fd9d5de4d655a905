package exec

import (
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

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
		ids, _, _, cols, size, err := s.materialize(ctx, tk, nt.Props, false)
		if err != nil {
			return nil, 0, err
		}
		return &NodeTable{Type: nt, IDs: ids, Cols: cols}, size, nil
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
		ids, src, dst, cols, size, err := s.materialize(ctx, tk, et.Props, true)
		if err != nil {
			return nil, 0, err
		}
		return &EdgeTable{Type: et, IDs: ids, Src: src, Dst: dst, Cols: cols}, size, nil
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
func (s *GraphSnapshot) materialize(ctx context.Context, tk string, props []*schema.Property, edge bool) (ids, src, dst []string, cols map[string][]any, size int64, err error) {
	st, err := s.state(ctx, tk)
	if err != nil {
		return nil, nil, nil, nil, 0, err
	}
	n := st.Rows()
	ids = make([]string, 0, n)
	if edge {
		src = make([]string, 0, n)
		dst = make([]string, 0, n)
	}
	cols = make(map[string][]any, len(props))
	for _, p := range props {
		cols[p.Name] = make([]any, 0, n)
	}
	sc, err := table.Scan(ctx, s.g.st, st, table.ScanOptions{})
	if err != nil {
		return nil, nil, nil, nil, 0, err
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
					ids = append(ids, table.Value(arr, i).(string))
				}
			case edge && c.Name == "src":
				for i := range rows {
					src = append(src, table.Value(arr, i).(string))
				}
			case edge && c.Name == "dst":
				for i := range rows {
					dst = append(dst, table.Value(arr, i).(string))
				}
			default:
				p := propByName(props, c.Name)
				if p == nil {
					continue // a column the schema no longer declares
				}
				col := cols[c.Name]
				for i := range rows {
					col = append(col, fromColumn(p.Type, table.Value(arr, i)))
				}
				cols[c.Name] = col
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, nil, 0, err
	}
	// Properties declared but absent from the stored table read as null.
	for _, p := range props {
		if len(cols[p.Name]) != len(ids) {
			cols[p.Name] = make([]any, len(ids))
		}
	}
	size = int64(len(ids)) * int64(64+32*len(props))
	if edge {
		size += int64(len(ids)) * 64
	}
	return ids, src, dst, cols, size + 256, nil
}

func propByName(props []*schema.Property, name string) *schema.Property {
	for _, p := range props {
		if p.Name == name {
			return p
		}
	}
	return nil
}
