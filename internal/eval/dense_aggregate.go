package eval

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/query"
)

// Dense aggregates of non-root variables. The root-only dense aggregate
// (dense.go, aggregateByRoot) folds each root row's binding count at once;
// keys or arguments of another variable (`count($a) by $b.city`,
// `sum($b.age)`) vary within one root row's binding rows, and the row
// path's result depends on their order: groups come out in first-seen
// order, and a float sum rounds in the order it adds. The dense walk
// (dense_project.go) enumerates the binding rows in exactly the row
// executor's order, so folding its rows one by one into the same groups
// (aggGroups) gives the row path's answer bit for bit — time O(binding
// rows), like the row path, memory the views plus typed columns of the
// keys and arguments plus the groups.

// denseWalkShape returns the dense form of aggregate o when its input is a
// dense tree and every key and argument is a property or id of one of its
// variables (count, sum, avg, min, max; count of a variable), or nil.
func denseWalkShape(o *query.Aggregate) *densePlan {
	dp := denseTree(o.Input)
	if dp == nil || len(dp.edgeVars) > 0 {
		return nil
	}
	dp.agg = o
	bound := func(v string) bool { return dp.vars[v] != nil }
	if !aggReads(o, bound, bound) {
		return nil
	}
	return dp
}

// aggregateByWalk folds the binding rows of dr's plan, walked in the row
// executor's order, into the aggregate's groups. ok is false when there
// are more binding rows than the dense paths fold (maxDenseRows).
func (dr *denseRun) aggregateByWalk() (rows [][]any, ok bool, err error) {
	o := dr.dp.agg
	total, err := dr.walkWeights()
	if err != nil {
		return nil, false, err
	}
	if total > maxDenseRows {
		return nil, false, nil
	}
	// The walk's cells: the keys, then the arguments that read a value.
	ops := make([]query.Operand, 0, len(o.Keys)+len(o.Aggs))
	for _, k := range o.Keys {
		ops = append(ops, k.Value)
	}
	argAt := make([]int, len(o.Aggs)) // index in a row, -1: counts rows
	for i, a := range o.Aggs {
		argAt[i] = -1
		if a.Arg.Kind == query.OpdProp {
			argAt[i] = len(ops)
			ops = append(ops, a.Arg)
		}
	}
	we, err := dr.walker(ops)
	if err != nil {
		return nil, false, err
	}
	if rows, ok, err := we.foldTyped(dr.ctx, o, int(total), argAt); err != nil || ok {
		return rows, ok, err
	}
	ag := newAggGroups(o, dr.r.mem)
	nk := len(o.Keys)
	err = we.each(dr.ctx, int(total), func(row []any) error {
		g := ag.group(row[:nk])
		for i, c := range argAt {
			if c < 0 {
				g.st[i].n++
				continue
			}
			g.st[i].add(o.Aggs[i].Func, row[c], 1)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return ag.rows(), true, nil
}

// foldTyped is aggregateByWalk's fold on the walk's typed columns: keys
// encoded as TupleKey bytes straight from the columns (a key boxed once
// per group), counts and sums unboxed, an extreme compared unboxed and
// boxed only when it is replaced — the same groups, order and float
// additions as the boxed fold. ok is false when a key or argument is an
// id or a column of boxed cells (lists, vectors).
func (we *denseWalker) foldTyped(ctx context.Context, o *query.Aggregate, n int, argAt []int) ([][]any, bool, error) {
	nk := len(o.Keys)
	for _, c := range we.cells {
		if c.col == nil || c.col.kind == cellBoxed {
			return nil, false, nil
		}
	}
	fns := make([]aggFunc, len(o.Aggs))
	for i, a := range o.Aggs {
		fns[i] = aggFuncOf(a.Func)
	}
	ag := newAggGroups(o, we.dr.r.mem)
	var key []byte
	keys := make([]any, nk)
	err := we.bindings(ctx, n, func() error {
		var g *aggGroup
		if nk == 0 && len(ag.groups) == 1 {
			g = ag.groups[0]
		} else {
			key = key[:0]
			for _, c := range we.cells[:nk] {
				key = c.col.appendKey(key, we.bind[c.slot])
			}
			i, found := ag.find(key)
			if !found {
				for j, c := range we.cells[:nk] {
					keys[j] = c.col.value(we.bind[c.slot])
				}
				i = ag.add(string(key), keys)
			}
			g = ag.groups[i]
		}
		for i, at := range argAt {
			if at < 0 {
				g.st[i].n++
				continue
			}
			c := we.cells[at]
			c.col.fold(&g.st[i], fns[i], we.bind[c.slot])
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return ag.rows(), true, nil
}
