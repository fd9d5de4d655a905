package snapshot

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Filtered scans through scalar indexes. The pushed-down comparisons of
// an unanchored scan (scan.go) are answered, per fragment, by the
// fragment's persisted scalar index of the compared column when it has
// one (exec/scalar_index.go builds them, index/btree.go reads them by
// ranged reads): each indexed column's comparisons give the row offsets
// matching them, the columns' offsets are intersected, and the table
// scan of that fragment reads only those rows (table.ScanOptions.Rows),
// applying the deletion vector and the comparisons no index decided. A
// fragment whose every comparison an index decided, read for nothing but
// its row count, is not read at all: its count is the candidates the
// deletion vector leaves. Fragments without an index (written after
// the last optimize) are scanned as before. The rows are the ones the
// plain scan keeps, in the same order (exec TestScalarIndexMatchesScan).

// fragCands is one fragment of an index-narrowed scan.
type fragCands struct {
	f       table.Fragment
	indexed bool           // rows holds the candidates (else scan f)
	rows    []int64        // ascending, before the deletion vector
	rest    []table.Filter // the filters the indexes did not decide
}

// btreeOp maps a table comparison onto an index comparison.
func btreeOp(op table.Op) (index.BTreeOp, bool) {
	switch op {
	case table.OpEq:
		return index.BTreeEq, true
	case table.OpLt:
		return index.BTreeLt, true
	case table.OpLe:
		return index.BTreeLe, true
	case table.OpGt:
		return index.BTreeGt, true
	case table.OpGe:
		return index.BTreeGe, true
	}
	return 0, false
}

// scalarCandidates narrows a scan of st with filters by the fragments'
// scalar indexes; ok is false when no fragment has an index of a
// filtered column (scan the state as a whole).
func (s *Snapshot) scalarCandidates(ctx context.Context, st *table.State, filters []table.Filter) ([]fragCands, bool, error) {
	if s.l.noIndexPath || len(filters) == 0 {
		return nil, false, nil
	}
	refs := st.Indexes()
	byCol := map[string][]index.BTreeCond{}
	var cols []string
	for _, f := range filters {
		op, ok := btreeOp(f.Op)
		if !ok {
			continue
		}
		if _, seen := byCol[f.Column]; !seen {
			cols = append(cols, f.Column)
		}
		byCol[f.Column] = append(byCol[f.Column], index.BTreeCond{Op: op, Value: f.Value})
	}
	if !slices.ContainsFunc(refs, func(r table.IndexRef) bool {
		return r.Kind == index.KindBTree && len(r.Columns) == 1 && byCol[r.Columns[0]] != nil
	}) {
		return nil, false, nil
	}
	out := make([]fragCands, 0, st.NumFragments())
	for _, f := range st.Fragments() {
		fc := fragCands{f: f}
		decided := map[string]bool{}
		for _, c := range cols {
			ref, ok := index.RefFor(refs, index.KindBTree, c, f.Key)
			if !ok {
				continue
			}
			src, err := s.btreeSource(ctx, ref.Key)
			if err != nil {
				return nil, false, err
			}
			if src.Rows() != int(f.Rows) {
				return nil, false, &table.CorruptError{Key: ref.Key, Offset: -1, Reason: "scalar index row count differs from its fragment's"}
			}
			// An index selecting much of the fragment is no cheaper
			// than scanning the column (maxIndexedFraction, as for the
			// images' sorted indexes): past one block, the directory's
			// bound decides before anything is read; within one block
			// (a small fragment), the rows it holds.
			est, blocks, ok := src.Estimate(byCol[c])
			if !ok || blocks > 1 && est*maxIndexedFraction > int(f.Rows) {
				continue
			}
			offs, ok, err := src.Match(ctx, byCol[c])
			if err != nil {
				return nil, false, err
			}
			if !ok || len(offs)*maxIndexedFraction > int(f.Rows) {
				continue
			}
			if fc.indexed {
				fc.rows = index.Intersect(fc.rows, offs)
			} else {
				fc.indexed, fc.rows = true, offs
			}
			decided[c] = true
			if len(fc.rows) == 0 {
				break
			}
		}
		for _, flt := range filters {
			if _, ok := btreeOp(flt.Op); !ok || !decided[flt.Column] {
				fc.rest = append(fc.rest, flt)
			}
		}
		if fc.rows == nil {
			fc.rows = []int64{}
		}
		out = append(out, fc)
	}
	return out, true, nil
}

// btreeSource opens scalar index object key through the read cache (its
// header and directory: every later lookup costs one ranged read).
func (s *Snapshot) btreeSource(ctx context.Context, key string) (*index.BTreeSource, error) {
	v, err := s.l.cache.GetOrLoad(ctx, "index/btree/"+key, func(ctx context.Context) (any, int64, error) {
		src, err := index.OpenBTree(ctx, s.l.st, key)
		if err != nil {
			return nil, 0, err
		}
		return src, src.FrontBytes() + 256, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*index.BTreeSource), nil
}

// filteredScan streams the live rows of st passing filters, in storage
// order: rec gets each record of the read columns (with offsets: with
// their offsets in frag). With read empty nothing is decoded for the
// rows themselves: with offsets, rec gets a nil record and the offsets;
// without, count gets the number of rows (fragments whose candidates
// the indexes decided are then not read at all).
func (s *Snapshot) filteredScan(ctx context.Context, st *table.State, read []string, filters []table.Filter, offsets bool,
	rec func(r arrow.RecordBatch, frag string, offs []int64) error, count func(n int)) error {
	cands, ok, err := s.scalarCandidates(ctx, st, filters)
	if err != nil {
		return err
	}
	if !ok {
		return s.scanPart(ctx, st, read, filters, offsets, nil, rec, count)
	}
	for _, fc := range cands {
		one, err := table.NewState(st.Schema())
		if err != nil {
			return err
		}
		if one, err = one.Append(fc.f); err != nil {
			return err
		}
		if !fc.indexed {
			if err := s.scanPart(ctx, one, read, filters, offsets, nil, rec, count); err != nil {
				return err
			}
			continue
		}
		if len(fc.rows) == 0 {
			continue
		}
		if len(read) == 0 && len(fc.rest) == 0 {
			live, err := s.l.tr.LiveRows(ctx, fc.f, fc.rows)
			if err != nil {
				return err
			}
			if offsets {
				if err := rec(nil, fc.f.Key, live); err != nil {
					return err
				}
			} else {
				count(len(live))
			}
			continue
		}
		if err := s.scanPart(ctx, one, read, fc.rest, offsets, fc.rows, rec, count); err != nil {
			return err
		}
	}
	return nil
}

// scanPart is one table scan of filteredScan (rows: its row restriction).
func (s *Snapshot) scanPart(ctx context.Context, st *table.State, read []string, filters []table.Filter, offsets bool, rows []int64,
	rec func(r arrow.RecordBatch, frag string, offs []int64) error, count func(n int)) error {
	cols := read
	if len(cols) == 0 {
		if len(filters) == 0 && rows == nil {
			count(int(st.Rows()))
			return nil
		}
		if len(filters) > 0 {
			cols = []string{filters[0].Column} // a column the scan reads anyway, for row counts
		} else {
			cols = []string{table.KeyColumn}
		}
	}
	sc, err := s.l.tr.Scan(ctx, st, table.ScanOptions{Columns: cols, Filters: filters, RowOffsets: offsets, Rows: rows})
	if err != nil {
		return err
	}
	defer sc.Close()
	for sc.Next() {
		r := sc.Record()
		if len(read) == 0 {
			if !offsets {
				count(int(r.NumRows()))
				continue
			}
			r = nil
		}
		if err := rec(r, sc.Fragment(), sc.Offsets()); err != nil {
			return err
		}
	}
	return sc.Err()
}
