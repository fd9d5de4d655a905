package table

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Op is a filter comparison operator.
type Op uint8

// Operators. Comparisons follow SQL: a null never satisfies any of them
// (only IsNull), and NaN satisfies only Ne.
const (
	OpEq Op = iota + 1
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpIn      // column value is one of Values
	OpIsNull  // column is null
	OpNotNull // column is not null
)

var opNames = [...]string{OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpIn: "IN", OpIsNull: "IS NULL", OpNotNull: "IS NOT NULL"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Filter is one predicate "Column Op Value" (or "Column IN Values") on a
// scalar column. A scan ANDs its filters. Literals are Go values accepted by
// BatchBuilder.Append for the column's kind.
type Filter struct {
	Column string
	Op     Op
	Value  any
	Values []any // OpIn only
}

// In is shorthand for an IN filter over string values (typically ids).
func In(column string, values ...string) Filter {
	return Filter{Column: column, Op: OpIn, Values: toAny(values)}
}

// compiledFilter is a Filter resolved against a schema with canonical literals.
type compiledFilter struct {
	col  int
	kind Kind
	op   Op
	lit  any   // canonical literal (not for In / null tests)
	in   []any // canonical, sorted, distinct (In)
	nan  bool  // literal is NaN: comparisons other than Ne never match

	setS map[string]struct{}
	setI map[int64]struct{}
	setU map[uint64]struct{}
	setF map[float64]struct{}
}

func compileFilters(schema Schema, fs []Filter) ([]compiledFilter, error) {
	out := make([]compiledFilter, 0, len(fs))
	for _, f := range fs {
		cf, err := compileFilter(schema, f)
		if err != nil {
			return nil, err
		}
		out = append(out, cf)
	}
	return out, nil
}

func compileFilter(schema Schema, f Filter) (compiledFilter, error) {
	i := schema.Index(f.Column)
	if i < 0 {
		return compiledFilter{}, fmt.Errorf("%w: unknown column %q", ErrFilter, f.Column)
	}
	k := schema.Columns[i].Type.Kind
	cf := compiledFilter{col: i, kind: k, op: f.Op}
	switch f.Op {
	case OpIsNull, OpNotNull:
		return cf, nil
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe, OpIn:
	default:
		return cf, fmt.Errorf("%w: unknown operator %v", ErrFilter, f.Op)
	}
	if !k.scalar() {
		return cf, fmt.Errorf("%w: %v on %v column %q", ErrFilter, f.Op, k, f.Column)
	}
	canon := func(v any) (any, error) {
		if v == nil {
			return nil, fmt.Errorf("%w: null literal for %q (use IS NULL)", ErrFilter, f.Column)
		}
		c, err := scalarValue(k, v)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %w", ErrFilter, f.Column, err)
		}
		if k == F32 && f.Op != OpLt && f.Op != OpLe && f.Op != OpGt && f.Op != OpGe {
			// Stored F32 values are exact float32s: round an equality literal to
			// float32 so that x = 0.1 finds the stored 0.1f.
			c = float64(float32(c.(float64)))
		}
		if k == Bool {
			c = boolInt(c.(bool))
		}
		return c, nil
	}
	if f.Op != OpIn {
		lit, err := canon(f.Value)
		if err != nil {
			return cf, err
		}
		cf.lit = lit
		if x, ok := lit.(float64); ok && math.IsNaN(x) {
			cf.nan = true
		}
		return cf, nil
	}
	for _, v := range f.Values {
		c, err := canon(v)
		if err != nil {
			return cf, err
		}
		if x, ok := c.(float64); ok && math.IsNaN(x) {
			continue // NaN is in no set
		}
		cf.in = append(cf.in, c)
	}
	slices.SortFunc(cf.in, cmpCanon)
	cf.in = slices.CompactFunc(cf.in, func(a, b any) bool { return cmpCanon(a, b) == 0 })
	switch k {
	case String, Enum:
		cf.setS = makeSet[string](cf.in)
	case U32, U64:
		cf.setU = makeSet[uint64](cf.in)
	case F32, F64:
		cf.setF = makeSet[float64](cf.in)
	default:
		cf.setI = makeSet[int64](cf.in)
	}
	return cf, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func makeSet[T comparable](vs []any) map[T]struct{} {
	m := make(map[T]struct{}, len(vs))
	for _, v := range vs {
		m[v.(T)] = struct{}{}
	}
	return m
}

// cmpCanon orders two canonical values of the same type (never NaN). Bools
// are compared as their canonical ints.
func cmpCanon(a, b any) int {
	switch x := a.(type) {
	case string:
		return cmp.Compare(x, b.(string))
	case int64:
		return cmp.Compare(x, b.(int64))
	case uint64:
		return cmp.Compare(x, b.(uint64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case bool:
		return cmp.Compare(boolInt(x), boolInt(b.(bool)))
	}
	panic(fmt.Sprintf("table: cmpCanon on %T", a))
}

// statBound converts a stats bound to the filter's canonical domain.
func statBound(v any) any {
	if b, ok := v.(bool); ok {
		return boolInt(b)
	}
	return v
}

// mayMatch reports whether a unit (fragment or row group) with these
// statistics and row count can hold a row satisfying f. Unknown statistics
// (nil bounds, Nulls < 0) always may match.
//
// INVARIANT: mayMatch is false only if no row of the unit satisfies f
// (TestScanPruningMatchesFullScan).
func (f *compiledFilter) mayMatch(st ColumnStats, rows int64) bool {
	allNull := st.Nulls >= 0 && st.Nulls == rows
	switch f.op {
	case OpIsNull:
		return st.Nulls != 0
	case OpNotNull:
		return !allNull
	}
	if allNull {
		return false
	}
	if f.nan {
		return f.op == OpNe
	}
	lo, hi := statBound(st.Min), statBound(st.Max)
	switch f.op {
	case OpEq:
		return (lo == nil || cmpCanon(lo, f.lit) <= 0) && (hi == nil || cmpCanon(hi, f.lit) >= 0)
	case OpLt:
		return lo == nil || cmpCanon(lo, f.lit) < 0
	case OpLe:
		return lo == nil || cmpCanon(lo, f.lit) <= 0
	case OpGt:
		return hi == nil || cmpCanon(hi, f.lit) > 0
	case OpGe:
		return hi == nil || cmpCanon(hi, f.lit) >= 0
	case OpIn:
		// First literal >= lo, then check it is <= hi.
		i := 0
		if lo != nil {
			i, _ = slices.BinarySearchFunc(f.in, lo, cmpCanon)
		}
		return i < len(f.in) && (hi == nil || cmpCanon(f.in[i], hi) <= 0)
	}
	return true // OpNe: NaN and unequal values are not visible in min/max
}

// eval ANDs the filter into mask for the rows of arr (an in-memory array of
// the filter's column).
func (f *compiledFilter) eval(arr arrow.Array, mask []bool) {
	n := arr.Len()
	switch f.op {
	case OpIsNull, OpNotNull:
		want := f.op == OpIsNull
		for i := 0; i < n; i++ {
			mask[i] = mask[i] && arr.IsNull(i) == want
		}
		return
	}
	switch a := arr.(type) {
	case *array.Dictionary:
		f.evalDict(a, mask)
	case *array.String:
		evalOrdered(f, a, mask, a.Value, f.setS)
	case *array.Boolean:
		evalOrdered(f, a, mask, func(i int) int64 { return boolInt(a.Value(i)) }, f.setI)
	case *array.Int32:
		evalOrdered(f, a, mask, func(i int) int64 { return int64(a.Value(i)) }, f.setI)
	case *array.Int64:
		evalOrdered(f, a, mask, a.Value, f.setI)
	case *array.Uint32:
		evalOrdered(f, a, mask, func(i int) uint64 { return uint64(a.Value(i)) }, f.setU)
	case *array.Uint64:
		evalOrdered(f, a, mask, a.Value, f.setU)
	case *array.Float32:
		evalOrdered(f, a, mask, func(i int) float64 { return float64(a.Value(i)) }, f.setF)
	case *array.Float64:
		evalOrdered(f, a, mask, a.Value, f.setF)
	case *array.Date32:
		evalOrdered(f, a, mask, func(i int) int64 { return int64(a.Value(i)) }, f.setI)
	case *array.Date64:
		evalOrdered(f, a, mask, func(i int) int64 { return int64(a.Value(i)) }, f.setI)
	default:
		panic(fmt.Sprintf("table: filter on unsupported array %v", arr.DataType()))
	}
}

// evalOrdered uses the raw Go operators, which give NaN the SQL-like meaning
// (every comparison false except !=).
func evalOrdered[T int64 | uint64 | float64 | string](f *compiledFilter, arr arrow.Array, mask []bool, get func(int) T, set map[T]struct{}) {
	var lit T
	if f.op != OpIn {
		lit = f.lit.(T)
	}
	hasNulls := arr.NullN() > 0
	for i := range mask {
		if !mask[i] {
			continue
		}
		if hasNulls && arr.IsNull(i) {
			mask[i] = false
			continue
		}
		v := get(i)
		var ok bool
		switch f.op {
		case OpEq:
			ok = v == lit
		case OpNe:
			ok = v != lit
		case OpLt:
			ok = v < lit
		case OpLe:
			ok = v <= lit
		case OpGt:
			ok = v > lit
		case OpGe:
			ok = v >= lit
		case OpIn:
			_, ok = set[v]
		}
		mask[i] = ok
	}
}

// ValidFilter reports whether f is a filter Scan accepts on schema: a known
// scalar column and literals of that column's kind (in its range). Callers
// that translate predicates of their own use it to keep the ones a scan can
// apply exactly and evaluate the rest themselves.
func ValidFilter(schema Schema, f Filter) bool {
	_, err := compileFilter(schema, f)
	return err == nil
}

// evalDict ANDs the filter into mask for a dictionary-encoded column: the
// filter is evaluated once per dictionary entry, then each row takes its
// entry's result (nulls never match a comparison).
func (f *compiledFilter) evalDict(d *array.Dictionary, mask []bool) {
	vals := d.Dictionary()
	match := make([]bool, vals.Len())
	for i := range match {
		match[i] = true
	}
	f.eval(vals, match)
	hasNulls := d.NullN() > 0
	if idx, ok := d.Indices().(*array.Int32); ok {
		raw := idx.Int32Values()
		for i := range mask {
			if mask[i] {
				mask[i] = !(hasNulls && d.IsNull(i)) && match[raw[i]]
			}
		}
		return
	}
	for i := range mask {
		if mask[i] {
			mask[i] = !(hasNulls && d.IsNull(i)) && match[d.GetValueIndex(i)]
		}
	}
}
