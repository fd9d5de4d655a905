package table

import (
	"context"
	"slices"
	"strings"
)

// Small fragments (those Locate reads rather than probes by index, see
// useIndex) are answered from their id column, decoded once and kept in
// the reader's cache sorted by id. A group commit leaves a table with many
// such fragments (each batch's shared one, until compaction merges them),
// and every keyed write staged on top of them locates its row in each: a
// Parquet scan per fragment per write was most of a batch leader's CPU.
// Fragments are immutable, so the decoded column is keyed by the fragment
// alone; the deletion vector, which differs from state to state, is applied
// per call.

// smallIDRows bounds the fragments whose id column is kept (in rows): a
// fragment under tailPrefetch bytes cannot hold many more.
const smallIDRows = 4096

// idEntry is one row of a fragment's id column.
type idEntry struct {
	id  string
	off int64
}

// fragmentIDs returns every row of f (deleted ones included) as (id,
// offset), sorted by id then offset.
func (r *Reader) fragmentIDs(ctx context.Context, s *State, f Fragment) ([]idEntry, error) {
	v, err := r.cache.GetOrLoad(ctx, "table/ids/"+f.Key, func(ctx context.Context) (any, int64, error) {
		bare := f
		bare.DV, bare.Deleted = "", 0 // every row: the vector is the state's, not the file's
		one := &State{schema: s.schema, fragments: []Fragment{bare}}
		sc, err := r.Scan(ctx, one, ScanOptions{Columns: []string{KeyColumn}, RowOffsets: true})
		if err != nil {
			return nil, 0, err
		}
		defer sc.Close()
		ents := make([]idEntry, 0, f.Rows)
		size := int64(64)
		for sc.Next() {
			arr := sc.Record().Column(0)
			for i, off := range sc.Offsets() {
				id := strings.Clone(Value(arr, i).(string))
				ents = append(ents, idEntry{id: id, off: off})
				size += int64(len(id)) + 32
			}
		}
		if err := sc.Err(); err != nil {
			return nil, 0, err
		}
		slices.SortFunc(ents, func(a, b idEntry) int {
			if c := strings.Compare(a.id, b.id); c != 0 {
				return c
			}
			return int(a.off - b.off)
		})
		return ents, size, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]idEntry), nil
}

// smallLocate is Locate for one small fragment: the cached id column
// searched for each of ids (sorted, distinct), live rows only, in offset
// order — what scanLocate returns, without a scan.
func (r *Reader) smallLocate(ctx context.Context, s *State, f Fragment, ids []string) ([]RowLoc, error) {
	ents, err := r.fragmentIDs(ctx, s, f)
	if err != nil {
		return nil, err
	}
	var locs []RowLoc
	for _, id := range ids {
		i, _ := slices.BinarySearchFunc(ents, id, func(e idEntry, id string) int { return strings.Compare(e.id, id) })
		for ; i < len(ents) && ents[i].id == id; i++ {
			locs = append(locs, RowLoc{ID: id, Fragment: f.Key, Offset: ents[i].off})
		}
	}
	return r.liveInOrder(ctx, f, locs)
}

// liveInOrder drops the rows of locs (all in fragment f) that f's deletion
// vector hides and sorts the rest by offset; the vector is fetched only
// when there is a hit.
func (r *Reader) liveInOrder(ctx context.Context, f Fragment, locs []RowLoc) ([]RowLoc, error) {
	if len(locs) == 0 {
		return nil, nil
	}
	del, err := r.deleted(ctx, f)
	if err != nil {
		return nil, err
	}
	if del != nil {
		locs = slices.DeleteFunc(locs, func(l RowLoc) bool { return del.has(l.Offset) })
	}
	slices.SortFunc(locs, func(a, b RowLoc) int { return int(a.Offset - b.Offset) })
	return locs, nil
}
