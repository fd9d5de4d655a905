package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// The entity-level diff of two states of one table, shared by Diff,
// CommitChanges and Merge. Its cost follows the change, not the table:
// table states are lists of immutable fragments, so a fragment present in
// both states with the same deletion vector holds exactly the same live rows
// and is never opened. A fragment present in both states whose deletion
// vector changed is not scanned either: the rows whose liveness differs are
// exactly the offsets in the symmetric difference of the two vectors, and
// only they are decoded: from the fragment's image (perf_image.go; cached
// per handle and shared with the write path), or, on a handle without it
// and when the offsets touch few of the fragment's row groups, from the
// file with table.ReadRows, which reads only those row groups. Only
// fragments present on one side (new or compacted away, small by
// construction) are scanned.
//
// Correctness rests on one property of a table state: an id is live in at
// most one fragment. So an id live in a shared fragment is live there in
// both states and cannot also appear among the read rows; every id whose
// image differs is found among the read rows alone.

// rowChange is one entity whose live image differs between two table states:
// before is nil for an insert, after is nil for a delete. at is where before
// was live in the first state (its fragment key and row offset), so that a
// writer hiding it needs no id lookup.
type rowChange struct {
	before, after *Row
	at            fragRow
}

// fragRow addresses one row of a table state: the unit of table.DeleteRows.
type fragRow struct {
	frag string
	off  int64
}

// tableDiffStats counts what one tableDiff read; tests pin the
// fragment-sharing shortcut with it.
type tableDiffStats struct {
	FragmentsShared  int // same key, same deletion vector: not opened
	FragmentsScanned int // on one side only (scanned whole), or with different DVs
	FragmentsByDV    int // of those, same key with different DVs: flipped offsets read
	RowsByDV         int // rows read by offset from those fragments
}

// tableDiff returns the entities of one table whose live image differs
// between states a and b (either may be nil: an absent table reads as
// empty). props and edge describe how to decode rows; snap is a snapshot
// whose catalog declares props for table tk (it keys the cached fragment
// images). Rows that moved between fragments with identical content
// (compaction) are not changes.
//
// INVARIANT: fragments with equal (key, DV) in a and b are never read, and
// of a fragment in both with different DVs only the offsets whose liveness
// differs are decoded (TestTableDiffSkipsSharedFragments,
// TestMergeReadsFollowDelta, TestMergeReadsFollowDeltaColdHandle); read by
// offset or from the image, they are the same rows
// (TestReadRowsAtMatchesImage).
func (g *Graph) tableDiff(ctx context.Context, snap *snapshot.Snapshot, tk string, props []*schema.Property, edge bool, a, b *table.State) (map[string]rowChange, tableDiffStats, error) {
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
	type located struct {
		r  *Row
		at fragRow
	}
	removed := map[string]located{}
	added := map[string]*Row{}
	for _, key := range sortedTableKeys(fa) {
		f := fa[key]
		fbf, inB := fb[key]
		switch {
		case !inB:
			stats.FragmentsScanned++
			if err := g.scanFragment(ctx, a.Schema(), f, props, edge, nil, func(off int64, r *Row) { removed[r.ID] = located{r, fragRow{key, off}} }); err != nil {
				return nil, stats, err
			}
		case fbf.DV == f.DV:
			stats.FragmentsShared++
		default:
			stats.FragmentsScanned++
			stats.FragmentsByDV++
			delA, err := snap.DeletedOffsets(ctx, f)
			if err != nil {
				return nil, stats, err
			}
			delB, err := snap.DeletedOffsets(ctx, fbf)
			if err != nil {
				return nil, stats, err
			}
			goneA, goneB := flippedOffsets(delA, delB)
			if len(goneA) == 0 && len(goneB) == 0 {
				continue
			}
			rows, err := g.rowsAt(ctx, snap, tk, a, f, props, edge, append(slices.Clone(goneA), goneB...))
			if err != nil {
				return nil, stats, err
			}
			// Deleted in b only: live in a, removed. Deleted in a only: added.
			for _, off := range goneB {
				removed[rows[off].ID] = located{rows[off], fragRow{key, off}}
			}
			for _, off := range goneA {
				added[rows[off].ID] = rows[off]
			}
			stats.RowsByDV += len(goneA) + len(goneB)
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
	for id, l := range removed {
		out[id] = rowChange{before: l.r, at: l.at}
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

// flippedOffsets splits the symmetric difference of two sorted deletion
// vectors: the offsets deleted in a only and those deleted in b only.
func flippedOffsets(a, b []int64) (onlyA, onlyB []int64) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return onlyA, onlyB
}

// rowsAt decodes the rows at the given physical offsets of fragment f of
// state st (deleted or not), keyed by offset: from the fragment's image when
// the handle has it cached or when reading by offset would not pay
// (readRowsPays), else by reading only the row groups holding them.
func (g *Graph) rowsAt(ctx context.Context, snap *snapshot.Snapshot, tk string, st *table.State, f table.Fragment, props []*schema.Property, edge bool, offs []int64) (map[int64]*Row, error) {
	img, ok := snap.CachedFragmentImage(tk, f)
	if !ok && readRowsPays(f, offs) {
		return g.readRowsAt(ctx, st, f, props, edge, offs)
	}
	if !ok {
		var err error
		if img, err = snap.FragmentImage(ctx, tk, st, f, props, edge); err != nil {
			return nil, err
		}
	}
	if int64(len(img.IDs)) != f.Rows {
		return nil, fmt.Errorf("exec: fragment %s image has %d rows, table state says %d", f.Key, len(img.IDs), f.Rows)
	}
	out := make(map[int64]*Row, len(offs))
	for _, off := range offs {
		out[off] = fragmentRow(img, int(off), props, edge)
	}
	return out, nil
}

// readRowsPays reports whether reading only the row groups of f that hold
// offs beats decoding (and caching) f's whole image. table.ReadRows reads
// whole row groups and is paid on every call, and a merge diffs a base
// fragment twice (base→source, base→target); the image is read once per
// handle and then serves both diffs and later reads. So rows are read by
// offset only when they touch at most a third of the fragment's row groups.
// Boundaries are estimated with the row-group size every engine writer uses
// (table.DefaultRowGroupRows); a wrong estimate costs bytes, never
// correctness.
func readRowsPays(f table.Fragment, offs []int64) bool {
	const per = table.DefaultRowGroupRows
	groups := (f.Rows + per - 1) / per
	touched := map[int64]bool{}
	for _, o := range offs {
		touched[o/per] = true
	}
	return int64(len(touched))*3 <= groups
}

// readRowsAt reads the rows at offs of fragment f of state st with
// table.ReadRows (only the row groups holding them), keyed by offset.
func (g *Graph) readRowsAt(ctx context.Context, st *table.State, f table.Fragment, props []*schema.Property, edge bool, offs []int64) (map[int64]*Row, error) {
	rec, err := table.ReadRows(ctx, g.st, st, f.Key, offs, nil, nil)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	sorted := slices.Clone(offs)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	rows := recordRows(st.Schema(), rec, props, edge)
	if len(rows) != len(sorted) {
		return nil, fmt.Errorf("exec: fragment %s returned %d rows for %d offsets", f.Key, len(rows), len(sorted))
	}
	out := make(map[int64]*Row, len(sorted))
	for i, off := range sorted {
		out[off] = &rows[i]
	}
	return out, nil
}

// fragmentRow returns row i of a fragment image as a Row (nil values omitted, as a
// scan decodes them).
func fragmentRow(d *snapshot.Rows, i int, props []*schema.Property, edge bool) *Row {
	r := &Row{ID: d.IDs[i], Values: make(map[string]any, len(props))}
	if edge {
		r.Src, r.Dst = d.Src[i], d.Dst[i]
	}
	for _, p := range props {
		if col := d.Cols[p.Name]; i < len(col) && col[i] != nil {
			r.Values[p.Name] = col[i]
		}
	}
	return r
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
		offs := sc.Offsets()
		rows := recordRows(ts, sc.Record(), props, edge)
		for i := range rows {
			fn(offs[i], &rows[i])
		}
	}
	return sc.Err()
}

// recordRows converts a record with every column of ts, in order, into
// value-model rows (nil values omitted, as the image's row does).
func recordRows(ts table.Schema, rec arrow.RecordBatch, props []*schema.Property, edge bool) []Row {
	rows := make([]Row, int(rec.NumRows()))
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
			p := snapshot.PropByName(props, c.Name)
			if p == nil {
				continue // a column the schema no longer declares
			}
			for i := range rows {
				if v := value.FromColumn(p.Type, table.Value(arr, i)); v != nil {
					rows[i].Values[c.Name] = v
				}
			}
		}
	}
	return rows
}

// rowsEqual is the merge's "unchanged" test: the same endpoints and every
// declared property equal under the typed comparison (null ≠ "", a list is
// not its joined string).
func rowsEqual(props []*schema.Property, a, b *Row) bool {
	if a.ID != b.ID || a.Src != b.Src || a.Dst != b.Dst {
		return false
	}
	for _, p := range props {
		if !value.Equal(a.Values[p.Name], b.Values[p.Name]) {
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
