package exec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// ConstraintKind classifies a constraint violation.
type ConstraintKind uint8

// The constraint kinds, in the order Validate checks them.
const (
	ConstraintRequired  ConstraintKind = iota + 1 // non-nullable property is null
	ConstraintEnum                                // value outside the enum set
	ConstraintRange                               // @range
	ConstraintCheck                               // @check
	ConstraintUnique                              // @key / @unique tuple held twice
	ConstraintReference                           // edge endpoint missing
	ConstraintCard                                // @card out-degree bound
)

var constraintKindNames = [...]string{
	ConstraintRequired:  "required",
	ConstraintEnum:      "enum",
	ConstraintRange:     "range",
	ConstraintCheck:     "check",
	ConstraintUnique:    "unique",
	ConstraintReference: "reference",
	ConstraintCard:      "card",
}

func (k ConstraintKind) String() string {
	if int(k) < len(constraintKindNames) && constraintKindNames[k] != "" {
		return constraintKindNames[k]
	}
	return fmt.Sprintf("ConstraintKind(%d)", uint8(k))
}

// CheckNodeRow checks one node row image against the per-row constraints of
// its type: non-nullable properties set, enum membership, @range and
// @check. A missing map entry counts as null. It returns the first
// violation as a *ConstraintError, checking properties in declaration
// order, then ranges, then checks.
func CheckNodeRow(nt *schema.NodeType, values map[string]any) error {
	if err := checkProps(nt.Name, nt.Props, values); err != nil {
		return err
	}
	for _, rc := range nt.Ranges {
		if err := checkRange(nt, rc, values[rc.Prop]); err != nil {
			return err
		}
	}
	for _, cc := range nt.Checks {
		s, ok := values[cc.Prop].(string)
		if !ok || cc.Re == nil {
			continue
		}
		// Unanchored on purpose (is_match semantics): schemas write ^…$
		// for a full match.
		if !cc.Re.MatchString(s) {
			return &ConstraintError{Kind: ConstraintCheck, Type: nt.Name, Prop: cc.Prop,
				Msg: fmt.Sprintf("@check violation on %s.%s: value '%s' does not match pattern '%s'", nt.Name, cc.Prop, s, cc.Pattern)}
		}
	}
	return nil
}

// CheckEdgeRow is CheckNodeRow for edges, which carry no @range or @check.
func CheckEdgeRow(et *schema.EdgeType, values map[string]any) error {
	return checkProps(et.Name, et.Props, values)
}

func checkProps(typeName string, props []*schema.Property, values map[string]any) error {
	for _, p := range props {
		v := values[p.Name]
		if v == nil {
			if !p.Type.Nullable && !embedPending(p, values) {
				return &ConstraintError{Kind: ConstraintRequired, Type: typeName, Prop: p.Name,
					Msg: fmt.Sprintf("non-nullable property '%s' has null or invalid values", p.Name)}
			}
			continue
		}
		if p.Type.Kind == schema.KindEnum {
			s, _ := v.(string)
			if _, found := slices.BinarySearch(p.Type.Enum, s); !found {
				return &ConstraintError{Kind: ConstraintEnum, Type: typeName, Prop: p.Name,
					Msg: fmt.Sprintf("invalid enum value '%s' for %s.%s (expected: %s)", s, typeName, p.Name, strings.Join(p.Type.Enum, ", "))}
			}
		}
	}
	return nil
}

// checkRange applies @range(p, min..max): inclusive bounds, either side
// open. Per our deviation from upstream, the schema compiler reads
// `..max` as a maximum, so both bounds are honoured as given.
func checkRange(nt *schema.NodeType, rc schema.RangeConstraint, v any) error {
	if v == nil {
		return nil
	}
	var t schema.Type
	if p, ok := nt.Prop(rc.Prop); ok {
		t = p.Type
	}
	fail := func(detail string) error {
		return &ConstraintError{Kind: ConstraintRange, Type: nt.Name, Prop: rc.Prop,
			Msg: fmt.Sprintf("@range violation on %s.%s: %s", nt.Name, rc.Prop, detail)}
	}
	if value.Rank(v) != value.RankNumber {
		return nil // @range is compiled only on numeric properties
	}
	if f, ok := v.(float64); ok && math.IsNaN(f) {
		return fail("value is NaN")
	}
	// F32 values are stored float32-rounded, so compare against bounds
	// rounded the same way: a value written as the bound itself passes.
	bound := func(b float64) float64 {
		if t.Kind == schema.KindF32 {
			return float64(float32(b))
		}
		return b
	}
	if rc.Min != nil && value.Compare(v, bound(*rc.Min)) < 0 {
		return fail(fmt.Sprintf("value %s < min %s", value.FormatValue(t, v), value.FormatFloat(*rc.Min)))
	}
	if rc.Max != nil && value.Compare(v, bound(*rc.Max)) > 0 {
		return fail(fmt.Sprintf("value %s > max %s", value.FormatValue(t, v), value.FormatFloat(*rc.Max)))
	}
	return nil
}
