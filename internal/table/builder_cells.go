package table

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// CellKind says which field of a Cell holds its value.
type CellKind uint8

// Kinds of Cell.
const (
	CellNull   CellKind = iota // null
	CellString                 // S
	CellInt                    // int64(N)
	CellUint                   // N
	CellFloat                  // math.Float64frombits(N)
	CellBool                   // N != 0
)

// Cell is one scalar value unboxed: what a bulk loader converts an input
// value to, so that appending it costs no allocation (AppendCells).
type Cell struct {
	S    string
	N    uint64
	Kind CellKind
}

// StringCell, IntCell, UintCell, FloatCell and BoolCell build cells.
func StringCell(s string) Cell { return Cell{Kind: CellString, S: s} }
func IntCell(i int64) Cell     { return Cell{Kind: CellInt, N: uint64(i)} }
func UintCell(u uint64) Cell   { return Cell{Kind: CellUint, N: u} }
func FloatCell(f float64) Cell { return Cell{Kind: CellFloat, N: math.Float64bits(f)} }
func BoolCell(b bool) Cell {
	if b {
		return Cell{Kind: CellBool, N: 1}
	}
	return Cell{Kind: CellBool}
}

// Value returns the cell as the Go value Append takes for it (nil, string,
// int64, uint64, float64 or bool).
func (c Cell) Value() any {
	switch c.Kind {
	case CellString:
		return c.S
	case CellInt:
		return int64(c.N)
	case CellUint:
		return c.N
	case CellFloat:
		return math.Float64frombits(c.N)
	case CellBool:
		return c.N != 0
	}
	return nil
}

// AppendCells is AppendStrings with the other columns as cells: the same
// checks and the same result as Append with every cell's Value
// (TestAppendCellsMatchesAppend), without a boxed value for a cell that
// fits its column directly: CellString in String and Enum, CellBool in
// Bool, CellInt in I32 and I64, CellUint in U32 and U64, CellFloat in F32
// and F64 (in range), CellNull in a nullable column. A rejected row leaves
// b unchanged.
func (b *BatchBuilder) AppendCells(lead []string, cells []Cell) error {
	if err := b.checkLead(lead, len(cells)); err != nil {
		return err
	}
	cols := b.schema.Columns[len(lead):]
	for i, c := range cols {
		// A cell that does not fit directly takes Append's path, boxed:
		// the same verdict, error and result.
		if !cellFits(c.Type, cells[i]) {
			if err := b.check(len(lead)+i, c.Type, cells[i].Value()); err != nil {
				return fmt.Errorf("column %q row %d: %w", c.Name, b.rows, err)
			}
		} else if cells[i].Kind == CellString {
			if err := b.strs[len(lead)+i].room(cells[i].S); err != nil {
				return fmt.Errorf("column %q row %d: %w", c.Name, b.rows, err)
			}
		}
	}
	for i, s := range lead {
		b.strs[i].append(s)
	}
	for i, c := range cols {
		j := len(lead) + i
		switch {
		case b.strs[j] != nil && cells[i].Kind == CellString:
			b.strs[j].append(cells[i].S)
		case b.strs[j] != nil && cells[i].Kind == CellNull:
			b.strs[j].appendNull()
		case cellFits(c.Type, cells[i]):
			appendCell(b.rb.Field(j), c.Type.Kind, cells[i])
		default:
			b.appendValue(j, c.Type, cells[i].Value())
		}
	}
	b.rows++
	return nil
}

// cellFits reports whether appendCell can append c to a column of type t
// as Append would append c.Value().
func cellFits(t ColumnType, c Cell) bool {
	switch c.Kind {
	case CellNull:
		return t.Nullable
	case CellString:
		return t.Kind == String || t.Kind == Enum
	case CellBool:
		return t.Kind == Bool
	case CellInt:
		i := int64(c.N)
		return t.Kind == I64 || (t.Kind == I32 && i >= math.MinInt32 && i <= math.MaxInt32)
	case CellUint:
		return t.Kind == U64 || (t.Kind == U32 && c.N <= math.MaxUint32)
	case CellFloat:
		f := math.Float64frombits(c.N)
		return t.Kind == F64 || (t.Kind == F32 && (math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) <= math.MaxFloat32))
	}
	return false
}

// appendCell appends a cell that cellFits the column.
func appendCell(b array.Builder, k Kind, c Cell) {
	switch c.Kind {
	case CellNull:
		b.AppendNull()
	case CellString:
		b.(*array.StringBuilder).Append(c.S)
	case CellBool:
		b.(*array.BooleanBuilder).Append(c.N != 0)
	case CellInt:
		if k == I32 {
			b.(*array.Int32Builder).Append(int32(int64(c.N)))
		} else {
			b.(*array.Int64Builder).Append(int64(c.N))
		}
	case CellUint:
		if k == U32 {
			b.(*array.Uint32Builder).Append(uint32(c.N))
		} else {
			b.(*array.Uint64Builder).Append(c.N)
		}
	case CellFloat:
		if k == F32 {
			b.(*array.Float32Builder).Append(float32(math.Float64frombits(c.N)))
		} else {
			b.(*array.Float64Builder).Append(math.Float64frombits(c.N))
		}
	}
}
