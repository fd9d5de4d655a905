package exec

import (
	"fmt"
	"math"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// mutValues evaluates mutation operands (literals, parameters, now()) into
// the value model of a target property type. The type checker already
// proved the operand fits the target; the conversions here only change
// representation and range-check (an I64 parameter assigned to an I32
// property is checked at run time, as upstream does).
type mutValues struct {
	params map[string]any
	specs  map[string]schema.Type
	now    time.Time
}

func newMutValues(plan *query.Plan, params map[string]any, now time.Time) *mutValues {
	specs := make(map[string]schema.Type, len(plan.Params))
	for _, p := range plan.Params {
		specs[p.Name] = p.Type
	}
	return &mutValues{params: params, specs: specs, now: now}
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
		v, err := ConvertParam(o.Param, decl, raw, present)
		if err != nil {
			return nil, err
		}
		return mutCoerce(v, name, t)
	case query.OpdNow:
		ms := m.now.UnixMilli()
		if t.Kind == schema.KindDate {
			return int32(ms / msPerDay), nil
		}
		return ms, nil
	}
	return nil, fmt.Errorf("exec: operand %s cannot be evaluated in a mutation", o)
}

// mutLiteral converts a query literal to the value model of t.
func mutLiteral(l *query.Lit, name string, t schema.Type) (any, error) {
	switch l.Kind {
	case query.LitString:
		switch t.Kind {
		case schema.KindDate:
			if d, ok := ParseDate(l.Str); ok {
				return d, nil
			}
			return nil, valueErrorf(name, "property '%s': invalid date '%s'", name, l.Str)
		case schema.KindDateTime:
			if ms, ok := ParseDateTime(l.Str); ok {
				return ms, nil
			}
			return nil, valueErrorf(name, "property '%s': invalid datetime '%s'", name, l.Str)
		}
		return mutCoerce(l.Str, name, t)
	case query.LitInt:
		return mutCoerce(l.Int, name, t)
	case query.LitFloat:
		return mutCoerce(l.Float, name, t)
	case query.LitBool:
		return l.Bool, nil
	case query.LitDate:
		d, ok := ParseDate(l.Str)
		if !ok {
			return nil, valueErrorf(name, "property '%s': invalid date '%s'", name, l.Str)
		}
		return mutCoerce(d, name, t)
	case query.LitDateTime:
		ms, ok := ParseDateTime(l.Str)
		if !ok {
			return nil, valueErrorf(name, "property '%s': invalid datetime '%s'", name, l.Str)
		}
		return mutCoerce(ms, name, t)
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
		return mutCoerce(out, name, t)
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

// mutCoerce changes the representation of a converted value to that of t.
func mutCoerce(v any, name string, t schema.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	rangeErr := func() error {
		return valueErrorf(name, "property '%s' value %v exceeds %s range", name, v, t.Kind)
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
			return int64(d) * msPerDay, nil
		}
	case schema.KindBlob:
		if s, ok := v.(string); ok {
			if b, ok := parseBlob(s); ok {
				if b.IsExternal() {
					return nil, valueErrorf(name, "external blob URI '%s' for property '%s' is not allowed (external blob ingest is denied)", s, name)
				}
				return b, nil
			}
			return Blob{Data: []byte(s)}, nil
		}
	case schema.KindVector:
		switch x := v.(type) {
		case []float32:
			if len(x) != t.Dim {
				return nil, valueErrorf(name, "vector property '%s' expects %d dimensions, got %d", name, t.Dim, len(x))
			}
		case []any:
			out := make([]float32, len(x))
			for i, e := range x {
				f, err := mutCoerce(e, name, schema.Type{Kind: schema.KindF32})
				if err != nil {
					return nil, err
				}
				ff, ok := f.(float64)
				if !ok {
					return nil, valueErrorf(name, "vector property '%s' elements must be numeric", name)
				}
				out[i] = float32(ff)
			}
			if len(out) != t.Dim {
				return nil, valueErrorf(name, "vector property '%s' expects %d dimensions, got %d", name, t.Dim, len(out))
			}
			return out, nil
		}
	case schema.KindList:
		if x, ok := v.([]any); ok {
			et := schema.Type{Kind: t.Elem}
			out := make([]any, len(x))
			for i, e := range x {
				c, err := mutCoerce(e, name, et)
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
