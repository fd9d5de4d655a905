package value

import (
	"math"
	"math/rand/v2"
	"testing"
)

// typedSamples are numbers where Compare is delicate: around 0, ±2^53,
// the int64 and uint64 extremes, NaN and the infinities.
var typedSamples = []any{
	int64(0), int64(-1), int64(1), int64(math.MinInt64), int64(math.MaxInt64), int64(1 << 53), int64(1<<53 + 1),
	uint64(0), uint64(math.MaxUint64), uint64(1 << 63), int32(-7), int32(7),
	0.0, math.Copysign(0, -1), 0.5, -0.5, 1.0, float64(1 << 53), float64(1<<53) + 2, 1e300, -1e300,
	math.Inf(1), math.Inf(-1), math.NaN(), float64(math.MaxInt64), float64(math.MaxUint64), 18446744073709551616.0,
}

// TestTypedCompareMatchesCompare: Num's comparisons of an unboxed integer,
// unsigned or float with a constant, and CompareFloats, give Compare's
// answer on the boxed values.
func TestTypedCompareMatchesCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := append([]any{}, typedSamples...)
	for range 300 {
		vals = append(vals, int64(rng.IntN(21)-10), uint64(rng.IntN(21)), float64(rng.IntN(41)-20)/2, rng.Int64(), rng.Uint64(), rng.NormFloat64()*1e18)
	}
	for _, c := range vals {
		n, ok := NumOf(c)
		if !ok {
			t.Fatalf("NumOf(%T %v) not a number", c, c)
		}
		for _, x := range vals {
			want := Compare(x, c)
			var got int
			switch v := x.(type) {
			case int64:
				got = n.CompareInt(v)
			case int32:
				got = n.CompareInt(int64(v))
			case uint64:
				got = n.CompareUint(v)
			case float64:
				got = n.CompareFloat(v)
				if f, isF := c.(float64); isF {
					if g := CompareFloats(v, f); g != want {
						t.Fatalf("CompareFloats(%v, %v) = %d, Compare %d", v, f, g, want)
					}
				}
			}
			if got != want {
				t.Fatalf("typed compare of %T %v with %T %v = %d, Compare %d", x, x, c, c, got, want)
			}
		}
	}
	for _, c := range []any{nil, "1", true} {
		if _, ok := NumOf(c); ok {
			t.Fatalf("NumOf(%v) is a number", c)
		}
	}
}

// TestTypedKeysMatchTupleKey: the unboxed key appenders write TupleKey's
// bytes for the boxed value.
func TestTypedKeysMatchTupleKey(t *testing.T) {
	for _, x := range append(append([]any{}, typedSamples...), "", "a", "a\x00b", true, false, nil) {
		var got []byte
		switch v := x.(type) {
		case int64:
			got = AppendIntKey(nil, v)
		case int32:
			got = AppendIntKey(nil, int64(v))
		case uint64:
			got = AppendUintKey(nil, v)
		case float64:
			got = AppendFloatKey(nil, v)
		case string:
			got = AppendStringKey(nil, v)
		case bool:
			got = AppendBoolKey(nil, v)
		case nil:
			got = AppendNullKey(nil)
		}
		if want := TupleKey([]any{x}); string(got) != want {
			t.Fatalf("key of %T %v = %q, TupleKey %q", x, x, got, want)
		}
	}
}
