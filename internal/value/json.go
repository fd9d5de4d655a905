package value

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// maxSafeInt is 2^53-1, the largest integer every JSON consumer (notably
// JavaScript) reads exactly; larger I64/U64 magnitudes are sent as strings.
const maxSafeInt = 1<<53 - 1

// EncodeJSON renders a value of type t for query results and export
// (§2.2 of the language spec, §1.5 of the surfaces spec). It returns raw
// JSON so that callers can embed it in a row object and marshal the row
// without re-encoding.
func EncodeJSON(t schema.Type, v any) (json.RawMessage, error) {
	b, err := AppendJSON(nil, t, v)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// AppendJSON appends the JSON encoding of v (see EncodeJSON) to dst:
//
//   - I32/U32: numbers; I64/U64: numbers, or decimal strings when the
//     magnitude exceeds 2^53-1;
//   - F32/F64: shortest round-trip decimal of the float64 value (F32 is
//     widened first, so 0.1f encodes as 0.10000000149011612); integral
//     values keep a ".0"; NaN, Infinity and -Infinity are strings;
//   - Date: "YYYY-MM-DD"; DateTime: "YYYY-MM-DDTHH:MM:SS.mmmZ";
//   - Vector: array of numbers; [T]: array of T's encoding;
//   - Blob: "base64:<payload>" or its URI (the load input form, so export
//     round-trips);
//   - String, enum: string; nil: null.
//
// A Go value that does not match t is a caller bug and returns an error.
func AppendJSON(dst []byte, t schema.Type, v any) ([]byte, error) {
	return appendJSON(dst, t, v, false)
}

// AppendExportJSON is AppendJSON for the graph-batch load format (export):
// integers are always exact JSON numbers, because the strict loader
// (ConvertJSON) rejects integers given as strings. Its output converts back
// to an Equal value for every value a load can store.
func AppendExportJSON(dst []byte, t schema.Type, v any) ([]byte, error) {
	return appendJSON(dst, t, v, true)
}

func appendJSON(dst []byte, t schema.Type, v any, exactInts bool) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	mismatch := func() error {
		return fmt.Errorf("value: cannot encode Go %T as %s", v, t)
	}
	switch t.Kind {
	case schema.KindString, schema.KindEnum:
		s, ok := v.(string)
		if !ok {
			return nil, mismatch()
		}
		return AppendJSONString(dst, s), nil
	case schema.KindBool:
		b, ok := v.(bool)
		if !ok {
			return nil, mismatch()
		}
		return strconv.AppendBool(dst, b), nil
	case schema.KindI32, schema.KindI64:
		n, ok := asInt64(v)
		if !ok {
			return nil, mismatch()
		}
		if !exactInts && (n > maxSafeInt || n < -maxSafeInt) {
			dst = append(dst, '"')
			dst = strconv.AppendInt(dst, n, 10)
			return append(dst, '"'), nil
		}
		return strconv.AppendInt(dst, n, 10), nil
	case schema.KindU32, schema.KindU64:
		n, ok := asUint64(v)
		if !ok {
			return nil, mismatch()
		}
		if !exactInts && n > maxSafeInt {
			dst = append(dst, '"')
			dst = strconv.AppendUint(dst, n, 10)
			return append(dst, '"'), nil
		}
		return strconv.AppendUint(dst, n, 10), nil
	case schema.KindF32, schema.KindF64:
		f, ok := asFloat64(v)
		if !ok {
			return nil, mismatch()
		}
		if t.Kind == schema.KindF32 {
			f = float64(float32(f))
		}
		return appendJSONFloat(dst, f), nil
	case schema.KindDate:
		var d int64
		switch x := v.(type) {
		case int32:
			d = int64(x)
		case int64:
			d = x
		default:
			return nil, mismatch()
		}
		if d < math.MinInt32 || d > math.MaxInt32 {
			return nil, mismatch()
		}
		dst = append(dst, '"')
		dst = append(dst, formatDate(int32(d))...)
		return append(dst, '"'), nil
	case schema.KindDateTime:
		ms, ok := asInt64(v)
		if !ok {
			return nil, mismatch()
		}
		dst = append(dst, '"')
		dst = append(dst, formatDateTime(ms)...)
		return append(dst, '"'), nil
	case schema.KindVector:
		vec, ok := v.([]float32)
		if !ok {
			return nil, mismatch()
		}
		dst = append(dst, '[')
		for i, f := range vec {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONFloat(dst, float64(f))
		}
		return append(dst, ']'), nil
	case schema.KindBlob:
		var b Blob
		switch x := v.(type) {
		case Blob:
			b = x
		case []byte:
			b = Blob{Data: x}
		default:
			return nil, mismatch()
		}
		if b.IsExternal() {
			return AppendJSONString(dst, b.URI), nil
		}
		return AppendJSONString(dst, "base64:"+base64.StdEncoding.EncodeToString(b.Data)), nil
	case schema.KindList:
		list, ok := v.([]any)
		if !ok {
			return nil, mismatch()
		}
		et := schema.Type{Kind: t.Elem, Nullable: true}
		dst = append(dst, '[')
		for i, e := range list {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSON(dst, et, e, exactInts); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	return nil, mismatch()
}

// asInt64, asUint64 and asFloat64 widen the in-memory representations of
// the signed, unsigned and float kinds; any other Go type is not one.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

func asUint64(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint64:
		return x, true
	case uint32:
		return uint64(x), true
	}
	return 0, false
}

func asFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// appendJSONFloat writes f the way the reference implementation's JSON
// serializer (ryu) does: shortest round-trip digits; plain decimal notation
// with a trailing ".0" for integral values when the decimal exponent is in
// (-5, 16], scientific notation ("1e21", "1.5e-7") outside it. Non-finite
// values, which JSON cannot carry, become the strings "NaN", "Infinity" and
// "-Infinity".
// AppendJSONFloat appends f as the JSON export writes a float (NaN and the
// infinities as strings, an integral value with ".0").
func AppendJSONFloat(dst []byte, f float64) []byte { return appendJSONFloat(dst, f) }

func appendJSONFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// 'e' with shortest precision yields "d.ddde±XX": split it into the
	// digit string and the decimal point position kk (value = 0.digits ×
	// 10^kk).
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	n := len(digits)
	kk := exp + 1
	switch {
	case n <= kk && kk <= 16:
		dst = append(dst, digits...)
		for i := n; i < kk; i++ {
			dst = append(dst, '0')
		}
		return append(dst, ".0"...)
	case 0 < kk && kk <= 16:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:]...)
	case -5 < kk && kk <= 0:
		dst = append(dst, "0."...)
		for i := kk; i < 0; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[0])
	if n > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(kk-1), 10)
}

// AppendJSONString writes s as a JSON string, escaping only '"', '\\' and
// control characters (no HTML escaping, matching the reference
// serializer); invalid UTF-8 becomes U+FFFD as with encoding/json.
func AppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	// Runs of bytes that need no escaping are copied whole.
	run := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[run:i]...)
			switch c {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			run = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[run:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			run = i
			continue
		}
		i += size
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}
