package value

import (
	"encoding/binary"
	"math"
)

// Comparisons and tuple keys of unboxed values. A typed scan (eval's
// typed aggregates) reads its cells straight from Arrow columns as int64,
// uint64, float64, string or bool and must order, filter and group them
// exactly as Compare and TupleKey order and group the boxed values of the
// value model; these helpers are those functions for one unboxed operand
// (TestTypedCompareMatchesCompare, TestTypedKeysMatchTupleKey).

// Num is a numeric constant normalised once for comparisons with unboxed
// column values.
type Num struct{ n number }

// NumOf returns v as a Num; ok is false when v is not a number of the
// value model (then Compare never finds it equal to a number).
func NumOf(v any) (Num, bool) {
	if Rank(v) != RankNumber {
		return Num{}, false
	}
	return Num{numberOf(v)}, true
}

// CompareInt returns Compare(x, c) for an integer value x.
func (c Num) CompareInt(x int64) int { return compareNum(intNumber(x), c.n) }

// CompareUint returns Compare(x, c) for an unsigned value x.
func (c Num) CompareUint(x uint64) int { return compareNum(number{mag: x}, c.n) }

// CompareFloat returns Compare(x, c) for a float value x.
func (c Num) CompareFloat(x float64) int { return compareNum(number{isFloat: true, f: x}, c.n) }

// CompareFloats returns Compare(x, y) of two floats: NaN after every other
// number and equal to NaN, -0 equal to 0.
func CompareFloats(x, y float64) int { return compareFloats(x, y) }

// CompareBools returns Compare(x, y) of two bools: false before true.
func CompareBools(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// AppendIntKey appends the TupleKey member of integer x.
func AppendIntKey(b []byte, x int64) []byte { return appendIntKey(b, intNumber(x)) }

// AppendUintKey appends the TupleKey member of unsigned x.
func AppendUintKey(b []byte, x uint64) []byte { return appendIntKey(b, number{mag: x}) }

// AppendFloatKey appends the TupleKey member of float f: an integral float
// keys like the equal integer, so that the key agrees with Compare.
func AppendFloatKey(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1<<64 {
		return appendIntKey(b, number{neg: f < 0, mag: uint64(math.Abs(f))})
	}
	return appendFloatKey(b, f)
}

// AppendStringKey appends the TupleKey member of string s.
func AppendStringKey(b []byte, s string) []byte {
	b = append(b, 'S')
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendBoolKey appends the TupleKey member of bool x.
func AppendBoolKey(b []byte, x bool) []byte {
	if x {
		return append(b, 'T')
	}
	return append(b, 'F')
}

// AppendNullKey appends the TupleKey member of a null.
func AppendNullKey(b []byte) []byte { return append(b, 'N') }
