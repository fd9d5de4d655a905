package eval

import (
	"context"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// project compiles the output columns for rows of layout l; reading them
// (Stream) is the first place most property values are touched.
func (r *runner) project(ctx context.Context, o *query.Project, l *layout) ([]valueFn, error) {
	return r.colFns(ctx, o.Cols, l)
}

// colFns compiles the values of cols for rows of layout l.
func (r *runner) colFns(ctx context.Context, cols []query.ProjCol, l *layout) ([]valueFn, error) {
	fns := make([]valueFn, len(cols))
	for i, c := range cols {
		fn, _, err := r.operand(ctx, c.Value, l)
		if err != nil {
			return nil, err
		}
		fns[i] = fn
	}
	return fns, nil
}

// aggState accumulates one aggregate column of one group.
type aggState struct {
	n   int64 // non-null values seen
	sum float64
	ext any // min/max so far
}

// aggregate groups rows by the key columns in first-seen order (§5.5).
// Rows count with multiplicity. With no keys and no rows it yields one row
// (count 0, others null); with keys and no rows, none.
func (r *runner) aggregate(ctx context.Context, o *query.Aggregate, rs *rowSet, l *layout) ([][]any, error) {
	keyFns, err := r.colFns(ctx, o.Keys, l)
	if err != nil {
		return nil, err
	}
	argFns := make([]valueFn, len(o.Aggs))
	for i, a := range o.Aggs {
		if a.Func == "count" && a.Arg.Kind == query.OpdID {
			// count of a variable counts rows: a bound entity is never
			// null, so its id is not read (argFns[i] stays nil).
			continue
		}
		fn, _, err := r.operand(ctx, a.Arg, l)
		if err != nil {
			return nil, err
		}
		argFns[i] = fn
	}
	ag := newAggGroups(o, r.mem)
	keyBuf := make([]any, len(keyFns))
	for i := 0; i < rs.n(); i++ {
		row := rs.row(i)
		for k, fn := range keyFns {
			keyBuf[k] = fn(row)
		}
		g := ag.group(keyBuf)
		for a, fn := range argFns {
			if fn == nil {
				g.st[a].n++
				continue
			}
			g.st[a].add(o.Aggs[a].Func, fn(row), 1)
		}
	}
	return ag.rows(), nil
}

// aggRow is the output row of one group of o: its keys and the final
// values of its aggregate states.
func aggRow(o *query.Aggregate, srcs []aggSrc, keys []any, sts []aggState) []any {
	row := make([]any, len(srcs))
	for c, s := range srcs {
		if !s.agg {
			row[c] = keys[s.i]
			continue
		}
		st := sts[s.i]
		switch o.Aggs[s.i].Func {
		case "count":
			row[c] = st.n
		case "sum":
			if st.n > 0 {
				row[c] = st.sum
			}
		case "avg":
			if st.n > 0 {
				row[c] = st.sum / float64(st.n)
			}
		default:
			row[c] = st.ext
		}
	}
	return row
}

// add folds value v of n binding rows into st as aggregate fn does, one
// row after another (so float sums round as on the row path).
func (st *aggState) add(fn string, v any, n int64) {
	if v == nil {
		return
	}
	st.n += n
	switch fn {
	case "sum", "avg":
		f := toFloat(v)
		for range n {
			st.sum = addFloat(st.sum, f)
		}
	case "min":
		if st.ext == nil || value.Compare(v, st.ext) < 0 {
			st.ext = v
		}
	case "max":
		if st.ext == nil || value.Compare(v, st.ext) > 0 {
			st.ext = v
		}
	}
}

// addFloat returns sum + v. Every aggregate sum, boxed or typed, adds
// through this one compiled function: the compiler orders the operands of
// a float addition as it likes, and when both are NaN x86 keeps the first
// one's payload, so two inlined additions of the same values may differ
// in their NaN bits (TestDenseTypedMatchesBoxed caught it).
//
//go:noinline
func addFloat(sum, v float64) float64 { return sum + v }

// aggSrc is where an output column of an aggregate comes from: key i or
// aggregate i.
type aggSrc struct {
	agg bool
	i   int
}

// aggColumns maps o's output columns to their sources. Columns interleave
// keys and aggregates in projection order; both lists keep that order, so
// two cursors recover each column's source.
func aggColumns(o *query.Aggregate) []aggSrc {
	var srcs []aggSrc
	ki, ai := 0, 0
	for _, name := range o.Columns {
		if ki < len(o.Keys) && o.Keys[ki].Name == name {
			srcs = append(srcs, aggSrc{false, ki})
			ki++
		} else if ai < len(o.Aggs) {
			srcs = append(srcs, aggSrc{true, ai})
			ai++
		}
	}
	return srcs
}

// toFloat widens a numeric value for sum/avg.
func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	case int32:
		return float64(x)
	case uint32:
		return float64(x)
	case float32:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}

// compareKey orders two sort-key values: Compare (nulls first) ascending,
// reversed for descending, so nulls come last descending (§5.6).
func compareKey(a, b any, desc bool) int {
	c := value.Compare(a, b)
	if desc {
		return -c
	}
	return c
}

// sortRows orders binding rows by the user keys, then by the id of every
// tie-break variable ascending, which makes the order total (§5.6).
func (r *runner) sortRows(ctx context.Context, o *query.Sort, rs *rowSet, l *layout) (*rowSet, error) {
	n := rs.n()
	nk := len(o.Keys)
	keys := make([]any, n*nk)
	for k, sk := range o.Keys {
		fn, _, err := r.operand(ctx, sk.Value, l)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			keys[i*nk+k] = fn(rs.row(i))
		}
	}
	var ties []int
	for _, v := range o.TieBreak {
		if s := l.idx(v); s >= 0 {
			ties = append(ties, s)
		}
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		for k, sk := range o.Keys {
			if c := compareKey(keys[a*nk+k], keys[b*nk+k], sk.Desc); c != 0 {
				return c
			}
		}
		ra, rb := rs.row(a), rs.row(b)
		for _, s := range ties {
			if c := strings.Compare(l.entityID(ra, s), l.entityID(rb, s)); c != 0 {
				return c
			}
		}
		return 0
	})
	out := newRowSet(r.mem, rs.w, n)
	for _, i := range perm {
		out.push(rs.row(i))
	}
	return out, nil
}

// sortOutput orders aggregate output rows by output columns, then by every
// column ascending.
func sortOutput(o *query.Sort, cols []string, rows [][]any) ([][]any, error) {
	colIdx := func(name string) int { return slices.Index(cols, name) }
	keyCols := make([]int, len(o.Keys))
	for i, k := range o.Keys {
		keyCols[i] = colIdx(k.Column)
		if keyCols[i] < 0 {
			return nil, runErrorf("order key `%s` is not an output column", k.Column)
		}
	}
	var ties []int
	for _, c := range o.TieColumns {
		if i := colIdx(c); i >= 0 {
			ties = append(ties, i)
		}
	}
	slices.SortStableFunc(rows, func(a, b []any) int {
		for i, k := range o.Keys {
			if c := compareKey(a[keyCols[i]], b[keyCols[i]], k.Desc); c != 0 {
				return c
			}
		}
		for _, c := range ties {
			if x := value.Compare(a[c], b[c]); x != 0 {
				return x
			}
		}
		return 0
	})
	return rows, nil
}
