package schema

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Compile parses and validates a .pg source into a Catalog. filename is used
// only in error positions. On failure the error is an ErrorList; parse
// errors are reported alone (validation of a half-read schema would only
// add noise).
func Compile(filename, src string) (*Catalog, error) {
	lines := newLineIndex(filename, src)
	if len(src) > maxSourceBytes {
		return nil, ErrorList{lines.newError(ParseError, Span{0, 1},
			fmt.Sprintf("schema source is %d bytes; the limit is %d", len(src), maxSourceBytes))}
	}
	if i := invalidUTF8(src); i >= 0 {
		// Never replaced silently: two names or strings differing only in
		// invalid bytes would otherwise collapse into one.
		return nil, ErrorList{lines.newError(ParseError, Span{i, i + 1},
			fmt.Sprintf("invalid UTF-8 (byte 0x%02x); schema sources must be UTF-8", src[i]))}
	}
	decls, errs := parse(lines, src)
	if len(errs) > 0 {
		return nil, errs.normalize()
	}
	b := &builder{lines: lines}
	cat := b.build(decls)
	if len(b.errs) > 0 {
		return nil, b.errs.normalize()
	}
	cat.Source = src
	cat.Warnings = b.warns
	cat.index()
	return cat, nil
}

// invalidUTF8 returns the offset of the first byte of src that is not part
// of a valid UTF-8 sequence, or -1.
func invalidUTF8(src string) int {
	if utf8.ValidString(src) {
		return -1
	}
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// implicitColumn reports whether name is one of the columns every table of
// that kind already has: id on nodes (and on the interfaces they implement),
// id, src and dst on edges. A property of that name would be a second column
// of the same name, so the catalog refuses it (lint included).
func implicitColumn(kind declKind, name string) bool {
	switch name {
	case "id":
		return true
	case "src", "dst":
		return kind == declEdge
	}
	return false
}

func implicitOwner(kind declKind) string {
	if kind == declEdge {
		return "edge"
	}
	return "node"
}

// reservedProps are storage-engine column names a property may not take.
var reservedProps = map[string]bool{
	"_rowid": true, "_rowaddr": true, "_rowoffset": true,
	"_row_created_at_version": true, "_row_last_updated_at_version": true,
}

// builder validates declarations and assembles the catalog, collecting
// every error it finds.
type builder struct {
	lines *lineIndex
	errs  ErrorList
	warns []*Error
}

func (b *builder) errorf(sp Span, format string, args ...any) {
	b.errs = append(b.errs, b.lines.newError(CatalogError, sp, fmt.Sprintf(format, args...)))
}

// owner identifies the type a property belongs to, for messages.
type owner struct {
	kind declKind
	name string
}

func (b *builder) build(decls []*declAST) *Catalog {
	cat := &Catalog{}
	ifaces := map[string]*Interface{}
	ifaceDecls := map[string]*declAST{}
	nodeNames := map[string]bool{}
	edgeNames := map[string]bool{}
	edgeLower := map[string]string{}

	for _, d := range decls {
		switch d.kind {
		case declInterface:
			if ifaces[d.name.name] != nil {
				b.errorf(d.name.span, "duplicate interface: %s", d.name.name)
				continue
			}
			it := &Interface{Name: d.name.name, Pos: b.lines.pos(d.span.Start)}
			o := owner{declInterface, it.Name}
			it.Props = b.props(o, d.props, nil)
			for _, p := range d.props {
				b.propAnnotations(o, p, it.Props)
			}
			ifaces[it.Name] = it
			ifaceDecls[it.Name] = d
			cat.Interfaces = append(cat.Interfaces, it)
		case declNode:
			if nodeNames[d.name.name] {
				b.errorf(d.name.span, "duplicate node type: %s", d.name.name)
			}
			nodeNames[d.name.name] = true
		case declEdge:
			name := d.name.name
			if edgeNames[name] {
				b.errorf(d.name.span, "duplicate edge type: %s", name)
			} else if prev, ok := edgeLower[strings.ToLower(name)]; ok {
				b.errorf(d.name.span, "edge name collision after case folding: '%s' conflicts with '%s'", name, prev)
			} else {
				edgeLower[strings.ToLower(name)] = name
			}
			edgeNames[name] = true
		}
	}

	var typeID, propID uint32
	// assignIDs numbers properties alphabetically by name, so that at
	// creation "ordered by stable property id" means alphabetical (§2.6).
	assignIDs := func(props []*Property) {
		sorted := append([]*Property(nil), props...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
		for _, p := range sorted {
			propID++
			p.ID = propID
		}
	}
	for _, d := range decls {
		switch d.kind {
		case declNode:
			n := b.node(d, ifaces)
			typeID++
			n.ID = typeID
			assignIDs(n.Props)
			n.Key = sortByID(n.Props, n.Key)
			cat.Nodes = append(cat.Nodes, n)
		case declEdge:
			e := b.edge(d, nodeNames)
			typeID++
			e.ID = typeID
			assignIDs(e.Props)
			cat.Edges = append(cat.Edges, e)
		}
	}
	return cat
}

func sortByID(props []*Property, names []string) []string {
	if names == nil {
		return nil
	}
	ids := map[string]uint32{}
	for _, p := range props {
		ids[p.Name] = p.ID
	}
	out := append([]string(nil), names...)
	sort.SliceStable(out, func(i, j int) bool { return ids[out[i]] < ids[out[j]] })
	return out
}

func (b *builder) annotations(in []annotationAST) []Annotation {
	if len(in) == 0 {
		return nil
	}
	out := make([]Annotation, len(in))
	for i, a := range in {
		b.nearMiss(a)
		out[i] = Annotation{Name: a.name, Args: a.args, KwArgs: a.kwargs, Pos: b.lines.pos(a.span.Start)}
	}
	return out
}

// props converts declared properties, reporting duplicates and reserved
// names. Annotation rules are checked separately (propAnnotations) because
// @embed needs the owner's full property set.
func (b *builder) props(o owner, in []*propAST, into []*Property) []*Property {
	seen := map[string]bool{}
	out := into
	for _, pa := range in {
		name := pa.name.name
		if seen[name] {
			b.errorf(pa.name.span, "duplicate property '%s' on %s %s", name, o.kind, o.name)
			continue
		}
		seen[name] = true
		if reservedProps[name] {
			b.errorf(pa.name.span, "property name '%s' on %s %s is reserved by the storage engine", name, o.kind, o.name)
		} else if implicitColumn(o.kind, name) {
			b.errorf(pa.name.span, "property name '%s' on %s %s is reserved: every %s has an implicit '%s' column", name, o.kind, o.name, implicitOwner(o.kind), name)
		}
		p := &Property{
			Name:        name,
			Type:        pa.typ,
			Annotations: b.annotations(pa.annotations),
			Pos:         b.lines.pos(pa.name.span.Start),
		}
		for _, a := range pa.annotations {
			switch a.name {
			case "description":
				p.Description, _ = firstText(a)
			case "rename_from":
				p.RenameFrom, _ = firstText(a)
			case "embed":
				if src, ok := firstText(a); ok {
					p.Embed = &Embed{Source: src}
					if m, ok := a.kwargs["model"]; ok {
						p.Embed.Model, _ = m.text()
					}
				}
			}
		}
		out = append(out, p)
	}
	return out
}

func firstText(a annotationAST) (string, bool) {
	if len(a.args) == 0 {
		return "", false
	}
	return a.args[0].text()
}

// textAnnotation validates @description / @instruction / @rename_from on a
// target: at most once, exactly one non-empty text value, no kwargs.
func (b *builder) textAnnotation(in []annotationAST, name, target string) {
	seen := false
	for _, a := range in {
		if a.name != name {
			continue
		}
		if seen {
			b.errorf(a.span, "%s declares @%s multiple times", target, name)
			continue
		}
		seen = true
		v, ok := firstText(a)
		switch {
		case !ok || strings.TrimSpace(v) == "":
			if name == "rename_from" {
				b.errorf(a.span, "@rename_from on %s requires exactly one non-empty value", target)
			} else {
				b.errorf(a.span, "@%s on %s requires a non-empty value", name, target)
			}
		case len(a.kwargs) > 0:
			b.errorf(a.kwSeen[0].span, "@%s on %s takes no keyword arguments", name, target)
		}
	}
}

// typeAnnotations validates node/edge type-level annotations and returns
// description, instruction and rename_from.
func (b *builder) typeAnnotations(d *declAST) (desc, instr, rename string) {
	target := fmt.Sprintf("%s %s", d.kind, d.name.name)
	for _, a := range d.annotations {
		switch a.name {
		case "key", "unique", "index", "embed":
			if d.kind == declNode {
				b.errorf(a.span, "@%s is only supported on node properties or as body constraint (node %s)", a.name, d.name.name)
			} else {
				b.errorf(a.span, "@%s is not supported on edges (edge %s)", a.name, d.name.name)
			}
		case "description":
			desc, _ = firstText(a)
		case "instruction":
			instr, _ = firstText(a)
		case "rename_from":
			rename, _ = firstText(a)
		}
	}
	b.textAnnotation(d.annotations, "description", target)
	b.textAnnotation(d.annotations, "instruction", target)
	b.textAnnotation(d.annotations, "rename_from", target)
	return desc, instr, rename
}

// propAnnotations checks the annotation rules of one declared property.
// all is the owner's full property set (for @embed sources).
func (b *builder) propAnnotations(o owner, pa *propAST, all []*Property) {
	tp := o.name + "." + pa.name.name
	b.textAnnotation(pa.annotations, "description", "property "+tp)
	b.textAnnotation(pa.annotations, "rename_from", "property "+tp)
	t := pa.typ
	seen := map[string]bool{}
	for _, a := range pa.annotations {
		switch {
		case t.Kind == KindList && (a.name == "key" || a.name == "unique" || a.name == "index" || a.name == "embed"):
			b.errorf(a.span, "@%s is not supported on list property %s", a.name, tp)
			continue
		case t.Kind == KindVector && (a.name == "key" || a.name == "unique"):
			b.errorf(a.span, "@%s is not supported on vector property %s", a.name, tp)
			continue
		case t.Kind == KindBlob && (a.name == "key" || a.name == "unique" || a.name == "index" || a.name == "embed"):
			b.errorf(a.span, "@%s is not supported on blob property %s", a.name, tp)
			continue
		case a.name == "instruction":
			b.errorf(a.span, "@instruction is only supported on node and edge types (property %s)", tp)
			continue
		case o.kind == declEdge && (a.name == "key" || a.name == "embed"):
			b.errorf(a.span, "@%s is not supported on edge properties (edge %s)", a.name, tp)
			continue
		}
		switch a.name {
		case "key", "unique", "index", "embed":
			if seen[a.name] {
				b.errorf(a.span, "property %s declares @%s multiple times", tp, a.name)
				continue
			}
			seen[a.name] = true
		}
		switch a.name {
		case "key", "unique", "index":
			if len(a.args) > 0 || len(a.kwargs) > 0 {
				b.errorf(a.span, "@%s on %s does not accept a value", a.name, tp)
			}
		case "embed":
			b.embed(tp, pa, a, all)
		}
	}
}

func (b *builder) embed(tp string, pa *propAST, a annotationAST, all []*Property) {
	if pa.typ.Kind != KindVector {
		b.errorf(a.span, "@embed is only supported on vector properties (%s)", tp)
		return
	}
	if len(a.args) == 0 {
		b.errorf(a.span, "@embed on %s requires a source property name", tp)
		return
	}
	src, ok := a.args[0].text()
	if !ok || strings.TrimSpace(src) == "" {
		b.errorf(a.span, "@embed on %s requires a non-empty source property name", tp)
		return
	}
	for _, kw := range a.kwSeen {
		if kw.name != "model" {
			b.errorf(kw.span, "@embed on %s has unknown argument '%s=' (only 'model' is supported)", tp, kw.name)
			return
		}
	}
	if m, ok := a.kwargs["model"]; ok {
		if v, ok := m.text(); !ok || strings.TrimSpace(v) == "" {
			b.errorf(a.span, "@embed on %s requires model to be a non-empty string", tp)
			return
		}
	}
	sp, ok := findProp(all, src)
	if !ok {
		b.errorf(a.span, "@embed on %s references unknown source property %s", tp, src)
		return
	}
	if sp.Type.Kind != KindString {
		owner, _, _ := strings.Cut(tp, ".")
		b.errorf(a.span, "@embed source property %s.%s must be String", owner, src)
	}
}

// resolved is one constraint after desugaring.
type resolved struct {
	name     string // key, unique, index, range, check
	span     Span
	cols     []string
	min, max *float64
	pattern  string
}

func (b *builder) node(d *declAST, ifaces map[string]*Interface) *NodeType {
	n := &NodeType{Name: d.name.name, Annotations: b.annotations(d.annotations), Pos: b.lines.pos(d.span.Start)}
	n.Description, n.Instruction, n.RenameFrom = b.typeAnnotations(d)
	o := owner{declNode, n.Name}
	n.Props = b.props(o, d.props, nil)

	// Inject interface properties the node does not declare itself.
	declared := len(n.Props)
	injectedFrom := map[string]string{}
	seenIface := map[string]bool{}
	for _, ref := range d.implements {
		if seenIface[ref.name] {
			b.errorf(ref.span, "node %s implements interface '%s' more than once", n.Name, ref.name)
			continue
		}
		seenIface[ref.name] = true
		it, ok := ifaces[ref.name]
		if !ok {
			b.errorf(ref.span, "node %s implements unknown interface '%s'", n.Name, ref.name)
			continue
		}
		n.Implements = append(n.Implements, it.Name)
		for _, ip := range it.Props {
			if idx := propIndex(n.Props[:declared], ip.Name); idx >= 0 {
				if own := n.Props[idx]; !own.Type.Equal(ip.Type) {
					b.errorf(ref.span, "node %s property '%s' has type %s but interface %s declares it as %s",
						n.Name, ip.Name, own.Type, it.Name, ip.Type)
				}
				continue
			}
			if prevIface, ok := injectedFrom[ip.Name]; ok {
				prev, _ := n.Prop(ip.Name)
				if !prev.Type.Equal(ip.Type) || !sameAnnotations(prev.Annotations, ip.Annotations) {
					b.errorf(ref.span, "node %s gets property '%s' from interfaces %s and %s with different definitions (%s vs %s); declare it on the node or make them agree",
						n.Name, ip.Name, prevIface, it.Name, prev.Type, ip.Type)
				}
				continue
			}
			cp := *ip
			cp.Injected = it.Name
			cp.ID = 0
			n.Props = append(n.Props, &cp)
			injectedFrom[ip.Name] = it.Name
		}
	}
	for _, pa := range d.props {
		b.propAnnotations(o, pa, n.Props)
	}

	cons := b.desugar(n.Props, d)
	keys := 0
	for _, c := range cons {
		switch c.name {
		case "key":
			keys++
			if keys > 1 {
				b.errorf(c.span, "node type %s has multiple @key constraints; only one is supported", n.Name)
				continue
			}
			if b.checkCols(o, c, n.Props, func(p *Property) string {
				switch {
				case p.Type.Nullable:
					return fmt.Sprintf("@key property %s.%s cannot be nullable", n.Name, p.Name)
				case p.Type.Kind == KindList:
					return fmt.Sprintf("@key is not supported on list property %s.%s", n.Name, p.Name)
				case p.Type.Kind == KindVector:
					return fmt.Sprintf("@key is not supported on vector property %s.%s", n.Name, p.Name)
				case p.Type.Kind == KindBlob:
					return fmt.Sprintf("@key is not supported on blob property %s.%s", n.Name, p.Name)
				}
				return ""
			}) {
				n.Key = c.cols
			}
		case "unique":
			if b.checkCols(o, c, n.Props, blobRule("unique", n.Name)) {
				n.Uniques = appendUnique(n.Uniques, c.cols)
			}
		case "index":
			if b.checkCols(o, c, n.Props, blobRule("index", n.Name)) {
				n.Indexes = appendUnique(n.Indexes, c.cols)
			}
		case "range":
			if r, ok := b.rangeConstraint(n.Name, c, n.Props); ok {
				n.Ranges = append(n.Ranges, r)
			}
		case "check":
			if ck, ok := b.checkConstraint(n.Name, c, n.Props); ok {
				n.Checks = append(n.Checks, ck)
			}
		}
	}
	return n
}

func (b *builder) edge(d *declAST, nodes map[string]bool) *EdgeType {
	e := &EdgeType{Name: d.name.name, From: d.from.name, To: d.to.name,
		Annotations: b.annotations(d.annotations), Pos: b.lines.pos(d.span.Start),
		Card: Card{Unbounded: true}}
	e.Description, e.Instruction, e.RenameFrom = b.typeAnnotations(d)
	if d.card != nil {
		e.Card = d.card.card
	}
	if !nodes[e.From] {
		b.errorf(d.from.span, "edge %s references unknown source type: %s", e.Name, e.From)
	}
	if !nodes[e.To] {
		b.errorf(d.to.span, "edge %s references unknown target type: %s", e.Name, e.To)
	}
	o := owner{declEdge, e.Name}
	e.Props = b.props(o, d.props, nil)
	for _, pa := range d.props {
		b.propAnnotations(o, pa, e.Props)
	}
	// src and dst are the hidden endpoint columns; edge unique/index may
	// name them.
	withEndpoints := append([]*Property{
		{Name: "src", Type: Type{Kind: KindString}},
		{Name: "dst", Type: Type{Kind: KindString}},
	}, e.Props...)
	for _, c := range b.desugar(e.Props, d) {
		switch c.name {
		case "key":
			b.errorf(c.span, "@key constraint is not supported on edges (edge %s)", e.Name)
		case "range", "check":
			b.errorf(c.span, "@%s constraint is not supported on edges (edge %s)", c.name, e.Name)
		case "unique":
			if b.checkCols(o, c, withEndpoints, blobRule("unique", e.Name)) {
				e.Uniques = appendUnique(e.Uniques, c.cols)
			}
		case "index":
			if b.checkCols(o, c, withEndpoints, blobRule("index", e.Name)) {
				e.Indexes = appendUnique(e.Indexes, c.cols)
			}
		}
	}
	return e
}

func propIndex(props []*Property, name string) int {
	for i, p := range props {
		if p.Name == name {
			return i
		}
	}
	return -1
}

func sameAnnotations(a, b []Annotation) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || len(a[i].Args) != len(b[i].Args) || len(a[i].KwArgs) != len(b[i].KwArgs) {
			return false
		}
		for j := range a[i].Args {
			if a[i].Args[j] != b[i].Args[j] {
				return false
			}
		}
		for k, v := range a[i].KwArgs {
			if w, ok := b[i].KwArgs[k]; !ok || w != v {
				return false
			}
		}
	}
	return true
}

func blobRule(name, typeName string) func(p *Property) string {
	return func(p *Property) string {
		if p.Type.Kind == KindBlob {
			return fmt.Sprintf("@%s is not supported on blob property %s.%s", name, typeName, p.Name)
		}
		return ""
	}
}

func appendUnique(sets [][]string, cols []string) [][]string {
	for _, s := range sets {
		if strings.Join(s, "\x00") == strings.Join(cols, "\x00") {
			return sets
		}
	}
	return append(sets, cols)
}

// desugar turns property-level @key/@unique/@index into single-column
// constraints (declared then injected properties, in order) followed by the
// body constraints as written. Malformed body constraints are reported and
// dropped.
func (b *builder) desugar(props []*Property, d *declAST) []resolved {
	var out []resolved
	for _, p := range props {
		for _, a := range p.Annotations {
			switch a.Name {
			case "key", "unique", "index":
				if len(a.Args) == 0 && len(a.KwArgs) == 0 {
					out = append(out, resolved{name: a.Name, span: Span{a.Pos.Offset, a.Pos.Offset + 1 + len(a.Name)}, cols: []string{p.Name}})
				}
			}
		}
	}
	for _, c := range d.constraints {
		r := resolved{name: c.name, span: c.span}
		switch c.name {
		case "key", "unique", "index":
			ok := true
			for _, a := range c.args {
				if a.kind != cargIdent {
					b.errorf(a.span, "@%s on %s takes property names; found %s", c.name, d.name.name, describeCarg(a))
					ok = false
					break
				}
				r.cols = append(r.cols, a.ident)
			}
			if !ok {
				continue
			}
		case "range":
			if len(c.args) != 2 || c.args[0].kind != cargIdent || c.args[1].kind != cargRange {
				b.errorf(c.span, "@range requires property name and bounds: @range(prop, min..max)")
				continue
			}
			r.cols = []string{c.args[0].ident}
			r.min, r.max = c.args[1].min, c.args[1].max
		case "check":
			if len(c.args) != 2 || c.args[0].kind != cargIdent || c.args[1].kind != cargLiteral || c.args[1].lit.Kind != LitString {
				b.errorf(c.span, `@check requires property name and pattern: @check(prop, "regex")`)
				continue
			}
			r.cols = []string{c.args[0].ident}
			r.pattern = c.args[1].lit.Str
		}
		out = append(out, r)
	}
	return out
}

func describeCarg(a cargAST) string {
	switch a.kind {
	case cargRange:
		return "a range"
	case cargLiteral:
		return a.lit.String()
	}
	return a.ident
}

// checkCols verifies that every column exists, appears once and passes rule
// (which returns a message on violation). It reports and returns false on
// the first problem.
func (b *builder) checkCols(o owner, c resolved, props []*Property, rule func(*Property) string) bool {
	seen := map[string]bool{}
	for _, col := range c.cols {
		p, ok := findProp(props, col)
		if !ok {
			b.errorf(c.span, "@%s on %s references unknown property '%s'", c.name, o.name, col)
			return false
		}
		if seen[col] {
			b.errorf(c.span, "@%s on %s names property '%s' more than once", c.name, o.name, col)
			return false
		}
		seen[col] = true
		if msg := rule(p); msg != "" {
			b.errorf(c.span, "%s", msg)
			return false
		}
	}
	return true
}

// constraintProp finds the one property a @range or @check names,
// reporting an unknown one.
func (b *builder) constraintProp(typeName string, c resolved, props []*Property) (*Property, bool) {
	p, ok := findProp(props, c.cols[0])
	if !ok {
		b.errorf(c.span, "@%s on %s references unknown property '%s'", c.name, typeName, c.cols[0])
	}
	return p, ok
}

func (b *builder) rangeConstraint(typeName string, c resolved, props []*Property) (RangeConstraint, bool) {
	col := c.cols[0]
	p, ok := b.constraintProp(typeName, c, props)
	if !ok {
		return RangeConstraint{}, false
	}
	if !p.Type.IsNumeric() {
		b.errorf(c.span, "@range on %s.%s requires a numeric type, got %s", typeName, col, p.Type)
		return RangeConstraint{}, false
	}
	for _, v := range []*float64{c.min, c.max} {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			b.errorf(c.span, "@range on %s.%s has a non-finite bound", typeName, col)
			return RangeConstraint{}, false
		}
	}
	if c.min != nil && c.max != nil && *c.min > *c.max {
		b.errorf(c.span, "@range on %s.%s has min %v greater than max %v", typeName, col, *c.min, *c.max)
		return RangeConstraint{}, false
	}
	return RangeConstraint{Prop: col, Min: c.min, Max: c.max}, true
}

func (b *builder) checkConstraint(typeName string, c resolved, props []*Property) (CheckConstraint, bool) {
	col := c.cols[0]
	p, ok := b.constraintProp(typeName, c, props)
	if !ok {
		return CheckConstraint{}, false
	}
	if p.Type.Kind != KindString {
		b.errorf(c.span, "@check on %s.%s requires String type, got %s", typeName, col, p.Type)
		return CheckConstraint{}, false
	}
	re, err := regexp.Compile(c.pattern)
	if err != nil {
		b.errorf(c.span, "@check on %s.%s has an invalid regex %q: %v", typeName, col, c.pattern, err)
		return CheckConstraint{}, false
	}
	return CheckConstraint{Prop: col, Pattern: c.pattern, Re: re}, true
}

// knownAnnotations are the annotations with an effect (spec/languages.md
// §1); any other name is accepted as opaque metadata.
var knownAnnotations = []string{"key", "unique", "index", "range", "check", "card", "embed", "description", "instruction", "rename_from"}

// nearMiss warns about an unknown annotation that is probably a misspelt
// known one: `@kee` is legal metadata, but the author almost certainly
// meant `@key`, and without it the type silently has no identity.
func (b *builder) nearMiss(a annotationAST) {
	if slices.Contains(knownAnnotations, a.name) {
		return
	}
	msg := ""
	switch {
	case a.name == "default":
		msg = "@default has no effect: schemas have no default values (a missing value is null; make the property nullable or give it in every load)"
	default:
		if s := closest(a.name, knownAnnotations); s != "" {
			msg = fmt.Sprintf("unknown annotation @%s has no effect; did you mean @%s?", a.name, s)
		}
	}
	if msg != "" {
		b.warns = append(b.warns, &Error{Pos: b.lines.pos(a.span.Start), Span: a.span, Kind: Warning, Msg: msg})
	}
}

// closest returns the candidate within a small edit distance of name
// (ignoring case), preferring the nearest; "" if none is near.
func closest(name string, cands []string) string {
	best, bestD := "", 3
	for _, c := range cands {
		d := editDistance(strings.ToLower(name), c)
		if limit := min(2, max(1, len(c)/3)); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Closest is closest for other packages (type-name suggestions in queries).
func Closest(name string, cands []string) string { return closest(name, cands) }

// editDistance is the optimal-string-alignment distance of a and b, in
// bytes: insertions, deletions, substitutions and adjacent transpositions
// (`idnex` is one edit from `index`).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
