package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// The entity-level diff of two states of one table, shared by Diff,
// CommitChanges and Merge. Its cost follows the change, not the table:
// table states are lists of immutable fragments, so a fragment present in
// both states with the same deletion vector holds exactly the same live rows
// and is never opened. Only fragments added, removed, or whose deletion
// vector changed are scanned.
//
// Correctness rests on one property of a table state: an id is live in at
// most one fragment. So an id live in a shared fragment is live there in
// both states and cannot also appear among the scanned rows; every id whose
// image differs is found among the scanned rows alone.

// rowChange is one entity whose live image differs between two table states:
// before is nil for an insert, after is nil for a delete.
type rowChange struct {
	before, after *Row
}

// tableDiffStats counts what one tableDiff read; tests pin the
// fragment-sharing shortcut with it.
type tableDiffStats struct {
	FragmentsShared  int // same key, same deletion vector: not opened
	FragmentsScanned int
}

// tableDiff returns the entities of one table whose live image differs
// between states a and b (either may be nil: an absent table reads as
// empty). props and edge describe how to decode rows. Rows that moved
// between fragments with identical content (compaction) are not changes.
//
// INVARIANT: fragments with equal (key, DV) in a and b are never read
// (TestTableDiffSkipsSharedFragments).
func (g *Graph) tableDiff(ctx context.Context, props []*schema.Property, edge bool, a, b *table.State) (map[string]rowChange, tableDiffStats, error) {
	var stats tableDiffStats
	frags := func(s *table.State) map[string]table.Fragment {
		m := map[string]table.Fragment{}
		if s != nil {
			for _, f := range s.Fragments() {
				m[f.Key] = f
			}
		}
		return m
	}
	fa, fb := frags(a), frags(b)
	removed := map[string]*Row{}
	added := map[string]*Row{}
	for _, key := range sortedTableKeys(fa) {
		f := fa[key]
		fbf, inB := fb[key]
		switch {
		case !inB:
			stats.FragmentsScanned++
			if err := g.scanFragment(ctx, a.Schema(), f, props, edge, nil, func(_ int64, r *Row) { removed[r.ID] = r }); err != nil {
				return nil, stats, err
			}
		case fbf.DV == f.DV:
			stats.FragmentsShared++
		default:
			stats.FragmentsScanned++
			delA, err := g.deletedOffsets(ctx, f)
			if err != nil {
				return nil, stats, err
			}
			delB, err := g.deletedOffsets(ctx, fbf)
			if err != nil {
				return nil, stats, err
			}
			// Only the offsets whose liveness differs matter. Find their ids
			// from the id column alone, then decode just those rows (row
			// groups whose id range holds none of them are skipped).
			flipped := map[int64]bool{}
			for off := range delA {
				if !delB[off] {
					flipped[off] = true
				}
			}
			for off := range delB {
				if !delA[off] {
					flipped[off] = true
				}
			}
			if len(flipped) == 0 {
				continue
			}
			raw := f
			raw.DV, raw.Deleted = "", 0
			ids, err := g.fragmentIDs(ctx, a.Schema(), raw, flipped)
			if err != nil {
				return nil, stats, err
			}
			err = g.scanFragment(ctx, a.Schema(), raw, props, edge, ids, func(off int64, r *Row) {
				liveA, liveB := !delA[off], !delB[off]
				switch {
				case liveA && !liveB:
					removed[r.ID] = r
				case liveB && !liveA:
					added[r.ID] = r
				}
			})
			if err != nil {
				return nil, stats, err
			}
		}
	}
	for _, key := range sortedTableKeys(fb) {
		if _, inA := fa[key]; inA {
			continue
		}
		stats.FragmentsScanned++
		if err := g.scanFragment(ctx, b.Schema(), fb[key], props, edge, nil, func(_ int64, r *Row) { added[r.ID] = r }); err != nil {
			return nil, stats, err
		}
	}
	out := make(map[string]rowChange, len(removed)+len(added))
	for id, r := range removed {
		out[id] = rowChange{before: r}
	}
	for id, r := range added {
		c := out[id]
		c.after = r
		if c.before != nil && rowsEqual(props, c.before, c.after) {
			delete(out, id)
			continue
		}
		out[id] = c
	}
	return out, stats, nil
}

// deletedOffsets returns the set of row offsets a fragment's deletion vector
// hides (empty without one). Deletion vectors are immutable, so they are
// cached by key on the handle.
func (g *Graph) deletedOffsets(ctx context.Context, f table.Fragment) (map[int64]bool, error) {
	if f.DV == "" {
		return map[int64]bool{}, nil
	}
	v, err := g.cache.GetOrLoad(ctx, "exec/dv/"+f.DV, func(ctx context.Context) (any, int64, error) {
		dv, err := table.ReadDeletionVector(ctx, g.st, f.DV)
		if err != nil {
			return nil, 0, err
		}
		m := make(map[int64]bool, len(dv.Offsets))
		for _, o := range dv.Offsets {
			m[o] = true
		}
		return m, int64(len(m))*16 + 128, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(map[int64]bool), nil
}

// fragmentIDs returns the ids at the given row offsets of a fragment,
// reading only its id column.
func (g *Graph) fragmentIDs(ctx context.Context, ts table.Schema, f table.Fragment, offsets map[int64]bool) ([]string, error) {
	one, err := fragmentState(ts, f)
	if err != nil {
		return nil, err
	}
	sc, err := table.Scan(ctx, g.st, one, table.ScanOptions{Columns: []string{table.KeyColumn}, RowOffsets: true})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	ids := make([]string, 0, len(offsets))
	for sc.Next() {
		col := sc.Record().Column(0)
		for i, off := range sc.Offsets() {
			if offsets[off] {
				ids = append(ids, table.Value(col, i).(string))
			}
		}
	}
	return ids, sc.Err()
}

// fragmentState is a table state holding one fragment: the unit the table
// package scans.
func fragmentState(ts table.Schema, f table.Fragment) (*table.State, error) {
	one, err := table.NewState(ts)
	if err != nil {
		return nil, err
	}
	if one, err = one.Append(f); err != nil {
		return nil, fmt.Errorf("exec: fragment %s: %w", f.Key, err)
	}
	return one, nil
}

// scanFragment decodes the live rows of one fragment (as its DV says) and
// calls fn with each row's offset in the fragment. A non-nil ids restricts
// the scan to those ids.
func (g *Graph) scanFragment(ctx context.Context, ts table.Schema, f table.Fragment, props []*schema.Property, edge bool, ids []string, fn func(off int64, r *Row)) error {
	one, err := fragmentState(ts, f)
	if err != nil {
		return err
	}
	opts := table.ScanOptions{RowOffsets: true}
	if ids != nil {
		opts.Filters = []table.Filter{table.In(table.KeyColumn, ids...)}
	}
	sc, err := table.Scan(ctx, g.st, one, opts)
	if err != nil {
		return err
	}
	defer sc.Close()
	for sc.Next() {
		rec := sc.Record()
		offs := sc.Offsets()
		n := int(rec.NumRows())
		rows := make([]Row, n)
		for i := range rows {
			rows[i].Values = make(map[string]any, len(props))
		}
		for ci, c := range ts.Columns {
			arr := rec.Column(ci)
			switch {
			case c.Name == table.KeyColumn:
				for i := range rows {
					rows[i].ID = table.Value(arr, i).(string)
				}
			case edge && c.Name == "src":
				for i := range rows {
					rows[i].Src = table.Value(arr, i).(string)
				}
			case edge && c.Name == "dst":
				for i := range rows {
					rows[i].Dst = table.Value(arr, i).(string)
				}
			default:
				p := propByName(props, c.Name)
				if p == nil {
					continue // a column the schema no longer declares
				}
				for i := range rows {
					if v := fromColumn(p.Type, table.Value(arr, i)); v != nil {
						rows[i].Values[c.Name] = v
					}
				}
			}
		}
		for i := range rows {
			fn(offs[i], &rows[i])
		}
	}
	return sc.Err()
}

// rowsEqual is the merge's "unchanged" test: the same endpoints and every
// declared property equal under the typed comparison (null ≠ "", a list is
// not its joined string).
func rowsEqual(props []*schema.Property, a, b *Row) bool {
	if a.ID != b.ID || a.Src != b.Src || a.Dst != b.Dst {
		return false
	}
	for _, p := range props {
		if !Equal(a.Values[p.Name], b.Values[p.Name]) {
			return false
		}
	}
	return true
}

// sameColumns reports whether two table schemas have the same columns, so
// rows of one can be compared with rows of the other.
func sameColumns(a, b table.Schema) bool {
	return slices.Equal(a.Columns, b.Columns)
}
