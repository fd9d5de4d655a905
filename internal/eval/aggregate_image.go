package eval

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// imageAggregate answers aggregate o over its only scan on a decoded
// image's typed columns (snapshot.NodeTable.TypedColumn): the rows the
// scan visits — an index's candidates (scanIndex, as evalScan picks them)
// or every live row — in row order, the filters the index did not decide
// compared on the typed cells, each kept row folded as the cold path
// folds it, without binding rows. ok is false for another shape, for a
// count of rows only (countOnly counts those, by an index interval's
// length where it can, and on typed cells where it must visit rows:
// countTyped), and while the image has no typed column of a property
// read (they are built on the IndexAfterScans+1-th request).
func (r *runner) imageAggregate(ctx context.Context, o *query.Aggregate) ([][]any, bool, error) {
	if r.opts.NoIndexes {
		return nil, false, nil // the boxed reference
	}
	tp := r.typedShape(o)
	if tp == nil || tp.rowsOnly && len(tp.keyCols) == 0 {
		return nil, false, nil
	}
	tbl, err := r.snap.Nodes(ctx, tp.sc.Type)
	if err != nil {
		return nil, false, err
	}
	if !tp.bindImage(tbl) {
		return nil, false, nil
	}
	rows, _, n, indexed, skip := r.indexedScanSkip(tp.sc, tbl, nil, true)
	preds := tp.preds(skip)
	f := newTypedFold(o, tp, r.mem)
	err = visitRows(ctx, tbl, rows, n, indexed, preds, f.row)
	if err != nil {
		return nil, false, err
	}
	return f.result(), true, nil
}

// typedScanRows is how many rows a count must visit before its filters
// are compared on the image's typed columns (below it the per-query
// setup costs more than the boxed comparisons).
const typedScanRows = 4096

// countTyped counts the rows of count-only aggregate o's scan that pass
// the filters the index did not decide (skip), on the image's typed
// columns; ok is false when a filter or column has no typed form yet.
func (r *runner) countTyped(ctx context.Context, o *query.Aggregate, tbl *snapshot.NodeTable, rows []int32, n int, indexed bool, skip []bool) (int64, bool, error) {
	if r.opts.NoIndexes || n < typedScanRows {
		return 0, false, nil
	}
	tp := r.typedShape(o)
	if tp == nil || !tp.bindImage(tbl) {
		return 0, false, nil
	}
	var count int64
	err := visitRows(ctx, tbl, rows, n, indexed, tp.preds(skip), func(int) { count++ })
	return count, err == nil, err
}

// bindImage binds tp's columns to tbl's typed columns; false when one has
// none (yet).
func (tp *typedPlan) bindImage(tbl *snapshot.NodeTable) bool {
	for k, c := range tp.cols {
		arr := tbl.TypedColumn(tp.props[k])
		if arr == nil || c.bind(arr) != nil {
			return false
		}
	}
	return true
}

// preds compiles tp's filters but those skip marks (decided by an index).
func (tp *typedPlan) preds(skip []bool) []func(int) bool {
	var out []func(int) bool
	for i, tf := range tp.filters {
		if skip == nil || !skip[i] {
			out = append(out, typedPred(tp.cols[tf.col], tf.op, tf.k))
		}
	}
	return out
}

// visitRows calls fn for every row a scan of tbl visits — rows[:n] when
// indexed, else every live row below n — that passes preds, in order.
func visitRows(ctx context.Context, tbl *snapshot.NodeTable, rows []int32, n int, indexed bool, preds []func(int) bool, fn func(i int)) error {
	dead := tbl.HasDead()
visit:
	for k := range n {
		if k&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i := k
		if indexed {
			i = int(rows[k])
		} else if dead && !tbl.Alive(i) {
			continue
		}
		for _, p := range preds {
			if !p(i) {
				continue visit
			}
		}
		fn(i)
	}
	return nil
}
