package value

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Kind ranks used by Compare to order values of different Go types. Values
// of one schema type always share a rank, so this only matters for
// heterogeneous inputs (for example untyped query literals). Values of
// different ranks never compare equal.
const (
	RankNull = iota
	RankBool
	RankNumber
	RankString
	RankBlob
	RankVector
	RankList
	RankOther
)

// Rank returns the kind rank of v (RankNull … RankOther).
func Rank(v any) int {
	switch v.(type) {
	case nil:
		return RankNull
	case bool:
		return RankBool
	case int64, int32, int, uint64, uint32, float64, float32:
		return RankNumber
	case string:
		return RankString
	case Blob, []byte:
		return RankBlob
	case []float32:
		return RankVector
	case []any:
		return RankList
	}
	return RankOther
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
	ra, rb := Rank(a), Rank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case RankNull:
		return 0
	case RankBool:
		return CompareBools(a.(bool), b.(bool))
	case RankNumber:
		return compareNumbers(a, b)
	case RankString:
		return strings.Compare(a.(string), b.(string))
	case RankBlob:
		x, y := blobOf(a), blobOf(b)
		if c := bytes.Compare(x.Data, y.Data); c != 0 {
			return c
		}
		return strings.Compare(x.URI, y.URI)
	case RankVector:
		x, y := a.([]float32), b.([]float32)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := compareFloats(float64(x[i]), float64(y[i])); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(x), len(y))
	case RankList:
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
	panic(fmt.Sprintf("value: numberOf(%T)", v))
}

func intNumber(x int64) number {
	if x < 0 {
		// -x overflows for MinInt64; uint64 arithmetic gets it right.
		return number{neg: true, mag: uint64(-(x + 1)) + 1}
	}
	return number{mag: uint64(x)}
}

func compareNumbers(a, b any) int { return compareNum(numberOf(a), numberOf(b)) }

func compareNum(x, y number) int {
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
		return AppendBoolKey(b, x)
	case string:
		return AppendStringKey(b, x)
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
	if Rank(v) == RankNumber {
		n := numberOf(v)
		if n.isFloat {
			return AppendFloatKey(b, n.f)
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
