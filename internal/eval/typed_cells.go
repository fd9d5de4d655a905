package eval

import (
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Typed cells: one flat property's column of a batch or of an image, read
// unboxed, and the scan filters compared on it as compareOp compares the
// boxed cells (aggregate_typed.go, aggregate_image.go).

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
