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
	nulls bool        // arr has nulls

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
	c.nulls = a.NullN() > 0
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

func (c *typedCol) null(i int) bool { return c.arr == nil || c.nulls && c.arr.IsNull(i) }

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
	fn  string
	col int
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
func (acc *typedAcc) fold(fn string, c *typedCol, i int) {
	if c.null(i) {
		return
	}
	acc.n++
	switch fn {
	case "sum", "avg":
		acc.sum += c.number(i)
		return
	case "min", "max":
	default:
		return
	}
	// better reports whether a comparison of the cell with the extreme
	// held replaces it (strictly: the first of equal values stays).
	better := func(cmp int) bool { return !acc.has || fn == "min" && cmp < 0 || fn == "max" && cmp > 0 }
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

// typedAggregate answers aggregate o over its only scan on the typed
// columns of a ColumnSource; ok is false when the snapshot streams none
// or o has another shape (see the top of this file).
func (r *runner) typedAggregate(ctx context.Context, o *query.Aggregate) ([][]any, bool, error) {
	sc, isScan := o.Input.(*query.Scan)
	if !isScan || sc.Rank != nil {
		return nil, false, nil
	}
	cs, ok := r.snap.(ColumnSource)
	if !ok {
		return nil, false, nil
	}
	nt, ok := r.snap.Catalog().Node(sc.Type)
	if !ok {
		return nil, false, nil
	}
	var props []string
	var cols []*typedCol
	// colOf returns the column of a flat property of the scan's variable
	// (-1 for another operand).
	colOf := func(o query.Operand) int {
		if o.Kind != query.OpdProp || o.Var != sc.Var {
			return -1
		}
		if i := slices.Index(props, o.Prop); i >= 0 {
			return i
		}
		p, ok := nt.Prop(o.Prop)
		if !ok {
			return -1
		}
		cl, ok := classOf(p.Type.Kind)
		if !ok {
			return -1
		}
		props = append(props, o.Prop)
		cols = append(cols, &typedCol{class: cl, kind: p.Type.Kind})
		return len(props) - 1
	}
	keyCols := make([]int, len(o.Keys))
	for i, k := range o.Keys {
		if keyCols[i] = colOf(k.Value); keyCols[i] < 0 {
			return nil, false, nil
		}
	}
	aggs := make([]typedAgg, len(o.Aggs))
	rowsOnly := true // every aggregate counts rows
	for i, a := range o.Aggs {
		switch {
		case a.Func == "count" && a.Arg.Kind == query.OpdID && a.Arg.Var == sc.Var:
			aggs[i] = typedAgg{fn: a.Func, col: -1}
		case a.Func == "count" || a.Func == "sum" || a.Func == "avg" || a.Func == "min" || a.Func == "max":
			c := colOf(a.Arg)
			if c < 0 {
				return nil, false, nil
			}
			aggs[i], rowsOnly = typedAgg{fn: a.Func, col: c}, false
		default:
			return nil, false, nil
		}
	}
	preds := make([]func(int) bool, 0, len(sc.Filters))
	for i := range sc.Filters {
		v, k, op, ok := sc.Filters[i].ConstCmp()
		if !ok {
			return nil, false, nil
		}
		c := colOf(v)
		if c < 0 {
			return nil, false, nil
		}
		kv, err := r.constant(k)
		if err != nil {
			return nil, false, nil // the row path reports it
		}
		preds = append(preds, typedPred(cols[c], op, kv))
	}

	ag := newAggGroups(o, r.mem)
	var accs [][]typedAcc // per group, per aggregate
	newGroup := func(tk string, keys []any) int {
		charge(r.mem, typedAccBytes*int64(len(aggs)))
		accs = append(accs, make([]typedAcc, len(aggs)))
		return ag.add(tk, keys)
	}
	var key []byte
	keys := make([]any, len(keyCols))
	ok, err := cs.ScanColumns(ctx, sc.Type, props, func(n int, arrs []arrow.Array) error {
		for k, c := range cols {
			if err := c.bind(arrs[k]); err != nil {
				return err
			}
		}
		if len(keyCols) == 0 && len(accs) == 0 {
			newGroup("", nil)
		}
		if rowsOnly && len(preds) == 0 && len(keyCols) == 0 {
			for a := range aggs {
				accs[0][a].n += int64(n)
			}
			return ctx.Err()
		}
	rows:
		for i := range n {
			for _, p := range preds {
				if !p(i) {
					continue rows
				}
			}
			g := 0
			if len(keyCols) > 0 {
				key = key[:0]
				for _, kc := range keyCols {
					key = cols[kc].appendKey(key, i)
				}
				var found bool
				if g, found = ag.find(key); !found {
					for j, kc := range keyCols {
						keys[j] = cols[kc].box(i)
					}
					g = newGroup(string(key), keys)
				}
			}
			acc := accs[g]
			for a, ta := range aggs {
				if ta.col < 0 {
					acc[a].n++
					continue
				}
				acc[a].fold(ta.fn, cols[ta.col], i)
			}
		}
		return ctx.Err()
	})
	if errors.Is(err, errTypedFallback) {
		return nil, false, nil
	}
	if err != nil || !ok {
		return nil, false, err
	}
	for g, acc := range accs {
		st := ag.groups[g].st
		for a, ta := range aggs {
			if ta.col < 0 {
				st[a] = aggState{n: acc[a].n}
				continue
			}
			st[a] = acc[a].state(cols[ta.col])
		}
	}
	return ag.rows(), true, nil
}
