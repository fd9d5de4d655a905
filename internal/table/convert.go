package table

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The in-memory Arrow types (ColumnType.ArrowType, spec §2.2) and the types
// handed to the Parquet writer (fileArrowType) differ in two places, both
// forced by pqarrow:
//
//   - DateTime: pqarrow coerces Date64 to a Parquet DATE (whole days), which
//     would drop the time of day. DateTime is written as Timestamp(ms, UTC),
//     which has the same int64 buffer, so the conversion is zero-copy.
//   - Nullable Vector: pqarrow cannot write a FixedSizeList with null entries
//     (their child slots break its level builder). A nullable vector column
//     is written as List<float32> (null entries empty) and rebuilt on read;
//     non-nullable vectors stay native FIXED_SIZE_LIST.

var timestampMS = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}

// fileArrowType is the Arrow type of the column as written to Parquet.
func (t ColumnType) fileArrowType() arrow.DataType {
	switch {
	case t.Kind == DateTime:
		return timestampMS
	case t.Kind == List && t.Elem == DateTime:
		return arrow.ListOf(timestampMS)
	case t.Kind == Vector && t.Nullable:
		return arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float32)
	}
	return t.ArrowType()
}

func (s Schema) fileArrowSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(s.Columns))
	for i, c := range s.Columns {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type.fileArrowType(), Nullable: c.Type.Nullable}
	}
	return arrow.NewSchema(fields, nil)
}

// toFileRecord converts an in-memory record to the file types.
func toFileRecord(mem memory.Allocator, schema Schema, rec arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, len(schema.Columns))
	defer releaseAll(cols)
	for i, c := range schema.Columns {
		if c.Type.Kind == Vector && c.Type.Nullable {
			cols[i] = vectorToList(mem, rec.Column(i).(*array.FixedSizeList), c.Type.Dim)
			continue
		}
		cols[i] = retype(rec.Column(i), c.Type.fileArrowType())
	}
	return array.NewRecordBatch(schema.fileArrowSchema(), cols, rec.NumRows())
}

// fromFileArray converts a decoded file array of column c back to its
// in-memory type. The result is a new reference the caller releases.
func fromFileArray(mem memory.Allocator, key string, c Column, arr arrow.Array) (arrow.Array, error) {
	if c.Type.Kind == Vector && c.Type.Nullable {
		l, ok := arr.(*array.List)
		if !ok {
			return nil, corrupt(key, -1, fmt.Sprintf("column %q decoded as %v, want a list", c.Name, arr.DataType()), nil)
		}
		return listToVector(mem, key, c, l)
	}
	return retype(arr, c.Type.ArrowType()), nil
}

func vectorToList(mem memory.Allocator, v *array.FixedSizeList, dim int) arrow.Array {
	b := array.NewListBuilderWithField(mem, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32})
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	vals := v.ListValues().(*array.Float32).Float32Values()
	for i := 0; i < v.Len(); i++ {
		if v.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(true)
		start := (v.Offset() + i) * dim
		vb.AppendValues(vals[start:start+dim], nil)
	}
	return b.NewArray()
}

func listToVector(mem memory.Allocator, key string, c Column, l *array.List) (arrow.Array, error) {
	dim := c.Type.Dim
	b := array.NewFixedSizeListBuilderWithField(mem, int32(dim), arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32})
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	child, ok := l.ListValues().(*array.Float32)
	if !ok {
		return nil, corrupt(key, -1, fmt.Sprintf("column %q list elements are %v, want float", c.Name, l.ListValues().DataType()), nil)
	}
	vals := child.Float32Values()
	for i := 0; i < l.Len(); i++ {
		if l.IsNull(i) {
			b.AppendNull()
			continue
		}
		start, end := l.ValueOffsets(i)
		if int(end-start) != dim {
			return nil, corrupt(key, -1, fmt.Sprintf("column %q row has %d elements, vector dim is %d", c.Name, end-start, dim), nil)
		}
		b.Append(true)
		vb.AppendValues(vals[start:end], nil)
	}
	return b.NewArray(), nil
}

// retype returns arr viewed as type t, which must have the identical physical
// layout (Date64 ↔ Timestamp(ms), and lists of them). Always returns a new
// reference the caller releases.
func retype(arr arrow.Array, t arrow.DataType) arrow.Array {
	if arrow.TypeEqual(arr.DataType(), t) {
		arr.Retain()
		return arr
	}
	d := retypeData(arr.Data(), t)
	defer d.Release()
	return array.MakeFromData(d)
}

func retypeData(d arrow.ArrayData, t arrow.DataType) arrow.ArrayData {
	var children []arrow.ArrayData
	if lt, ok := t.(*arrow.ListType); ok {
		child := retypeData(d.Children()[0], lt.Elem())
		defer child.Release()
		children = []arrow.ArrayData{child}
	} else {
		children = d.Children()
	}
	return array.NewData(t, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}
