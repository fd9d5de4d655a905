package value

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

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
		return FormatFloat(x)
	case float32:
		return FormatFloat(float64(x))
	case Blob:
		if x.IsExternal() {
			return x.URI
		}
		return fmt.Sprintf("<blob %d bytes>", len(x.Data))
	case []float32:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = FormatFloat(float64(f))
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

// FormatFloat renders a float for messages: shortest decimal, NaN, ±Infinity.
func FormatFloat(f float64) string {
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

// MsPerDay is the number of milliseconds in a day (Date to DateTime).
const MsPerDay = 24 * 60 * 60 * 1000

func formatDate(days int32) string {
	return time.UnixMilli(int64(days) * MsPerDay).UTC().Format(time.DateOnly)
}

func formatDateTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
