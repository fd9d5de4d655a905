package value

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Raw JSON values, as accepted by ConvertJSON and ConvertParam, are what
// encoding/json produces with Decoder.UseNumber: nil, bool, string,
// json.Number, []any and map[string]any. float64 (a decode without
// UseNumber) and Go integer types are accepted as numbers too, so that
// params built in Go need not be re-encoded.

// JSONTypeName names the JSON type of a raw value for error messages.
func JSONTypeName(raw any) string {
	switch raw.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if _, ok := numberText(raw); ok {
		return "number"
	}
	return "unknown"
}

// numberText returns the literal text of a raw JSON number.
func numberText(raw any) (string, bool) {
	switch x := raw.(type) {
	case json.Number:
		return string(x), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	case int:
		return strconv.FormatInt(int64(x), 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	}
	return "", false
}

// isIntegerText reports whether s is a JSON integer literal: -?[0-9]+.
func isIntegerText(s string) bool { return Digits(strings.TrimPrefix(s, "-")) }

// Digits reports whether s is one or more ASCII digits: an unsigned JSON
// integer literal (the bulk load's typed path checks literals with it
// before it parses them as the rules here would).
func Digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// errIntRange is returned by parseInt when the literal does not fit.
var errIntRange = errors.New("integer out of range")

// parseInt converts an integer literal to the Go representation of kind k
// (int64 for I32/I64, uint64 for U32/U64), or errIntRange.
func parseInt(k schema.Kind, text string) (any, error) {
	switch k {
	case schema.KindI32, schema.KindI64:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || (k == schema.KindI32 && (n < math.MinInt32 || n > math.MaxInt32)) {
			return nil, errIntRange
		}
		return n, nil
	default: // U32, U64
		if strings.HasPrefix(text, "-") {
			if strings.Trim(text[1:], "0") == "" {
				return uint64(0), nil // -0 is zero, not out of range
			}
			return nil, errIntRange
		}
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil || (k == schema.KindU32 && n > math.MaxUint32) {
			return nil, errIntRange
		}
		return n, nil
	}
}

// parseFloat converts a number literal to float64 at the width of kind k
// (F32 values are rounded to float32). ok is false when the literal
// overflows the type.
func parseFloat(k schema.Kind, text string) (float64, bool) {
	bits := 64
	if k == schema.KindF32 {
		bits = 32
	}
	f, err := strconv.ParseFloat(text, bits)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// ParseDate parses "YYYY-MM-DD" into days since 1970-01-01.
func ParseDate(s string) (int32, bool) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, false
	}
	days := t.Unix() / (24 * 60 * 60) // midnight UTC, so exact
	if days < math.MinInt32 || days > math.MaxInt32 {
		return 0, false
	}
	return int32(days), true
}

// ParseDateTime parses an RFC3339 timestamp (fractional seconds allowed)
// into milliseconds since the epoch, truncating below the millisecond.
func ParseDateTime(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// ParseBlob accepts "base64:<payload>" (managed bytes) or an absolute URI.
func ParseBlob(s string) (Blob, bool) {
	if payload, ok := strings.CutPrefix(s, "base64:"); ok {
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return Blob{}, false
		}
		if data == nil {
			data = []byte{}
		}
		return Blob{Data: data}, true
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
		return Blob{}, false
	}
	return Blob{URI: s}, true
}

// Source says where a raw value comes from. It decides the subject of the
// error messages ("property 'x' …" or "param 'x': …") and the few rules the
// language spec lets differ between the two; everything else — parsing,
// range checks, the words that explain what is wrong — is one code path.
type Source uint8

const (
	// FromInput is a property value of strict JSONL input (load, §4.1):
	// every value must already have its JSON type.
	FromInput Source = iota
	// FromParam is a query or mutation parameter (§5.2). Parameters are
	// typed by hand on command lines, so integers may also be decimal
	// strings and a DateTime may be a bare date or lack its zone (read as
	// UTC).
	FromParam
)

// errorf builds the *Error of a bad value. vector marks property messages
// about a vector's shape, which the spec words "vector property 'x' …".
func (src Source) errorf(name string, vector bool, format string, args ...any) *Error {
	reason := fmt.Sprintf(format, args...)
	var msg string
	switch {
	case src == FromParam:
		msg = "param '" + name + "': " + reason
	case vector:
		msg = "vector property '" + name + "' " + reason
	default:
		msg = "property '" + name + "' " + reason
	}
	return &Error{Name: name, Reason: reason, Msg: msg}
}

// rangeName is the storage type name used in range messages.
func rangeName(k schema.Kind) string {
	switch k {
	case schema.KindI32:
		return "Int32"
	case schema.KindI64:
		return "Int64"
	case schema.KindU32:
		return "UInt32"
	case schema.KindU64:
		return "UInt64"
	case schema.KindF32:
		return "Float32"
	case schema.KindF64:
		return "Float64"
	case schema.KindDate:
		return "Date32"
	case schema.KindDateTime:
		return "Date64"
	}
	return k.String()
}

// ConvertJSON converts one property value from strict JSONL input (§2.2,
// §4.1 of the language spec) to its Go representation (see Blob for the
// table). name is the property name used in messages.
//
// JSON null converts to nil for every type: whether null is allowed is a
// row constraint (CheckNodeRow / CheckEdgeRow), not a conversion. Enum
// values are only checked to be strings here; membership is a row
// constraint too, because its message names the owning type.
func ConvertJSON(name string, t schema.Type, raw any) (any, error) {
	if raw == nil {
		return nil, nil
	}
	return convert(FromInput, name, t, raw)
}

// ConvertParam converts one query parameter (§5.2 of the language spec).
// present reports whether the params object had the key at all: a missing
// nullable parameter is nil, a missing non-nullable one is an error, as is
// an explicit null for a non-nullable one. Enum-typed parameters are
// treated as String (the query language has no enum params).
func ConvertParam(name string, t schema.Type, raw any, present bool) (any, error) {
	if !present {
		if t.Nullable {
			return nil, nil
		}
		return nil, &Error{Name: name, Reason: "not provided", Msg: "parameter '" + name + "' not provided"}
	}
	if raw == nil {
		if t.Nullable {
			return nil, nil
		}
		return nil, FromParam.errorf(name, false, "null is not accepted for non-nullable parameter")
	}
	return convert(FromParam, name, t, raw)
}

// convert is the one conversion of a non-null raw JSON value to the value
// model of t. The same bad value gets the same Reason from every source
// (TestSameBadValueSameReason); only the wrong-JSON-type and vector-length
// wordings differ, because the spec pins each source's.
func convert(src Source, name string, t schema.Type, raw any) (any, error) {
	fail := func(format string, args ...any) error { return src.errorf(name, false, format, args...) }
	wrongType := func(paramWant string) error {
		if src == FromParam {
			return fail("expected %s, got %s", paramWant, JSONTypeName(raw))
		}
		return fail("expects %s, got %s", TypeName(t), JSONTypeName(raw))
	}
	// integer reads an integer literal: a JSON number, or for parameters a
	// decimal string.
	integer := func() (string, error) {
		text, ok := numberText(raw)
		if s, isStr := raw.(string); !ok && isStr && src == FromParam {
			text, ok = strings.TrimSpace(s), true
		}
		if !ok {
			return "", wrongType("integer")
		}
		if !isIntegerText(text) {
			return "", fail("expects an integer for %s, got %s", TypeName(t), text)
		}
		return text, nil
	}
	// ticks reads a Date or DateTime given as a number: integer days or
	// milliseconds in a bits-wide signed range (its text form is a string).
	ticks := func(bits int) (int64, error) {
		if _, ok := numberText(raw); !ok {
			return 0, wrongType("string")
		}
		text, err := integer()
		if err != nil {
			return 0, err
		}
		n, err := strconv.ParseInt(text, 10, bits)
		if err != nil {
			return 0, fail("value %s exceeds %s range", text, rangeName(t.Kind))
		}
		return n, nil
	}
	switch t.Kind {
	case schema.KindString, schema.KindEnum:
		s, ok := raw.(string)
		if !ok {
			return nil, wrongType("string")
		}
		if !utf8.ValidString(s) {
			// Never repaired: two values differing only in invalid bytes
			// would become one.
			return nil, fail("is not valid UTF-8 text")
		}
		// raw already holds exactly s: returning it does not box the
		// string again (one allocation per string parameter).
		return raw, nil
	case schema.KindBool:
		b, ok := raw.(bool)
		if !ok {
			return nil, wrongType("boolean")
		}
		return b, nil
	case schema.KindI32, schema.KindI64, schema.KindU32, schema.KindU64:
		text, err := integer()
		if err != nil {
			return nil, err
		}
		k := t.Kind
		if k == schema.KindU64 && src == FromParam {
			// Upstream converts U64 params through i64; values above
			// i64::MAX are rejected rather than silently wrapped.
			v, err := parseInt(schema.KindI64, text)
			if err != nil || v.(int64) < 0 {
				return nil, fail("value %s exceeds %s range", text, rangeName(k))
			}
			return uint64(v.(int64)), nil
		}
		v, err := parseInt(k, text)
		if err != nil {
			return nil, fail("value %s exceeds %s range", text, rangeName(k))
		}
		return v, nil
	case schema.KindF32, schema.KindF64:
		text, ok := numberText(raw)
		if !ok {
			return nil, wrongType("number")
		}
		f, ok := parseFloat(t.Kind, text)
		if !ok {
			return nil, fail("value %s exceeds %s range", text, rangeName(t.Kind))
		}
		return f, nil
	case schema.KindDate:
		if s, ok := raw.(string); ok {
			d, ok := ParseDate(s)
			if !ok {
				return nil, fail(`invalid Date '%s' (expected "YYYY-MM-DD" or integer days)`, s)
			}
			return d, nil
		}
		n, err := ticks(32)
		if err != nil {
			return nil, err
		}
		return int32(n), nil
	case schema.KindDateTime:
		if s, ok := raw.(string); ok {
			parse := ParseDateTime
			if src == FromParam {
				parse = parseParamDateTime
			}
			ms, ok := parse(s)
			if !ok {
				return nil, fail("invalid DateTime '%s' (expected RFC3339 or integer milliseconds)", s)
			}
			return ms, nil
		}
		n, err := ticks(64)
		if err != nil {
			return nil, err
		}
		return n, nil
	case schema.KindVector:
		arr, ok := raw.([]any)
		if !ok {
			return nil, wrongType("array")
		}
		if len(arr) != t.Dim {
			if src == FromParam {
				return nil, fail("expected %d values for Vector(%d), got %d", t.Dim, t.Dim, len(arr))
			}
			return nil, src.errorf(name, true, "expects %d dimensions, got %d", t.Dim, len(arr))
		}
		vec := make([]float32, len(arr))
		for i, e := range arr {
			text, ok := numberText(e)
			if !ok {
				return nil, src.errorf(name, true, "elements must be numeric")
			}
			f, ok := parseFloat(schema.KindF32, text)
			if !ok {
				return nil, src.errorf(name, true, "elements must be finite")
			}
			vec[i] = float32(f)
		}
		return vec, nil
	case schema.KindBlob:
		s, ok := raw.(string)
		if !ok {
			return nil, wrongType("string")
		}
		b, ok := ParseBlob(s)
		if !ok {
			return nil, fail(`expects "base64:<payload>" or a URI for Blob`)
		}
		return b, nil
	case schema.KindList:
		arr, ok := raw.([]any)
		if !ok {
			return nil, wrongType("array")
		}
		et := schema.Type{Kind: t.Elem}
		out := make([]any, len(arr))
		for i, e := range arr {
			en := name + "[" + strconv.Itoa(i) + "]"
			if e == nil {
				return nil, src.errorf(en, false, "list elements must not be null")
			}
			v, err := convert(src, en, et, e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fail("has unsupported type %s", TypeName(t))
}

// TypeName is the .pg spelling of t without the nullable marker.
func TypeName(t schema.Type) string {
	t.Nullable = false
	return t.String()
}

// Coerce changes the representation of an already converted value (a
// parameter of its declared type, a query literal) to that of property
// type t, range-checking on the way: an I64 parameter assigned to an I32
// property is checked here, at run time, as upstream does. A value of a
// representation t does not take is returned unchanged (the type checker
// has proved it fits). name is the property, for messages.
func Coerce(name string, t schema.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	rangeErr := func() error {
		return FromInput.errorf(name, false, "value %v exceeds %s range", v, rangeName(t.Kind))
	}
	switch t.Kind {
	case schema.KindI32, schema.KindI64:
		var i int64
		switch x := v.(type) {
		case int64:
			i = x
		case int32:
			i = int64(x)
		case uint64:
			if x > math.MaxInt64 {
				return nil, rangeErr()
			}
			i = int64(x)
		default:
			return v, nil
		}
		if t.Kind == schema.KindI32 && (i < math.MinInt32 || i > math.MaxInt32) {
			return nil, rangeErr()
		}
		return i, nil
	case schema.KindU32, schema.KindU64:
		var u uint64
		switch x := v.(type) {
		case uint64:
			u = x
		case int64:
			if x < 0 {
				return nil, rangeErr()
			}
			u = uint64(x)
		default:
			return v, nil
		}
		if t.Kind == schema.KindU32 && u > math.MaxUint32 {
			return nil, rangeErr()
		}
		return u, nil
	case schema.KindF32, schema.KindF64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		case uint64:
			f = float64(x)
		default:
			return v, nil
		}
		if t.Kind == schema.KindF32 {
			if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
				return nil, rangeErr()
			}
			f = float64(float32(f))
		}
		return f, nil
	case schema.KindDateTime:
		if d, ok := v.(int32); ok {
			return int64(d) * MsPerDay, nil
		}
	case schema.KindBlob:
		if s, ok := v.(string); ok {
			if b, ok := ParseBlob(s); ok {
				if b.IsExternal() {
					return nil, &Error{Name: name, Reason: "external blob ingest is denied",
						Msg: fmt.Sprintf("external blob URI '%s' for property '%s' is not allowed (external blob ingest is denied)", s, name)}
				}
				return b, nil
			}
			return Blob{Data: []byte(s)}, nil
		}
	case schema.KindVector:
		switch x := v.(type) {
		case []float32:
			if len(x) != t.Dim {
				return nil, FromInput.errorf(name, true, "expects %d dimensions, got %d", t.Dim, len(x))
			}
		case []any:
			out := make([]float32, len(x))
			for i, e := range x {
				f, err := Coerce(name, schema.Type{Kind: schema.KindF32}, e)
				if err != nil {
					return nil, err
				}
				ff, ok := f.(float64)
				if !ok {
					return nil, FromInput.errorf(name, true, "elements must be numeric")
				}
				out[i] = float32(ff)
			}
			if len(out) != t.Dim {
				return nil, FromInput.errorf(name, true, "expects %d dimensions, got %d", t.Dim, len(out))
			}
			return out, nil
		}
	case schema.KindList:
		if x, ok := v.([]any); ok {
			et := schema.Type{Kind: t.Elem}
			out := make([]any, len(x))
			for i, e := range x {
				c, err := Coerce(name, et, e)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			return out, nil
		}
	}
	return v, nil
}

// parseParamDateTime accepts RFC3339, and, because params are typed by hand
// on command lines, also a bare "YYYY-MM-DD" or a zone-less
// "YYYY-MM-DDTHH:MM:SS[.fff]", both read as UTC.
func parseParamDateTime(s string) (int64, bool) {
	if ms, ok := ParseDateTime(s); ok {
		return ms, true
	}
	if d, ok := ParseDate(s); ok {
		return int64(d) * MsPerDay, true
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t.UnixMilli(), true
	}
	return 0, false
}
