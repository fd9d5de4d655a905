package eval

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Typed aggregates over streamed columns. A count or an aggregate over a
// plan's only scan, on a snapshot that streams that scan's rows as typed
// Arrow columns (ColumnSource: the partial snapshot of a cold read,
// snapshot/scan_columns.go), is folded row group by row group on those
// columns: the scan's remaining filters are compared on the unboxed
// cells (validity bitmaps for nulls), group keys are encoded straight
// into TupleKey bytes, and sums, counts and extremes are kept unboxed, so
// no value is boxed per cell and no node table is built — a boxed value
// is made once per group key and once per result. The answer is the row
// path's bit for bit (TestTypedAggregatesMatchImages in exec): rows come
// in the same storage order, so float sums add in the same order; a null
// never compares and is skipped by every aggregate; min and max keep the
// first of equal values and order NaN last (value.Compare); groups come
// in first-seen order and equal keys group as TupleKey groups them.
//
// It takes keys and aggregate arguments that are flat properties (String,
// enum, Bool, the integers, floats, Date, DateTime) of the scanned
// variable, and filters comparing such a property with a constant; any
// other shape runs on the node table as before.

// ColumnSource is a snapshot that can stream the rows its table of a node
// type holds as typed Arrow columns without building that table
// (*snapshot.Mem of a partial scan).
type ColumnSource interface {
	// ScanColumns calls fn once per batch of n rows with the column of
	// each of props (nil: null in every row); ok is false when the
	// snapshot cannot stream typ (read Nodes instead).
	ScanColumns(ctx context.Context, typ string, props []string, fn func(n int, cols []arrow.Array) error) (ok bool, err error)
}

// typedAgg is one aggregate column: its function and argument column (-1:
// count of rows).
type typedAgg struct {
	fn  aggFunc
	col int
}

// aggFunc is an aggregate function, decided once per plan rather than by
// name per row.
type aggFunc uint8

const (
	aggCount aggFunc = iota
	aggSum           // sum and avg: the sum and the count of values
	aggMin
	aggMax
)

func aggFuncOf(name string) aggFunc {
	switch name {
	case "sum", "avg":
		return aggSum
	case "min":
		return aggMin
	case "max":
		return aggMax
	}
	return aggCount
}

// typedAcc is the unboxed state of one aggregate column of one group.
type typedAcc struct {
	n   int64 // non-null values (rows, for a count of rows)
	sum float64
	has bool // an extreme is held
	i   int64
	u   uint64
	f   float64
	s   string // views buf (setString)
	buf []byte
	b   bool
}

// typedAccBytes is what one typedAcc is charged.
const typedAccBytes = 96

// fold adds cell i of c to acc as aggState.add adds its boxed value.
func (acc *typedAcc) fold(fn aggFunc, c *typedCol, i int) {
	if c.null(i) {
		return
	}
	acc.n++
	switch fn {
	case aggSum:
		acc.sum = addFloat(acc.sum, c.number(i))
		return
	case aggCount:
		return
	}
	// better reports whether a comparison of the cell with the extreme
	// held replaces it (strictly: the first of equal values stays).
	better := func(cmp int) bool { return !acc.has || fn == aggMin && cmp < 0 || fn == aggMax && cmp > 0 }
	switch c.class {
	case classInt:
		if v := c.int(i); better(cmp.Compare(v, acc.i)) {
			acc.i = v
		}
	case classUint:
		if v := c.uint(i); better(cmp.Compare(v, acc.u)) {
			acc.u = v
		}
	case classFloat:
		if v := c.float(i); better(value.CompareFloats(v, acc.f)) {
			acc.f = v
		}
	case classString:
		if v := c.str.Value(i); better(strings.Compare(v, acc.s)) {
			acc.setString(v)
		}
	case classBool:
		if v := c.bl.Value(i); better(value.CompareBools(v, acc.b)) {
			acc.b = v
		}
	}
	acc.has = true
}

// foldN folds cell i of c m times, as aggState.add(fn, v, m) does: the
// count by m, a sum adding the value m times in a row, an extreme once.

func (acc *typedAcc) foldN(fn aggFunc, c *typedCol, i int, m int64) {
	if fn == aggSum {
		for range m {
			acc.fold(fn, c, i)
		}
		return
	}
	acc.fold(fn, c, i)
	if m > 1 && !c.null(i) {
		acc.n += m - 1
	}
}

// state returns acc as the row path's aggState (its extreme boxed as c's
// cells box).
func (acc *typedAcc) state(c *typedCol) aggState {
	st := aggState{n: acc.n, sum: acc.sum}
	if !acc.has {
		return st
	}
	switch c.class {
	case classInt:
		st.ext = c.boxInt(acc.i)
	case classUint:
		st.ext = acc.u
	case classFloat:
		st.ext = acc.f
	case classString:
		st.ext = strings.Clone(acc.s)
	case classBool:
		st.ext = acc.b
	}
	return st
}

// setString makes a copy of v the extreme held, in acc's own buffer: it is
// reused by every later extreme, so a new one allocates only when it is
// longer than all before it, not once per replacement. acc.s views the
// buffer; state copies it out.
func (acc *typedAcc) setString(v string) {
	acc.buf = append(acc.buf[:0], v...)
	acc.s = unsafe.String(unsafe.SliceData(acc.buf), len(acc.buf))
}

// typedPlan is an aggregate over a plan's only scan in the form the typed
// path folds: the flat properties it reads (one typedCol each), the
// columns of its keys, its aggregates and its filters.
type typedPlan struct {
	sc       *query.Scan
	nt       *schema.NodeType
	props    []string
	cols     []*typedCol
	keyCols  []int
	aggs     []typedAgg
	rowsOnly bool // every aggregate counts rows
	// filters: per filter of the scan, its column, operator and constant.
	filters []typedFilter
}

// typedFilter is one scan filter `column op k`.
type typedFilter struct {
	col int
	op  query.CmpOp
	k   any
}

// typedShape returns the typed form of aggregate o, or nil when o is not
// over a plain scan or reads anything but flat properties of its
// variable (see the top of this file).
func (r *runner) typedShape(o *query.Aggregate) *typedPlan {
	sc, isScan := o.Input.(*query.Scan)
	if !isScan || sc.Rank != nil {
		return nil
	}
	nt, ok := r.snap.Catalog().Node(sc.Type)
	if !ok {
		return nil
	}
	tp := &typedPlan{sc: sc, nt: nt, keyCols: make([]int, len(o.Keys)), aggs: make([]typedAgg, len(o.Aggs)), rowsOnly: true}
	for i, k := range o.Keys {
		if tp.keyCols[i] = tp.colOf(k.Value); tp.keyCols[i] < 0 {
			return nil
		}
	}
	for i, a := range o.Aggs {
		switch {
		case a.Func == "count" && a.Arg.Kind == query.OpdID && a.Arg.Var == sc.Var:
			tp.aggs[i] = typedAgg{fn: aggCount, col: -1}
		case a.Func == "count" || a.Func == "sum" || a.Func == "avg" || a.Func == "min" || a.Func == "max":
			c := tp.colOf(a.Arg)
			if c < 0 {
				return nil
			}
			tp.aggs[i], tp.rowsOnly = typedAgg{fn: aggFuncOf(a.Func), col: c}, false
		default:
			return nil
		}
	}
	for i := range sc.Filters {
		v, k, op, ok := sc.Filters[i].ConstCmp()
		if !ok {
			return nil
		}
		c := tp.colOf(v)
		if c < 0 {
			return nil
		}
		kv, err := r.constant(k)
		if err != nil {
			return nil // the row path reports it
		}
		tp.filters = append(tp.filters, typedFilter{col: c, op: op, k: kv})
	}
	return tp
}

// colOf returns the column of operand o when it is a flat property of the
// scan's variable, adding it on first sight; -1 otherwise.
func (tp *typedPlan) colOf(o query.Operand) int {
	if o.Kind != query.OpdProp || o.Var != tp.sc.Var {
		return -1
	}
	if i := slices.Index(tp.props, o.Prop); i >= 0 {
		return i
	}
	p, ok := tp.nt.Prop(o.Prop)
	if !ok {
		return -1
	}
	cl, ok := classOf(p.Type.Kind)
	if !ok {
		return -1
	}
	tp.props = append(tp.props, o.Prop)
	tp.cols = append(tp.cols, &typedCol{class: cl, kind: p.Type.Kind})
	return len(tp.props) - 1
}

// typedFold folds the rows of a typedPlan, row by row in the order given,
// into the aggregate's groups.
type typedFold struct {
	tp   *typedPlan
	mem  *limits.Budget
	ag   *aggGroups
	accs [][]typedAcc // per group, per aggregate
	key  []byte
	keys []any
}

func newTypedFold(o *query.Aggregate, tp *typedPlan, mem *limits.Budget) *typedFold {
	return &typedFold{tp: tp, mem: mem, ag: newAggGroups(o, mem), keys: make([]any, len(tp.keyCols))}
}

// group returns the index of the group of row i (its columns bound), made
// on first sight.
func (f *typedFold) group(i int) int {
	tp := f.tp
	if len(tp.keyCols) == 0 {
		if len(f.accs) == 0 {
			f.newGroup("", nil)
		}
		return 0
	}
	f.key = f.key[:0]
	for _, kc := range tp.keyCols {
		f.key = tp.cols[kc].appendKey(f.key, i)
	}
	if g, found := f.ag.find(f.key); found {
		return g
	}
	for j, kc := range tp.keyCols {
		f.keys[j] = tp.cols[kc].box(i)
	}
	return f.newGroup(string(f.key), f.keys)
}

func (f *typedFold) newGroup(tk string, keys []any) int {
	charge(f.mem, typedAccBytes*int64(len(f.tp.aggs)))
	f.accs = append(f.accs, make([]typedAcc, len(f.tp.aggs)))
	return f.ag.add(tk, keys)
}

// row folds row i (it passed every filter).
func (f *typedFold) row(i int) {
	acc := f.accs[f.group(i)]
	for a, ta := range f.tp.aggs {
		if ta.col < 0 {
			acc[a].n++
			continue
		}
		acc[a].fold(ta.fn, f.tp.cols[ta.col], i)
	}
}

// rowN folds row i m times (m binding rows carry its values: dense.go).
func (f *typedFold) rowN(i int, m int64) {
	acc := f.accs[f.group(i)]
	for a, ta := range f.tp.aggs {
		if ta.col < 0 {
			acc[a].n += m
			continue
		}
		acc[a].foldN(ta.fn, f.tp.cols[ta.col], i, m)
	}
}

// rowsN folds n rows that only count (rowsOnly, no key, no filter).
func (f *typedFold) rowsN(n int) {
	g := f.group(0)
	for a := range f.tp.aggs {
		f.accs[g][a].n += int64(n)
	}
}

// result returns the aggregate's output rows.
func (f *typedFold) result() [][]any {
	for g, acc := range f.accs {
		st := f.ag.groups[g].st
		for a, ta := range f.tp.aggs {
			if ta.col < 0 {
				st[a] = aggState{n: acc[a].n}
				continue
			}
			st[a] = acc[a].state(f.tp.cols[ta.col])
		}
	}
	return f.ag.rows()
}

// typedAggregate answers aggregate o over its only scan on the typed
// columns of a ColumnSource, batch by batch; ok is false when the
// snapshot streams none or o has another shape (see the top of this
// file).
func (r *runner) typedAggregate(ctx context.Context, o *query.Aggregate) ([][]any, bool, error) {
	cs, ok := r.snap.(ColumnSource)
	if !ok {
		return nil, false, nil
	}
	tp := r.typedShape(o)
	if tp == nil {
		return nil, false, nil
	}
	preds := make([]func(int) bool, len(tp.filters))
	for i, tf := range tp.filters {
		preds[i] = typedPred(tp.cols[tf.col], tf.op, tf.k)
	}
	f := newTypedFold(o, tp, r.mem)
	ok, err := cs.ScanColumns(ctx, tp.sc.Type, tp.props, func(n int, arrs []arrow.Array) error {
		for k, c := range tp.cols {
			if err := c.bind(arrs[k]); err != nil {
				return err
			}
		}
		if tp.rowsOnly && len(preds) == 0 && len(tp.keyCols) == 0 {
			f.rowsN(n)
			return ctx.Err()
		}
	rows:
		for i := range n {
			for _, p := range preds {
				if !p(i) {
					continue rows
				}
			}
			f.row(i)
		}
		return ctx.Err()
	})
	if errors.Is(err, errTypedFallback) {
		return nil, false, nil
	}
	if err != nil || !ok {
		return nil, false, err
	}
	return f.result(), true, nil
}
