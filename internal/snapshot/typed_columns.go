package snapshot

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Typed columns of a warm image. A table image holds its cells boxed (the
// value model), which every reader can use as is; a scan that filters or
// aggregates a flat property over many rows is faster on the same values
// unboxed — one contiguous array and a validity bitmap instead of an
// interface, and often a pointer, per cell. TypedColumn builds that
// array once per (image, property), lazily like the sorted indexes
// (index.go): on the IndexAfterScans+1-th request, so an image read once
// (right after a write) never pays the O(n) build. eval reads it for the
// filters and aggregates of scans (eval/aggregate_image.go).

// typedColumn is one built (or unbuildable) typed column.
type typedColumn struct {
	arr arrow.Array // nil: the column has no typed form
}

// TypedColumn returns property prop's cells as one Arrow array over the
// image's rows (Len of them, dead rows included with unspecified cells):
// Int64 for I32, I64 and DateTime, Date32 for Date, Uint64 for U32 and
// U64, Float64 for F32 and F64, String for String and enums, Boolean for
// Bool — the value model's types. nil while prop has been asked for
// IndexAfterScans times or fewer, for other kinds, for a property the
// image lacks, or when a cell is not of its kind's type.
//
// The array is immutable and lives as long as the image.
func (t *NodeTable) TypedColumn(prop string) arrow.Array {
	col := t.Cols[prop]
	p := PropByName(t.Type.Props, prop)
	if col == nil || p == nil {
		return nil
	}
	ix := &t.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	tc := ix.typed[prop]
	if tc == nil {
		if ix.typedUses == nil {
			ix.typedUses, ix.typed = map[string]int{}, map[string]*typedColumn{}
		}
		ix.typedUses[prop]++
		if ix.typedUses[prop] <= IndexAfterScans {
			return nil
		}
		tc = &typedColumn{arr: typedArray(p.Type.Kind, col, &t.rowSpace)}
		ix.typed[prop] = tc
	}
	return tc.arr
}

// typedArray builds the typed array of boxed cells col (nil when a live
// cell is not of kind k's value-model type, or k has no typed form).
func typedArray(k schema.Kind, col []any, rs *rowSpace) arrow.Array {
	mem := memory.DefaultAllocator
	switch k {
	case schema.KindI32, schema.KindI64, schema.KindDateTime:
		return build(array.NewInt64Builder(mem), col, rs, same[int64])
	case schema.KindDate:
		return build(array.NewDate32Builder(mem), col, rs, func(v int32) arrow.Date32 { return arrow.Date32(v) })
	case schema.KindU32, schema.KindU64:
		return build(array.NewUint64Builder(mem), col, rs, same[uint64])
	case schema.KindF32, schema.KindF64:
		return build(array.NewFloat64Builder(mem), col, rs, same[float64])
	case schema.KindString, schema.KindEnum:
		return build(array.NewStringBuilder(mem), col, rs, same[string])
	case schema.KindBool:
		return build(array.NewBooleanBuilder(mem), col, rs, same[bool])
	}
	return nil
}

func same[T any](v T) T { return v }

// appender is an Arrow builder of cells of type C.
type appender[C any] interface {
	array.Builder
	Append(C)
}

// build appends every cell of col, of value-model type V, to b as conv
// converts it (a null for nil and for dead rows); nil when a live cell is
// not a V.
func build[V, C any, B appender[C]](b B, col []any, rs *rowSpace, conv func(V) C) arrow.Array {
	defer b.Release()
	b.Reserve(len(col))
	for r, v := range col {
		if v == nil || !rs.Alive(r) {
			b.AppendNull()
			continue
		}
		x, ok := v.(V)
		if !ok {
			return nil
		}
		b.Append(conv(x))
	}
	return b.NewArray()
}
