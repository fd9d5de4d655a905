package table

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// KeyColumn is the hidden key column every node and edge table starts with.
// LookupIDs and Delete address rows through it.
const KeyColumn = "id"

// Kind is the storage kind of a column, independent of the .pg schema types
// (the executor maps those onto kinds).
type Kind uint8

// Kinds. The numeric values are not stored anywhere (states store names), so
// the order may change; the names may not.
const (
	KindInvalid Kind = iota
	String
	Bool
	I32
	I64
	U32
	U64
	F32
	F64
	Date     // days since 1970-01-01, arrow Date32
	DateTime // milliseconds since the epoch, UTC, arrow Date64
	Vector   // fixed-size list of float32, arrow FixedSizeList(Float32, Dim)
	Blob     // arbitrary bytes, arrow LargeBinary
	List     // variable-length list of Elem, arrow List(Elem)
	Enum     // a string drawn from a fixed set; arrow Utf8
)

var kindNames = [...]string{
	KindInvalid: "invalid",
	String:      "string",
	Bool:        "bool",
	I32:         "i32",
	I64:         "i64",
	U32:         "u32",
	U64:         "u64",
	F32:         "f32",
	F64:         "f64",
	Date:        "date",
	DateTime:    "datetime",
	Vector:      "vector",
	Blob:        "blob",
	List:        "list",
	Enum:        "enum",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText stores kinds by name so that state objects stay readable and
// renumbering the constants can never change a stored meaning.
func (k Kind) MarshalText() ([]byte, error) {
	if k == KindInvalid || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("%w: cannot encode %v", ErrSchema, k)
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText is the inverse of MarshalText.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if i != int(KindInvalid) && n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown column kind %q", ErrSchema, b)
}

// scalar reports whether the kind is a single orderable or comparable value
// (filters and statistics apply to it).
func (k Kind) scalar() bool {
	switch k {
	case String, Bool, I32, I64, U32, U64, F32, F64, Date, DateTime, Enum:
		return true
	}
	return false
}

// ColumnType is the full storage type of a column.
type ColumnType struct {
	Kind     Kind `json:"kind"`
	Nullable bool `json:"nullable,omitempty"`
	// Elem is the element kind of a List; it must be a scalar kind other than Enum.
	Elem Kind `json:"elem,omitempty"`
	// Dim is the length of a Vector, 1 ≤ Dim ≤ 2^31−1.
	Dim int `json:"dim,omitempty"`
}

// Column is one named, typed column.
type Column struct {
	Name string     `json:"name"`
	Type ColumnType `json:"type"`
}

// Schema is the ordered list of a table's columns, hidden key columns
// included (node tables: id first; edge tables: id, src, dst).
type Schema struct {
	Columns []Column `json:"columns"`
}

// MarshalJSON keeps the zero Kind out of Elem for non-list columns.
func (t ColumnType) MarshalJSON() ([]byte, error) {
	type wire struct {
		Kind     Kind  `json:"kind"`
		Nullable bool  `json:"nullable,omitempty"`
		Elem     *Kind `json:"elem,omitempty"`
		Dim      int   `json:"dim,omitempty"`
	}
	w := wire{Kind: t.Kind, Nullable: t.Nullable, Dim: t.Dim}
	if t.Kind == List {
		e := t.Elem
		w.Elem = &e
	}
	return json.Marshal(w)
}

// Index returns the position of the named column, or -1.
func (s Schema) Index(name string) int {
	for i, c := range s.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Validate checks names are unique and non-empty and every type is well formed.
func (s Schema) Validate() error {
	if len(s.Columns) == 0 {
		return fmt.Errorf("%w: schema has no columns", ErrSchema)
	}
	seen := make(map[string]bool, len(s.Columns))
	for _, c := range s.Columns {
		if c.Name == "" {
			return fmt.Errorf("%w: empty column name", ErrSchema)
		}
		if seen[c.Name] {
			return fmt.Errorf("%w: duplicate column %q", ErrSchema, c.Name)
		}
		seen[c.Name] = true
		if err := c.Type.validate(); err != nil {
			return fmt.Errorf("column %q: %w", c.Name, err)
		}
	}
	if i := s.Index(KeyColumn); i >= 0 {
		if t := s.Columns[i].Type; t.Kind != String || t.Nullable {
			return fmt.Errorf("%w: key column %q must be a non-nullable string", ErrSchema, KeyColumn)
		}
	}
	return nil
}

func (t ColumnType) validate() error {
	switch t.Kind {
	case String, Bool, I32, I64, U32, U64, F32, F64, Date, DateTime, Blob, Enum:
		if t.Dim != 0 || t.Elem != KindInvalid {
			return fmt.Errorf("%w: %v takes no dim or elem", ErrSchema, t.Kind)
		}
	case Vector:
		if t.Dim < 1 || t.Dim > math.MaxInt32 {
			return fmt.Errorf("%w: vector dim %d out of range 1..%d", ErrSchema, t.Dim, math.MaxInt32)
		}
		if t.Elem != KindInvalid {
			return fmt.Errorf("%w: vector takes no elem", ErrSchema)
		}
	case List:
		if !t.Elem.scalar() || t.Elem == Enum {
			return fmt.Errorf("%w: list element kind %v is not allowed", ErrSchema, t.Elem)
		}
		if t.Dim != 0 {
			return fmt.Errorf("%w: list takes no dim", ErrSchema)
		}
	default:
		return fmt.Errorf("%w: invalid kind %v", ErrSchema, t.Kind)
	}
	return nil
}

// scalarArrowTypes is the in-memory Arrow type of each scalar kind and of
// Blob; Vector and List are built from their parameters (ArrowType).
var scalarArrowTypes = [...]arrow.DataType{
	String:   arrow.BinaryTypes.String,
	Enum:     arrow.BinaryTypes.String,
	Bool:     arrow.FixedWidthTypes.Boolean,
	I32:      arrow.PrimitiveTypes.Int32,
	I64:      arrow.PrimitiveTypes.Int64,
	U32:      arrow.PrimitiveTypes.Uint32,
	U64:      arrow.PrimitiveTypes.Uint64,
	F32:      arrow.PrimitiveTypes.Float32,
	F64:      arrow.PrimitiveTypes.Float64,
	Date:     arrow.FixedWidthTypes.Date32,
	DateTime: arrow.FixedWidthTypes.Date64,
	Blob:     arrow.BinaryTypes.LargeBinary,
}

// scalarArrowType is the in-memory Arrow type of a scalar kind or Blob
// (nil for any other kind).
func scalarArrowType(k Kind) arrow.DataType {
	if int(k) < len(scalarArrowTypes) {
		return scalarArrowTypes[k]
	}
	return nil
}

// ArrowType is the in-memory Arrow type of the column type (spec §2.2).
func (t ColumnType) ArrowType() arrow.DataType {
	switch t.Kind {
	case Vector:
		return arrow.FixedSizeListOfNonNullable(int32(t.Dim), arrow.PrimitiveTypes.Float32)
	case List:
		return arrow.ListOf(scalarArrowType(t.Elem))
	}
	return scalarArrowType(t.Kind)
}

// ArrowSchema is the in-memory Arrow schema of the table: the one Scan returns
// and WriteFragment accepts (or a projection of it).
func (s Schema) ArrowSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(s.Columns))
	for i, c := range s.Columns {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: c.Type.Nullable}
	}
	return arrow.NewSchema(fields, nil)
}
