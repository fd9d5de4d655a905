package query

import (
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// checkMutations checks every statement, lowers it to a MutationOp and
// enforces the D₂ rule (no insert/update together with delete).
func (c *checker) checkMutations(plan *Plan) {
	hasWrite, hasDelete := false, false
	for _, m := range c.q.Mutations {
		var op *MutationOp
		switch m := m.(type) {
		case *Insert:
			hasWrite = true
			op = c.checkInsert(m)
		case *Update:
			hasWrite = true
			op = c.checkUpdate(m)
		case *Delete:
			hasDelete = true
			op = c.checkDelete(m)
		}
		if op != nil {
			plan.Mutations = append(plan.Mutations, op)
		}
	}
	if hasWrite && hasDelete {
		c.report(KindPlan, c.q.NameSpan, "", "mutation '%s' on the same query mixes inserts/updates and deletes; split into separate mutations: (1) inserts and updates, then (2) deletes", c.q.Name)
	}
}

// checkAssigns checks `prop: value` assignments against props (lookup by
// name); from/to are handled by the caller for edges.
func (c *checker) checkAssigns(typeName string, assigns []*Assign, lookup func(string) (*schema.Property, bool), skip func(string) bool) ([]Assignment, map[string]bool) {
	var out []Assignment
	seen := map[string]bool{}
	for _, a := range assigns {
		if seen[a.Name] {
			c.errorf(a.NameSpan, "T13", "property `%s` is assigned more than once", a.Name)
			continue
		}
		seen[a.Name] = true
		if skip != nil && skip(a.Name) {
			continue
		}
		prop, ok := lookup(a.Name)
		if !ok {
			c.errorf(a.NameSpan, "T11", "type `%s` has no property `%s`%s", typeName, a.Name, c.typePropHint(typeName, a.Name))
			continue
		}
		o, vt, ok := c.valueOperand(nil, a.Value)
		if !ok {
			continue
		}
		if !c.valueFits(prop.Type, vt, a.Value, a.Name, "T7", "assign") {
			continue
		}
		out = append(out, Assignment{Prop: a.Name, Value: o})
	}
	return out, seen
}

func (c *checker) checkInsert(m *Insert) *MutationOp {
	nt, isNode := c.cat.Node(m.Type)
	var et *schema.EdgeType
	if !isNode {
		var ok bool
		if et, ok = c.cat.Edge(m.Type); !ok || et.Name != m.Type {
			c.errorf(m.TypeSpan, "T10", "unknown node or edge type `%s`", m.Type)
			return nil
		}
	}
	if len(m.Assigns) == 0 {
		c.errorf(m.Span, "T10", "insert into `%s` has no assignments", m.Type)
		return nil
	}
	if isNode {
		addRef(&c.writes, TableRef{Name: nt.Name})
		assigns, seen := c.checkAssigns(nt.Name, m.Assigns, nt.Prop, nil)
		for _, p := range nt.Props {
			if p.Type.Nullable || seen[p.Name] {
				continue
			}
			if p.Embed != nil && seen[p.Embed.Source] {
				continue // computed from its @embed source (typecheck only)
			}
			c.errorf(m.Span, "T12", "insert into `%s` is missing required property `%s`", nt.Name, p.Name)
		}
		return &MutationOp{Kind: MutInsertNode, Type: nt.Name, Assigns: assigns}
	}
	addRef(&c.reads, TableRef{Name: et.From})
	addRef(&c.reads, TableRef{Name: et.To})
	addRef(&c.writes, TableRef{Edge: true, Name: et.Name})
	op := &MutationOp{Kind: MutInsertEdge, Type: et.Name}
	endpoint := func(name string) bool { return name == "from" || name == "to" }
	assigns, seen := c.checkAssigns(et.Name, m.Assigns, et.Prop, endpoint)
	op.Assigns = assigns
	for _, a := range m.Assigns {
		if !endpoint(a.Name) {
			continue
		}
		o, vt, ok := c.valueOperand(nil, a.Value)
		if !ok {
			continue
		}
		if !c.valueFits(scalarOf(schema.KindString), vt, a.Value, a.Name, "T7", "assign") {
			continue
		}
		if a.Name == "from" && op.From == nil {
			op.From = &o
		} else if a.Name == "to" && op.To == nil {
			op.To = &o
		}
	}
	for _, end := range []string{"from", "to"} {
		if !seen[end] {
			c.errorf(m.Span, "T12", "insert into edge `%s` is missing `%s`", et.Name, end)
		}
	}
	for _, p := range et.Props {
		if !p.Type.Nullable && !seen[p.Name] {
			c.errorf(m.Span, "T12", "insert into `%s` is missing required property `%s`", et.Name, p.Name)
		}
	}
	return op
}

func (c *checker) checkUpdate(m *Update) *MutationOp {
	nt, ok := c.cat.Node(m.Type)
	if !ok {
		if _, isEdge := c.cat.Edge(m.Type); isEdge {
			c.errorf(m.TypeSpan, "T16", "update is not supported on edge type `%s`; delete and re-insert the edge", m.Type)
		} else {
			c.errorf(m.TypeSpan, "T10", "unknown node type `%s`%s", m.Type, c.nodeHint(m.Type))
		}
		return nil
	}
	if len(m.Assigns) == 0 {
		c.errorf(m.Span, "T10", "update of `%s` has no assignments", m.Type)
		return nil
	}
	addRef(&c.reads, TableRef{Name: nt.Name})
	addRef(&c.writes, TableRef{Name: nt.Name})
	assigns, _ := c.checkAssigns(nt.Name, m.Assigns, nt.Prop, nil)
	for _, a := range m.Assigns {
		if slices.Contains(nt.Key, a.Name) {
			c.errorf(a.NameSpan, "", "cannot update @key property '%s' — delete and re-insert instead", a.Name)
		}
	}
	w := c.checkWhere(nt.Name, m.Where, nt.Prop, false)
	if w == nil {
		return nil
	}
	return &MutationOp{Kind: MutUpdateNode, Type: nt.Name, Assigns: assigns, Where: w}
}

func (c *checker) checkDelete(m *Delete) *MutationOp {
	if nt, ok := c.cat.Node(m.Type); ok {
		addRef(&c.reads, TableRef{Name: nt.Name})
		addRef(&c.writes, TableRef{Name: nt.Name})
		op := &MutationOp{Kind: MutDeleteNode, Type: nt.Name}
		for _, et := range c.cat.Edges {
			if et.From == nt.Name || et.To == nt.Name {
				op.Cascade = append(op.Cascade, et.Name)
				addRef(&c.reads, TableRef{Edge: true, Name: et.Name})
				addRef(&c.writes, TableRef{Edge: true, Name: et.Name})
			}
		}
		op.Where = c.checkWhere(nt.Name, m.Where, nt.Prop, false)
		if op.Where == nil {
			return nil
		}
		return op
	}
	et, ok := c.cat.Edge(m.Type)
	if !ok || et.Name != m.Type {
		c.errorf(m.TypeSpan, "T10", "unknown node or edge type `%s`", m.Type)
		return nil
	}
	addRef(&c.reads, TableRef{Edge: true, Name: et.Name})
	addRef(&c.writes, TableRef{Edge: true, Name: et.Name})
	w := c.checkWhere(et.Name, m.Where, et.Prop, true)
	if w == nil {
		return nil
	}
	return &MutationOp{Kind: MutDeleteEdge, Type: et.Name, Where: w}
}

// checkWhere checks `prop op value`; on edges `from`/`to` name src/dst.
func (c *checker) checkWhere(tname string, w *Where, lookup func(string) (*schema.Property, bool), edge bool) *Pred {
	var pt schema.Type
	if edge && (w.Prop == "from" || w.Prop == "to") {
		pt = scalarOf(schema.KindString)
	} else {
		prop, ok := lookup(w.Prop)
		if !ok {
			c.errorf(w.PropSpan, "T11", "type `%s` has no property `%s`%s", tname, w.Prop, c.typePropHint(tname, w.Prop))
			return nil
		}
		pt = prop.Type
	}
	if pt.Kind == schema.KindBlob {
		c.errorf(w.PropSpan, "T11", "Blob property `%s` cannot be used in a where predicate", w.Prop)
		return nil
	}
	o, vt, ok := c.valueOperand(nil, w.Value)
	if !ok {
		return nil
	}
	if pt.Kind == schema.KindList || pt.Kind == schema.KindVector {
		c.errorf(w.Span, "T7", "cannot compare %s with %s for property `%s`", typeName(pt), typeName(vt.t), w.Prop)
		return nil
	}
	if !c.valueFits(pt, vt, w.Value, w.Prop, "T7", "compare") {
		return nil
	}
	left := Operand{Kind: OpdProp, Var: "", Prop: w.Prop, Type: pt}
	if w.Op == OpEq || w.Op == OpNe {
		c.noteEnum(tname, left, o)
	}
	return &Pred{Left: left, Op: w.Op, Right: o}
}

// typePropHint is propHint for a name that may be a node or an edge type.
func (c *checker) typePropHint(typeName, prop string) string {
	_, isNode := c.cat.Node(typeName)
	return c.propHint(typeName, !isNode, prop)
}
