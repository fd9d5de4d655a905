package value

import (
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// The Go representation of one property value, by schema kind. These are the
// same types schema.NodeType.NodeID accepts, so converted values can be keyed
// without translation:
//
//	String, enum  string
//	Bool          bool
//	I32, I64      int64 (I32 values are range-checked to int32)
//	U32, U64      uint64 (U32 values are range-checked to uint32)
//	F32, F64      float64 (F32 values are rounded to float32 precision)
//	Date          int32 days since 1970-01-01
//	DateTime      int64 milliseconds since the Unix epoch, UTC
//	Vector(N)     []float32 of length N, finite elements
//	Blob          Blob
//	[T]           []any of T's representation (no nil elements)
//	null          nil (any nullable type)

// Blob is a Blob property value: either managed bytes (from a "base64:"
// input) or a reference to an external object by URI. Exactly one of the
// two is meaningful: URI != "" means external.
type Blob struct {
	Data []byte
	URI  string
}

// IsExternal reports whether the blob refers to an external object.
func (b Blob) IsExternal() bool { return b.URI != "" }

// ToColumn converts a value-model value to what table.BatchBuilder takes.
// Only external blobs have no column form: the store keeps managed bytes.
func ToColumn(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case Blob:
		if x.IsExternal() {
			return nil, fmt.Errorf("%w: external blob URI '%s' (external blob ingest is denied)", ErrUnsupportedValue, x.URI)
		}
		if x.Data == nil {
			return []byte{}, nil
		}
		return x.Data, nil
	}
	return v, nil
}

// FromColumn converts a table.Value result of a column of type t back into
// the value model. It converts list elements in place.
func FromColumn(t schema.Type, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int32:
		if t.Kind == schema.KindDate || (t.Kind == schema.KindList && t.Elem == schema.KindDate) {
			return x
		}
		return int64(x)
	case uint32:
		return uint64(x)
	case float32:
		return float64(x)
	case []byte:
		return Blob{Data: x}
	case []any:
		et := schema.Type{Kind: t.Elem}
		for i, e := range x {
			x[i] = FromColumn(et, e)
		}
		return x
	}
	return v
}
