package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Schema evolution planning (spec/languages.md §3). Plan resolves a desired
// catalog against the accepted one and lists the steps that turn one into
// the other. It is pure: it reads no data. Whether a supported plan can be
// applied to a graph's data (an added @unique over duplicate rows, say) is
// decided by the engine when it applies the plan.

// The step kinds of a plan, as they appear in JSON.
const (
	StepAddType                = "add_type"
	StepRenameType             = "rename_type"
	StepAddProperty            = "add_property"
	StepRenameProperty         = "rename_property"
	StepAddConstraint          = "add_constraint"
	StepExtendEnum             = "extend_enum"
	StepUpdateTypeMetadata     = "update_type_metadata"
	StepUpdatePropertyMetadata = "update_property_metadata"
	StepDropType               = "drop_type"
	StepDropProperty           = "drop_property"
	StepUnsupported            = "unsupported_change"
)

// Drop modes.
const (
	DropSoft = "soft"
	DropHard = "hard"
)

// Lint codes a plan may carry on an unsupported step.
const (
	CodeAddRequired = "OG-MF-103"
	CodeTypeChange  = "OG-MF-106"
	tierValidated   = "validated"
	tierDestructive = "destructive"
)

// Step is one change of a plan. Which fields are set depends on Kind; the
// JSON shape is the reference system's (field names in spec/languages.md §3).
type Step struct {
	Kind         string            `json:"kind"`
	TypeKind     string            `json:"type_kind,omitempty"`
	Name         string            `json:"name,omitempty"`
	From         string            `json:"from,omitempty"`
	To           string            `json:"to,omitempty"`
	TypeName     string            `json:"type_name,omitempty"`
	PropertyName string            `json:"property_name,omitempty"`
	PropertyType string            `json:"property_type,omitempty"`
	Constraint   string            `json:"constraint,omitempty"`
	AddedValues  []string          `json:"added_values,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Mode         string            `json:"mode,omitempty"`
	Entity       string            `json:"entity,omitempty"`
	Reason       string            `json:"reason,omitempty"`
	Code         string            `json:"code,omitempty"`

	tier string
}

// String renders the step as one line of `schema plan` output.
func (s Step) String() string {
	switch s.Kind {
	case StepAddType:
		return fmt.Sprintf("add %s type '%s'", s.TypeKind, s.Name)
	case StepRenameType:
		return fmt.Sprintf("rename %s type '%s' -> '%s'", s.TypeKind, s.From, s.To)
	case StepAddProperty:
		return fmt.Sprintf("add property '%s.%s' (%s) on %s '%s'", s.TypeName, s.PropertyName, s.PropertyType, s.TypeKind, s.TypeName)
	case StepRenameProperty:
		return fmt.Sprintf("rename property '%s.%s' -> '%s.%s' on %s '%s'", s.TypeName, s.From, s.TypeName, s.To, s.TypeKind, s.TypeName)
	case StepAddConstraint:
		return fmt.Sprintf("add constraint %s on %s '%s'", s.Constraint, s.TypeKind, s.TypeName)
	case StepExtendEnum:
		return fmt.Sprintf("extend enum '%s.%s' (+%s) on %s '%s'", s.TypeName, s.PropertyName, strings.Join(s.AddedValues, ", +"), s.TypeKind, s.TypeName)
	case StepUpdateTypeMetadata:
		return fmt.Sprintf("update metadata of %s type '%s' (%s)", s.TypeKind, s.Name, annotationList(s.Annotations))
	case StepUpdatePropertyMetadata:
		return fmt.Sprintf("update metadata of property '%s.%s' on %s '%s' (%s)", s.TypeName, s.PropertyName, s.TypeKind, s.TypeName, annotationList(s.Annotations))
	case StepDropType:
		return fmt.Sprintf("drop %s type '%s' (%s mode)", s.TypeKind, s.Name, s.Mode)
	case StepDropProperty:
		return fmt.Sprintf("drop property '%s.%s' of %s '%s' (%s mode)", s.TypeName, s.PropertyName, s.TypeKind, s.TypeName, s.Mode)
	case StepUnsupported:
		tag := ""
		if s.Code != "" {
			tag = " [" + s.Code
			if s.tier != "" {
				tag += ", " + s.tier
			}
			tag += "]"
		}
		return fmt.Sprintf("unsupported change on %s%s: %s", s.Entity, tag, s.Reason)
	}
	return s.Kind
}

func annotationList(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, "@"+k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// Plan is the resolution of a desired schema against the accepted one.
type Plan struct {
	Supported bool   `json:"supported"`
	Steps     []Step `json:"steps"`

	// Tables maps every table key of the desired schema to the accepted
	// table key it continues ("" for a new type).
	Tables map[string]string `json:"-"`
	// Props maps a desired table key and property name to the accepted
	// property it continues ("" for a new property); only for continued
	// tables.
	Props map[string]map[string]string `json:"-"`
	// Dropped lists accepted table keys with no successor, sorted.
	Dropped []string `json:"-"`
	// HardDrops lists the continued tables that lose a property in hard mode.
	HardDrops []string `json:"-"`
	// Constrained lists continued tables that gain a data-checked
	// constraint (@unique, @range, @check): applying validates their rows.
	Constrained []string `json:"-"`
	// Identity is the identity of the desired schema.
	Identity Identity `json:"-"`
	// Warnings are the desired catalog's warnings (Catalog.Warnings), so
	// a caller prints them without compiling the source again.
	Warnings []*Error `json:"-"`
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return len(p.Steps) == 0 }

// Unsupported returns the first unsupported step, if any.
func (p *Plan) Unsupported() (Step, bool) {
	for _, s := range p.Steps {
		if s.Kind == StepUnsupported {
			return s, true
		}
	}
	return Step{}, false
}

// ErrPlan marks a desired schema that cannot be resolved against the
// accepted one (a bad @rename_from); see *PlanError.
var ErrPlan = errors.New("schema plan")

// PlanError is a desired schema that does not resolve against the accepted
// schema. It is a user error: the desired .pg must change.
type PlanError struct{ Msg string }

func (e *PlanError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrPlan) hold.
func (e *PlanError) Is(target error) bool { return target == ErrPlan }

// PlanOptions tune a plan.
type PlanOptions struct {
	// AllowDataLoss makes drops hard (data removed from the current state)
	// instead of soft.
	AllowDataLoss bool
}

// PlanChange plans the evolution from the accepted catalog (with its
// identity) to the desired one. The result is deterministic: the same
// inputs give the same steps in the same order.
func PlanChange(accepted *Catalog, acceptedID Identity, desired *Catalog, o PlanOptions) (*Plan, error) {
	pl := &planner{acc: accepted, des: desired, o: o,
		plan: &Plan{Tables: map[string]string{}, Props: map[string]map[string]string{}, Warnings: desired.Warnings}}
	if err := pl.run(acceptedID); err != nil {
		return nil, err
	}
	pl.plan.Supported = true
	if _, bad := pl.plan.Unsupported(); bad {
		pl.plan.Supported = false
	}
	if pl.plan.Steps == nil {
		pl.plan.Steps = []Step{}
	}
	return pl.plan, nil
}

type planner struct {
	acc, des *Catalog
	o        PlanOptions
	plan     *Plan
	// nodeFrom maps a desired node name to the accepted node name.
	nodeFrom map[string]string
}

func (pl *planner) add(s Step) { pl.plan.Steps = append(pl.plan.Steps, s) }

func (pl *planner) unsupported(entity, reason, code, tier string) {
	pl.add(Step{Kind: StepUnsupported, Entity: entity, Reason: reason, Code: code, tier: tier})
}

func (pl *planner) mode() string {
	if pl.o.AllowDataLoss {
		return DropHard
	}
	return DropSoft
}

// match pairs desired declarations of one kind with accepted ones: exact
// names first, then @rename_from. It returns desired name → accepted name.
func match(kind string, desired []string, renames map[string]string, accepted []string) (map[string]string, error) {
	acc := map[string]bool{}
	for _, a := range accepted {
		acc[a] = true
	}
	out := map[string]string{}
	claimed := map[string]string{}
	for _, d := range desired {
		if acc[d] {
			out[d] = d
			claimed[d] = d
		}
	}
	for _, d := range desired {
		if _, ok := out[d]; ok {
			continue
		}
		from := renames[d]
		if from == "" {
			continue
		}
		if !acc[from] {
			return nil, &PlanError{Msg: fmt.Sprintf("%s '%s' declares @rename_from(\"%s\") but no accepted declaration has that name", kind, d, from)}
		}
		if by, ok := claimed[from]; ok {
			return nil, &PlanError{Msg: fmt.Sprintf("%s '%s' declares @rename_from(\"%s\"), but accepted '%s' is already claimed by '%s'", kind, d, from, from, by)}
		}
		out[d] = from
		claimed[from] = d
	}
	return out, nil
}

func (pl *planner) run(accID Identity) error {
	acc, des := pl.acc, pl.des
	// Renames across declaration kinds are refused by name lookup.
	crossKind := func(kind, name, from string) error {
		return &PlanError{Msg: fmt.Sprintf("%s '%s' cannot rename accepted '%s' across declaration kinds", kind, name, from)}
	}
	for _, n := range des.Nodes {
		if n.RenameFrom != "" && n.RenameFrom != n.Name {
			if _, ok := acc.Node(n.RenameFrom); !ok {
				if _, e := acc.edgeByName[n.RenameFrom]; e {
					return crossKind("node", n.Name, n.RenameFrom)
				}
			}
		}
	}
	for _, e := range des.Edges {
		if e.RenameFrom != "" && e.RenameFrom != e.Name {
			if _, ok := acc.edgeByName[e.RenameFrom]; !ok {
				if _, n := acc.Node(e.RenameFrom); n {
					return crossKind("edge", e.Name, e.RenameFrom)
				}
			}
		}
	}

	// Interfaces: only additions are supported (their properties reach the
	// nodes that implement them, where they are planned).
	for _, it := range des.Interfaces {
		if _, ok := acc.Interface(it.Name); ok {
			continue
		}
		pl.add(Step{Kind: StepAddType, TypeKind: "interface", Name: it.Name})
	}
	for _, it := range acc.Interfaces {
		if _, ok := des.Interface(it.Name); !ok {
			pl.unsupported("interface:"+it.Name, fmt.Sprintf("removing interface '%s' is not supported", it.Name), "", "")
		}
	}

	names := func(n int, at func(int) (string, string)) ([]string, map[string]string) {
		var out []string
		ren := map[string]string{}
		for i := 0; i < n; i++ {
			name, from := at(i)
			out = append(out, name)
			if from != "" {
				ren[name] = from
			}
		}
		return out, ren
	}
	dn, dren := names(len(des.Nodes), func(i int) (string, string) { return des.Nodes[i].Name, des.Nodes[i].RenameFrom })
	an, _ := names(len(acc.Nodes), func(i int) (string, string) { return acc.Nodes[i].Name, "" })
	nodeFrom, err := match("node", dn, dren, an)
	if err != nil {
		return err
	}
	pl.nodeFrom = nodeFrom
	de, eren := names(len(des.Edges), func(i int) (string, string) { return des.Edges[i].Name, des.Edges[i].RenameFrom })
	ae, _ := names(len(acc.Edges), func(i int) (string, string) { return acc.Edges[i].Name, "" })
	edgeFrom, err := match("edge", de, eren, ae)
	if err != nil {
		return err
	}

	// Identity: continued types keep their id, new ones mint a fresh one.
	taken := map[string]bool{}
	for _, r := range accID.Retired {
		taken[r] = true
	}
	for _, tk := range accKeys(acc) {
		taken[accID.TypeID(tk)] = true
	}
	newID := Identity{Types: map[string]string{}}
	setID := func(tk, id string) {
		if id != tk {
			newID.Types[tk] = id
		}
	}
	kept := map[string]bool{}
	// addType, keepType and dropUnkept are the type-level steps, the same
	// for node and edge types.
	addType := func(kind, name string) {
		tk := kind + ":" + name
		pl.add(Step{Kind: StepAddType, TypeKind: kind, Name: name})
		pl.plan.Tables[tk] = ""
		id := mint(tk, taken)
		taken[id] = true
		setID(tk, id)
	}
	keepType := func(kind, name, from string) {
		tk, atk := kind+":"+name, kind+":"+from
		pl.plan.Tables[tk] = atk
		kept[atk] = true
		setID(tk, accID.TypeID(atk))
		if from != name {
			pl.add(Step{Kind: StepRenameType, TypeKind: kind, From: from, To: name})
		}
	}
	dropUnkept := func(kind, name string) {
		if atk := kind + ":" + name; !kept[atk] {
			pl.add(Step{Kind: StepDropType, TypeKind: kind, Name: name, Mode: pl.mode()})
			pl.plan.Dropped = append(pl.plan.Dropped, atk)
			newID.Retired = append(newID.Retired, accID.TypeID(atk))
		}
	}

	for _, n := range des.Nodes {
		tk := "node:" + n.Name
		from, ok := nodeFrom[n.Name]
		if !ok {
			addType("node", n.Name)
			continue
		}
		a, _ := acc.Node(from)
		keepType("node", n.Name, from)
		if !slices.Equal(sortedCopy(a.Implements), sortedCopy(n.Implements)) {
			pl.unsupported("node:"+n.Name, fmt.Sprintf("changing the interfaces node '%s' implements is not supported", n.Name), "", "")
		}
		pl.typeMeta("node", n.Name, a.Description, n.Description, a.Instruction, n.Instruction, a.Annotations, n.Annotations)
		propFrom := pl.props("node", tk, n.Name, a.Props, n.Props)
		pl.constraints("node", n.Name, tk, propFrom,
			cons{key: a.Key, uniques: a.Uniques, indexes: a.Indexes, ranges: a.Ranges, checks: a.Checks},
			cons{key: n.Key, uniques: n.Uniques, indexes: n.Indexes, ranges: n.Ranges, checks: n.Checks})
	}
	for _, a := range acc.Nodes {
		dropUnkept("node", a.Name)
	}

	for _, e := range des.Edges {
		tk := "edge:" + e.Name
		from, ok := edgeFrom[e.Name]
		if !ok {
			addType("edge", e.Name)
			continue
		}
		a := acc.edgeByName[from]
		keepType("edge", e.Name, from)
		if nodeFrom[e.From] != a.From || nodeFrom[e.To] != a.To {
			pl.unsupported("edge:"+e.Name, fmt.Sprintf("changing the endpoints of edge '%s' (%s -> %s to %s -> %s) is not supported", e.Name, a.From, a.To, e.From, e.To), "", "")
		}
		if e.Card != a.Card {
			pl.unsupported("edge:"+e.Name, fmt.Sprintf("changing @card of edge '%s' (%s to %s) is not supported", e.Name, a.Card, e.Card), "", "")
		}
		pl.typeMeta("edge", e.Name, a.Description, e.Description, a.Instruction, e.Instruction, a.Annotations, e.Annotations)
		propFrom := pl.props("edge", tk, e.Name, a.Props, e.Props)
		propFrom["src"], propFrom["dst"] = "src", "dst"
		pl.constraints("edge", e.Name, tk, propFrom,
			cons{uniques: a.Uniques, indexes: a.Indexes},
			cons{uniques: e.Uniques, indexes: e.Indexes})
	}
	for _, a := range acc.Edges {
		dropUnkept("edge", a.Name)
	}
	slices.Sort(pl.plan.Dropped)
	newID.Retired = append(newID.Retired, accID.Retired...)
	slices.Sort(newID.Retired)
	newID.Retired = slices.Compact(newID.Retired)
	if len(newID.Types) == 0 {
		newID.Types = nil
	}
	pl.plan.Identity = newID
	return nil
}

func accKeys(c *Catalog) []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, "node:"+n.Name)
	}
	for _, e := range c.Edges {
		out = append(out, "edge:"+e.Name)
	}
	return out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// metaAnnotations are the annotations whose meaning the planner handles
// itself; any other annotation is custom metadata, which may not change.
var metaAnnotations = map[string]bool{"description": true, "instruction": true, "rename_from": true,
	"key": true, "unique": true, "index": true, "embed": true}

func customAnnotations(as []Annotation) []Annotation {
	var out []Annotation
	for _, a := range as {
		if !metaAnnotations[a.Name] {
			out = append(out, a)
		}
	}
	return out
}

func (pl *planner) typeMeta(kind, name, aDesc, dDesc, aInstr, dInstr string, aAnn, dAnn []Annotation) {
	m := map[string]string{}
	if aDesc != dDesc {
		m["description"] = dDesc
	}
	if aInstr != dInstr {
		m["instruction"] = dInstr
	}
	if len(m) > 0 {
		pl.add(Step{Kind: StepUpdateTypeMetadata, TypeKind: kind, Name: name, Annotations: m})
	}
	if !sameAnnotations(customAnnotations(aAnn), customAnnotations(dAnn)) {
		pl.unsupported(kind+":"+name, fmt.Sprintf("changing custom annotations of %s '%s' is not supported", kind, name), "", "")
	}
}

// props plans one continued type's properties and returns desired property
// name → accepted property name (for every continued property).
func (pl *planner) props(kind, tk, typeName string, acc, des []*Property) map[string]string {
	var an, dn []string
	ren := map[string]string{}
	for _, p := range acc {
		an = append(an, p.Name)
	}
	for _, p := range des {
		dn = append(dn, p.Name)
		if p.RenameFrom != "" {
			ren[p.Name] = p.RenameFrom
		}
	}
	from, err := match("property", dn, ren, an)
	if err != nil {
		// Property renames only resolve within their (stable) owner; a bad
		// hint is reported as an unsupported step of this type.
		pl.unsupported(kind+":"+typeName, err.Error(), "", "")
		from = map[string]string{}
		for _, d := range dn {
			if slices.Contains(an, d) {
				from[d] = d
			}
		}
	}
	mapping := map[string]string{}
	for _, p := range des {
		entity := kind + ":" + typeName + "." + p.Name
		af, ok := from[p.Name]
		if !ok {
			if !p.Type.Nullable {
				pl.unsupported(entity, fmt.Sprintf("adding required property '%s.%s' requires a backfill; add it as nullable (%s?), load values, then make it required in a later release", typeName, p.Name, p.Type), CodeAddRequired, tierValidated)
				continue
			}
			pl.add(Step{Kind: StepAddProperty, TypeKind: kind, TypeName: typeName, PropertyName: p.Name, PropertyType: p.Type.String()})
			mapping[p.Name] = ""
			continue
		}
		var a *Property
		for _, q := range acc {
			if q.Name == af {
				a = q
			}
		}
		mapping[p.Name] = af
		if af != p.Name {
			pl.add(Step{Kind: StepRenameProperty, TypeKind: kind, TypeName: typeName, From: af, To: p.Name})
		}
		switch {
		case a.Type.Equal(p.Type):
		case a.Type.Kind == KindEnum && p.Type.Kind == KindEnum && a.Type.Nullable == p.Type.Nullable && isSuperset(p.Type.Enum, a.Type.Enum):
			var added []string
			for _, v := range p.Type.Enum {
				if !slices.Contains(a.Type.Enum, v) {
					added = append(added, v)
				}
			}
			pl.add(Step{Kind: StepExtendEnum, TypeKind: kind, TypeName: typeName, PropertyName: p.Name, AddedValues: added})
		default:
			pl.unsupported(entity, fmt.Sprintf("changing property type for '%s.%s' is not supported (%s to %s); add a new property and migrate the values", typeName, p.Name, a.Type, p.Type), CodeTypeChange, tierDestructive)
		}
		if !sameEmbed(a.Embed, p.Embed) {
			pl.unsupported(entity, fmt.Sprintf("changing @embed of '%s.%s' is not supported", typeName, p.Name), "", "")
		}
		if a.Description != p.Description {
			pl.add(Step{Kind: StepUpdatePropertyMetadata, TypeKind: kind, TypeName: typeName, PropertyName: p.Name, Annotations: map[string]string{"description": p.Description}})
		}
		if !sameAnnotations(customAnnotations(a.Annotations), customAnnotations(p.Annotations)) {
			pl.unsupported(entity, fmt.Sprintf("changing custom annotations of '%s.%s' is not supported", typeName, p.Name), "", "")
		}
	}
	used := map[string]bool{}
	for _, af := range mapping {
		used[af] = true
	}
	for _, a := range acc {
		if used[a.Name] {
			continue
		}
		if a.Injected != "" {
			pl.unsupported(kind+":"+typeName+"."+a.Name, fmt.Sprintf("removing property '%s.%s' injected from interface '%s' is not supported", typeName, a.Name, a.Injected), "", "")
			continue
		}
		pl.add(Step{Kind: StepDropProperty, TypeKind: kind, TypeName: typeName, PropertyName: a.Name, Mode: pl.mode()})
		if pl.o.AllowDataLoss && !slices.Contains(pl.plan.HardDrops, tk) {
			pl.plan.HardDrops = append(pl.plan.HardDrops, tk)
		}
	}
	pl.plan.Props[tk] = mapping
	out := map[string]string{}
	for d, a := range mapping {
		if a != "" {
			out[d] = a
		}
	}
	return out
}

func sameEmbed(a, b *Embed) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func isSuperset(big, small []string) bool {
	for _, v := range small {
		if !slices.Contains(big, v) {
			return false
		}
	}
	return true
}

type cons struct {
	key              []string
	uniques, indexes [][]string
	ranges           []RangeConstraint
	checks           []CheckConstraint
}

// constraints plans the body constraints of a continued type. Accepted
// constraints are renamed through propFrom (desired → accepted) before the
// comparison, so a property rename does not read as drop + add.
func (pl *planner) constraints(kind, typeName, tk string, propFrom map[string]string, a, d cons) {
	toAcc := func(cols []string) (string, bool) {
		out := make([]string, len(cols))
		for i, c := range cols {
			f, ok := propFrom[c]
			if !ok {
				return "", false // names a new property: cannot exist in accepted
			}
			out[i] = f
		}
		return strings.Join(out, ","), true
	}
	set := func(sets [][]string) map[string]bool {
		m := map[string]bool{}
		for _, s := range sets {
			m[strings.Join(s, ",")] = true
		}
		return m
	}
	entity := kind + ":" + typeName
	if ka, ok := toAcc(d.key); strings.Join(a.key, ",") != ka || (!ok && len(d.key) > 0) {
		switch {
		case len(a.key) == 0:
			pl.unsupported(entity, fmt.Sprintf("adding @key to %s '%s' is not supported (it would change every node id)", kind, typeName), "", "")
		case len(d.key) == 0:
			pl.unsupported(entity, fmt.Sprintf("removing @key from %s '%s' is not supported", kind, typeName), "", "")
		default:
			pl.unsupported(entity, fmt.Sprintf("changing @key of %s '%s' is not supported", kind, typeName), "", "")
		}
	}
	diffSets := func(what string, accSets, desSets [][]string, checked bool) {
		have := set(accSets)
		seen := map[string]bool{}
		for _, s := range desSets {
			k, ok := toAcc(s)
			if ok {
				seen[k] = true
			}
			if ok && have[k] {
				continue
			}
			pl.add(Step{Kind: StepAddConstraint, TypeKind: kind, TypeName: typeName, Constraint: "@" + what + "(" + strings.Join(s, ", ") + ")"})
			if checked && !slices.Contains(pl.plan.Constrained, tk) {
				pl.plan.Constrained = append(pl.plan.Constrained, tk)
			}
		}
		for _, s := range accSets {
			if !seen[strings.Join(s, ",")] {
				pl.unsupported(entity, fmt.Sprintf("removing @%s(%s) from %s '%s' is not supported", what, strings.Join(s, ", "), kind, typeName), "", "")
			}
		}
	}
	diffSets("unique", a.uniques, d.uniques, true)
	diffSets("index", a.indexes, d.indexes, false)
	rangeKey := func(r RangeConstraint) string {
		b := func(f *float64) string {
			if f == nil {
				return ""
			}
			return fmt.Sprint(*f)
		}
		return b(r.Min) + ".." + b(r.Max)
	}
	var ar, dr, ac, dc [][]string
	for _, r := range a.ranges {
		ar = append(ar, []string{r.Prop, rangeKey(r)})
	}
	for _, r := range d.ranges {
		dr = append(dr, []string{r.Prop, rangeKey(r)})
	}
	for _, c := range a.checks {
		ac = append(ac, []string{c.Prop, quote(c.Pattern)})
	}
	for _, c := range d.checks {
		dc = append(dc, []string{c.Prop, quote(c.Pattern)})
	}
	// The bound / pattern is not a property: map only the first element.
	propFrom2 := func(sets [][]string) [][]string {
		out := make([][]string, len(sets))
		for i, s := range sets {
			out[i] = s
		}
		return out
	}
	saved := propFrom
	withLits := map[string]string{}
	for k, v := range saved {
		withLits[k] = v
	}
	for _, s := range append(append(append(ar, dr...), ac...), dc...) {
		withLits[s[1]] = s[1]
	}
	propFrom = withLits
	diffSets("range", propFrom2(ar), propFrom2(dr), true)
	diffSets("check", propFrom2(ac), propFrom2(dc), true)
}
