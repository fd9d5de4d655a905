package value

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

var (
	tString   = schema.Type{Kind: schema.KindString}
	tBool     = schema.Type{Kind: schema.KindBool}
	tI32      = schema.Type{Kind: schema.KindI32}
	tI64      = schema.Type{Kind: schema.KindI64}
	tU32      = schema.Type{Kind: schema.KindU32}
	tU64      = schema.Type{Kind: schema.KindU64}
	tF32      = schema.Type{Kind: schema.KindF32}
	tF64      = schema.Type{Kind: schema.KindF64}
	tDate     = schema.Type{Kind: schema.KindDate}
	tDateTime = schema.Type{Kind: schema.KindDateTime}
	tVec3     = schema.Type{Kind: schema.KindVector, Dim: 3}
	tBlob     = schema.Type{Kind: schema.KindBlob}
	tStrList  = schema.Type{Kind: schema.KindList, Elem: schema.KindString}
	tDateList = schema.Type{Kind: schema.KindList, Elem: schema.KindDate}
	tI32List  = schema.Type{Kind: schema.KindList, Elem: schema.KindI32}
	tEnum     = schema.Type{Kind: schema.KindEnum, Enum: []string{"a", "b", "c"}}
)

func jnum(s string) json.Number { return json.Number(s) }

func TestConvertJSON(t *testing.T) {
	tests := []struct {
		name    string
		typ     schema.Type
		raw     any
		want    any
		wantErr string
	}{
		{"null any type", tI32, nil, nil, ""},
		{"string", tString, "héllo", "héllo", ""},
		{"string wrong type", tString, jnum("1"), nil, "property 'p' expects String, got number"},
		{"enum is a string", tEnum, "zzz", "zzz", ""},
		{"enum wrong type", tEnum, true, nil, "property 'p' expects enum(a, b, c), got boolean"},
		{"bool", tBool, true, true, ""},
		{"bool wrong type", tBool, "true", nil, "property 'p' expects Bool, got string"},
		{"i32", tI32, jnum("-2147483648"), int64(math.MinInt32), ""},
		{"i32 max", tI32, jnum("2147483647"), int64(math.MaxInt32), ""},
		{"i32 overflow", tI32, jnum("2147483648"), nil, "property 'p' value 2147483648 exceeds Int32 range"},
		{"i32 underflow", tI32, jnum("-2147483649"), nil, "property 'p' value -2147483649 exceeds Int32 range"},
		{"i32 fraction", tI32, jnum("30.5"), nil, "property 'p' expects an integer for I32, got 30.5"},
		{"i32 exponent", tI32, jnum("1e3"), nil, "property 'p' expects an integer for I32, got 1e3"},
		{"i32 string", tI32, "30", nil, "property 'p' expects I32, got string"},
		{"i64 max", tI64, jnum("9223372036854775807"), int64(math.MaxInt64), ""},
		{"i64 overflow", tI64, jnum("9223372036854775808"), nil, "property 'p' value 9223372036854775808 exceeds Int64 range"},
		{"u32", tU32, jnum("4294967295"), uint64(math.MaxUint32), ""},
		{"u32 overflow", tU32, jnum("4294967296"), nil, "property 'p' value 4294967296 exceeds UInt32 range"},
		{"u32 negative", tU32, jnum("-1"), nil, "property 'p' value -1 exceeds UInt32 range"},
		{"u32 negative zero", tU32, jnum("-0"), uint64(0), ""},
		{"u64 max", tU64, jnum("18446744073709551615"), uint64(math.MaxUint64), ""},
		{"u64 overflow", tU64, jnum("18446744073709551616"), nil, "property 'p' value 18446744073709551616 exceeds UInt64 range"},
		{"f64", tF64, jnum("1.5"), 1.5, ""},
		{"f64 from integer", tF64, jnum("3"), 3.0, ""},
		{"f64 overflow", tF64, jnum("1e400"), nil, "property 'p' value 1e400 exceeds Float64 range"},
		{"f32 rounded", tF32, jnum("0.1"), float64(float32(0.1)), ""},
		{"f32 overflow", tF32, jnum("1e39"), nil, "property 'p' value 1e39 exceeds Float32 range"},
		{"f64 wrong type", tF64, "1.5", nil, "property 'p' expects F64, got string"},
		{"date string", tDate, "2024-06-01", int32(19875), ""},
		{"date before epoch", tDate, "1969-12-31", int32(-1), ""},
		{"date days", tDate, jnum("19875"), int32(19875), ""},
		{"date bad string", tDate, "2024-13-01", nil, `property 'p' invalid Date '2024-13-01' (expected "YYYY-MM-DD" or integer days)`},
		{"date with time", tDate, "2024-06-01T00:00:00Z", nil, `property 'p' invalid Date '2024-06-01T00:00:00Z' (expected "YYYY-MM-DD" or integer days)`},
		{"date days overflow", tDate, jnum("2147483648"), nil, "property 'p' value 2147483648 exceeds Date32 range"},
		{"date fraction", tDate, jnum("1.5"), nil, "property 'p' expects an integer for Date, got 1.5"},
		{"date wrong type", tDate, true, nil, "property 'p' expects Date, got boolean"},
		{"datetime rfc3339", tDateTime, "2024-06-01T12:00:00Z", int64(1717243200000), ""},
		{"datetime offset", tDateTime, "2024-06-01T14:00:00+02:00", int64(1717243200000), ""},
		{"datetime fraction truncated to ms", tDateTime, "2024-06-01T12:00:00.1239Z", int64(1717243200123), ""},
		{"datetime ms", tDateTime, jnum("1717243200000"), int64(1717243200000), ""},
		{"datetime no zone", tDateTime, "2024-06-01T12:00:00", nil, "property 'p' invalid DateTime '2024-06-01T12:00:00' (expected RFC3339 or integer milliseconds)"},
		{"datetime fraction number", tDateTime, jnum("1.5"), nil, "property 'p' expects an integer for DateTime, got 1.5"},
		{"vector", tVec3, []any{jnum("1"), jnum("0.5"), jnum("-2")}, []float32{1, 0.5, -2}, ""},
		{"vector short", tVec3, []any{jnum("1"), jnum("2")}, nil, "vector property 'p' expects 3 dimensions, got 2"},
		{"vector long", tVec3, []any{jnum("1"), jnum("2"), jnum("3"), jnum("4")}, nil, "vector property 'p' expects 3 dimensions, got 4"},
		{"vector non-numeric", tVec3, []any{jnum("1"), "2", jnum("3")}, nil, "vector property 'p' elements must be numeric"},
		{"vector null element", tVec3, []any{jnum("1"), nil, jnum("3")}, nil, "vector property 'p' elements must be numeric"},
		{"vector non-finite", tVec3, []any{jnum("1"), jnum("1e39"), jnum("3")}, nil, "vector property 'p' elements must be finite"},
		{"vector not array", tVec3, "1,2,3", nil, "property 'p' expects Vector(3), got string"},
		{"blob base64", tBlob, "base64:aGk=", Blob{Data: []byte("hi")}, ""},
		{"blob empty base64", tBlob, "base64:", Blob{Data: []byte{}}, ""},
		{"blob bad base64", tBlob, "base64:!!", nil, `property 'p' expects "base64:<payload>" or a URI for Blob`},
		{"blob uri", tBlob, "s3://bucket/key.pdf", Blob{URI: "s3://bucket/key.pdf"}, ""},
		{"blob not uri", tBlob, "just text", nil, `property 'p' expects "base64:<payload>" or a URI for Blob`},
		{"list", tStrList, []any{"a", "b"}, []any{"a", "b"}, ""},
		{"list empty", tStrList, []any{}, []any{}, ""},
		{"list of dates", tDateList, []any{"1970-01-02", jnum("3")}, []any{int32(1), int32(3)}, ""},
		{"list not array", tStrList, "a", nil, "property 'p' expects [String], got string"},
		{"list element type", tStrList, []any{"a", jnum("1")}, nil, "property 'p[1]' expects String, got number"},
		{"list element range", tI32List, []any{jnum("1"), jnum("99999999999")}, nil, "property 'p[1]' value 99999999999 exceeds Int32 range"},
		{"list null element", tStrList, []any{nil}, nil, "property 'p[0]' list elements must not be null"},
		{"object value", tString, map[string]any{}, nil, "property 'p' expects String, got object"},
		{"float64 raw accepted", tI64, float64(42), int64(42), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConvertJSON("p", tc.typ, tc.raw)
			if tc.wantErr != "" {
				var ve *Error
				if !errors.As(err, &ve) {
					t.Fatalf("got %v (%v), want *Error %q", got, err, tc.wantErr)
				}
				if ve.Error() != tc.wantErr {
					t.Fatalf("error\n got: %s\nwant: %s", ve.Error(), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// absentParam marks a parameter missing from the params object.
type absentParam struct{}

func TestConvertParam(t *testing.T) {
	nullable := func(t schema.Type) schema.Type { t.Nullable = true; return t }
	tests := []struct {
		name    string
		typ     schema.Type
		raw     any
		want    any
		wantErr string
	}{
		{"missing non-nullable", tString, absentParam{}, nil, "parameter 'x' not provided"},
		{"missing nullable", nullable(tString), absentParam{}, nil, ""},
		{"null non-nullable", tString, nil, nil, "param 'x': null is not accepted for non-nullable parameter"},
		{"null nullable", nullable(tI32), nil, nil, ""},
		{"string", tString, "Alice", "Alice", ""},
		{"string got number", tString, jnum("1"), nil, "param 'x': expected string, got number"},
		{"enum as string", tEnum, "b", "b", ""},
		{"i32 integer", tI32, jnum("30"), int64(30), ""},
		{"i32 decimal string", tI32, "30", int64(30), ""},
		{"i32 range", tI32, jnum("3000000000"), nil, "param 'x': value 3000000000 exceeds Int32 range"},
		{"i32 fraction", tI32, jnum("1.5"), nil, "param 'x': expects an integer for I32, got 1.5"},
		{"i32 bad string", tI32, "abc", nil, "param 'x': expects an integer for I32, got abc"},
		{"i64 got bool", tI64, true, nil, "param 'x': expected integer, got boolean"},
		{"u32 negative", tU32, jnum("-1"), nil, "param 'x': value -1 exceeds UInt32 range"},
		{"u64 up to i64 max", tU64, "9223372036854775807", uint64(math.MaxInt64), ""},
		{"u64 above i64 max", tU64, "9223372036854775808", nil, "param 'x': value 9223372036854775808 exceeds UInt64 range"},
		{"u64 negative", tU64, jnum("-5"), nil, "param 'x': value -5 exceeds UInt64 range"},
		{"f64", tF64, jnum("2.5"), 2.5, ""},
		{"f64 from float64", tF64, 2.5, 2.5, ""},
		{"f32", tF32, jnum("0.1"), float64(float32(0.1)), ""},
		{"f64 got string", tF64, "2.5", nil, "param 'x': expected number, got string"},
		{"bool", tBool, false, false, ""},
		{"bool got string", tBool, "false", nil, "param 'x': expected boolean, got string"},
		{"date", tDate, "2026-04-29", int32(20572), ""},
		{"date bad", tDate, "29/04/2026", nil, `param 'x': invalid Date '29/04/2026' (expected "YYYY-MM-DD" or integer days)`},
		{"date as integer days", tDate, jnum("3"), int32(3), ""},
		{"date got boolean", tDate, true, nil, "param 'x': expected string, got boolean"},
		{"datetime", tDateTime, "2024-06-01T12:00:00Z", int64(1717243200000), ""},
		{"datetime bare date", tDateTime, "2024-06-01", int64(1717200000000), ""},
		{"datetime naive", tDateTime, "2024-06-01T12:00:00", int64(1717243200000), ""},
		{"datetime bad", tDateTime, "noon", nil, "param 'x': invalid DateTime 'noon' (expected RFC3339 or integer milliseconds)"},
		{"blob", tBlob, "base64:aGk=", Blob{Data: []byte("hi")}, ""},
		{"list", tStrList, []any{"a", "b"}, []any{"a", "b"}, ""},
		{"list got string", tStrList, "a", nil, "param 'x': expected array, got string"},
		{"list element", tI32List, []any{jnum("1"), "z"}, nil, "param 'x[1]': expects an integer for I32, got z"},
		{"vector", tVec3, []any{jnum("1"), jnum("2"), jnum("3")}, []float32{1, 2, 3}, ""},
		{"vector wrong length", schema.Type{Kind: schema.KindVector, Dim: 4}, []any{jnum("1"), jnum("2"), jnum("3")}, nil, "param 'x': expected 4 values for Vector(4), got 3"},
		{"vector element", tVec3, []any{jnum("1"), "2", jnum("3")}, nil, "param 'x': elements must be numeric"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, isAbsent := tc.raw.(absentParam)
			raw := tc.raw
			if isAbsent {
				raw = nil
			}
			got, err := ConvertParam("x", tc.typ, raw, !isAbsent)
			if tc.wantErr != "" {
				var ve *Error
				if !errors.As(err, &ve) || ve.Error() != tc.wantErr {
					t.Fatalf("error\n got: %v\nwant: %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestEncodeJSON(t *testing.T) {
	tests := []struct {
		name string
		typ  schema.Type
		v    any
		want string
	}{
		{"null", tI32, nil, `null`},
		{"string escapes", tString, "a\"b\\c\n<&>\x01é", `"a\"b\\c\n<&>\u0001é"`},
		{"invalid utf8", tString, "a\xffb", `"a\ufffdb"`},
		{"enum", tEnum, "b", `"b"`},
		{"bool", tBool, true, `true`},
		{"i32", tI32, int64(-30), `-30`},
		{"i64 safe", tI64, int64(1<<53 - 1), `9007199254740991`},
		{"i64 negative safe", tI64, int64(-(1<<53 - 1)), `-9007199254740991`},
		{"i64 unsafe", tI64, int64(1 << 53), `"9007199254740992"`},
		{"i64 negative unsafe", tI64, int64(-(1 << 53)), `"-9007199254740992"`},
		{"u64 safe", tU64, uint64(1<<53 - 1), `9007199254740991`},
		{"u64 unsafe", tU64, uint64(math.MaxUint64), `"18446744073709551615"`},
		{"u32", tU32, uint64(7), `7`},
		{"f64", tF64, 1.5, `1.5`},
		{"f64 integral keeps .0", tF64, 30.0, `30.0`},
		{"f64 zero", tF64, 0.0, `0.0`},
		{"f64 small", tF64, 0.0001, `0.0001`},
		{"f64 tiny scientific", tF64, 1.5e-7, `1.5e-7`},
		{"f64 large scientific", tF64, 1e21, `1e21`},
		{"f64 16 digits plain", tF64, 1e15, `1000000000000000.0`},
		{"f64 17 digits scientific", tF64, 1e16, `1e16`},
		{"f64 negative", tF64, -2.25, `-2.25`},
		{"f32 widened", tF32, float64(float32(0.1)), `0.10000000149011612`},
		{"f32 given as f64 rounds", tF32, 0.1, `0.10000000149011612`},
		{"nan", tF64, math.NaN(), `"NaN"`},
		{"inf", tF64, math.Inf(1), `"Infinity"`},
		{"-inf", tF32, math.Inf(-1), `"-Infinity"`},
		{"date", tDate, int32(19875), `"2024-06-01"`},
		{"date negative", tDate, int32(-1), `"1969-12-31"`},
		{"datetime", tDateTime, int64(1717243200123), `"2024-06-01T12:00:00.123Z"`},
		{"datetime before epoch", tDateTime, int64(-1), `"1969-12-31T23:59:59.999Z"`},
		{"vector", tVec3, []float32{1, 0.5, 0.1}, `[1.0,0.5,0.10000000149011612]`},
		{"list", tStrList, []any{"a", "b"}, `["a","b"]`},
		{"list dates", tDateList, []any{int32(0), int32(1)}, `["1970-01-01","1970-01-02"]`},
		{"blob bytes", tBlob, Blob{Data: []byte("hi")}, `"base64:aGk="`},
		{"blob uri", tBlob, Blob{URI: "s3://b/k"}, `"s3://b/k"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EncodeJSON(tc.typ, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
		})
	}
}

func TestAppendExportJSONExactIntegers(t *testing.T) {
	tests := []struct {
		typ  schema.Type
		v    any
		want string
	}{
		{tI64, int64(1 << 53), `9007199254740992`},
		{tU64, uint64(math.MaxUint64), `18446744073709551615`},
		{schema.Type{Kind: schema.KindList, Elem: schema.KindI64}, []any{int64(-1 << 60)}, `[-1152921504606846976]`},
		{tF64, 30.0, `30.0`},
	}
	for _, tc := range tests {
		got, err := AppendExportJSON(nil, tc.typ, tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("AppendExportJSON(%s, %v) = %s, %v; want %s", tc.typ, tc.v, got, err, tc.want)
		}
		if back := mustConvert(t, tc.typ, string(got)); !Equal(back, tc.v) {
			t.Errorf("round trip %v -> %s -> %v", tc.v, got, back)
		}
	}
}

func TestEncodeJSONMismatch(t *testing.T) {
	for _, tc := range []struct {
		typ schema.Type
		v   any
	}{{tI32, "x"}, {tString, int64(1)}, {tVec3, []any{}}, {tDate, int64(1 << 40)}, {tBlob, 3}} {
		if _, err := EncodeJSON(tc.typ, tc.v); err == nil {
			t.Errorf("EncodeJSON(%s, %#v) succeeded, want error", tc.typ, tc.v)
		}
	}
}

// Values read from JSONL and written back by EncodeJSON convert to the same
// values again: export round-trips.
func TestEncodeRoundTrip(t *testing.T) {
	tests := []struct {
		typ schema.Type
		raw string
	}{
		{tString, `"x\ny"`}, {tBool, `false`}, {tI64, `-12`}, {tU64, `7`}, {tF64, `0.30000000000000004`},
		{tF32, `0.1`}, {tDate, `"2000-02-29"`}, {tDateTime, `"2024-06-01T12:00:00.5Z"`},
		{tVec3, `[1,2.5,-3]`}, {tStrList, `["a","b"]`}, {tBlob, `"base64:AAEC"`}, {tBlob, `"https://x/y"`},
	}
	for _, tc := range tests {
		v1 := mustConvert(t, tc.typ, tc.raw)
		enc, err := EncodeJSON(tc.typ, v1)
		if err != nil {
			t.Fatal(err)
		}
		v2 := mustConvert(t, tc.typ, string(enc))
		if !Equal(v1, v2) {
			t.Errorf("%s %s: %#v -> %s -> %#v", tc.typ, tc.raw, v1, enc, v2)
		}
	}
}

func mustConvert(t *testing.T, typ schema.Type, raw string) any {
	t.Helper()
	var x any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	v, err := ConvertJSON("p", typ, x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCompare(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		a, b any
		want int
	}{
		{"nil equal", nil, nil, 0},
		{"nil first", nil, false, -1},
		{"bool", false, true, -1},
		{"bool before number", true, int64(0), -1},
		{"ints", int64(-5), int64(3), -1},
		{"int64 vs uint64 big", int64(math.MaxInt64), uint64(math.MaxUint64), -1},
		{"negative vs uint", int64(-1), uint64(0), -1},
		{"int vs uint equal", int64(5), uint64(5), 0},
		{"int vs float equal", int64(2), 2.0, 0},
		{"int vs float", int64(2), 2.5, -1},
		{"big int vs float exact", int64(1<<53 + 1), float64(1 << 53), 1},
		{"neg zero", math.Copysign(0, -1), 0.0, 0},
		{"nan last", math.Inf(1), nan, -1},
		{"nan equal", nan, nan, 0},
		{"nan vs int", nan, int64(1), 1},
		{"date int32 vs int64", int32(3), int64(3), 0},
		{"number before string", 1e300, "", -1},
		{"strings bytewise", "B", "a", -1},
		{"string before blob", "z", Blob{}, -1},
		{"blob bytes", Blob{Data: []byte{1}}, Blob{Data: []byte{2}}, -1},
		{"vectors", []float32{1, 2}, []float32{1, 3}, -1},
		{"vector prefix", []float32{1}, []float32{1, 0}, -1},
		{"lists", []any{"a", "b"}, []any{"a", "a"}, 1},
		{"list equal", []any{int64(1)}, []any{int64(1)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare(tc.a, tc.b); got != tc.want {
				t.Fatalf("Compare(%#v, %#v) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := Compare(tc.b, tc.a); got != -tc.want {
				t.Fatalf("Compare(%#v, %#v) = %d, want %d (antisymmetry)", tc.b, tc.a, got, -tc.want)
			}
			// TupleKey must agree with Compare on equality.
			if eq := TupleKey([]any{tc.a}) == TupleKey([]any{tc.b}); eq != (tc.want == 0) {
				t.Fatalf("TupleKey equality %v, Compare %d", eq, tc.want)
			}
		})
	}
}

func TestTupleKeyNoForgery(t *testing.T) {
	pairs := [][2][]any{
		{{"x|y", "z"}, {"x", "y|z"}},
		{{"ab", ""}, {"a", "b"}},
		{{"1"}, {int64(1)}},
		{{int64(-1)}, {uint64(1)}},
		{{[]any{"a", "b"}}, {[]any{"a"}, "b"}},
		{{nil, "a"}, {"a", nil}},
	}
	for _, p := range pairs {
		if TupleKey(p[0]) == TupleKey(p[1]) {
			t.Errorf("TupleKey(%#v) == TupleKey(%#v)", p[0], p[1])
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		typ  schema.Type
		v    any
		want string
	}{
		{tString, "x", "x"}, {tI32, int64(300), "300"}, {tF64, 2.5, "2.5"}, {tF64, 1e21, "1000000000000000000000"},
		{tDate, int32(0), "1970-01-01"}, {tDateTime, int64(0), "1970-01-01T00:00:00.000Z"},
		{tStrList, []any{"a", "b"}, "[a, b]"}, {tI32, nil, "null"}, {tF64, math.NaN(), "NaN"},
	}
	for _, tc := range tests {
		if got := FormatValue(tc.typ, tc.v); got != tc.want {
			t.Errorf("FormatValue(%s, %#v) = %q, want %q", tc.typ, tc.v, got, tc.want)
		}
	}
}
