package eval

import (
	"context"
	"slices"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Snapshot is what the executor reads: the catalog plus decoded node and
// edge tables (*snapshot.Snapshot over a commit, *snapshot.Mem in memory).
// Implementations materialize tables lazily from immutable table states and
// cache them by state, so two snapshots that share a table state share its
// decoded image.
//
// A Snapshot never changes after creation; it is safe for concurrent use.
type Snapshot interface {
	Catalog() *schema.Catalog
	// Nodes returns the table of node type typ (exact name).
	Nodes(ctx context.Context, typ string) (*snapshot.NodeTable, error)
	// Edges returns the table of edge type typ (exact catalog name).
	Edges(ctx context.Context, typ string) (*snapshot.EdgeTable, error)
}

// Options configures one read-query execution.
type Options struct {
	// Now is the instant now() evaluates to (UTC). The zero time means the
	// wall clock at the start of the run; callers that need reproducible
	// results (tests, replays) set it.
	Now time.Time
	// Embed turns a String query of nearest() into a vector of the ranked
	// property's dimension (req.Model is its recorded @embed model, "" if
	// none). When nil, nearest() with a String query is an execution error.
	Embed func(ctx context.Context, req EmbedRequest) ([]float32, error)
	// NoIndexes answers every scan by reading every row and every traversal
	// through the id-keyed adjacency maps, ignoring the images' sorted
	// indexes, key lookups and row-resolved adjacency: the reference the
	// index paths are checked against. It also keeps filters and
	// aggregates on the boxed cells, off the images' typed columns.
	NoIndexes bool
	// MemoryBytes bounds the query's working memory (binding rows,
	// memoized expansions, aggregate groups, and output rows when they are
	// held — Run — rather than streamed): 0 = DefaultMemoryBytes, < 0 =
	// unlimited. Over it the query stops with *limits.Error (budget.go).
	MemoryBytes int64
	// NProbe is how many inverted lists per fragment an unfiltered
	// nearest() visits in a vector index (0 = DefaultNProbe); more lists,
	// higher recall, slower.
	NProbe int
}

// EmbedRequest is one String query of nearest() to embed.
type EmbedRequest struct {
	Type, Prop string // the ranked node type and Vector property
	Text       string
	Model      string // @embed(model=…) of the property, "" if none
	Dim        int
}

// Result is the output of a read query: Rows[i][j] is the value of
// Columns[j] in the value model of value.go (nil is null). Callers encode
// cells with EncodeJSON(Columns[j].Type, v).
type Result struct {
	Columns []query.Column
	Rows    [][]any
}

// Run executes the read plan against snap. params holds raw
// JSON-decoded values keyed by parameter name without '$'; each declared
// parameter is converted with ConvertParam (a missing non-nullable one is
// the *value.Error "parameter 'x' not provided"); undeclared keys are
// ignored.
//
// Execution is batch-at-a-time over rows of bound entity references (see
// docs/query-execution.md); property values are read only by predicates,
// sort keys and the final projection. Run does not retain snap or the
// plan after it returns and is safe to call concurrently.
//
// A query that would exceed opts.MemoryBytes, or runs past a deadline set
// with limits.WithTimeout, stops with *limits.Error; the process is
// unharmed.
func Run(ctx context.Context, snap Snapshot, plan *query.Plan, params map[string]any, opts Options) (res *Result, err error) {
	defer func() { err = limits.FromContext(ctx, err) }()
	defer recoverBudget(&err)
	r, out, err := start(ctx, snap, plan, params, opts)
	if err != nil {
		return nil, err
	}
	st := Stream{Columns: plan.Columns, out: out, mem: r.mem}
	rows, err := st.collect(ctx)
	if err != nil {
		return nil, err
	}
	if rows == nil {
		rows = [][]any{}
	}
	return &Result{Columns: plan.Columns, Rows: rows}, nil
}

// RunStream is Run without holding the projected result: it evaluates the
// binding rows (and any aggregate, sort or limit over them) and returns a
// Stream that projects the output rows batch by batch as they are read.
// Every error of planning and evaluation is returned here, before a row is
// produced; reading the stream can then fail only on ctx or on the
// caller's own callback. The stream's output rows are not charged to
// opts.MemoryBytes (only the batch it holds is), so a result larger than
// the budget, or than memory, can be written out.
func RunStream(ctx context.Context, snap Snapshot, plan *query.Plan, params map[string]any, opts Options) (st *Stream, err error) {
	defer func() { err = limits.FromContext(ctx, err) }()
	defer recoverBudget(&err)
	r, out, err := start(ctx, snap, plan, params, opts)
	if err != nil {
		return nil, err
	}
	return &Stream{Columns: plan.Columns, out: out, mem: r.mem}, nil
}

// start converts the parameters and evaluates the plan up to its output
// rows (Run collects them, RunStream streams them).
func start(ctx context.Context, snap Snapshot, plan *query.Plan, params map[string]any, opts Options) (*runner, *outRows, error) {
	if plan == nil || plan.Read == nil {
		return nil, nil, runErrorf("query '%s' is a mutation, not a read query", planName(plan))
	}
	r := &runner{
		snap:   snap,
		opts:   opts,
		params: make(map[string]any, len(plan.Params)),
		// args, inner, argOf, texts, fts and scores are made on first
		// use (put): most reads need none of them.
	}
	r.mem = initBudget(&r.budget, opts)
	for _, ps := range plan.Params {
		raw, present := params[ps.Name]
		v, err := value.ConvertParam(ps.Name, ps.Type, raw, present)
		if err == nil {
			err = ps.CheckEnums(v)
		}
		if err != nil {
			return nil, nil, value.UndeclaredHint(err, params, func(k string) bool {
				return slices.ContainsFunc(plan.Params, func(p query.ParamSpec) bool { return p.Name == k })
			})
		}
		r.params[ps.Name] = v
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	r.now = now.UTC().UnixMilli()

	r.plan = plan
	out, err := r.output(ctx, plan.Read)
	if err != nil {
		return nil, nil, err
	}
	return r, out, nil
}

func planName(p *query.Plan) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// runner holds the state of one Run call. It is not shared between
// calls, so caches here never outlive one snapshot.
type runner struct {
	mem *limits.Budget // the query's working-memory budget (nil: unlimited)
	// budget is where mem points when the query has a limit, and topL
	// (over topSlots) the first top layout: kept inline, so a key lookup
	// allocates one runner instead of a runner, a budget and a layout.
	budget   limits.Budget
	topL     layout
	topSlots [4]slot
	topUsed  bool
	// projected is the output of the query's projection (a runner
	// evaluates one).
	projected outRows
	// capOp, when set, is the binding operator under `limit N` with nothing
	// between them but the projection: it may stop after capN rows, since
	// later rows would be cut anyway (limitCap).
	capOp  query.Op
	capN   int64
	snap   Snapshot
	plan   *query.Plan
	opts   Options
	params map[string]any
	now    int64

	top   *layout
	args  map[*query.Argument]*argInput
	inner map[*query.AntiJoin]*layout
	argOf map[*query.AntiJoin]*query.Argument

	// rank is the query's ranking (at most one per query) and rankSlot the
	// top-layout slot of the ranked variable; rankPos maps a ranked
	// entity's node row to its position, set by the operator that ranked.
	rank     *query.RankSpec
	rankSlot int
	rankPos  map[int32]int
	// arm selects the rrf arm being evaluated (-1 outside rrf fusion).
	arm int

	texts  map[textKey]*textIndex
	fts    map[textKey]*ftsView         // persisted/cached full-text indexes (fts.go)
	scores map[string]map[int32]float64 // rank spec text → entity row → score
	// projLimit is the limit of a Limit over the Project being evaluated
	// (0: none); a bm25 scan that is the whole binding tree then keeps only
	// that many entities (each is one output row).
	projLimit   int64
	bindingRoot query.Op // the binding tree under the projection
	// chunkScan, when set, binds only the rows whose ids are in chunkIDs:
	// the tree runs on one chunk of root rows (chunk_project.go).
	chunkScan *query.Scan
	chunkIDs  map[string]bool
}

// argInput is what an anti-join hands its sub-plan's Argument leaf: the
// outer rows and their layout.
type argInput struct {
	rows *rowSet
	l    *layout
}

// output evaluates the projection-level operators (Limit, Project,
// Aggregate and the Sort above an Aggregate). A projection's rows are
// left to the Stream (only the first N binding rows under `limit N`);
// aggregate output is held.
func (r *runner) output(ctx context.Context, op query.Op) (*outRows, error) {
	switch o := op.(type) {
	case *query.Limit:
		if pr, ok := o.Input.(*query.Project); ok {
			// Only the first N binding rows are projected: the operator
			// producing them stops there (limitCap).
			r.capOp, r.capN = pr.Input, o.N
			r.projLimit = o.N
		}
		out, err := r.output(ctx, o.Input)
		if err != nil {
			return nil, err
		}
		if int64(out.n) > o.N {
			out.n = int(o.N)
		}
		return out, nil
	case *query.Project:
		// Under `limit` (no `order`), the rows of a traversal from an
		// unanchored scan are read root chunk by root chunk, until the
		// limit (chunk_project.go).
		if out, ok, err := r.chunkProject(ctx, o, r.projLimit); err != nil {
			return nil, err
		} else if ok {
			return out, nil
		}
		// A projection of an unanchored traversal's rows walks dense
		// views, when the snapshot has them and prefers them
		// (dense_project.go).
		if out, ok, err := r.denseProject(ctx, o, r.projLimit); err != nil {
			return nil, err
		} else if ok {
			return out, nil
		}
		rs, l, err := r.bindingRows(ctx, o.Input)
		if err != nil {
			return nil, err
		}
		fns, err := r.project(ctx, o, l)
		if err != nil {
			return nil, err
		}
		r.projected = outRows{rs: rs, fns: fns, n: rs.n()}
		return &r.projected, nil
	case *query.Aggregate:
		// A count over an unanchored traversal walks dense views of its
		// tables, when the snapshot has them and prefers them (dense.go).
		if rows, ok, err := r.denseAggregate(ctx, o); err != nil {
			return nil, err
		} else if ok {
			return heldRows(rows), nil
		}
		// An aggregate over a scan the snapshot streams as typed columns
		// folds them without a table (aggregate_typed.go).
		if rows, ok, err := r.typedAggregate(ctx, o); err != nil {
			return nil, err
		} else if ok {
			return heldRows(rows), nil
		}
		if n, ok, err := r.countOnly(ctx, o); err != nil {
			return nil, err
		} else if ok {
			row := make([]any, len(o.Columns))
			for i := range row {
				row[i] = n
			}
			return heldRows([][]any{row}), nil
		}
		// The same over a decoded image's typed columns.
		if rows, ok, err := r.imageAggregate(ctx, o); err != nil {
			return nil, err
		} else if ok {
			return heldRows(rows), nil
		}
		rs, l, err := r.bindingRows(ctx, o.Input)
		if err != nil {
			return nil, err
		}
		rows, err := r.aggregate(ctx, o, rs, l)
		if err != nil {
			return nil, err
		}
		return heldRows(rows), nil
	case *query.Sort:
		agg, ok := o.Input.(*query.Aggregate)
		if !ok {
			return nil, runErrorf("plan has a column sort over %T", o.Input)
		}
		out, err := r.output(ctx, agg)
		if err != nil {
			return nil, err
		}
		rows, err := sortOutput(o, agg.Columns, out.rows)
		if err != nil {
			return nil, err
		}
		return heldRows(rows), nil
	}
	return nil, runErrorf("plan root %T produces no output columns", op)
}

// bindingRows prepares the top layout and evaluates the binding-level tree
// under a projection. With a ranking it regroups rows by rank position
// (fan-out rows stay under their ranked entity) and, for rrf, fuses the
// arms' pipelines.
func (r *runner) bindingRows(ctx context.Context, op query.Op) (*rowSet, *layout, error) {
	r.top = r.newTop()
	r.bindingRoot = op
	if err := r.declare(ctx, op, r.top); err != nil {
		return nil, nil, err
	}
	r.rank, _ = rankOp(op)
	r.arm = -1
	if r.rank != nil {
		r.capOp = nil // ranking reorders rows after they are produced
	}
	if r.rank == nil {
		rs, err := r.eval(ctx, op, r.top)
		return rs, r.top, err
	}
	r.rankSlot = r.top.idx(rankVar(r.rank))
	if r.rank.Func != "rrf" {
		rs, err := r.eval(ctx, op, r.top)
		if err != nil {
			return nil, nil, err
		}
		return r.regroup(rs), r.top, nil
	}
	rs, err := r.fuseRRF(ctx, op)
	return rs, r.top, err
}

// newTop returns an empty top layout: the runner's inline one the first
// time (a runner evaluates one binding tree), a new one after that, so a
// layout already handed out is never emptied under its rows.
func (r *runner) newTop() *layout {
	if r.topUsed {
		return newLayout(false)
	}
	r.topUsed = true
	r.topL.slots = r.topSlots[:0]
	return &r.topL
}

// rankOp returns the ranking of the Scan or RankRows that ranks the
// binding tree (outside anti-join sub-plans, which never rank) and its K,
// the query limit (0 for none); rk is nil when nothing ranks. A plan has
// at most one ranking operator (query's checker puts it on the ranked
// variable's scan or wraps the binding root in RankRows).
func rankOp(op query.Op) (rk *query.RankSpec, k int64) {
	switch o := op.(type) {
	case *query.Scan:
		return o.Rank, o.K
	case *query.RankRows:
		return o.Rank, o.K
	case *query.AntiJoin:
		return rankOp(o.Input)
	}
	for _, c := range op.Children() {
		if rk, k := rankOp(c); rk != nil {
			return rk, k
		}
	}
	return nil, 0
}

func rankVar(rk *query.RankSpec) string {
	if rk.Func == "rrf" {
		return rk.Arms[0].Var
	}
	return rk.Var
}

// eval evaluates a binding-level operator in layout l.
func (r *runner) eval(ctx context.Context, op query.Op, l *layout) (*rowSet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch o := op.(type) {
	case *query.Scan:
		return r.evalScan(ctx, o, l)
	case *query.Argument:
		return r.evalArgument(o, l)
	case *query.Expand:
		return r.evalExpand(ctx, o, l)
	case *query.CrossJoin:
		return r.evalCrossJoin(ctx, o, l)
	case *query.Filter:
		in, err := r.eval(ctx, o.Input, l)
		if err != nil {
			return nil, err
		}
		keep, err := r.pred(ctx, &o.Pred, l)
		if err != nil {
			return nil, err
		}
		return in.filter(keep), nil
	case *query.AntiJoin:
		return r.evalAntiJoin(ctx, o, l)
	case *query.RankRows:
		return r.evalRankRows(ctx, o, l)
	case *query.Sort:
		in, err := r.eval(ctx, o.Input, l)
		if err != nil {
			return nil, err
		}
		return r.sortRows(ctx, o, in, l)
	}
	return nil, runErrorf("operator %T is not valid below a projection", op)
}

func (r *runner) evalCrossJoin(ctx context.Context, o *query.CrossJoin, l *layout) (*rowSet, error) {
	left, err := r.eval(ctx, o.Left, l)
	if err != nil {
		return nil, err
	}
	right, err := r.eval(ctx, o.Right, l)
	if err != nil {
		return nil, err
	}
	n := left.n() * right.n()
	limit, capped := r.limitCap(o)
	if capped {
		n = min(n, limit)
	}
	out := newRowSet(r.mem, l.width(), n)
	for i := 0; i < left.n() && out.n() < n; i++ {
		lr := left.row(i)
		for j := 0; j < right.n() && out.n() < n; j++ {
			dst := out.push(lr)
			for s, v := range right.row(j) {
				if v >= 0 {
					dst[s] = v
				}
			}
		}
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// limitCap returns how many rows op needs to produce when it is the
// operator directly under `limit N` (through the projection only).
func (r *runner) limitCap(op query.Op) (int, bool) {
	if r.capOp == nil || r.capOp != op {
		return 0, false
	}
	return int(min(r.capN, int64(1<<31-1))), true
}

func (r *runner) evalArgument(o *query.Argument, l *layout) (*rowSet, error) {
	in := r.args[o]
	if in == nil {
		return nil, runErrorf("anti-join argument evaluated outside its anti-join")
	}
	out := newRowSet(r.mem, l.width(), in.rows.n())
	from := make([]int, len(o.Vars))
	to := make([]int, len(o.Vars))
	for k, v := range o.Vars {
		from[k], to[k] = in.l.idx(v), l.idx(v)
	}
	for i := 0; i < in.rows.n(); i++ {
		src := in.rows.row(i)
		dst := out.pushEmpty()
		dst[originSlot] = int32(i)
		for k := range from {
			dst[to[k]] = src[from[k]]
		}
	}
	return out, nil
}

// evalAntiJoin evaluates the sub-plan once for all outer rows (each inner
// row remembers its outer row in the origin slot) and keeps the outer rows
// that produced no inner row.
func (r *runner) evalAntiJoin(ctx context.Context, o *query.AntiJoin, l *layout) (*rowSet, error) {
	outer, err := r.eval(ctx, o.Input, l)
	if err != nil {
		return nil, err
	}
	if outer.n() == 0 {
		return outer, nil
	}
	arg := r.argOf[o]
	put(&r.args, arg, &argInput{rows: outer, l: l})
	sub, err := r.eval(ctx, o.Sub, r.inner[o])
	delete(r.args, arg)
	if err != nil {
		return nil, err
	}
	hit := make([]bool, outer.n())
	for i := 0; i < sub.n(); i++ {
		hit[sub.row(i)[originSlot]] = true
	}
	out := newRowSet(r.mem, outer.w, outer.n())
	for i := 0; i < outer.n(); i++ {
		if !hit[i] {
			out.push(outer.row(i))
		}
	}
	return out, nil
}

// put stores v under k in *m, making the map on first use.
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}
