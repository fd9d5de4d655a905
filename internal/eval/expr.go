package eval

import (
	"cmp"
	"context"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// valueFn reads one operand from a binding row.
type valueFn func(row []int32) any

// operand compiles o for rows of layout l. Constants (literals, params,
// now()) are evaluated once; konst reports them so callers can specialize.
func (r *runner) operand(ctx context.Context, o query.Operand, l *layout) (fn valueFn, konst bool, err error) {
	switch o.Kind {
	case query.OpdProp, query.OpdID:
		s := l.idx(o.Var)
		if s < 0 {
			return nil, false, runErrorf("variable $%s is not bound", o.Var)
		}
		ids, cols := l.slots[s].columns()
		if o.Kind == query.OpdID {
			return func(row []int32) any { return ids[row[s]] }, false, nil
		}
		col := cols[o.Prop]
		if col == nil {
			return func([]int32) any { return nil }, false, nil
		}
		return func(row []int32) any { return col[row[s]] }, false, nil
	case query.OpdParam, query.OpdLit, query.OpdNow:
		v, err := r.constant(o)
		if err != nil {
			return nil, false, err
		}
		return func([]int32) any { return v }, true, nil
	case query.OpdRank:
		fn, err := r.scoreFn(ctx, o.Rank, l)
		return fn, false, err
	}
	return nil, false, runErrorf("unknown operand %s", o)
}

// constant evaluates a row-independent operand.
func (r *runner) constant(o query.Operand) (any, error) {
	switch o.Kind {
	case query.OpdParam:
		v, ok := r.params[o.Param]
		if !ok {
			return nil, &value.Error{Name: o.Param, Reason: "not provided", Msg: "parameter '" + o.Param + "' not provided"}
		}
		return v, nil
	case query.OpdLit:
		return litValue(o.Lit)
	case query.OpdNow:
		return r.now, nil
	}
	return nil, runErrorf("operand %s is not a constant", o)
}

// litValue converts a query literal to the value model: integers int64,
// floats float64, date() int32 days, datetime() int64 ms, lists []any.
func litValue(l *query.Lit) (any, error) {
	switch l.Kind {
	case query.LitString:
		return l.Str, nil
	case query.LitInt:
		return l.Int, nil
	case query.LitFloat:
		return l.Float, nil
	case query.LitBool:
		return l.Bool, nil
	case query.LitDate:
		d, ok := value.ParseDate(l.Str)
		if !ok {
			return nil, runErrorf("invalid date literal '%s' (expected YYYY-MM-DD)", l.Str)
		}
		return d, nil
	case query.LitDateTime:
		ms, ok := value.ParseDateTime(l.Str)
		if !ok {
			return nil, runErrorf("invalid datetime literal '%s' (expected RFC3339)", l.Str)
		}
		return ms, nil
	case query.LitList:
		out := make([]any, len(l.Elems))
		for i, e := range l.Elems {
			v, err := litValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, runErrorf("unknown literal kind %d", l.Kind)
}

// appendPreds appends filters, compiled in order (pred), to out. The
// caller makes out, so a scan's few predicates can stay on its stack.
func (r *runner) appendPreds(ctx context.Context, out []func(row []int32) bool, filters []query.Pred, l *layout) ([]func(row []int32) bool, error) {
	for i := range filters {
		p, err := r.pred(ctx, &filters[i], l)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// pred compiles a predicate. Comparisons follow §5.4: a null operand makes
// every comparison false (including !=).
func (r *runner) pred(ctx context.Context, p *query.Pred, l *layout) (func(row []int32) bool, error) {
	if p.Func != "" {
		return r.textPred(ctx, p, l)
	}
	left, lk, err := r.operand(ctx, p.Left, l)
	if err != nil {
		return nil, err
	}
	right, rk, err := r.operand(ctx, p.Right, l)
	if err != nil {
		return nil, err
	}
	op := p.Op
	switch {
	case lk && rk:
		ok := compareOp(op, left(nil), right(nil))
		return func([]int32) bool { return ok }, nil
	case rk:
		c := right(nil)
		if c == nil {
			return func([]int32) bool { return false }, nil
		}
		if fast := fastPropConst(p, l, op, c); fast != nil {
			return fast, nil
		}
		return func(row []int32) bool { return compareOp(op, left(row), c) }, nil
	}
	return func(row []int32) bool { return compareOp(op, left(row), right(row)) }, nil
}

// fastPropConst specializes the common scan filters `$v.prop op constant`
// over String and I64-like columns, avoiding the generic Compare dispatch.
func fastPropConst(p *query.Pred, l *layout, op query.CmpOp, c any) func(row []int32) bool {
	if p.Left.Kind != query.OpdProp {
		return nil
	}
	s := l.idx(p.Left.Var)
	sl := l.slots[s]
	if sl.edge {
		return nil
	}
	col := sl.nodes.Cols[p.Left.Prop]
	if col == nil {
		return nil
	}
	switch k := c.(type) {
	case string:
		if op == query.OpEq {
			return func(row []int32) bool {
				v, ok := col[row[s]].(string)
				return ok && v == k
			}
		}
	case int64:
		if op >= query.OpEq && op <= query.OpGe {
			return func(row []int32) bool {
				switch v := col[row[s]].(type) {
				case nil:
					return false
				case int64:
					return op.Holds(cmp.Compare(v, k))
				default:
					return op.Holds(value.Compare(v, k))
				}
			}
		}
	}
	return nil
}

// compareOp applies a filter operator to two values (§5.4).
func compareOp(op query.CmpOp, a, b any) bool {
	if a == nil || b == nil {
		return false
	}
	switch op {
	case query.OpContains:
		if list, ok := a.([]any); ok {
			for _, e := range list {
				if e != nil && value.Rank(e) == value.Rank(b) && value.Equal(e, b) {
					return true
				}
			}
			return false
		}
		as, ok1 := a.(string)
		bs, ok2 := b.(string)
		return ok1 && ok2 && strings.Contains(as, bs)
	case query.OpStartsWith:
		as, ok1 := a.(string)
		bs, ok2 := b.(string)
		return ok1 && ok2 && strings.HasPrefix(as, bs)
	}
	// Values of different kinds never compare (the checker already rejects
	// them; this keeps a malformed snapshot from matching by kind rank).
	if value.Rank(a) != value.Rank(b) {
		return false
	}
	return op.Holds(value.Compare(a, b))
}
