package eval

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
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

// cellClass is how a typed column's cells are read and compared: the
// value model's int64/int32, uint64, float64, string and bool.
type cellClass uint8

const (
	classInt cellClass = iota + 1
	classUint
	classFloat
	classString
	classBool
)

// classOf returns the class of a flat property kind; ok is false for the
// kinds the typed path does not read (vectors, blobs, lists).
func classOf(k schema.Kind) (cellClass, bool) {
	switch k {
	case schema.KindI32, schema.KindI64, schema.KindDate, schema.KindDateTime:
		return classInt, true
	case schema.KindU32, schema.KindU64:
		return classUint, true
	case schema.KindF32, schema.KindF64:
		return classFloat, true
	case schema.KindString, schema.KindEnum:
		return classString, true
	case schema.KindBool:
		return classBool, true
	}
	return 0, false
}

// typedCol is one property's column of the current batch, unboxed.
type typedCol struct {
	class cellClass
	kind  schema.Kind
	arr   arrow.Array // nil: null in every row
	valid []byte      // arr's validity bitmap when it has nulls (bit off+i: row i is not null)
	off   int

	i64 []int64
	i32 []int32
	d32 []arrow.Date32
	d64 []arrow.Date64
	u64 []uint64
	u32 []uint32
	f64 []float64
	f32 []float32
	str *array.String
	bl  *array.Boolean
}

// bind points c at a batch's column a; errTypedFallback when a is of a
// physical type this path does not read.
func (c *typedCol) bind(a arrow.Array) error {
	*c = typedCol{class: c.class, kind: c.kind, arr: a}
	if a == nil {
		return nil
	}
	if a.NullN() > 0 {
		c.valid, c.off = a.NullBitmapBytes(), a.Data().Offset()
	}
	ok := false
	switch x := a.(type) {
	case *array.Int64:
		c.i64, ok = x.Int64Values(), c.class == classInt
	case *array.Int32:
		c.i32, ok = x.Int32Values(), c.class == classInt
	case *array.Date32:
		c.d32, ok = x.Date32Values(), c.class == classInt
	case *array.Date64:
		c.d64, ok = x.Date64Values(), c.class == classInt
	case *array.Uint64:
		c.u64, ok = x.Uint64Values(), c.class == classUint
	case *array.Uint32:
		c.u32, ok = x.Uint32Values(), c.class == classUint
	case *array.Float64:
		c.f64, ok = x.Float64Values(), c.class == classFloat
	case *array.Float32:
		c.f32, ok = x.Float32Values(), c.class == classFloat
	case *array.String:
		c.str, ok = x, c.class == classString
	case *array.Boolean:
		c.bl, ok = x, c.class == classBool
	}
	if !ok {
		return errTypedFallback
	}
	return nil
}

func (c *typedCol) null(i int) bool {
	if c.valid != nil {
		j := c.off + i
		return c.valid[j>>3]&(1<<(j&7)) == 0
	}
	return c.arr == nil
}

func (c *typedCol) int(i int) int64 {
	switch {
	case c.i64 != nil:
		return c.i64[i]
	case c.i32 != nil:
		return int64(c.i32[i])
	case c.d32 != nil:
		return int64(c.d32[i])
	}
	return int64(c.d64[i])
}

func (c *typedCol) uint(i int) uint64 {
	if c.u64 != nil {
		return c.u64[i]
	}
	return uint64(c.u32[i])
}

func (c *typedCol) float(i int) float64 {
	if c.f64 != nil {
		return c.f64[i]
	}
	return float64(c.f32[i])
}

// number is a numeric cell widened as toFloat widens it for sum and avg.
func (c *typedCol) number(i int) float64 {
	switch c.class {
	case classInt:
		return float64(c.int(i))
	case classUint:
		return float64(c.uint(i))
	}
	return c.float(i)
}

// box returns cell i in the value model (nil for null), as
// value.FromColumn of the boxed path gives it.
func (c *typedCol) box(i int) any {
	if c.null(i) {
		return nil
	}
	switch c.class {
	case classInt:
		return c.boxInt(c.int(i))
	case classUint:
		return c.uint(i)
	case classFloat:
		return c.float(i)
	case classString:
		return strings.Clone(c.str.Value(i))
	}
	return c.bl.Value(i)
}

// boxInt boxes an integer cell: Date is int32 days, the others int64.
func (c *typedCol) boxInt(x int64) any {
	if c.kind == schema.KindDate {
		return int32(x)
	}
	return x
}

// appendKey appends cell i's TupleKey member.
func (c *typedCol) appendKey(b []byte, i int) []byte {
	if c.null(i) {
		return value.AppendNullKey(b)
	}
	switch c.class {
	case classInt:
		return value.AppendIntKey(b, c.int(i))
	case classUint:
		return value.AppendUintKey(b, c.uint(i))
	case classFloat:
		return value.AppendFloatKey(b, c.float(i))
	case classString:
		return value.AppendStringKey(b, c.str.Value(i))
	}
	return value.AppendBoolKey(b, c.bl.Value(i))
}

// typedPred compiles `cell op k` over column c as compareOp applies it to
// the boxed cell: false for a null cell or constant and for a constant of
// another kind; contains and starts_with on strings only.
func typedPred(c *typedCol, op query.CmpOp, k any) func(i int) bool {
	never := func(int) bool { return false }
	if k == nil {
		return never
	}
	if c.class == classString {
		ks, ok := k.(string)
		if !ok {
			return never
		}
		switch op {
		case query.OpEq:
			return func(i int) bool { return !c.null(i) && c.str.Value(i) == ks }
		case query.OpContains:
			return func(i int) bool { return !c.null(i) && strings.Contains(c.str.Value(i), ks) }
		case query.OpStartsWith:
			return func(i int) bool { return !c.null(i) && strings.HasPrefix(c.str.Value(i), ks) }
		}
		return func(i int) bool { return !c.null(i) && op.Holds(strings.Compare(c.str.Value(i), ks)) }
	}
	if op == query.OpContains || op == query.OpStartsWith {
		return never
	}
	if c.class == classBool {
		kb, ok := k.(bool)
		if !ok {
			return never
		}
		return func(i int) bool { return !c.null(i) && op.Holds(value.CompareBools(c.bl.Value(i), kb)) }
	}
	n, ok := value.NumOf(k)
	if !ok {
		return never
	}
	switch c.class {
	case classInt:
		if ki, isInt := k.(int64); isInt {
			return func(i int) bool { return !c.null(i) && op.Holds(cmp.Compare(c.int(i), ki)) }
		}
		return func(i int) bool { return !c.null(i) && op.Holds(n.CompareInt(c.int(i))) }
	case classUint:
		return func(i int) bool { return !c.null(i) && op.Holds(n.CompareUint(c.uint(i))) }
	}
	return func(i int) bool { return !c.null(i) && op.Holds(n.CompareFloat(c.float(i))) }
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
		acc.sum += c.number(i)
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
