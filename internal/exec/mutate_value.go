package exec

import (
	"fmt"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// mutValues evaluates mutation operands (literals, parameters, now()) into
// the value model of a target property type. The type checker already
// proved the operand fits the target; the conversions here only change
// representation and range-check (an I64 parameter assigned to an I32
// property is checked at run time, as upstream does).
type mutValues struct {
	params map[string]any
	specs  map[string]schema.Type
	enums  map[string]query.ParamSpec // for CheckEnums
	now    time.Time
}

func newMutValues(plan *query.Plan, params map[string]any, now time.Time) *mutValues {
	specs := make(map[string]schema.Type, len(plan.Params))
	enums := make(map[string]query.ParamSpec, len(plan.Params))
	for _, p := range plan.Params {
		specs[p.Name] = p.Type
		enums[p.Name] = p
	}
	return &mutValues{params: params, specs: specs, enums: enums, now: now}
}

// eval returns the value of o for a property named name of type t.
func (m *mutValues) eval(o query.Operand, name string, t schema.Type) (any, error) {
	switch o.Kind {
	case query.OpdLit:
		return mutLiteral(o.Lit, name, t)
	case query.OpdParam:
		raw, present := m.params[o.Param]
		decl, ok := m.specs[o.Param]
		if !ok {
			decl = o.Type
		}
		v, err := value.ConvertParam(o.Param, decl, raw, present)
		if err == nil {
			err = m.enums[o.Param].CheckEnums(v)
		}
		if err != nil {
			return nil, value.UndeclaredHint(err, m.params, func(k string) bool { _, ok := m.specs[k]; return ok })
		}
		return value.Coerce(name, t, v)
	case query.OpdNow:
		ms := m.now.UnixMilli()
		if t.Kind == schema.KindDate {
			return int32(ms / value.MsPerDay), nil
		}
		return ms, nil
	}
	return nil, fmt.Errorf("exec: operand %s cannot be evaluated in a mutation", o)
}

// mutLiteral converts a query literal to the value model of t.
func mutLiteral(l *query.Lit, name string, t schema.Type) (any, error) {
	switch l.Kind {
	case query.LitString:
		if t.Kind == schema.KindDate || t.Kind == schema.KindDateTime {
			// A string literal for a date is parsed as load input is,
			// with the same message for the same bad value.
			return value.ConvertJSON(name, t, l.Str)
		}
		return value.Coerce(name, t, l.Str)
	case query.LitInt:
		return value.Coerce(name, t, l.Int)
	case query.LitFloat:
		return value.Coerce(name, t, l.Float)
	case query.LitBool:
		return l.Bool, nil
	case query.LitDate:
		d, err := value.ConvertJSON(name, schema.Type{Kind: schema.KindDate}, l.Str)
		if err != nil {
			return nil, err
		}
		return value.Coerce(name, t, d)
	case query.LitDateTime:
		ms, err := value.ConvertJSON(name, schema.Type{Kind: schema.KindDateTime}, l.Str)
		if err != nil {
			return nil, err
		}
		return value.Coerce(name, t, ms)
	case query.LitList:
		et := mutElemType(t)
		out := make([]any, len(l.Elems))
		for i, e := range l.Elems {
			v, err := mutLiteral(e, name, et)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return value.Coerce(name, t, out)
	}
	return nil, fmt.Errorf("exec: unknown literal kind %d", l.Kind)
}

func mutElemType(t schema.Type) schema.Type {
	switch t.Kind {
	case schema.KindList:
		return schema.Type{Kind: t.Elem}
	case schema.KindVector:
		return schema.Type{Kind: schema.KindF32}
	}
	return t
}
