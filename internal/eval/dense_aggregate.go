package eval

import (
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
