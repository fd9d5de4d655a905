package snapshot

import (
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Point lookups through persisted fragment indexes. The fragment layout of
// layout.go answers from decoded fragment images: ideal on a warm
// handle, but in a fresh process (a CLI write) it decodes every fragment of
// the table to learn whether one id is committed. Every fragment written
// since table-state format 2 carries an index (table.Reader), so when the
// images are not decoded yet a write's lookups probe those indexes instead:
// a Bloom block per fragment, then one directory and block, and for a row's
// values the pages holding it. Both paths answer the same
// (exec TestIndexLookupsMatchFragSet).

// useIndexes reports whether lookups on table tk go through the persisted
// indexes: every fragment has one, and neither this snapshot nor the cache
// holds the decoded fragments (then the fragment view is cheaper).
func (s *Snapshot) useIndexes(ctx context.Context, tk string) (*table.State, bool, error) {
	if s.l.noIndexPath {
		return nil, false, nil
	}
	s.memo.mu.Lock()
	memo := s.memo.frags[tk] != nil
	s.memo.mu.Unlock()
	if memo {
		return nil, false, nil
	}
	st, err := s.State(ctx, tk)
	if err != nil {
		return nil, false, err
	}
	decoded := true
	for _, f := range st.Fragments() {
		if f.Index == "" {
			return nil, false, nil
		}
		if decoded {
			_, decoded = s.l.cache.Get(s.fragImageKey(tk, f))
		}
	}
	if decoded && st.NumFragments() > 0 {
		return nil, false, nil
	}
	return st, true, nil
}

// indexLocate returns the live rows of tk with the given ids through the
// fragment indexes; ok is false when the index path does not apply.
func (s *Snapshot) indexLocate(ctx context.Context, tk string, ids []string) ([]table.RowLoc, bool, error) {
	st, ok, err := s.useIndexes(ctx, tk)
	if err != nil || !ok {
		return nil, false, err
	}
	locs, err := s.l.tr.Locate(ctx, st, ids)
	return locs, err == nil, err
}

// KeyRow finds the committed row of node type nt whose single String/enum
// @key is v through the persisted indexes, when every fragment records
// that the key column equals the id. It returns the row's id and, when
// values is set, its property values (value model); found is false when no
// row holds v, ok false when the index path does not apply (the caller
// then uses Layout).
func (s *Snapshot) KeyRow(ctx context.Context, nt *schema.NodeType, v string, values bool) (id string, vals map[string]any, found, ok bool, err error) {
	tk := NodeKey(nt.Name)
	st, use, err := s.useIndexes(ctx, tk)
	if err != nil || !use {
		return "", nil, false, false, err
	}
	if canon, err := s.l.tr.ColumnEqualsID(ctx, st, nt.Key[0], v); err != nil || !canon {
		return "", nil, false, false, err
	}
	locs, err := s.l.tr.Locate(ctx, st, []string{v})
	if err != nil || len(locs) == 0 {
		return "", nil, false, err == nil, err
	}
	if values {
		if vals, err = s.readRowValues(ctx, st, locs[0], nt.Props); err != nil {
			return "", nil, false, false, err
		}
	}
	return locs[0].ID, vals, true, true, nil
}

// readRowValues reads the declared properties of one committed row.
func (s *Snapshot) readRowValues(ctx context.Context, st *table.State, loc table.RowLoc, props []*schema.Property) (map[string]any, error) {
	sch := st.Schema()
	var cols []string
	for _, p := range props {
		if sch.Index(p.Name) >= 0 {
			cols = append(cols, p.Name)
		}
	}
	vals := make(map[string]any, len(props))
	for _, p := range props {
		vals[p.Name] = nil // declared but not stored: null
	}
	if len(cols) == 0 {
		return vals, nil
	}
	rec, err := s.l.tr.ReadRows(ctx, st, loc.Fragment, []int64{loc.Offset}, cols, nil)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if rec.NumRows() != 1 {
		return nil, fmt.Errorf("exec: fragment %s offset %d: %d rows read", loc.Fragment, loc.Offset, rec.NumRows())
	}
	for j, name := range cols {
		p := PropByName(props, name)
		vals[name] = value.FromColumn(p.Type, table.Value(rec.Column(j), 0))
	}
	return vals, nil
}

// indexEdgeEnds is EdgeEnds through the indexes; ok is false when the
// path does not apply.
func (s *Snapshot) indexEdgeEnds(ctx context.Context, tk, id string) (src, dst string, found, ok bool, err error) {
	st, use, err := s.useIndexes(ctx, tk)
	if err != nil || !use {
		return "", "", false, false, err
	}
	locs, err := s.l.tr.Locate(ctx, st, []string{id})
	if err != nil || len(locs) == 0 {
		return "", "", false, err == nil, err
	}
	rec, err := s.l.tr.ReadRows(ctx, st, locs[0].Fragment, []int64{locs[0].Offset}, []string{"src", "dst"}, nil)
	if err != nil {
		return "", "", false, false, err
	}
	defer rec.Release()
	if rec.NumRows() != 1 {
		return "", "", false, false, fmt.Errorf("exec: edge %s: %d rows read", id, rec.NumRows())
	}
	return table.Value(rec.Column(0), 0).(string), table.Value(rec.Column(1), 0).(string), true, true, nil
}
