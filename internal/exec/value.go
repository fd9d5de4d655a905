package exec

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

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

// ValueError reports a value that cannot be converted to its declared type.
// Msg is the complete user-facing message (it already names the property or
// parameter, in the spec's wording); Name is that property or parameter name
// for callers that need it programmatically.
type ValueError struct {
	Name string
	Msg  string
}

func (e *ValueError) Error() string { return e.Msg }

func valueErrorf(name, format string, args ...any) *ValueError {
	return &ValueError{Name: name, Msg: fmt.Sprintf(format, args...)}
}

// Kind ranks used by Compare to order values of different Go types. Values
// of one schema type always share a rank, so this only matters for
// heterogeneous inputs (for example untyped query literals).
const (
	rankNull = iota
	rankBool
	rankNumber
	rankString
	rankBlob
	rankVector
	rankList
	rankOther
)

func rankOf(v any) int {
	switch v.(type) {
	case nil:
		return rankNull
	case bool:
		return rankBool
	case int64, int32, int, uint64, uint32, float64, float32:
		return rankNumber
	case string:
		return rankString
	case Blob, []byte:
		return rankBlob
	case []float32:
		return rankVector
	case []any:
		return rankList
	}
	return rankOther
}

// Compare is a total order over property values, used for ORDER BY
// tie-breaks, uniqueness and merge comparisons. It returns -1, 0 or +1.
//
// nil sorts first. Numbers of any Go numeric type compare by exact numeric
// value (int64 and uint64 are never rounded through float64); -0 equals 0;
// NaN sorts after every other number and equals NaN so that the order stays
// total. Strings compare bytewise, bools false < true, vectors and lists
// lexicographically element by element, blobs by bytes then URI. Values of
// different kinds order by kind: null < bool < number < string < blob <
// vector < list.
func Compare(a, b any) int {
	ra, rb := rankOf(a), rankOf(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case rankNull:
		return 0
	case rankBool:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case rankNumber:
		return compareNumbers(a, b)
	case rankString:
		return strings.Compare(a.(string), b.(string))
	case rankBlob:
		x, y := blobOf(a), blobOf(b)
		if c := bytes.Compare(x.Data, y.Data); c != 0 {
			return c
		}
		return strings.Compare(x.URI, y.URI)
	case rankVector:
		x, y := a.([]float32), b.([]float32)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := compareFloats(float64(x[i]), float64(y[i])); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(x), len(y))
	case rankList:
		x, y := a.([]any), b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := Compare(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(x), len(y))
	}
	// Unknown Go types are a caller bug; order them by their printed form so
	// the order is still total and deterministic.
	return strings.Compare(fmt.Sprintf("%T:%v", a, a), fmt.Sprintf("%T:%v", b, b))
}

// Equal reports whether Compare(a, b) == 0.
func Equal(a, b any) bool { return Compare(a, b) == 0 }

func blobOf(v any) Blob {
	if b, ok := v.(Blob); ok {
		return b
	}
	return Blob{Data: v.([]byte)}
}

// number is a numeric value normalised for exact comparison.
type number struct {
	isFloat bool
	neg     bool   // integer sign (for integers only)
	mag     uint64 // integer magnitude
	f       float64
}

func numberOf(v any) number {
	switch x := v.(type) {
	case int64:
		return intNumber(x)
	case int32:
		return intNumber(int64(x))
	case int:
		return intNumber(int64(x))
	case uint64:
		return number{mag: x}
	case uint32:
		return number{mag: uint64(x)}
	case float32:
		return number{isFloat: true, f: float64(x)}
	case float64:
		return number{isFloat: true, f: x}
	}
	panic(fmt.Sprintf("exec: numberOf(%T)", v))
}

func intNumber(x int64) number {
	if x < 0 {
		// -x overflows for MinInt64; uint64 arithmetic gets it right.
		return number{neg: true, mag: uint64(-(x + 1)) + 1}
	}
	return number{mag: uint64(x)}
}

func compareNumbers(a, b any) int {
	x, y := numberOf(a), numberOf(b)
	switch {
	case !x.isFloat && !y.isFloat:
		return compareInts(x, y)
	case x.isFloat && y.isFloat:
		return compareFloats(x.f, y.f)
	case x.isFloat:
		return compareFloatInt(x.f, y)
	default:
		return -compareFloatInt(y.f, x)
	}
}

func compareInts(x, y number) int {
	switch {
	case x.neg && !y.neg:
		if x.mag == 0 && y.mag == 0 {
			return 0
		}
		return -1
	case !x.neg && y.neg:
		if x.mag == 0 && y.mag == 0 {
			return 0
		}
		return 1
	case x.neg:
		return cmp.Compare(y.mag, x.mag)
	}
	return cmp.Compare(x.mag, y.mag)
}

// compareFloats orders floats totally: -Inf < ... < -0 == 0 < ... < +Inf < NaN.
func compareFloats(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y)
}

func compareFloatInt(f float64, n number) int {
	if math.IsNaN(f) {
		return 1
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return 1
		}
		return -1
	}
	if n.mag <= 1<<53 {
		// Exactly representable as float64: no big arithmetic needed.
		g := float64(n.mag)
		if n.neg {
			g = -g
		}
		return cmp.Compare(f, g)
	}
	bi := new(big.Int).SetUint64(n.mag)
	if n.neg {
		bi.Neg(bi)
	}
	return new(big.Float).SetFloat64(f).Cmp(new(big.Float).SetInt(bi))
}

// TupleKey returns a string that is equal for two tuples exactly when every
// jsonMember compares Equal, for use as a map key when checking uniqueness.
// Members are type-tagged and length-prefixed, so no choice of string
// contents can forge a collision: ("x|y", "z") and ("x", "y|z") differ.
// Numbers are keyed by value (int64 5 and uint64 5 collide, as they compare
// equal); -0 keys as 0 and every NaN keys alike.
func TupleKey(tuple []any) string {
	var b []byte
	for _, v := range tuple {
		b = appendKey(b, v)
	}
	return string(b)
}

func appendKey(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'N')
	case bool:
		if x {
			return append(b, 'T')
		}
		return append(b, 'F')
	case string:
		b = append(b, 'S')
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...)
	case Blob:
		b = append(b, 'B')
		b = binary.AppendUvarint(b, uint64(len(x.Data)))
		b = append(b, x.Data...)
		b = binary.AppendUvarint(b, uint64(len(x.URI)))
		return append(b, x.URI...)
	case []byte:
		return appendKey(b, Blob{Data: x})
	case []float32:
		b = append(b, 'V')
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, f := range x {
			b = appendFloatKey(b, float64(f))
		}
		return b
	case []any:
		b = append(b, 'L')
		b = binary.AppendUvarint(b, uint64(len(x)))
		for _, e := range x {
			b = appendKey(b, e)
		}
		return b
	}
	if rankOf(v) == rankNumber {
		n := numberOf(v)
		if n.isFloat {
			// Integral floats key like the equal integer so that the key
			// agrees with Compare.
			if f := n.f; f == math.Trunc(f) && math.Abs(f) < 1<<64 {
				return appendIntKey(b, number{neg: f < 0, mag: uint64(math.Abs(f))})
			}
			return appendFloatKey(b, n.f)
		}
		return appendIntKey(b, n)
	}
	s := fmt.Sprintf("%T:%v", v, v)
	b = append(b, '?')
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendIntKey(b []byte, n number) []byte {
	if n.neg && n.mag != 0 {
		b = append(b, 'i')
	} else {
		b = append(b, 'I')
	}
	return binary.BigEndian.AppendUint64(b, n.mag)
}

func appendFloatKey(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		f = math.NaN()
	case f == 0:
		f = 0
	}
	b = append(b, 'D')
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

// FormatValue renders a value for error messages: strings verbatim, Date as
// YYYY-MM-DD, DateTime as RFC3339 with milliseconds, numbers in decimal,
// tuples of several members as "(a, b)". It is for humans; EncodeJSON is
// the wire encoding.
func FormatValue(t schema.Type, v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int32:
		if t.Kind == schema.KindDate {
			return formatDate(x)
		}
		return strconv.FormatInt(int64(x), 10)
	case int64:
		if t.Kind == schema.KindDateTime {
			return formatDateTime(x)
		}
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		if t.Kind == schema.KindF32 && !math.IsNaN(x) && !math.IsInf(x, 0) {
			// Stored F32 values are float32-rounded; print them at that
			// width so 5.1 reads "5.1", not "5.099999904632568".
			return strconv.FormatFloat(x, 'f', -1, 32)
		}
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case Blob:
		if x.IsExternal() {
			return x.URI
		}
		return fmt.Sprintf("<blob %d bytes>", len(x.Data))
	case []float32:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = formatFloat(float64(f))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		et := schema.Type{Kind: t.Elem}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = FormatValue(et, e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

const msPerDay = 24 * 60 * 60 * 1000

func formatDate(days int32) string {
	return time.UnixMilli(int64(days) * msPerDay).UTC().Format(time.DateOnly)
}

func formatDateTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
