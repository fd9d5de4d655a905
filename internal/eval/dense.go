package eval

import (
	"context"
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// Dense traversal counts. A count over a traversal whose anchors are not
// pinned (an unfiltered scan, or more anchors than the partial paths
// gather) touches every edge; on the image path it decodes every table it
// names into boxed images, whatever the cache budget. When the snapshot
// offers dense views (snapshot/dense.go: an id → row map per node type, a
// filter bitmap per variable, int32 CSRs per edge type, each charged to the
// query's budget) and the plan is a count over a tree of one-hop or
// bounded-hop expansions with single-variable filters on constants, the
// count is computed on those views instead, without a binding row:
//
//	w_v(x) = [x passes v's filters] · Π_{expand c from v} Σ_{y ∈ N_c(x)} w_c(y)
//
// where N_c(x) is the set of far rows the expansion binds from x (distinct
// one-hop neighbours, or the nodes at shortest distance in [min, max] —
// expand.go's neighbours and reachRows, walked alike), and the number of
// binding rows is Σ_x w_root(x). Every count($v) of the plan is that
// number: a bound variable is never null. TestDenseCountMatchesRows (and
// exec's TestDenseReadsMatchImages over stored graphs) compare it with the
// row executor. Aggregates of other variables, trees that close a cycle,
// and projections walk the binding rows in the row executor's order
// instead (dense_aggregate.go, dense_project.go).

// DenseSource is a snapshot that can build dense views
// (*snapshot.Snapshot).
type DenseSource interface {
	PreferDense(ctx context.Context, plan *query.Plan, vars []*query.Scan, params map[string]any) (bool, error)
	DenseNodes(ctx context.Context, typ string, mem *limits.Budget) (*snapshot.DenseNodes, error)
	DenseMask(ctx context.Context, d *snapshot.DenseNodes, o *query.Scan, params map[string]any, mem *limits.Budget) ([]uint64, bool, error)
	DenseAdjacency(ctx context.Context, edge string, from, to *snapshot.DenseNodes, out, in bool, mem *limits.Budget) (*snapshot.DenseCSR, *snapshot.DenseCSR, error)
	// DenseColumns calls fn for every row of d, in row order, with the
	// values of props (value model; nil for null or a property the stored
	// table lacks).
	DenseColumns(ctx context.Context, d *snapshot.DenseNodes, props []string, fn func(row int32, vals []any) error) error
}

// denseVar is one node variable of a dense plan: its type, filters and
// the expansions that start from it.
type denseVar struct {
	name    string
	typ     string
	filters []query.Pred
	kids    []*query.Expand
}

// densePlan is a binding tree as the dense path sees it (an aggregate's
// input, or a projection's: dense_project.go).
type densePlan struct {
	root string
	vars map[string]*denseVar
	// expands is the tree's expansions in plan order (innermost first):
	// the row executor's nesting order, outermost loop first.
	expands []*query.Expand
	// closes is set when an expansion closes a cycle (DstBound): the
	// binding counts are then upper bounds, exact only on a walk.
	closes bool
	// edgeVars are the tree's edge variables: only the weights path
	// (counts, root aggregates) takes them; a walk would need the row
	// path's per-source order by edge id.
	edgeVars []string
	agg      *query.Aggregate
}

// denseShape returns the dense form of aggregate o, or nil when it is not
// a count over a tree of expansions (with at least one expansion: a single
// scan has its own streaming path), grouped by nothing or by properties
// (or the id) of the tree's root variable.
func denseShape(o *query.Aggregate) *densePlan {
	dp := denseTree(o.Input)
	if dp == nil {
		return nil
	}
	if dp.closes {
		return nil
	}
	dp.agg = o
	counted := func(v string) bool { return dp.vars[v] != nil || slices.Contains(dp.edgeVars, v) }
	if !aggReads(o, counted, func(v string) bool { return v == dp.root }) {
		return nil
	}
	return dp
}

// aggReads reports whether every aggregate of o is a count of a variable
// that counted accepts or count/sum/avg/min/max of a property of a
// variable that read accepts, and every key a property or the id of a
// variable that read accepts.
func aggReads(o *query.Aggregate, counted, read func(v string) bool) bool {
	for _, a := range o.Aggs {
		switch {
		case a.Func == "count" && a.Arg.Kind == query.OpdID && counted(a.Arg.Var):
		case a.Arg.Kind == query.OpdProp && read(a.Arg.Var):
			switch a.Func {
			case "count", "sum", "avg", "min", "max":
			default:
				return false
			}
		default:
			return false
		}
	}
	for _, k := range o.Keys {
		if !read(k.Value.Var) || (k.Value.Kind != query.OpdProp && k.Value.Kind != query.OpdID) {
			return false
		}
	}
	return true
}

// denseTree returns the dense form of binding tree input, or nil when it
// is not a tree of node expansions (at least one: a single scan has its own
// streaming path) from one unranked scan, with single-variable filters.
func denseTree(input query.Op) *densePlan {
	if !hasExpand(input) {
		return nil // the common scan-only read: nothing to allocate
	}
	dp := &densePlan{vars: map[string]*denseVar{}}
	expands := 0
	var walk func(op query.Op) bool
	walk = func(op query.Op) bool {
		switch o := op.(type) {
		case *query.Scan:
			if o.Rank != nil || dp.root != "" {
				return false
			}
			dp.root = o.Var
			dp.vars[o.Var] = &denseVar{name: o.Var, typ: o.Type, filters: o.Filters}
			return true
		case *query.Expand:
			if !walk(o.Input) {
				return false
			}
			src := dp.vars[o.Src]
			if src == nil || o.Min < 0 || o.Max < o.Min {
				return false
			}
			if o.EdgeVar != "" {
				// An edge variable binds one row per edge: counted by
				// the weights (fold), never read (edge ids and
				// properties are not in the views).
				if o.Min != 1 || o.Max != 1 || o.DstBound {
					return false
				}
				dp.edgeVars = append(dp.edgeVars, o.EdgeVar)
			}
			if (o.Min != 1 || o.Max != 1) && src.typ != o.DstType {
				return false
			}
			if o.DstBound {
				// Cycle closing: a join filter between two bound
				// variables, outside the tree the weights factor over;
				// only the walk (dense_aggregate.go, dense_project.go)
				// takes it.
				if dst := dp.vars[o.Dst]; dst == nil || dst.typ != o.DstType {
					return false
				}
				dp.expands = append(dp.expands, o)
				dp.closes = true
				return true
			}
			if dp.vars[o.Dst] != nil {
				return false
			}
			src.kids = append(src.kids, o)
			dp.expands = append(dp.expands, o)
			dp.vars[o.Dst] = &denseVar{name: o.Dst, typ: o.DstType}
			expands++
			return true
		case *query.Filter:
			if !walk(o.Input) {
				return false
			}
			v := predVar(&o.Pred)
			if dp.vars[v] == nil {
				return false
			}
			dp.vars[v].filters = append(dp.vars[v].filters, o.Pred)
			return true
		}
		return false
	}
	if !walk(input) || expands == 0 {
		return nil
	}
	return dp
}

// hasExpand reports whether the binding tree op holds an Expand.
func hasExpand(op query.Op) bool {
	if _, ok := op.(*query.Expand); ok {
		return true
	}
	for _, c := range op.Children() {
		if hasExpand(c) {
			return true
		}
	}
	return false
}

// predVar returns the one variable a comparison of a variable's property or
// id with a constant reads ("" for any other predicate).
func predVar(p *query.Pred) string {
	if p.Func != "" {
		return ""
	}
	isVar := func(o query.Operand) bool { return o.Kind == query.OpdProp || o.Kind == query.OpdID }
	isConst := func(o query.Operand) bool { return o.Kind == query.OpdParam || o.Kind == query.OpdLit }
	switch {
	case isVar(p.Left) && isConst(p.Right):
		return p.Left.Var
	case isConst(p.Left) && isVar(p.Right):
		return p.Right.Var
	}
	return ""
}

// denseAggregate answers aggregate o on the snapshot's dense views; ok is
// false when the snapshot has none, o has another shape, the snapshot
// prefers images, or a filter cannot be evaluated by the table scan. Its
// rows are the ones aggregate returns: groups in first-seen order of the
// binding rows (root rows in storage order), a count per group, no group
// without rows (one row of zeros without keys).
func (r *runner) denseAggregate(ctx context.Context, o *query.Aggregate) ([][]any, bool, error) {
	dp := denseShape(o)
	walk := dp == nil // keys or arguments of other variables: dense_aggregate.go
	if walk {
		dp = denseWalkShape(o)
	}
	if dp == nil {
		return nil, false, nil
	}
	dr, ok, err := r.denseViews(ctx, dp)
	if err != nil || !ok {
		return nil, false, err
	}
	if walk {
		return dr.aggregateByWalk()
	}
	root := dp.vars[dp.root]
	w, err := dr.weights(root)
	if err != nil {
		return nil, false, err
	}
	var total int64
	for _, x := range w {
		total += x
	}
	if total > maxDenseRows {
		// More binding rows than any budget could hold on the row path,
		// which is then the one to report it.
		return nil, false, nil
	}
	rows, err := dr.aggregateByRoot(root, w)
	return rows, err == nil, err
}

// denseViews checks that binding tree dp walks edge types whose ends are
// its variables' types and that the snapshot prefers dense views for it,
// then builds the node views and filter bitmaps of its variables. ok is
// false when another path should answer.
func (r *runner) denseViews(ctx context.Context, dp *densePlan) (*denseRun, bool, error) {
	ds, ok := r.snap.(DenseSource)
	if !ok || r.opts.NoIndexes || r.plan == nil {
		return nil, false, nil
	}
	cat := r.snap.Catalog()
	for _, x := range dp.expands {
		et, ok := cat.Edge(x.Edge)
		if !ok {
			return nil, false, nil
		}
		from, to := et.From, et.To
		if x.Dir == query.DirIn {
			from, to = to, from
		}
		if dp.vars[x.Src].typ != from || x.DstType != to || x.Dir == query.DirBoth && et.From != et.To {
			return nil, false, nil
		}
	}
	scans := make([]*query.Scan, 0, len(dp.vars))
	for _, v := range dp.vars {
		scans = append(scans, &query.Scan{Var: v.name, Type: v.typ, Filters: v.filters})
	}
	if prefer, err := ds.PreferDense(ctx, r.plan, scans, r.params); err != nil || !prefer {
		return nil, false, err
	}
	dr := &denseRun{ctx: ctx, r: r, ds: ds, dp: dp, nodes: map[string]*snapshot.DenseNodes{}, adj: map[string][2]*snapshot.DenseCSR{}}
	masks := map[string][]uint64{}
	for _, o := range scans {
		d, err := dr.nodesOf(o.Type)
		if err != nil {
			return nil, false, err
		}
		m, ok, err := ds.DenseMask(ctx, d, o, r.params, r.mem)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, runErrorf("dense traversal: the filters of $%s did not push down", o.Var)
		}
		masks[o.Var] = m
	}
	dr.masks = masks
	return dr, true, nil
}

// walkWeights computes the binding counts of every variable for a walk
// (kept in dr.keep) and returns the number of binding rows, Σ w_root (an
// upper bound when an expansion closes a cycle).
func (dr *denseRun) walkWeights() (int64, error) {
	dr.keep = map[string][]int64{}
	root := dr.dp.vars[dr.dp.root]
	w, err := dr.weights(root)
	if err != nil {
		return 0, err
	}
	dr.keep[root.name] = w
	var total int64
	for _, x := range w {
		total += x
	}
	return total, nil
}

// maxDenseRows bounds the binding rows a dense aggregate folds one by one
// (a float sum adds a value once per row, as the row path does).
const maxDenseRows = 1 << 28

// aggregateByRoot folds the binding-row counts w of the root's rows into
// the aggregate's groups (keyed by properties or the id of the root
// variable; one group without keys) and states (counts of any variable;
// count, sum, avg, min, max of root properties): groups in order of their
// first counted row, each value folded w[x] times in root row order —
// exactly the row path's order of additions, since every binding row of a
// root row carries that row's values.
func (dr *denseRun) aggregateByRoot(root *denseVar, w []int64) ([][]any, error) {
	if rows, ok, err := dr.aggregateByRootTyped(root, w); err != nil || ok {
		return rows, err
	}
	o := dr.dp.agg
	d := dr.nodes[root.typ]
	var props []string
	propAt := func(p string) int {
		if j := slices.Index(props, p); j >= 0 {
			return j
		}
		props = append(props, p)
		return len(props) - 1
	}
	keyCol := make([]int, len(o.Keys)) // index in props, -1 for the id
	for i, k := range o.Keys {
		keyCol[i] = -1
		if k.Value.Kind == query.OpdProp {
			keyCol[i] = propAt(k.Value.Prop)
		}
	}
	argCol := make([]int, len(o.Aggs)) // index in props, -1: counts rows
	for i, a := range o.Aggs {
		argCol[i] = -1
		if a.Arg.Kind == query.OpdProp {
			argCol[i] = propAt(a.Arg.Prop)
		}
	}
	ag := newAggGroups(o, dr.r.mem)
	keys := make([]any, len(o.Keys))
	err := dr.ds.DenseColumns(dr.ctx, d, props, func(x int32, vals []any) error {
		n := w[x]
		if n == 0 {
			return nil
		}
		for i, c := range keyCol {
			if c < 0 {
				keys[i] = d.ID(x)
			} else {
				keys[i] = vals[c]
			}
		}
		g := ag.group(keys)
		for i, c := range argCol {
			if c < 0 {
				g.st[i].n += n
				continue
			}
			g.st[i].add(o.Aggs[i].Func, vals[c], n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ag.rows(), nil
}

// denseRun is one dense count.
type denseRun struct {
	ctx   context.Context
	r     *runner
	ds    DenseSource
	dp    *densePlan
	nodes map[string]*snapshot.DenseNodes
	adj   map[string][2]*snapshot.DenseCSR // edge type → out, in
	masks map[string][]uint64
	// keep, when set, receives the weights of every non-root variable
	// (weights keeps them charged instead of dropping them).
	keep map[string][]int64
}

func (dr *denseRun) nodesOf(typ string) (*snapshot.DenseNodes, error) {
	if d := dr.nodes[typ]; d != nil {
		return d, nil
	}
	d, err := dr.ds.DenseNodes(dr.ctx, typ, dr.r.mem)
	if err != nil {
		return nil, err
	}
	dr.nodes[typ] = d
	return d, nil
}

// csrs returns the adjacency of x's edge by its walk's near end: out-edges
// and/or in-edges.
func (dr *denseRun) csrs(x *query.Expand) (out, in *snapshot.DenseCSR, err error) {
	et, _ := dr.r.snap.Catalog().Edge(x.Edge)
	have := dr.adj[et.Name]
	needOut, needIn := x.Dir != query.DirIn, x.Dir != query.DirOut
	if needOut && have[0] == nil || needIn && have[1] == nil {
		from, err := dr.nodesOf(et.From)
		if err != nil {
			return nil, nil, err
		}
		to, err := dr.nodesOf(et.To)
		if err != nil {
			return nil, nil, err
		}
		o, i, err := dr.ds.DenseAdjacency(dr.ctx, et.Name, from, to, needOut && have[0] == nil, needIn && have[1] == nil, dr.r.mem)
		if err != nil {
			return nil, nil, err
		}
		if o != nil {
			have[0] = o
		}
		if i != nil {
			have[1] = i
		}
		dr.adj[et.Name] = have
	}
	if needOut {
		out = have[0]
	}
	if needIn {
		in = have[1]
	}
	return out, in, nil
}

// weights returns w_v (above) over the rows of v's type.
func (dr *denseRun) weights(v *denseVar) ([]int64, error) {
	d := dr.nodes[v.typ]
	n := d.Len()
	charge(dr.r.mem, 8*int64(n))
	w := make([]int64, n)
	mask := dr.masks[v.name]
	for i := range w {
		if mask == nil || mask[i>>6]&(1<<(i&63)) != 0 {
			w[i] = 1
		}
	}
	for _, x := range v.kids {
		kid := dr.dp.vars[x.Dst]
		wk, err := dr.weights(kid)
		if err != nil {
			return nil, err
		}
		out, in, err := dr.csrs(x)
		if err != nil {
			return nil, err
		}
		if err := dr.fold(w, wk, x, out, in, len(wk)); err != nil {
			return nil, err
		}
		if dr.keep != nil {
			dr.keep[kid.name] = wk // a projection prunes its walk by them
			continue
		}
		dr.r.mem.Release(8 * int64(len(wk)))
	}
	return w, nil
}

// fold multiplies w[k] by the sum of wk over the far rows x binds from
// near row k, for every k still counted.
func (dr *denseRun) fold(w, wk []int64, x *query.Expand, out, in *snapshot.DenseCSR, farRows int) error {
	multi := x.Min != 1 || x.Max != 1
	// The visited stamps, and for a BFS its two frontiers (each at most
	// every far row).
	held := 4 * int64(farRows)
	if multi {
		held *= 3
	}
	charge(dr.r.mem, held)
	defer dr.r.mem.Release(held)
	stamp := make([]uint32, farRows)
	gen := uint32(0)
	var frontier, next []int32
	for k := range w {
		if w[k] == 0 {
			continue
		}
		if k&4095 == 0 {
			if err := dr.ctx.Err(); err != nil {
				return err
			}
		}
		gen++
		if gen == 0 {
			clear(stamp)
			gen = 1
		}
		src := int32(k)
		var sum int64
		if x.EdgeVar != "" {
			// One binding row per edge (expander.edgesTo): no
			// deduplication; walking both directions, a self-loop is
			// one edge, seen as an out-edge.
			if out != nil {
				for _, f := range out.At(src) {
					sum += wk[f]
				}
			}
			if in != nil {
				for _, f := range in.At(src) {
					if out == nil || f != src {
						sum += wk[f]
					}
				}
			}
			w[k] *= sum
			continue
		}
		if !multi {
			// Distinct one-hop neighbours (expander.neighbours).
			visit := func(fars []int32) {
				for _, f := range fars {
					if stamp[f] != gen {
						stamp[f] = gen
						sum += wk[f]
					}
				}
			}
			if out != nil {
				visit(out.At(src))
			}
			if in != nil {
				visit(in.At(src))
			}
			w[k] *= sum
			continue
		}
		// BFS by shortest distance (expander.reachRows): the source is
		// never reported, except at hop 1 through a self-loop.
		stamp[src] = gen
		self := false
		frontier = append(frontier[:0], src)
		for d := int64(1); d <= x.Max && len(frontier) > 0; d++ {
			next = next[:0]
			visit := func(fars []int32) {
				for _, f := range fars {
					if d == 1 && f == src {
						self = self || x.Min <= 1
						continue
					}
					if stamp[f] == gen {
						continue
					}
					stamp[f] = gen
					next = append(next, f)
					if d >= x.Min {
						sum += wk[f]
					}
				}
			}
			for _, nd := range frontier {
				if out != nil {
					visit(out.At(nd))
				}
				if in != nil {
					visit(in.At(nd))
				}
			}
			frontier, next = next, frontier
		}
		if self {
			sum += wk[src]
		}
		w[k] *= sum
	}
	return nil
}

// aggregateByRootTyped is aggregateByRoot on the typed columns of the
// root's properties (aggregate_typed.go's fold, each row folded w[x]
// times: a sum adds its value w[x] times in a row, as the boxed fold
// does), without a boxed value per cell; ok is false when the source has
// no typed scan or a key or argument is not a flat property of the root
// (an id key, a list).
func (dr *denseRun) aggregateByRootTyped(root *denseVar, w []int64) ([][]any, bool, error) {
	ts, ok := dr.ds.(denseTypedSource)
	if !ok {
		return nil, false, nil
	}
	o := dr.dp.agg
	nt, ok := dr.r.snap.Catalog().Node(root.typ)
	if !ok {
		return nil, false, nil
	}
	tp := &typedPlan{sc: &query.Scan{Var: root.name, Type: root.typ}, nt: nt,
		keyCols: make([]int, len(o.Keys)), aggs: make([]typedAgg, len(o.Aggs))}
	for i, k := range o.Keys {
		if tp.keyCols[i] = tp.colOf(k.Value); tp.keyCols[i] < 0 {
			return nil, false, nil
		}
	}
	for i, a := range o.Aggs {
		if a.Func == "count" && a.Arg.Kind == query.OpdID {
			tp.aggs[i] = typedAgg{fn: aggCount, col: -1} // counts binding rows
			continue
		}
		c := tp.colOf(a.Arg)
		if c < 0 {
			return nil, false, nil
		}
		tp.aggs[i] = typedAgg{fn: aggFuncOf(a.Func), col: c}
	}
	f := newTypedFold(o, tp, dr.r.mem)
	x := 0
	err := ts.DenseScanColumns(dr.ctx, dr.nodes[root.typ], tp.props, func(n int, cols []arrow.Array) error {
		for k, c := range tp.cols {
			if err := c.bind(cols[k]); err != nil {
				return err
			}
		}
		for i, m := range w[x : x+n] {
			if m != 0 {
				f.rowN(i, m)
			}
		}
		x += n
		return nil
	})
	if errors.Is(err, errTypedFallback) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return f.result(), true, nil
}
