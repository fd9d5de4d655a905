package query

import (
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// defaultName is the runtime column name of an unaliased expression
// (spec §5.5) and the lint descriptor name.
func defaultName(e Expr) (name, desc string) {
	switch e := e.(type) {
	case *PropRef:
		return e.Var.Name + "." + e.Prop, e.Prop
	case *VarRef:
		return e.Var.Name, e.Var.Name
	case *Lit:
		return "literal", "literal"
	case *Now:
		return "now", "now"
	case *Call:
		if isAgg(e.Func) && len(e.Args) == 1 {
			return defaultName(e.Args[0])
		}
		return e.Func, e.Func
	case *AliasRef:
		return e.Name, e.Name
	}
	return "?", "?"
}

func nullable(t schema.Type) schema.Type {
	t.Nullable = true
	return t
}

func (c *checker) checkProjection(sc *scope, p *Projection, hasAgg bool) (Column, ProjCol, *AggCol, bool) {
	name, desc := defaultName(p.Expr)
	if p.Alias != "" {
		name, desc = p.Alias, p.Alias
	}
	if call, ok := p.Expr.(*Call); ok && isAgg(call.Func) {
		if len(call.Args) != 1 {
			c.errorf(call.Span, "", "%s takes exactly one argument, got %d", call.Func, len(call.Args))
			return Column{}, ProjCol{}, nil, false
		}
		if inner, ok := call.Args[0].(*Call); ok && isAgg(inner.Func) {
			c.errorf(inner.Span, "", "aggregates cannot be nested")
			return Column{}, ProjCol{}, nil, false
		}
		o, vt, ok := c.exprType(sc, call.Args[0])
		if !ok {
			return Column{}, ProjCol{}, nil, false
		}
		if vt.t.Kind == schema.KindBlob {
			c.errorf(call.Args[0].exprSpan(), "T24", "Blob values cannot be aggregated")
			return Column{}, ProjCol{}, nil, false
		}
		var t schema.Type
		switch call.Func {
		case "count":
			t = scalarOf(schema.KindI64)
		case "sum", "avg":
			if vt.cls != vScalar || !vt.t.Kind.IsNumeric() {
				c.errorf(call.Span, "T8", "%s requires a numeric argument, got %s", call.Func, vt)
				return Column{}, ProjCol{}, nil, false
			}
			t = nullable(scalarOf(schema.KindF64))
		default: // min, max
			if vt.cls != vScalar || !(vt.t.Kind.IsNumeric() || isStringy(vt.t.Kind)) {
				c.errorf(call.Span, "T8", "%s requires a numeric or String argument, got %s", call.Func, vt)
				return Column{}, ProjCol{}, nil, false
			}
			t = nullable(vt.t)
		}
		agg := &AggCol{Name: name, Func: call.Func, Arg: o, Type: t}
		return Column{Name: name, DescName: desc, Type: t}, ProjCol{}, agg, true
	}
	o, vt, ok := c.exprType(sc, p.Expr)
	if !ok {
		return Column{}, ProjCol{}, nil, false
	}
	switch {
	case vt.cls == vEdge:
		c.errorf(p.Expr.exprSpan(), "T23", "edge variable cannot be projected bare; project `$w.prop`")
		return Column{}, ProjCol{}, nil, false
	case vt.t.Kind == schema.KindBlob:
		c.errorf(p.Expr.exprSpan(), "T24", "Blob property cannot be read in a projection")
		return Column{}, ProjCol{}, nil, false
	}
	if hasAgg {
		_, isProp := p.Expr.(*PropRef)
		isNodeVar := vt.cls == vNode
		if !isProp && !isNodeVar {
			c.errorf(p.Expr.exprSpan(), "T9", "in an aggregate query every non-aggregate projection must be `$v.prop` or `$v`")
			return Column{}, ProjCol{}, nil, false
		}
	}
	return Column{Name: name, DescName: desc, Type: o.Type}, ProjCol{Name: name, Value: o}, nil, true
}

// checkOrderRank type-checks order keys, enforces the ranking rules
// (T17, T18, T21) and returns the ranking of the first key, if any.
func (c *checker) checkOrderRank(sc *scope) *RankSpec {
	q := c.q
	var first *RankSpec
	standaloneNearest, aliasKey := -1, -1
	for i, o := range q.Order {
		switch e := o.Expr.(type) {
		case *Call:
			if !isRankFunc(e.Func) {
				continue // rejected by sortKeys with a plan error
			}
			r, ok := c.checkRank(sc, e)
			if !ok {
				continue
			}
			if e.Func == "nearest" {
				standaloneNearest = i
			}
			if q.Limit == nil {
				switch e.Func {
				case "nearest":
					c.errorf(o.Span, "T17", "nearest ordering requires a limit")
				case "rrf":
					c.errorf(o.Span, "T21", "rrf ordering requires a limit")
				}
			}
			if i == 0 {
				first = r
			} else {
				c.report(KindPlan, o.Span, "", "ranking function `%s` must be the first order key", e.Func)
			}
		case *AliasRef:
			aliasKey = i
		case *PropRef:
			if _, vt, ok := c.exprType(sc, e); ok && vt.t.Kind == schema.KindBlob {
				c.errorf(e.Span, "T24", "Blob property cannot be used as an order key")
			}
		}
	}
	if standaloneNearest >= 0 && aliasKey >= 0 {
		c.errorf(q.Order[aliasKey].Span, "T18", "alias-based ordering cannot be combined with a standalone nearest ordering")
	}
	return first
}

func (c *checker) sortKeys(sc *scope, q *QueryDecl, proj []ProjCol, aliases map[string]int) []SortKey {
	var keys []SortKey
	for _, o := range q.Order {
		switch e := o.Expr.(type) {
		case *PropRef:
			op, _, ok := c.exprType(sc, e)
			if !ok {
				return nil
			}
			keys = append(keys, SortKey{Value: op, Desc: o.Desc})
		case *AliasRef:
			i, ok := aliases[e.Name]
			if !ok {
				c.report(KindPlan, e.Span, "", "order key `%s` is not a projection alias", e.Name)
				return nil
			}
			keys = append(keys, SortKey{Value: proj[i].Value, Desc: o.Desc})
		default:
			c.report(KindPlan, o.Span, "", "order key must be `$v.prop` or a projection alias; alias the expression and order by the alias")
			return nil
		}
	}
	return keys
}

func (c *checker) aggSortKeys(q *QueryDecl, keys []ProjCol, aliases map[string]int, cols []string) []SortKey {
	var out []SortKey
	for _, o := range q.Order {
		switch e := o.Expr.(type) {
		case *AliasRef:
			i, ok := aliases[e.Name]
			if !ok {
				c.report(KindPlan, e.Span, "", "order key `%s` is not a projection alias", e.Name)
				return nil
			}
			out = append(out, SortKey{Column: cols[i], Desc: o.Desc})
		case *PropRef:
			found := ""
			for _, k := range keys {
				if k.Value.Kind == OpdProp && k.Value.Var == e.Var.Name && k.Value.Prop == e.Prop && k.Name == e.Var.Name+"."+e.Prop {
					found = k.Name
				}
			}
			if found == "" {
				c.report(KindPlan, e.Span, "", "in an aggregate query order keys must be output columns; `$%s.%s` is not one", e.Var.Name, e.Prop)
				return nil
			}
			out = append(out, SortKey{Column: found, Desc: o.Desc})
		default:
			c.report(KindPlan, o.Span, "", "order key must be an output column or alias in an aggregate query")
			return nil
		}
	}
	return out
}
