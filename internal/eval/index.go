package eval

import (
	"math/bits"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// Scan indexes. A Scan whose pushed-down filters include `id = c`,
// `key = c` (the type's single-property @key) or an equality/range
// comparison of a property with a constant reads candidate rows from an
// index of the immutable table image instead of every row:
//
//   - id and key equalities resolve through NodeTable.Row (the key value's
//     canonical rendering is the node id, schema.NodeType.NodeID);
//   - other comparisons use a sorted index of the property (rows ordered by
//     Compare, nulls left out), built lazily per (image, property) on the
//     indexAfterScans-th scan that could use it and kept with the image.
//
// Candidates are emitted in row order and every filter not implied by the
// index is still evaluated on them, so an indexed scan returns exactly the
// rows of a full scan, in the same order (TestScanIndexMatchesFullScan).

// maxIndexedFraction: an index interval holding more than this fraction of
// the table is no faster than the scan; scan instead.
const maxIndexedFraction = 4 // 1/4

// constPred is a pushed-down filter `$v.prop op c` (or `$v.id = c`) with a
// constant side, normalised to the property on the left.
type constPred struct {
	i    int // index in Scan.Filters
	id   bool
	prop string
	op   query.CmpOp
	c    any
}

// constPreds appends the index-usable filters of a scan over variable v
// to out.
func (r *runner) constPreds(out []constPred, filters []query.Pred, v string) []constPred {
	for i := range filters {
		varSide, kSide, op, ok := filters[i].ConstCmp()
		if !ok || varSide.Var != v || (varSide.Kind != query.OpdProp && varSide.Kind != query.OpdID) {
			continue
		}
		if op < query.OpEq || op > query.OpGe || op == query.OpNe {
			continue
		}
		c, err := r.constant(kSide)
		if err != nil || c == nil {
			continue // the predicate itself reports the error or matches nothing
		}
		out = append(out, constPred{i: i, id: varSide.Kind == query.OpdID, prop: varSide.Prop, op: op, c: c})
	}
	return out
}

// scanIndex chooses candidate rows for a scan from an index. It returns
// the candidates (in ascending row order when ordered, else in index
// order, shared with the index: read-only) and the filters they already
// satisfy (skip[i]); ok is false when no index applies (scan every row).
// indexedScan narrows a scan by its index (scanIndex): the rows to
// visit (indexed), the predicates the index did not already decide, and
// how many rows the scan visits.
func (r *runner) indexedScan(o *query.Scan, tbl *snapshot.NodeTable, preds []func([]int32) bool, ordered bool) (rows []int32, left []func([]int32) bool, n int, indexed bool) {
	rows, left, n, indexed, _ = r.indexedScanSkip(o, tbl, preds, ordered)
	return rows, left, n, indexed
}

// indexedScanSkip is indexedScan that also returns which of o's filters
// the index decided (skip[i]; nil when none).
func (r *runner) indexedScanSkip(o *query.Scan, tbl *snapshot.NodeTable, preds []func([]int32) bool, ordered bool) (rows []int32, left []func([]int32) bool, n int, indexed bool, skip []bool) {
	rows, skip, indexed = r.scanIndex(o, tbl, ordered)
	left = preds
	if indexed && skip != nil {
		left = preds[:0]
		for i, p := range preds {
			if !skip[i] {
				left = append(left, p)
			}
		}
	}
	n = tbl.Len()
	if indexed {
		n = len(rows)
	}
	return rows, left, n, indexed, skip
}

func (r *runner) scanIndex(o *query.Scan, tbl *snapshot.NodeTable, ordered bool) (cands []int32, skip []bool, ok bool) {
	if r.opts.NoIndexes || tbl.Len() == 0 {
		return nil, nil, false
	}
	var buf [4]constPred // a scan's few filters stay on the stack
	cps := r.constPreds(buf[:0], o.Filters, o.Var)
	if len(cps) == 0 {
		return nil, nil, false
	}
	// Point lookups by id or key: at most one candidate.
	for _, cp := range cps {
		if cp.op != query.OpEq {
			continue
		}
		var id string
		switch {
		case cp.id:
			s, isStr := cp.c.(string)
			if !isStr {
				return nil, nil, true // ids are strings: nothing matches
			}
			id = s
		case tbl.KeyProp() == cp.prop:
			kid, err := tbl.Type.SingleKeyID(cp.c) // the key is this one property
			if err != nil || !tbl.KeyCanonical() {
				continue
			}
			id = kid
		default:
			continue
		}
		if row, found := tbl.Row(id); found {
			return []int32{int32(row)}, nil, true
		}
		return nil, nil, true
	}
	// Sorted index: the property whose filters leave the fewest rows.
	ivs := make([]propInterval, 0, 4) // on the stack for up to 4 properties
	done := map[string]bool{}
	for _, cp := range cps {
		if cp.id || done[cp.prop] {
			continue
		}
		done[cp.prop] = true
		si := tbl.SortedIndex(cp.prop)
		if si == nil {
			continue
		}
		lo, hi, usable, eq := 0, len(si.Perm), true, false
		for _, q := range cps {
			if !q.id && q.prop == cp.prop {
				if lo, hi, usable = si.Interval(lo, hi, q.op, q.c); !usable {
					break
				}
				eq = eq || q.op == query.OpEq
			}
		}
		if usable {
			ivs = append(ivs, propInterval{cp.prop, lo, si.Perm[lo:hi], eq})
		}
	}
	if len(ivs) == 0 {
		return nil, nil, false
	}
	slices.SortStableFunc(ivs, func(a, b propInterval) int { return len(a.rows) - len(b.rows) })
	best := ivs[0]
	if len(best.rows)*maxIndexedFraction > tbl.Len() {
		return nil, nil, false
	}
	skip = make([]bool, len(o.Filters))
	decide := func(prop string) {
		for _, q := range cps {
			if !q.id && q.prop == prop {
				skip[q.i] = true
			}
		}
	}
	decide(best.prop)
	cands = best.rows
	// Equality intervals are ordered by row (ties break by row): another
	// property's equality interval not much longer intersects in one
	// merge, cheaper than evaluating its filter on every candidate.
	// Two non-empty equality intervals are one interval of their pair
	// index once it is built (snapshot.PairIndex): the same rows, in row
	// order, without the merge.
	if best.eq {
		paired := len(cands) == 0
		for _, iv := range ivs[1:] {
			if !iv.eq {
				continue
			}
			if !paired {
				paired = true
				if rows, ok := pairRows(tbl, best, iv); ok {
					cands = rows
					decide(iv.prop)
					continue
				}
			}
			if len(iv.rows) > maxIntersectRatio*len(cands) {
				continue
			}
			cands = index.Intersect(cands, iv.rows)
			decide(iv.prop)
		}
	}
	if !ordered {
		return cands, skip, true
	}
	return rowOrder(cands, tbl.Len()), skip, true
}

// propInterval is the rows of one property's sorted index its filters
// keep; eq marks an equality's interval (ordered by row).
type propInterval struct {
	prop string
	lo   int // the interval's first position in the sorted index
	rows []int32
	eq   bool
}

// pairRows returns the rows of two non-empty equality intervals of
// different properties from their pair index; ok is false while the
// image has none.
func pairRows(tbl *snapshot.NodeTable, x, y propInterval) (rows []int32, ok bool) {
	if len(x.rows) == 0 || len(y.rows) == 0 {
		return nil, false
	}
	if y.prop < x.prop {
		x, y = y, x
	}
	pi := tbl.PairIndex(x.prop, y.prop)
	if pi == nil {
		return nil, false
	}
	return pi.Rows(x.lo, y.lo), true
}

// maxIntersectRatio bounds how much longer than the candidates an
// equality interval may be to be intersected with them.
const maxIntersectRatio = 8

// rowOrder returns rows in ascending order: already sorted runs (an
// equality interval is ordered by row) are copied, others go through a
// bitmap over the table.
func rowOrder(rows []int32, n int) []int32 {
	if slices.IsSorted(rows) {
		return slices.Clone(rows)
	}
	if len(rows) < 256 {
		out := slices.Clone(rows)
		slices.Sort(out)
		return out
	}
	bm := make([]uint64, (n+63)/64)
	for _, r := range rows {
		bm[r>>6] |= 1 << (r & 63)
	}
	out := make([]int32, 0, len(rows))
	for w, word := range bm {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, int32(w<<6+b))
			word &= word - 1
		}
	}
	return out
}
