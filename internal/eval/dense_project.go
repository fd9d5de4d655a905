package eval

import (
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// Dense projections. A projection of the rows of an unanchored traversal
// (`match { $a: Person  $a knows $b } return { $a.name, $b.name }`, with
// filters on any variable and an optional limit) has, on the image path,
// every table it names decoded into boxed images plus one binding row per
// output row. On dense views (dense.go) it is a walk instead: the binding
// counts w_v say how many rows each binding of a variable completes to, so
// the number of output rows is known before the first one is produced
// (Stream.Len) and a walk never enters a binding that completes to none;
// the walk then enumerates the rows one by one, nested in the row
// executor's order — root rows in storage order, each expansion's far
// rows in adjacency order (one hop: distinct neighbours, first seen in
// edge storage order, out-edges before in-edges; hop bounds: BFS order,
// a self-loop on the source reported where the walk meets it), the plan's
// expansions nested innermost-outermost as evalExpand nests them — and
// reads each projected cell from a typed column of just the projected
// properties (dense_columns.go). The language leaves the order of rows
// without `order` unspecified; the dense walk reproduces the row
// executor's anyway, so `limit N` cuts the same rows and the differential
// tests compare rows exactly (TestDenseProjectMatchesRows). Rows are
// streamed (Stream.Each): memory is the views, the columns and one row.

// denseProject answers projection o, under `limit` limit when limit > 0,
// on the snapshot's dense views; ok is false when o is not a projection
// of node properties and ids over a dense binding tree or the snapshot
// prefers another path.
func (r *runner) denseProject(ctx context.Context, o *query.Project, limit int64) (*outRows, bool, error) {
	if s, ok := o.Input.(*query.Sort); ok {
		return r.denseTopK(ctx, o, s, limit) // dense_topk.go
	}
	if !hasExpand(o.Input) {
		return nil, false, nil // no dense plan (denseTree), so no operands to list
	}
	ops := make([]query.Operand, len(o.Cols))
	for i, c := range o.Cols {
		ops[i] = c.Value
	}
	dp, dr, total, ok, err := r.denseWalkOf(ctx, o.Input, ops)
	if err != nil || !ok {
		return nil, false, err
	}
	n := total
	if limit > 0 && n > limit {
		n = limit
	}
	if n > maxDenseRows {
		return nil, false, nil // the row path reports it over the budget
	}
	we, err := dr.walker(ops)
	if err != nil {
		return nil, false, err
	}
	if dp.closes {
		// The binding counts ignore the cycle-closing filters: count the
		// rows by a walk first (Len is known before the first row).
		k := 0
		if err := we.each(ctx, int(n), func([]any) error { k++; return nil }); err != nil {
			return nil, false, err
		}
		n = int64(k)
	}
	return &outRows{n: int(n), gen: we.each}, true, nil
}

// denseWalkOf prepares a walk of binding tree input projecting ops (node
// properties and ids only): its plan, its views and the number of binding
// rows, or ok false when the tree or an operand is not dense.
func (r *runner) denseWalkOf(ctx context.Context, input query.Op, ops []query.Operand) (*densePlan, *denseRun, int64, bool, error) {
	dp := denseTree(input)
	if dp == nil || len(dp.edgeVars) > 0 {
		return nil, nil, 0, false, nil
	}
	for _, op := range ops {
		if (op.Kind != query.OpdProp && op.Kind != query.OpdID) || dp.vars[op.Var] == nil {
			return nil, nil, 0, false, nil
		}
	}
	dr, ok, err := r.denseViews(ctx, dp)
	if err != nil || !ok {
		return nil, nil, 0, false, err
	}
	total, err := dr.walkWeights()
	if err != nil {
		return nil, nil, 0, false, err
	}
	return dp, dr, total, true, nil
}

// denseWalker enumerates the binding rows of a dense plan and projects
// them.
type denseWalker struct {
	dr     *denseRun
	slot   map[string]int // variable → index in bind and w
	w      [][]int64      // binding counts per slot
	bind   []int32        // the current binding of each slot
	levels []*denseLevel
	cells  []denseCell
	row    []any
}

// denseLevel is one expansion of the walk.
type denseLevel struct {
	x         *query.Expand
	src, dst  int
	out, in   *snapshot.DenseCSR
	multi     bool
	bound     bool    // closes a cycle: keeps the row iff dst is among the far rows
	fars      []int32 // the far rows of the current source
	stamp     []uint32
	gen       uint32
	frontier  []int32
	nextFront []int32
}

// denseCell is one projected column: the id of a slot's row, or a column.
type denseCell struct {
	slot int
	d    *snapshot.DenseNodes
	col  *denseColumn // nil: the id
}

// walker prepares the walk of dr's plan projecting ops (properties and
// ids of its variables): the CSRs of each
// expansion (built by weights already), a visited array per level, and
// the typed columns of the projected properties, one table scan per node
// type.
func (dr *denseRun) walker(ops []query.Operand) (*denseWalker, error) {
	dp := dr.dp
	we := &denseWalker{dr: dr, slot: map[string]int{}}
	add := func(v string) {
		we.slot[v] = len(we.w)
		we.w = append(we.w, dr.keep[v])
	}
	add(dp.root)
	for _, x := range dp.expands {
		if !x.DstBound {
			add(x.Dst)
		}
	}
	we.bind = make([]int32, len(we.w))
	for _, x := range dp.expands {
		out, in, err := dr.csrs(x)
		if err != nil {
			return nil, err
		}
		far := dr.nodes[x.DstType].Len()
		lv := &denseLevel{x: x, src: we.slot[x.Src], dst: we.slot[x.Dst], out: out, in: in, multi: x.Min != 1 || x.Max != 1, bound: x.DstBound}
		charge(dr.r.mem, 4*int64(far))
		lv.stamp = make([]uint32, far)
		we.levels = append(we.levels, lv)
	}
	// The projected properties of each node type, read in one scan.
	type typeCols struct {
		props []string
		cols  []*denseColumn
	}
	byType := map[string]*typeCols{}
	var types []string
	for _, c := range ops {
		v := dp.vars[c.Var]
		cell := denseCell{slot: we.slot[v.name], d: dr.nodes[v.typ]}
		if c.Kind == query.OpdProp {
			tc := byType[v.typ]
			if tc == nil {
				tc = &typeCols{}
				byType[v.typ] = tc
				types = append(types, v.typ)
			}
			k := slices.Index(tc.props, c.Prop)
			if k < 0 {
				k = len(tc.props)
				tc.props = append(tc.props, c.Prop)
				tc.cols = append(tc.cols, newDenseColumn(cell.d.Len(), dr.r.mem))
			}
			cell.col = tc.cols[k]
		}
		we.cells = append(we.cells, cell)
	}
	for _, typ := range types {
		tc := byType[typ]
		if err := dr.fillColumns(dr.nodes[typ], tc.props, tc.cols); err != nil {
			return nil, err
		}
	}
	we.row = make([]any, len(we.cells))
	return we, nil
}

// each calls fn with the first n projected rows, in the walk's order;
// row is reused between calls.
func (we *denseWalker) each(ctx context.Context, n int, fn func(row []any) error) error {
	return we.bindings(ctx, n, func() error {
		for j, c := range we.cells {
			x := we.bind[c.slot]
			if c.col == nil {
				we.row[j] = c.d.ID(x)
			} else {
				we.row[j] = c.col.value(x)
			}
		}
		return fn(we.row)
	})
}

// bindings calls fn for each of the first n binding rows, in the walk's
// order, with the row's binding in we.bind (nothing projected).
func (we *denseWalker) bindings(ctx context.Context, n int, fn func() error) error {
	if n == 0 {
		return nil
	}
	emitted := 0
	var walk func(level int) (bool, error) // false: stop, n rows emitted
	walk = func(level int) (bool, error) {
		if level == len(we.levels) {
			if emitted&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
			}
			if err := fn(); err != nil {
				return false, err
			}
			emitted++
			return emitted < n, nil
		}
		lv := we.levels[level]
		// The far rows are taken before recursing: a deeper level of the
		// same expansion source reuses nothing of this level's state.
		fars := lv.expand(we.bind[lv.src])
		if lv.bound {
			if !slices.Contains(fars, we.bind[lv.dst]) {
				return true, nil
			}
			return walk(level + 1)
		}
		wd := we.w[lv.dst]
		for _, f := range fars {
			if wd[f] == 0 {
				continue
			}
			we.bind[lv.dst] = f
			more, err := walk(level + 1)
			if !more || err != nil {
				return more, err
			}
		}
		return true, nil
	}
	wr := we.w[0]
	for x := range wr {
		if wr[x] == 0 {
			continue
		}
		if x&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		we.bind[0] = int32(x)
		more, err := walk(0)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
	return nil
}

// expand returns the far rows lv binds from near row src, in the row
// executor's order (expander.neighbours, expander.reachRows). The slice
// is the level's own, valid until its next call.
func (lv *denseLevel) expand(src int32) []int32 {
	lv.gen++
	if lv.gen == 0 {
		clear(lv.stamp)
		lv.gen = 1
	}
	out := lv.fars[:0]
	if !lv.multi {
		visit := func(fars []int32) {
			for _, f := range fars {
				if lv.stamp[f] != lv.gen {
					lv.stamp[f] = lv.gen
					out = append(out, f)
				}
			}
		}
		if lv.out != nil {
			visit(lv.out.At(src))
		}
		if lv.in != nil {
			visit(lv.in.At(src))
		}
		lv.fars = out
		return out
	}
	lo, hi := lv.x.Min, lv.x.Max
	lv.stamp[src] = lv.gen
	selfSeen := false
	frontier := append(lv.frontier[:0], src)
	next := lv.nextFront[:0]
	for d := int64(1); d <= hi && len(frontier) > 0; d++ {
		next = next[:0]
		visit := func(fars []int32) {
			for _, f := range fars {
				if d == 1 && f == src {
					// A self-loop on the source: reported at hop 1 where
					// it is met, once, never expanded.
					if lo <= 1 && !selfSeen {
						selfSeen = true
						out = append(out, src)
					}
					continue
				}
				if lv.stamp[f] == lv.gen {
					continue
				}
				lv.stamp[f] = lv.gen
				next = append(next, f)
				if d >= lo {
					out = append(out, f)
				}
			}
		}
		for _, nd := range frontier {
			if lv.out != nil {
				visit(lv.out.At(nd))
			}
			if lv.in != nil {
				visit(lv.in.At(nd))
			}
		}
		frontier, next = next, frontier
	}
	lv.frontier, lv.nextFront = frontier, next
	lv.fars = out
	return out
}
