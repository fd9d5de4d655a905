package table

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ColumnStats summarises one column of one fragment (or row group) so that a
// scan can skip it without reading it.
//
// Min and Max hold canonical values: string (String, Enum), bool, int64
// (I32, I64, Date days, DateTime ms), uint64 (U32, U64) or float64 (F32, F64).
// A nil bound means "unknown" and never prunes. Non-scalar columns (Vector,
// Blob, List) only record Nulls.
//
// INVARIANT: every non-null, non-NaN value v of the column satisfies
// Min <= v <= Max whenever the bound is non-nil (TestStatsBoundValues,
// TestScanPruningMatchesFullScan).
type ColumnStats struct {
	Nulls int64
	Min   any
	Max   any
}

// maxStatString bounds string statistics so that a long value cannot bloat
// every table state. A longer minimum is cut to a prefix (still a lower
// bound); a longer maximum is dropped (unknown), because a cut maximum would
// not be an upper bound.
const maxStatString = 256

// computeStats computes statistics of an in-memory column array.
func computeStats(t ColumnType, arr arrow.Array) ColumnStats {
	st := ColumnStats{Nulls: int64(arr.NullN())}
	if !t.Kind.scalar() {
		return st
	}
	n := arr.Len()
	valid := func(i int) bool { return arr.IsValid(i) }
	switch a := arr.(type) {
	case *array.String:
		var lo, hi string
		seen := false
		for i := 0; i < n; i++ {
			if !valid(i) {
				continue
			}
			v := a.Value(i)
			if !seen || v < lo {
				lo = v
			}
			if !seen || v > hi {
				hi = v
			}
			seen = true
		}
		if seen {
			st.Min, st.Max = boundString(lo, false), boundString(hi, true)
		}
	case *array.Boolean:
		seenF, seenT := false, false
		for i := 0; i < n; i++ {
			if valid(i) {
				if a.Value(i) {
					seenT = true
				} else {
					seenF = true
				}
			}
		}
		if seenF || seenT {
			st.Min, st.Max = !seenF, seenT
		}
	case *array.Int32:
		st.Min, st.Max = minMax(n, valid, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Int64:
		st.Min, st.Max = minMax(n, valid, func(i int) int64 { return a.Value(i) })
	case *array.Uint32:
		st.Min, st.Max = minMax(n, valid, func(i int) uint64 { return uint64(a.Value(i)) })
	case *array.Uint64:
		st.Min, st.Max = minMax(n, valid, func(i int) uint64 { return a.Value(i) })
	case *array.Date32:
		st.Min, st.Max = minMax(n, valid, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Date64:
		st.Min, st.Max = minMax(n, valid, func(i int) int64 { return int64(a.Value(i)) })
	case *array.Float32:
		st.Min, st.Max = minMax(n, func(i int) bool { return valid(i) && !math.IsNaN(float64(a.Value(i))) },
			func(i int) float64 { return float64(a.Value(i)) })
	case *array.Float64:
		st.Min, st.Max = minMax(n, func(i int) bool { return valid(i) && !math.IsNaN(a.Value(i)) },
			func(i int) float64 { return a.Value(i) })
	}
	return st
}

func boundString(s string, isMax bool) any {
	if !utf8.ValidString(s) {
		return nil // JSON would rewrite invalid bytes, breaking the bound
	}
	// Clone: s may point into an Arrow buffer, and the stats outlive it (a
	// Fragment held in a table state must not pin its whole batch).
	if len(s) <= maxStatString {
		return strings.Clone(s)
	}
	if isMax {
		return nil
	}
	cut := maxStatString
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.Clone(s[:cut])
}

func minMax[T int64 | uint64 | float64](n int, ok func(int) bool, get func(int) T) (any, any) {
	var lo, hi T
	seen := false
	for i := 0; i < n; i++ {
		if !ok(i) {
			continue
		}
		v := get(i)
		if !seen || v < lo {
			lo = v
		}
		if !seen || v > hi {
			hi = v
		}
		seen = true
	}
	if !seen {
		return nil, nil
	}
	return lo, hi
}

// statsJSON is the wire form of ColumnStats; bounds are decoded with the
// column's kind because JSON numbers alone cannot tell int64 from uint64
// from float64.
type statsJSON struct {
	Column string          `json:"column"`
	Nulls  int64           `json:"nulls"`
	Min    json.RawMessage `json:"min,omitempty"`
	Max    json.RawMessage `json:"max,omitempty"`
}

func encodeBound(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return json.Marshal(x)
	case string:
		// Not json.Marshal: it HTML-escapes <, > and &, which is noise in a
		// storage format.
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return nil, err
		}
		return json.RawMessage(strings.TrimSuffix(b.String(), "\n")), nil
	case int64:
		return json.RawMessage(strconv.FormatInt(x, 10)), nil
	case uint64:
		return json.RawMessage(strconv.FormatUint(x, 10)), nil
	case float64:
		// JSON has no infinities; NaN never reaches a bound.
		switch {
		case math.IsInf(x, 1):
			return json.RawMessage(`"Infinity"`), nil
		case math.IsInf(x, -1):
			return json.RawMessage(`"-Infinity"`), nil
		case math.IsNaN(x):
			return nil, fmt.Errorf("table: NaN statistics bound")
		}
		return json.RawMessage(strconv.FormatFloat(x, 'g', -1, 64)), nil
	}
	return nil, fmt.Errorf("table: unexpected statistics bound %T", v)
}

func decodeBound(k Kind, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch k {
	case String, Enum:
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case Bool:
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case I32, I64, Date, DateTime:
		return strconv.ParseInt(string(raw), 10, 64)
	case U32, U64:
		return strconv.ParseUint(string(raw), 10, 64)
	case F32, F64:
		switch string(raw) {
		case `"Infinity"`:
			return math.Inf(1), nil
		case `"-Infinity"`:
			return math.Inf(-1), nil
		}
		return strconv.ParseFloat(string(raw), 64)
	}
	return nil, fmt.Errorf("%v column has no bounds", k)
}
