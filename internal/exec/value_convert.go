package exec

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Raw JSON values, as accepted by ConvertJSON and ConvertParam, are what
// encoding/json produces with Decoder.UseNumber: nil, bool, string,
// json.Number, []any and map[string]any. float64 (a decode without
// UseNumber) and Go integer types are accepted as numbers too, so that
// params built in Go need not be re-encoded.

// jsonTypeName names the JSON type of a raw value for error messages.
func jsonTypeName(raw any) string {
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
func isIntegerText(s string) bool {
	s = strings.TrimPrefix(s, "-")
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

// arrowIntName is the storage type name used in range messages.
func arrowIntName(k schema.Kind) string {
	switch k {
	case schema.KindI32:
		return "Int32"
	case schema.KindI64:
		return "Int64"
	case schema.KindU32:
		return "UInt32"
	case schema.KindU64:
		return "UInt64"
	}
	return k.String()
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

// parseBlob accepts "base64:<payload>" (managed bytes) or an absolute URI.
func parseBlob(s string) (Blob, bool) {
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
	wrong := func() error {
		return valueErrorf(name, "property '%s' expects %s, got %s", name, pgTypeName(t), jsonTypeName(raw))
	}
	switch t.Kind {
	case schema.KindString, schema.KindEnum:
		s, ok := raw.(string)
		if !ok {
			return nil, wrong()
		}
		return s, nil
	case schema.KindBool:
		b, ok := raw.(bool)
		if !ok {
			return nil, wrong()
		}
		return b, nil
	case schema.KindI32, schema.KindI64, schema.KindU32, schema.KindU64:
		text, ok := numberText(raw)
		if !ok {
			return nil, wrong()
		}
		if !isIntegerText(text) {
			return nil, valueErrorf(name, "property '%s' expects an integer for %s, got %s", name, pgTypeName(t), text)
		}
		v, err := parseInt(t.Kind, text)
		if err != nil {
			return nil, valueErrorf(name, "property '%s' value %s exceeds %s range", name, text, arrowIntName(t.Kind))
		}
		return v, nil
	case schema.KindF32, schema.KindF64:
		text, ok := numberText(raw)
		if !ok {
			return nil, wrong()
		}
		f, ok := parseFloat(t.Kind, text)
		if !ok {
			return nil, valueErrorf(name, "property '%s' value %s exceeds %s range", name, text, floatName(t.Kind))
		}
		return f, nil
	case schema.KindDate:
		if s, ok := raw.(string); ok {
			d, ok := ParseDate(s)
			if !ok {
				return nil, valueErrorf(name, "property '%s' invalid Date '%s' (expected \"YYYY-MM-DD\" or integer days)", name, s)
			}
			return d, nil
		}
		text, ok := numberText(raw)
		if !ok {
			return nil, wrong()
		}
		if !isIntegerText(text) {
			return nil, valueErrorf(name, "property '%s' expects an integer for Date, got %s", name, text)
		}
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return nil, valueErrorf(name, "property '%s' value %s exceeds Date32 range", name, text)
		}
		return int32(n), nil
	case schema.KindDateTime:
		if s, ok := raw.(string); ok {
			ms, ok := ParseDateTime(s)
			if !ok {
				return nil, valueErrorf(name, "property '%s' invalid DateTime '%s' (expected RFC3339 or integer milliseconds)", name, s)
			}
			return ms, nil
		}
		text, ok := numberText(raw)
		if !ok {
			return nil, wrong()
		}
		if !isIntegerText(text) {
			return nil, valueErrorf(name, "property '%s' expects an integer for DateTime, got %s", name, text)
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, valueErrorf(name, "property '%s' value %s exceeds Date64 range", name, text)
		}
		return n, nil
	case schema.KindVector:
		arr, ok := raw.([]any)
		if !ok {
			return nil, wrong()
		}
		if len(arr) != t.Dim {
			return nil, valueErrorf(name, "vector property '%s' expects %d dimensions, got %d", name, t.Dim, len(arr))
		}
		vec := make([]float32, len(arr))
		for i, e := range arr {
			text, ok := numberText(e)
			if !ok {
				return nil, valueErrorf(name, "vector property '%s' elements must be numeric", name)
			}
			f, ok := parseFloat(schema.KindF32, text)
			if !ok {
				return nil, valueErrorf(name, "vector property '%s' elements must be finite", name)
			}
			vec[i] = float32(f)
		}
		return vec, nil
	case schema.KindBlob:
		s, ok := raw.(string)
		if !ok {
			return nil, wrong()
		}
		b, ok := parseBlob(s)
		if !ok {
			return nil, valueErrorf(name, "property '%s' expects \"base64:<payload>\" or a URI for Blob", name)
		}
		return b, nil
	case schema.KindList:
		arr, ok := raw.([]any)
		if !ok {
			return nil, wrong()
		}
		et := schema.Type{Kind: t.Elem}
		out := make([]any, len(arr))
		for i, e := range arr {
			en := name + "[" + strconv.Itoa(i) + "]"
			if e == nil {
				return nil, valueErrorf(en, "property '%s' list elements must not be null", en)
			}
			v, err := ConvertJSON(en, et, e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, valueErrorf(name, "property '%s' has unsupported type %s", name, pgTypeName(t))
}

// typeName is the .pg spelling of t without the nullable marker.
func pgTypeName(t schema.Type) string {
	t.Nullable = false
	return t.String()
}

func floatName(k schema.Kind) string {
	if k == schema.KindF32 {
		return "Float32"
	}
	return "Float64"
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
		return nil, valueErrorf(name, "parameter '%s' not provided", name)
	}
	if raw == nil {
		if t.Nullable {
			return nil, nil
		}
		return nil, valueErrorf(name, "param '%s': null is not accepted for non-nullable parameter", name)
	}
	return convertParamValue(name, t, raw)
}

func convertParamValue(name string, t schema.Type, raw any) (any, error) {
	expected := func(what string) error {
		return valueErrorf(name, "param '%s': expected %s, got %s", name, what, jsonTypeName(raw))
	}
	switch t.Kind {
	case schema.KindString, schema.KindEnum:
		s, ok := raw.(string)
		if !ok {
			return nil, expected("string")
		}
		return s, nil
	case schema.KindBool:
		b, ok := raw.(bool)
		if !ok {
			return nil, expected("boolean")
		}
		return b, nil
	case schema.KindI32, schema.KindI64, schema.KindU32, schema.KindU64:
		var text string
		if s, ok := raw.(string); ok {
			text = strings.TrimSpace(s)
		} else if n, ok := numberText(raw); ok {
			text = n
		} else {
			return nil, expected("integer")
		}
		if !isIntegerText(text) {
			return nil, valueErrorf(name, "param '%s': expected integer, got '%s'", name, text)
		}
		k := t.Kind
		if k == schema.KindU64 {
			// Upstream converts U64 params through i64; values above
			// i64::MAX are rejected rather than silently wrapped.
			if v, err := parseInt(schema.KindI64, text); err == nil {
				if v.(int64) < 0 {
					return nil, valueErrorf(name, "param '%s': value %s exceeds %s range", name, text, pgTypeName(t))
				}
				return uint64(v.(int64)), nil
			}
			return nil, valueErrorf(name, "param '%s': value %s exceeds %s range", name, text, pgTypeName(t))
		}
		v, err := parseInt(k, text)
		if err != nil {
			return nil, valueErrorf(name, "param '%s': value %s exceeds %s range", name, text, pgTypeName(t))
		}
		return v, nil
	case schema.KindF32, schema.KindF64:
		text, ok := numberText(raw)
		if !ok {
			return nil, expected("number")
		}
		f, ok := parseFloat(t.Kind, text)
		if !ok {
			return nil, valueErrorf(name, "param '%s': value %s exceeds %s range", name, text, pgTypeName(t))
		}
		return f, nil
	case schema.KindDate:
		s, ok := raw.(string)
		if !ok {
			return nil, expected("string")
		}
		d, ok := ParseDate(s)
		if !ok {
			return nil, valueErrorf(name, "param '%s': invalid date '%s' (expected YYYY-MM-DD)", name, s)
		}
		return d, nil
	case schema.KindDateTime:
		s, ok := raw.(string)
		if !ok {
			return nil, expected("string")
		}
		ms, ok := parseParamDateTime(s)
		if !ok {
			return nil, valueErrorf(name, "param '%s': invalid datetime '%s' (expected RFC3339)", name, s)
		}
		return ms, nil
	case schema.KindBlob:
		s, ok := raw.(string)
		if !ok {
			return nil, expected("string")
		}
		b, ok := parseBlob(s)
		if !ok {
			return nil, valueErrorf(name, "param '%s': expected \"base64:<payload>\" or a URI", name)
		}
		return b, nil
	case schema.KindVector:
		arr, ok := raw.([]any)
		if !ok {
			return nil, expected("array")
		}
		if len(arr) != t.Dim {
			return nil, valueErrorf(name, "param '%s': expected %d values for Vector(%d), got %d", name, t.Dim, t.Dim, len(arr))
		}
		vec := make([]float32, len(arr))
		for i, e := range arr {
			text, ok := numberText(e)
			if !ok {
				return nil, valueErrorf(name, "param '%s': expected number, got %s", name, jsonTypeName(e))
			}
			f, ok := parseFloat(schema.KindF32, text)
			if !ok {
				return nil, valueErrorf(name, "param '%s': value %s exceeds F32 range", name, text)
			}
			vec[i] = float32(f)
		}
		return vec, nil
	case schema.KindList:
		arr, ok := raw.([]any)
		if !ok {
			return nil, expected("array")
		}
		et := schema.Type{Kind: t.Elem}
		out := make([]any, len(arr))
		for i, e := range arr {
			en := name + "[" + strconv.Itoa(i) + "]"
			if e == nil {
				return nil, valueErrorf(en, "param '%s': null is not accepted for non-nullable parameter", en)
			}
			v, err := convertParamValue(en, et, e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, valueErrorf(name, "param '%s': unsupported parameter type %s", name, pgTypeName(t))
}

// parseParamDateTime accepts RFC3339, and, because params are typed by hand
// on command lines, also a bare "YYYY-MM-DD" or a zone-less
// "YYYY-MM-DDTHH:MM:SS[.fff]", both read as UTC.
func parseParamDateTime(s string) (int64, bool) {
	if ms, ok := ParseDateTime(s); ok {
		return ms, true
	}
	if d, ok := ParseDate(s); ok {
		return int64(d) * msPerDay, true
	}
	if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
		return t.UnixMilli(), true
	}
	return 0, false
}
