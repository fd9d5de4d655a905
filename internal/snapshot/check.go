package snapshot

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Decode decodes every live row of table tk straight from its fragments,
// bypassing every cache and derived structure: the reference that images,
// layouts and lookups are checked against (Check).
func (s *Snapshot) Decode(ctx context.Context, tk string) (*Rows, error) {
	st, props, edge, err := s.stateProps(ctx, tk)
	if err != nil {
		return nil, err
	}
	return s.decodeState(ctx, st, props, edge)
}

// Check verifies that everything this package derives for table tk agrees
// with Decode: the table image (assembled or derived), the fragment layout
// (live rows, Locate and the image row of each id), the committed-row
// lookups a write validates with (NodeExists, EdgeEnds, CommittedRows
// against a scan of the id column, the @key shortcut against the unique
// index), NodeTable.Row on both of its lookup paths and the key-canonical
// shortcut. probe adds ids to look up beyond the live ones (deleted or
// absent ids). The first disagreement is returned as a *CheckError.
func (s *Snapshot) Check(ctx context.Context, tk string, probe []string) error {
	fail := func(format string, args ...any) error {
		return &CheckError{Table: tk, Detail: fmt.Sprintf(format, args...)}
	}
	want, err := s.Decode(ctx, tk)
	if err != nil {
		return err
	}
	kind, name := SplitKey(tk)
	edge := kind == "edge"
	var img *Rows
	var rs *rowSpace
	n := 0 // image rows, dead ones included
	if edge {
		et, err := s.Edges(ctx, name)
		if err != nil {
			return err
		}
		img, rs, n = et.Compact(), &et.rowSpace, et.Len()
	} else {
		nt, err := s.Nodes(ctx, name)
		if err != nil {
			return err
		}
		img, rs, n = nt.Compact(), &nt.rowSpace, nt.Len()
	}
	if !slices.Equal(img.IDs, want.IDs) || !slices.Equal(img.Src, want.Src) || !slices.Equal(img.Dst, want.Dst) ||
		!reflect.DeepEqual(img.Cols, want.Cols) {
		return fail("image's live rows differ from its decode")
	}
	// live[w] is the image row of the decode's row w.
	live := rs.liveRows(n)
	if rs.dead != nil && rs.live != len(live) {
		return fail("image counts %d live rows, its bitmap %d", rs.live, len(live))
	}
	row := make(map[string]int, len(want.IDs))
	for i, id := range want.IDs {
		row[id] = i
	}
	fs, err := s.Layout(ctx, tk)
	if err != nil {
		return err
	}
	if fs.live != len(want.IDs) {
		return fail("layout has %d live rows, decode %d", fs.live, len(want.IDs))
	}
	ids := slices.Sorted(maps.Keys(row))
	for _, id := range probe {
		if _, ok := row[id]; !ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		w, exists := row[id]
		part, off, ok := fs.Locate(id)
		r, present := 0, false
		if ok && rs.place != nil {
			r, present = rs.place.row(part, off)
		}
		if ok != exists || (ok && (!present || r != int(live[w]) || fs.parts[part].IDs[off] != id)) {
			return fail("Locate(%s) = (%d, %d, %v), want row %d, exists %v", id, part, off, ok, w, exists)
		}
		if edge {
			src, dst, ok, err := s.EdgeEnds(ctx, name, id)
			if err != nil || ok != exists || (ok && (src != want.Src[w] || dst != want.Dst[w])) {
				return fail("EdgeEnds(%s) = %s %s %v %v", id, src, dst, ok, err)
			}
		} else if ok, err := s.NodeExists(ctx, name, id); err != nil || ok != exists {
			return fail("NodeExists(%s) = %v %v, want %v", id, ok, err, exists)
		}
	}
	if err := s.checkCommittedRows(ctx, tk, ids); err != nil {
		return err
	}
	if edge {
		return nil
	}
	nt, err := s.Nodes(ctx, name)
	if err != nil {
		return err
	}
	// Row answers through the layout first, then (past the lookup
	// threshold) through its own map: probe often enough to cross it.
	for range 3 {
		for range rowLookupsBeforeIndex(nt.Len())/int64(len(ids)+1) + 1 {
			for _, id := range ids {
				w, exists := row[id]
				if r, ok := nt.Row(id); ok != exists || (ok && r != int(live[w])) {
					return fail("Row(%s) = %d %v after %d lookups, want %d %v", id, r, ok, nt.lookups.Load(), w, exists)
				}
			}
		}
	}
	flat := &NodeTable{Type: nt.Type, IDs: nt.IDs, Cols: nt.Cols, rowSpace: rowSpace{dead: nt.dead, live: nt.live}}
	if nt.KeyCanonical() != flat.KeyCanonical() {
		return fail("KeyCanonical with layout %v, without %v", nt.KeyCanonical(), flat.KeyCanonical())
	}
	if len(nt.Type.Key) == 1 {
		cols := []string{nt.Type.Key[0]}
		idx, err := s.uniqueIndex(ctx, tk, cols)
		if err != nil {
			return err
		}
		for _, id := range ids {
			tuple := []any{id}
			got, ok, err := s.lookupKey(ctx, tk, cols, tuple)
			if err != nil {
				return err
			}
			if want := idx[value.TupleKey(tuple)]; ok && !slices.Equal(got, want) {
				return fail("key lookup %s = %v, unique index %v", id, got, want)
			}
		}
	}
	return nil
}

// checkCommittedRows compares CommittedRows with a scan of the id column
// (the way table.Delete finds rows).
func (s *Snapshot) checkCommittedRows(ctx context.Context, tk string, ids []string) error {
	got, err := s.CommittedRows(ctx, tk, ids)
	if err != nil {
		return err
	}
	ref := map[string][]int64{}
	if len(ids) > 0 {
		st, err := s.State(ctx, tk)
		if err != nil {
			return err
		}
		sc, err := table.Scan(ctx, s.l.st, st, table.ScanOptions{Columns: []string{table.KeyColumn},
			Filters: []table.Filter{table.In(table.KeyColumn, ids...)}, RowOffsets: true})
		if err != nil {
			return err
		}
		for sc.Next() {
			ref[sc.Fragment()] = append(ref[sc.Fragment()], sc.Offsets()...)
		}
		err = sc.Err()
		sc.Close()
		if err != nil {
			return err
		}
	}
	for _, m := range []map[string][]int64{got, ref} {
		for k := range m {
			slices.Sort(m[k])
			m[k] = slices.Compact(m[k]) // a repeated id repeats its offset; DeleteRows dedupes
		}
	}
	if !reflect.DeepEqual(got, ref) {
		return &CheckError{Table: tk, Detail: fmt.Sprintf("CommittedRows(%v) = %v, id scan %v", ids, got, ref)}
	}
	return nil
}

// Derived reports whether the image was derived from an older image of the
// same table (derive.go) rather than assembled from its fragments.
func (t *NodeTable) Derived() bool { return t.derived }

// Derived: see NodeTable.Derived.
func (t *EdgeTable) Derived() bool { return t.derived }
