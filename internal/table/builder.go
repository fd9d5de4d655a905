package table

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BatchBuilder assembles an Arrow record of a table schema from Go values,
// row by row. It is a convenience for loaders and tests; bulk paths may build
// records directly with the schema from Schema.ArrowSchema.
//
// Accepted Go values per kind (nil is null, allowed only if Nullable):
//
//	String, Enum  string
//	Bool          bool
//	I32 I64 U32 U64  any Go integer type, range-checked
//	F32, F64      float32 or float64
//	Date          int32/int (days since 1970-01-01) or time.Time (its UTC date)
//	DateTime      int64/int (ms since the epoch) or time.Time
//	Vector        []float32 of exactly Dim elements
//	Blob          []byte
//	List          []T or []any of element values as above (elements may be nil)
//
// A BatchBuilder is not safe for concurrent use. Call Release when done.
type BatchBuilder struct {
	schema Schema
	rb     *array.RecordBuilder // its String and Enum fields stay unused
	strs   []*strColumn         // per column: the String or Enum column's builder, else nil
	rows   int
}

// NewBatchBuilder returns a builder for the schema, allocating from mem
// (nil means memory.DefaultAllocator). String and Enum columns are built
// in Go memory whatever mem is (strColumn).
func NewBatchBuilder(mem memory.Allocator, schema Schema) (*BatchBuilder, error) {
	if err := schema.Validate(); err != nil {
		return nil, err
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := &BatchBuilder{schema: schema, rb: array.NewRecordBuilder(mem, schema.ArrowSchema()),
		strs: make([]*strColumn, len(schema.Columns))}
	for i, c := range schema.Columns {
		if c.Type.Kind == String || c.Type.Kind == Enum {
			b.strs[i] = newStrColumn()
		}
	}
	return b, nil
}

// Len is the number of rows appended since the last NewRecord.
func (b *BatchBuilder) Len() int { return b.rows }

// Append adds one row; row[i] is the value of schema column i. Every value is
// checked before any is appended, so a rejected row (ErrValue) leaves the
// builder unchanged and usable.
func (b *BatchBuilder) Append(row []any) error {
	if len(row) != len(b.schema.Columns) {
		return fmt.Errorf("%w: row has %d values, schema has %d columns", ErrValue, len(row), len(b.schema.Columns))
	}
	// Check first so a bad row never leaves a partially appended row behind.
	for i, c := range b.schema.Columns {
		if err := b.check(i, c.Type, row[i]); err != nil {
			return fmt.Errorf("column %q row %d: %w", c.Name, b.rows, err)
		}
	}
	for i, c := range b.schema.Columns {
		b.appendValue(i, c.Type, row[i])
	}
	b.rows++
	return nil
}

// check is checkValue of v for column i, and for a string column that
// the column's bytes stay within maxStrColumnBytes.
func (b *BatchBuilder) check(i int, t ColumnType, v any) error {
	if err := checkValue(t, v); err != nil {
		return err
	}
	if s, ok := v.(string); ok && b.strs[i] != nil {
		return b.strs[i].room(s)
	}
	return nil
}

// appendValue appends v, accepted by check, to column i.
func (b *BatchBuilder) appendValue(i int, t ColumnType, v any) {
	if c := b.strs[i]; c != nil {
		if v == nil {
			c.appendNull()
		} else {
			c.append(v.(string))
		}
		return
	}
	appendValue(b.rb.Field(i), t, v)
}

// AppendStrings is Append for a row whose first len(lead) columns hold
// the non-null strings lead and whose other columns hold row, in order:
// the same checks and the same result as Append with lead boxed, without
// boxing them (a load appends the id, src and dst of millions of rows).
// A rejected row leaves b unchanged.
func (b *BatchBuilder) AppendStrings(lead []string, row []any) error {
	if err := b.checkLead(lead, len(row)); err != nil {
		return err
	}
	cols := b.schema.Columns[len(lead):]
	for i, c := range cols {
		if err := b.check(len(lead)+i, c.Type, row[i]); err != nil {
			return fmt.Errorf("column %q row %d: %w", c.Name, b.rows, err)
		}
	}
	for i, s := range lead {
		b.strs[i].append(s)
	}
	for i, c := range cols {
		b.appendValue(len(lead)+i, c.Type, row[i])
	}
	b.rows++
	return nil
}

// checkLead checks a row of leading strings lead and rest other values
// against the schema's width and its leading columns' kinds, and makes
// room for lead in those columns (strColumn.room).
func (b *BatchBuilder) checkLead(lead []string, rest int) error {
	if len(lead)+rest != len(b.schema.Columns) {
		return fmt.Errorf("%w: row has %d values, schema has %d columns", ErrValue, len(lead)+rest, len(b.schema.Columns))
	}
	for i, s := range lead {
		c := b.strs[i]
		if c == nil {
			k := b.schema.Columns[i].Type.Kind
			return fmt.Errorf("column %q row %d: %w: %v column cannot hold string", b.schema.Columns[i].Name, b.rows, ErrValue, k)
		}
		if err := c.room(s); err != nil {
			return fmt.Errorf("column %q row %d: %w", b.schema.Columns[i].Name, b.rows, err)
		}
	}
	return nil
}

// NewRecord returns the rows appended so far as a record (the caller releases
// it) and resets the builder.
func (b *BatchBuilder) NewRecord() arrow.RecordBatch {
	cols := make([]arrow.Array, len(b.schema.Columns))
	for i, c := range b.strs {
		if c != nil {
			cols[i] = c.newArray()
		} else {
			cols[i] = b.rb.Field(i).NewArray()
		}
	}
	rec := array.NewRecordBatch(b.rb.Schema(), cols, int64(b.rows))
	for _, a := range cols {
		a.Release()
	}
	b.rows = 0
	return rec
}

// ReserveLike reserves room in every column for a record as large as rec
// (one of this builder's earlier records): a caller that builds record
// after record of about one size (a bulk load's fragments) then fills
// each into buffers allocated once, not regrown by doubling from empty
// (which allocates and copies about twice the record).
func (b *BatchBuilder) ReserveLike(rec arrow.RecordBatch) {
	n := int(rec.NumRows())
	if n == 0 || int(rec.NumCols()) != len(b.schema.Columns) {
		return
	}
	for i := range b.schema.Columns {
		if c := b.strs[i]; c != nil {
			if s, ok := rec.Column(i).(*array.String); ok {
				c.reserve(n, len(s.ValueBytes()))
			}
			continue
		}
		fb := b.rb.Field(i)
		fb.Reserve(n)
		bb, ok := fb.(interface{ ReserveData(int) })
		c, ok2 := rec.Column(i).(interface{ ValueBytes() []byte })
		if ok && ok2 {
			bb.ReserveData(len(c.ValueBytes()))
		}
	}
}

// Release frees the builder's buffers.
func (b *BatchBuilder) Release() { b.rb.Release() }

func checkValue(t ColumnType, v any) error {
	if v == nil {
		if !t.Nullable {
			return fmt.Errorf("%w: null in non-nullable %v column", ErrValue, t.Kind)
		}
		return nil
	}
	switch t.Kind {
	case Vector:
		f, ok := v.([]float32)
		if !ok {
			return fmt.Errorf("%w: vector wants []float32, got %T", ErrValue, v)
		}
		if len(f) != t.Dim {
			return fmt.Errorf("%w: vector has %d elements, want %d", ErrValue, len(f), t.Dim)
		}
		return nil
	case Blob:
		if _, ok := v.([]byte); !ok {
			return fmt.Errorf("%w: blob wants []byte, got %T", ErrValue, v)
		}
		return nil
	case List:
		elems, err := listElems(v)
		if err != nil {
			return err
		}
		for _, e := range elems {
			if e == nil {
				continue
			}
			if _, err := scalarValue(t.Elem, e); err != nil {
				return err
			}
		}
		return nil
	}
	// The usual cells, accepted without scalarValue's boxed result.
	switch x := v.(type) {
	case string:
		if t.Kind == String || t.Kind == Enum {
			return nil
		}
	case int64:
		switch t.Kind {
		case I64, DateTime:
			return nil
		case I32, Date:
			if x >= math.MinInt32 && x <= math.MaxInt32 {
				return nil
			}
		}
	}
	_, err := scalarValue(t.Kind, v)
	return err
}

// listElems flattens the accepted list representations to []any.
func listElems(v any) ([]any, error) {
	switch l := v.(type) {
	case []any:
		return l, nil
	case []string:
		return toAny(l), nil
	case []bool:
		return toAny(l), nil
	case []int:
		return toAny(l), nil
	case []int32:
		return toAny(l), nil
	case []int64:
		return toAny(l), nil
	case []uint32:
		return toAny(l), nil
	case []uint64:
		return toAny(l), nil
	case []float32:
		return toAny(l), nil
	case []float64:
		return toAny(l), nil
	case []time.Time:
		return toAny(l), nil
	}
	return nil, fmt.Errorf("%w: list wants a slice, got %T", ErrValue, v)
}

func toAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// scalarValue converts an accepted Go value of a scalar kind to its canonical
// form: string, bool, int64 (signed ints, dates, datetimes), uint64 or float64.
func scalarValue(k Kind, v any) (any, error) {
	switch k {
	case String, Enum:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case I32, I64, U32, U64:
		return intValue(k, v)
	case F32, F64:
		switch f := v.(type) {
		case float32:
			return float64(f), nil
		case float64:
			if k == F32 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
				return nil, fmt.Errorf("%w: %v overflows f32", ErrValue, f)
			}
			return f, nil
		}
	case Date:
		if tm, ok := v.(time.Time); ok {
			return dateDays(tm), nil
		}
		return intValue(I32, v)
	case DateTime:
		if tm, ok := v.(time.Time); ok {
			return tm.UnixMilli(), nil
		}
		return intValue(I64, v)
	}
	return nil, fmt.Errorf("%w: %v column cannot hold %T", ErrValue, k, v)
}

func dateDays(tm time.Time) int64 {
	y, m, d := tm.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

func intValue(k Kind, v any) (any, error) {
	var (
		i   int64
		u   uint64
		neg bool
		big bool // u > MaxInt64
	)
	switch x := v.(type) {
	case int:
		i = int64(x)
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case uint:
		u, big = uint64(x), uint64(x) > math.MaxInt64
	case uint8:
		u = uint64(x)
	case uint16:
		u = uint64(x)
	case uint32:
		u = uint64(x)
	case uint64:
		u, big = x, x > math.MaxInt64
	default:
		return nil, fmt.Errorf("%w: %v column cannot hold %T", ErrValue, k, v)
	}
	switch v.(type) {
	case uint, uint8, uint16, uint32, uint64:
		if !big {
			i = int64(u)
		}
	default:
		neg = i < 0
		if !neg {
			u = uint64(i)
		}
	}
	switch k {
	case I32:
		if big || i < math.MinInt32 || i > math.MaxInt32 {
			return nil, outOfRange(k, v)
		}
		return i, nil
	case I64:
		if big {
			return nil, outOfRange(k, v)
		}
		return i, nil
	case U32:
		if neg || u > math.MaxUint32 {
			return nil, outOfRange(k, v)
		}
		return u, nil
	case U64:
		if neg {
			return nil, outOfRange(k, v)
		}
		return u, nil
	}
	return nil, outOfRange(k, v)
}

// outOfRange is the error for an integer v that column kind k cannot hold.
// It is built only on failure: intValue runs once per cell of every load.
func outOfRange(k Kind, v any) error {
	return fmt.Errorf("%w: %v out of range for %v", ErrValue, v, k)
}

// appendValue appends a value already accepted by checkValue.
func appendValue(b array.Builder, t ColumnType, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch t.Kind {
	case Vector:
		vb := b.(*array.FixedSizeListBuilder)
		vb.Append(true)
		vb.ValueBuilder().(*array.Float32Builder).AppendValues(v.([]float32), nil)
	case Blob:
		b.(*array.BinaryBuilder).Append(v.([]byte))
	case List:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		elems, _ := listElems(v)
		for _, e := range elems {
			if e == nil {
				lb.ValueBuilder().AppendNull()
				continue
			}
			sv, _ := scalarValue(t.Elem, e)
			appendScalar(lb.ValueBuilder(), t.Elem, sv)
		}
	default:
		// The usual cells directly: what scalarValue and appendScalar
		// would append, without boxing the canonical value.
		switch x := v.(type) {
		case string:
			if t.Kind == String || t.Kind == Enum {
				b.(*array.StringBuilder).Append(x)
				return
			}
		case int64:
			switch t.Kind {
			case I64:
				b.(*array.Int64Builder).Append(x)
				return
			case I32:
				b.(*array.Int32Builder).Append(int32(x))
				return
			case Date:
				b.(*array.Date32Builder).Append(arrow.Date32(x))
				return
			case DateTime:
				b.(*array.Date64Builder).Append(arrow.Date64(x))
				return
			}
		}
		sv, _ := scalarValue(t.Kind, v)
		appendScalar(b, t.Kind, sv)
	}
}

// appendScalar appends a canonical scalar (see scalarValue).
func appendScalar(b array.Builder, k Kind, v any) {
	switch k {
	case String, Enum:
		b.(*array.StringBuilder).Append(v.(string))
	case Bool:
		b.(*array.BooleanBuilder).Append(v.(bool))
	case I32:
		b.(*array.Int32Builder).Append(int32(v.(int64)))
	case I64:
		b.(*array.Int64Builder).Append(v.(int64))
	case U32:
		b.(*array.Uint32Builder).Append(uint32(v.(uint64)))
	case U64:
		b.(*array.Uint64Builder).Append(v.(uint64))
	case F32:
		b.(*array.Float32Builder).Append(float32(v.(float64)))
	case F64:
		b.(*array.Float64Builder).Append(v.(float64))
	case Date:
		b.(*array.Date32Builder).Append(arrow.Date32(v.(int64)))
	case DateTime:
		b.(*array.Date64Builder).Append(arrow.Date64(v.(int64)))
	}
}

// Value returns row i of a column array produced by this package as a Go
// value: string, bool, int32, int64, uint32, uint64, float32, float64,
// Date → int32 days, DateTime → int64 ms, Vector → []float32, Blob → []byte,
// List → []any, null → nil. Slices are copies.
func Value(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint32:
		return a.Value(i)
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Date32:
		return int32(a.Value(i))
	case *array.Date64:
		return int64(a.Value(i))
	case *array.LargeBinary:
		return append([]byte{}, a.Value(i)...)
	case *array.FixedSizeList:
		n := int(a.DataType().(*arrow.FixedSizeListType).Len())
		vals := a.ListValues().(*array.Float32).Float32Values()
		start := (a.Offset() + i) * n
		return append([]float32{}, vals[start:start+n]...)
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, Value(a.ListValues(), int(j)))
		}
		return out
	}
	panic(fmt.Sprintf("table.Value: unsupported array type %v", arr.DataType()))
}
