package query

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// reservedParam is the name upstream injects for now(); users may not
// declare it.
const reservedParam = "__nanograph_now"

// vclass classifies the static value of an expression.
type vclass uint8

const (
	vScalar vclass = iota + 1
	vNode          // bare node variable: its id when projected
	vEdge          // bare edge variable: never usable as a value
	vRank          // nearest/bm25/rrf score
	vText          // search/fuzzy/match_text truth value
)

type vtype struct {
	cls       vclass
	t         schema.Type
	name      string // node/edge type name
	emptyList bool   // `[]`: element type unknown, matches any list
}

func (v vtype) String() string {
	switch v.cls {
	case vNode:
		return "node `" + v.name + "`"
	case vEdge:
		return "edge `" + v.name + "`"
	}
	return typeName(v.t)
}

// typeName renders a scalar type the way messages show it: enums as String
// (they compare as strings), nullability dropped.
func typeName(t schema.Type) string {
	t.Nullable = false
	if t.Kind == schema.KindEnum {
		return "String"
	}
	return t.String()
}

type varInfo struct {
	name      string
	edge      bool
	typ       string
	byBinding bool
	// poison marks a variable whose binding already failed to check; later
	// uses are skipped silently so one mistake gives one error.
	poison bool
}

// scope is one match block (the query's, or a `not { }` body). It tracks
// the checker's view (which variables have which type) and the plan under
// construction (which variables the operator tree already binds).
type scope struct {
	parent    *scope
	vars      map[string]*varInfo
	cur       Op
	planBound map[string]bool
	scans     map[string]*Scan
	pending   []pendingItem
	anon      *int
}

type pendingItem struct {
	needs []string // all must be plan-bound (for traversals: any one)
	any   bool
	span  Span
	what  string
	run   func()
}

func (s *scope) lookup(name string) (*varInfo, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if v, ok := sc.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type checker struct {
	cat      *schema.Catalog
	src      string
	filename string
	q        *QueryDecl
	params   map[string]schema.Type
	errs     ErrorList
	reads    []TableRef
	writes   []TableRef
	enums    map[string][]EnumUse // parameter → enum properties it is compared with
}

func (c *checker) errorf(sp Span, code, format string, args ...any) {
	c.report(KindType, sp, code, format, args...)
}

func (c *checker) report(kind ErrorKind, sp Span, code, format string, args ...any) {
	sp = widen(sp, len(c.src))
	line, col := lineCol(c.src, sp.Start)
	c.errs = append(c.errs, &Error{Kind: kind, Code: code, Msg: fmt.Sprintf(format, args...), Query: c.q.Name,
		File: c.filename, Span: sp, Line: line, Col: col})
}

func addRef(list *[]TableRef, r TableRef) {
	for _, x := range *list {
		if x == r {
			return
		}
	}
	*list = append(*list, r)
}

// checkQuery type-checks one query and, if it is valid, lowers it to a plan.
func checkQuery(cat *schema.Catalog, filename, src string, q *QueryDecl) (*Plan, ErrorList) {
	c := &checker{cat: cat, src: src, filename: filename, q: q, params: map[string]schema.Type{}}
	plan := &Plan{Name: q.Name, Description: q.Description, Instruction: q.Instruction}
	for _, p := range q.Params {
		t, ok := c.paramType(p)
		if !ok {
			continue
		}
		if _, dup := c.params[p.Name]; dup {
			c.errorf(p.Span, "", "parameter `$%s` is declared more than once", p.Name)
			continue
		}
		c.params[p.Name] = t
		plan.Params = append(plan.Params, ParamSpec{Name: p.Name, Type: t})
	}
	if q.IsMutation() {
		c.checkMutations(plan)
	} else {
		c.checkRead(plan)
	}
	plan.Reads, plan.Writes = c.reads, c.writes
	for i := range plan.Params {
		plan.Params[i].Enums = c.enums[plan.Params[i].Name]
	}
	if len(c.errs) > 0 {
		c.errs.sortList()
		return nil, c.errs
	}
	return plan, nil
}

var baseTypes = map[string]schema.Kind{
	"String": schema.KindString, "Bool": schema.KindBool, "I32": schema.KindI32, "I64": schema.KindI64,
	"U32": schema.KindU32, "U64": schema.KindU64, "F32": schema.KindF32, "F64": schema.KindF64,
	"Date": schema.KindDate, "DateTime": schema.KindDateTime, "Blob": schema.KindBlob,
}

func (c *checker) paramType(p *Param) (schema.Type, bool) {
	if p.Name == reservedParam {
		c.errorf(p.Span, "", "parameter name `$%s` is reserved for now(); choose another name", reservedParam)
		return schema.Type{}, false
	}
	pt := p.Type
	t := schema.Type{Nullable: pt.Nullable}
	if pt.Base == "Vector" {
		if pt.List {
			c.errorf(pt.Span, "", "unknown parameter type `%s`: lists of vectors are not supported", pt)
			return t, false
		}
		if pt.Dim < 1 || pt.Dim > 1<<31-1 {
			c.errorf(pt.Span, "", "unknown parameter type `%s`: Vector dimension must be between 1 and 2147483647", pt)
			return t, false
		}
		t.Kind, t.Dim = schema.KindVector, int(pt.Dim)
		return t, true
	}
	k, ok := baseTypes[pt.Base]
	if !ok || (pt.List && k == schema.KindBlob) {
		c.errorf(pt.Span, "", "unknown parameter type `%s`", pt)
		return t, false
	}
	if pt.List {
		t.Kind, t.Elem = schema.KindList, k
	} else {
		t.Kind = k
	}
	return t, true
}

// ---- compatibility rules (spec §5.4) ----

func isStringy(k schema.Kind) bool { return k == schema.KindString || k == schema.KindEnum }

// comparable reports whether two scalar types may be compared.
func comparable(a, b schema.Type) bool {
	if a.Kind.IsNumeric() && b.Kind.IsNumeric() {
		return true
	}
	if isStringy(a.Kind) && isStringy(b.Kind) {
		return true
	}
	return a.Kind == b.Kind && a.Kind != schema.KindList && a.Kind != schema.KindVector && a.Kind != schema.KindBlob
}

func scalarOf(k schema.Kind) schema.Type { return schema.Type{Kind: k} }

// litKinds is the type of each scalar literal kind; a list literal is
// typed element by element (checkLit).
var litKinds = map[LitKind]schema.Kind{
	LitString:   schema.KindString,
	LitInt:      schema.KindI64,
	LitFloat:    schema.KindF64,
	LitBool:     schema.KindBool,
	LitDate:     schema.KindDate,
	LitDateTime: schema.KindDateTime,
}

func litType(l *Lit) schema.Type {
	if k, ok := litKinds[l.Kind]; ok {
		return scalarOf(k)
	}
	return schema.Type{Kind: schema.KindList}
}

// checkLit types a literal, enforcing the list-literal rules.
func (c *checker) checkLit(l *Lit) (vtype, bool) {
	if l.Kind != LitList {
		return vtype{cls: vScalar, t: litType(l)}, true
	}
	if len(l.Elems) == 0 {
		return vtype{cls: vScalar, t: schema.Type{Kind: schema.KindList}, emptyList: true}, true
	}
	var elem schema.Type
	for i, e := range l.Elems {
		if e.Kind == LitList {
			c.errorf(e.Span, "", "nested list literals are not supported")
			return vtype{}, false
		}
		et := litType(e)
		switch {
		case i == 0:
			elem = et
		case !comparable(elem, et):
			c.errorf(l.Span, "", "list literal elements must share a compatible scalar type")
			return vtype{}, false
		case et.Kind == schema.KindF64:
			elem = et
		}
	}
	return vtype{cls: vScalar, t: schema.Type{Kind: schema.KindList, Elem: elem.Kind}}, true
}

// ---- read queries ----

func (c *checker) checkRead(plan *Plan) {
	q := c.q
	top := &scope{vars: map[string]*varInfo{}, planBound: map[string]bool{}, scans: map[string]*Scan{}, anon: new(int)}
	c.checkClauses(top, q.Match)
	c.finishScope(top)

	// Projections.
	hasAgg := false
	for _, p := range q.Return {
		if call, ok := p.Expr.(*Call); ok && isAgg(call.Func) {
			hasAgg = true
		}
	}
	var cols []Column
	var keys []ProjCol
	var aggs []AggCol
	var proj []ProjCol
	var colNames []string
	aliases := map[string]int{}
	for i, p := range q.Return {
		col, pc, agg, ok := c.checkProjection(top, p, hasAgg)
		if !ok {
			continue
		}
		cols = append(cols, col)
		colNames = append(colNames, col.Name)
		if p.Alias != "" {
			if _, dup := aliases[p.Alias]; !dup {
				aliases[p.Alias] = i
			}
		}
		switch {
		case agg != nil:
			aggs = append(aggs, *agg)
		case hasAgg:
			keys = append(keys, pc)
		default:
			proj = append(proj, pc)
		}
	}
	plan.Columns = cols

	rank := c.checkOrderRank(top)
	if len(c.errs) > 0 {
		return
	}
	root := top.cur
	if rank != nil {
		k := int64(0)
		if q.Limit != nil && rank.Func != "bm25" {
			k = q.Limit.N
		}
		if s, ok := top.scans[rankVar(rank)]; ok {
			s.Rank, s.K = rank, k
		} else {
			root = &RankRows{Input: root, Rank: rank, K: k}
		}
	}
	if hasAgg {
		root = &Aggregate{Input: root, Keys: keys, Aggs: aggs, Columns: colNames}
		if len(q.Order) > 0 && rank == nil {
			sk := c.aggSortKeys(q, keys, aliases, colNames)
			if sk != nil {
				root = &Sort{Input: root, Keys: sk, TieColumns: colNames}
			}
		}
	} else {
		if len(q.Order) > 0 && rank == nil {
			sk := c.sortKeys(top, q, proj, aliases)
			if sk != nil {
				root = &Sort{Input: root, Keys: sk, TieBreak: tieVars(top)}
			}
		}
		root = &Project{Input: root, Cols: proj}
	}
	if q.Limit != nil {
		root = &Limit{Input: root, N: q.Limit.N}
	}
	plan.Read = root
}

func rankVar(r *RankSpec) string {
	if r.Func == "rrf" {
		return r.Arms[0].Var
	}
	return r.Var
}

func tieVars(top *scope) []string {
	var vs []string
	for name := range top.vars {
		vs = append(vs, name)
	}
	sort.Strings(vs)
	return vs
}

func isAgg(f string) bool {
	switch f {
	case "count", "sum", "avg", "min", "max":
		return true
	}
	return false
}

func isRankFunc(f string) bool { return f == "nearest" || f == "bm25" || f == "rrf" }

// checkClauses type-checks clauses in order and extends the scope's plan.
func (c *checker) checkClauses(sc *scope, clauses []Clause) {
	for _, cl := range clauses {
		switch cl := cl.(type) {
		case *Binding:
			c.checkBinding(sc, cl)
		case *Traversal:
			c.checkTraversal(sc, cl)
		case *FilterClause:
			c.checkFilter(sc, cl)
		case *TextSearch:
			c.checkTextClause(sc, cl)
		case *Negation:
			c.checkNegation(sc, cl)
		}
		c.flush(sc)
	}
}

// flush runs pending plan steps whose variables have become bound.
func (c *checker) flush(sc *scope) {
	for progress := true; progress; {
		progress = false
		for i := 0; i < len(sc.pending); i++ {
			it := sc.pending[i]
			if !ready(sc, it) {
				continue
			}
			sc.pending = append(sc.pending[:i], sc.pending[i+1:]...)
			it.run()
			progress = true
			i--
		}
	}
}

func ready(sc *scope, it pendingItem) bool {
	if it.any {
		for _, v := range it.needs {
			if sc.planBound[v] {
				return true
			}
		}
		return false
	}
	for _, v := range it.needs {
		if !sc.planBound[v] {
			return false
		}
	}
	return true
}

// finishScope reports plan steps that never became runnable: traversals
// (and what depends on them) not connected to any binding.
func (c *checker) finishScope(sc *scope) {
	if len(sc.pending) > 0 && len(c.errs) == 0 {
		it := sc.pending[0]
		c.errorf(it.span, "", "%s is not connected to any binding; bind one of its variables with `$v: Type`", it.what)
	}
	if sc.cur == nil && len(c.errs) == 0 {
		c.errorf(c.q.NameSpan, "", "match block binds no variables")
	}
}

func (c *checker) addOp(sc *scope, vars []string, build func(in Op) Op) {
	sc.cur = build(sc.cur)
	for _, v := range vars {
		sc.planBound[v] = true
	}
}

func (c *checker) checkBinding(sc *scope, b *Binding) {
	if b.Var.Anonymous() {
		c.errorf(b.Var.Span, "", "the anonymous variable `$_` cannot be bound to a type")
		return
	}
	nt, ok := c.cat.Node(b.Type)
	if !ok {
		c.errorf(b.TypeSpan, "T1", "unknown node type `%s`%s", b.Type, c.nodeHint(b.Type))
		if _, bound := sc.lookup(b.Var.Name); !bound {
			sc.vars[b.Var.Name] = &varInfo{name: b.Var.Name, poison: true}
		}
		return
	}
	addRef(&c.reads, TableRef{Name: nt.Name})
	if v, ok := sc.lookup(b.Var.Name); ok {
		if v.edge {
			c.errorf(b.Var.Span, "T23", "edge variable `$%s` cannot be rebound as a node of type `%s`", b.Var.Name, b.Type)
			return
		}
		if v.typ != nt.Name {
			c.errorf(b.Span, "", "variable `$%s` already bound to type `%s`, cannot rebind to `%s`", b.Var.Name, v.typ, nt.Name)
			return
		}
	}
	var preds []Pred
	for _, pm := range b.Props {
		if p, ok := c.checkPropMatch(sc, nt, b.Var.Name, pm); ok {
			preds = append(preds, p)
		}
	}
	v, known := sc.lookup(b.Var.Name)
	if !known {
		v = &varInfo{name: b.Var.Name, typ: nt.Name}
		sc.vars[b.Var.Name] = v
	}
	v.byBinding = true
	name := b.Var.Name
	if sc.planBound[name] {
		// Second binding of a bound variable: its matches are extra filters.
		for _, p := range preds {
			if s, ok := sc.scans[name]; ok {
				s.Filters = append(s.Filters, p)
			} else {
				p := p
				c.addOp(sc, nil, func(in Op) Op { return &Filter{Input: in, Pred: p} })
			}
		}
		return
	}
	s := &Scan{Var: name, Type: nt.Name, Filters: preds}
	sc.scans[name] = s
	c.addOp(sc, []string{name}, func(in Op) Op {
		if in == nil {
			return s
		}
		return &CrossJoin{Left: in, Right: s}
	})
}

// checkPropMatch checks an inline `prop: value` against a node property and
// returns the equivalent predicate (membership for list properties).
func (c *checker) checkPropMatch(sc *scope, nt *schema.NodeType, v string, pm *PropMatch) (Pred, bool) {
	prop, ok := nt.Prop(pm.Name)
	if !ok {
		c.errorf(pm.NameSpan, "T2", "type `%s` has no property `%s`%s", nt.Name, pm.Name, c.propHint(nt.Name, false, pm.Name))
		return Pred{}, false
	}
	left := Operand{Kind: OpdProp, Var: v, Prop: pm.Name, Type: prop.Type}
	pt := prop.Type
	if pt.Kind == schema.KindBlob {
		c.errorf(pm.Span, "T3", "Blob property `%s` cannot be used in a pattern", pm.Name)
		return Pred{}, false
	}
	right, vt, ok := c.valueOperand(sc, pm.Value)
	if !ok {
		return Pred{}, false
	}
	op := OpEq
	if pt.Kind == schema.KindList {
		op = OpContains
	}
	if !c.valueFits(pt, vt, pm.Value, pm.Name, "T3", "compare") {
		return Pred{}, false
	}
	if pt.Kind == schema.KindList && vt.t.Kind == schema.KindList {
		c.errorf(pm.Span, "T3", "list property `%s` cannot be matched by list equality; match one element or use contains", pm.Name)
		return Pred{}, false
	}
	c.noteEnum(nt.Name, left, right)
	return Pred{Left: left, Op: op, Right: right}, true
}

// valueOperand resolves a value (literal, parameter or now()) of a prop
// match, assignment or where-predicate.
func (c *checker) valueOperand(sc *scope, e Expr) (Operand, vtype, bool) {
	switch e := e.(type) {
	case *Lit:
		vt, ok := c.checkLit(e)
		return Operand{Kind: OpdLit, Lit: e, Type: vt.t}, vt, ok
	case *Now:
		t := scalarOf(schema.KindDateTime)
		return Operand{Kind: OpdNow, Type: t}, vtype{cls: vScalar, t: t}, true
	case *VarRef:
		if t, ok := c.params[e.Var.Name]; ok {
			return Operand{Kind: OpdParam, Param: e.Var.Name, Type: t}, vtype{cls: vScalar, t: t}, true
		}
		if sc != nil {
			if v, ok := sc.lookup(e.Var.Name); ok {
				c.errorf(e.Var.Span, "T3", "variable `$%s` (%s `%s`) cannot be used as a property value", v.name, kindWord(v), v.typ)
				return Operand{}, vtype{}, false
			}
		}
		c.errorf(e.Var.Span, "T14", "`$%s` is not a declared parameter", e.Var.Name)
		return Operand{}, vtype{}, false
	}
	c.errorf(e.exprSpan(), "", "expected a literal, parameter or now()")
	return Operand{}, vtype{}, false
}

func kindWord(v *varInfo) string {
	if v.edge {
		return "edge"
	}
	return "node"
}

// valueFits checks that value (typed vt, from expression e) may be stored
// into or compared with a property of type pt. Literal mismatches use
// litCode (T3 in patterns, T7 in mutations); parameter and now() mismatches
// are always T7. verb is "assign" or "compare".
func (c *checker) valueFits(pt schema.Type, vt vtype, e Expr, prop, litCode, verb string) bool {
	lit, isLit := e.(*Lit)
	_, isNow := e.(*Now)
	sp := e.exprSpan()
	if isNow && pt.Kind != schema.KindDateTime {
		c.errorf(sp, "T7", "now() is a DateTime and cannot be used for property `%s` of type %s", prop, typeName(pt))
		return false
	}
	mismatch := func() bool {
		if isLit {
			c.errorf(sp, litCode, "property `%s` has type %s, got %s literal", prop, pt.String(), typeName(vt.t))
		} else {
			c.errorf(sp, "T7", "cannot %s %s with %s for property `%s`", verb, typeName(pt), typeName(vt.t), prop)
		}
		return false
	}
	switch pt.Kind {
	case schema.KindEnum:
		if isLit && lit.Kind == LitString {
			if !slices.Contains(pt.Enum, lit.Str) {
				c.errorf(sp, "T3", "property `%s` expects one of [%s], got '%s'", prop, strings.Join(pt.Enum, ", "), lit.Str)
				return false
			}
			return true
		}
		if isStringy(vt.t.Kind) {
			return true
		}
		return mismatch()
	case schema.KindVector:
		if vt.t.Kind == schema.KindVector {
			if vt.t.Dim != pt.Dim {
				c.errorf(sp, "T7", "cannot %s Vector(%d) with Vector(%d) for property `%s`", verb, pt.Dim, vt.t.Dim, prop)
				return false
			}
			return true
		}
		if isLit && lit.Kind == LitList && (vt.emptyList || vt.t.Elem.IsNumeric()) {
			if len(lit.Elems) != pt.Dim {
				c.errorf(sp, "T3", "vector literal has %d values, property `%s` is Vector(%d)", len(lit.Elems), prop, pt.Dim)
				return false
			}
			return true
		}
		return mismatch()
	case schema.KindList:
		if vt.t.Kind == schema.KindList {
			if vt.emptyList || comparable(scalarOf(pt.Elem), scalarOf(vt.t.Elem)) {
				return true
			}
			return mismatch()
		}
		if comparable(scalarOf(pt.Elem), vt.t) {
			return true // membership
		}
		return mismatch()
	case schema.KindBlob:
		if vt.t.Kind == schema.KindString && !isLit {
			return true // a String param may carry a blob
		}
		return mismatch()
	}
	if !comparable(pt, vt.t) {
		return mismatch()
	}
	return true
}

func (c *checker) anonName(sc *scope) string {
	*sc.anon++
	return fmt.Sprintf("_#%d", *sc.anon)
}

func (c *checker) checkTraversal(sc *scope, tr *Traversal) {
	et, ok := c.cat.Edge(tr.Edge)
	if !ok {
		c.errorf(tr.EdgeSpan, "T4", "unknown edge type `%s`%s", tr.Edge, c.edgeHint(tr.Edge))
		return
	}
	addRef(&c.reads, TableRef{Edge: true, Name: et.Name})
	bad := false
	minH, maxH := int64(1), int64(1)
	if b := tr.Bounds; b != nil {
		switch {
		case b.Unbounded:
			c.errorf(b.Span, "T15", "unbounded traversal is disabled; give a maximum hop count")
			bad = true
		case b.Min < 1:
			c.errorf(b.Span, "T15", "hop bounds require min >= 1, got %d", b.Min)
			bad = true
		case b.Max < b.Min:
			c.errorf(b.Span, "T15", "hop bounds max (%d) is less than min (%d)", b.Max, b.Min)
			bad = true
		}
		minH, maxH = b.Min, b.Max
	}
	if tr.Undirected && et.From != et.To {
		c.errorf(tr.EdgeSpan, "T22", "undirected traversal requires an edge between one node type; `%s` is %s -> %s", et.Name, et.From, et.To)
		bad = true
	}
	edgeVar := ""
	if w := tr.EdgeVar; w != nil {
		switch _, bound := sc.lookup(w.Name); {
		case w.Anonymous():
			c.errorf(w.Span, "T23", "the anonymous variable `$_` cannot name an edge")
			bad = true
		case tr.Bounds != nil:
			c.errorf(w.Span, "T23", "edge variable `$%s` cannot be used with hop bounds", w.Name)
			bad = true
		case w.Name == tr.Src.Name || w.Name == tr.Dst.Name:
			c.errorf(w.Span, "T23", "edge variable `$%s` has the same name as a traversal endpoint", w.Name)
			bad = true
		case bound:
			c.errorf(w.Span, "T23", "edge variable `$%s` is already bound", w.Name)
			bad = true
		}
		edgeVar = w.Name
	}
	// Resolve endpoint types; direction comes from bound variables' types.
	info := func(v Var) (*varInfo, bool) {
		if v.Anonymous() {
			return nil, true
		}
		vi, ok := sc.lookup(v.Name)
		if ok && vi.poison {
			return nil, false
		}
		if ok && vi.edge {
			c.errorf(v.Span, "T23", "edge variable `$%s` cannot be a traversal endpoint", v.Name)
			return nil, false
		}
		if !ok {
			if _, isParam := c.params[v.Name]; isParam {
				c.errorf(v.Span, "", "parameter `$%s` cannot be a traversal endpoint", v.Name)
				return nil, false
			}
		}
		return vi, true
	}
	a, okA := info(tr.Src)
	b, okB := info(tr.Dst)
	if !okA || !okB || bad {
		return
	}
	// srcIsFrom: the written source is on the edge's From side.
	srcIsFrom := true
	endpointErr := func(v Var, vi *varInfo) {
		c.errorf(v.Span, "T5", "variable `$%s` has type `%s`, which is not an endpoint of edge `%s` (%s -> %s)", v.Name, vi.typ, et.Name, et.From, et.To)
	}
	switch {
	case a != nil && b != nil:
		switch {
		case a.typ == et.From && b.typ == et.To:
			srcIsFrom = true
		case a.typ == et.To && b.typ == et.From:
			srcIsFrom = false
		case a.typ != et.From && a.typ != et.To:
			endpointErr(tr.Src, a)
			return
		default:
			endpointErr(tr.Dst, b)
			return
		}
	case a != nil || b != nil:
		// One side is bound: its type says how the edge lies. own is the
		// edge end the bound side takes when the source is From.
		v, vi, own, other := tr.Src, a, et.From, et.To
		if a == nil {
			v, vi, own, other = tr.Dst, b, et.To, et.From
		}
		switch vi.typ {
		case own:
			srcIsFrom = true
		case other:
			srcIsFrom = false
		default:
			endpointErr(v, vi)
			return
		}
	}
	srcType, dstType := et.From, et.To
	if !srcIsFrom {
		srcType, dstType = et.To, et.From
	}
	srcName, dstName := tr.Src.Name, tr.Dst.Name
	if tr.Src.Anonymous() {
		srcName = c.anonName(sc)
	} else if a == nil {
		sc.vars[srcName] = &varInfo{name: srcName, typ: srcType}
	}
	if tr.Dst.Anonymous() {
		dstName = c.anonName(sc)
	} else if b == nil {
		sc.vars[dstName] = &varInfo{name: dstName, typ: dstType}
	}
	if edgeVar != "" {
		sc.vars[edgeVar] = &varInfo{name: edgeVar, edge: true, typ: et.Name}
	}
	if et.From != et.To {
		minH, maxH = 1, 1 // cross-type edges are single-hop (spec §5.3)
	}
	fromName, toName := srcName, dstName
	fromType, toType := srcType, dstType
	if !srcIsFrom {
		fromName, toName = dstName, srcName
		fromType, toType = dstType, srcType
	}
	undirected := tr.Undirected
	run := func() {
		e := &Expand{Edge: et.Name, EdgeVar: edgeVar, Min: minH, Max: maxH}
		if sc.planBound[fromName] {
			e.Src, e.Dst, e.Dir, e.DstType = fromName, toName, DirOut, toType
		} else {
			e.Src, e.Dst, e.Dir, e.DstType = toName, fromName, DirIn, fromType
		}
		if undirected {
			// For same-type edges the written order is the direction;
			// undirected walks both ways from whichever side is bound.
			e.Dir = DirBoth
		}
		e.DstBound = sc.planBound[e.Dst]
		vars := []string{e.Dst}
		if edgeVar != "" {
			vars = append(vars, edgeVar)
		}
		c.addOp(sc, vars, func(in Op) Op { e.Input = in; return e })
	}
	sc.pending = append(sc.pending, pendingItem{needs: []string{fromName, toName}, any: true, span: tr.Span,
		what: fmt.Sprintf("traversal `$%s %s $%s`", tr.Src.Name, tr.Edge, tr.Dst.Name), run: run})
}

// exprType types an expression used as a filter operand, projection or
// order key, returning the operand that computes it.
func (c *checker) exprType(sc *scope, e Expr) (Operand, vtype, bool) {
	switch e := e.(type) {
	case *Lit, *Now:
		return c.valueOperand(sc, e)
	case *VarRef:
		if e.Var.Anonymous() {
			c.errorf(e.Var.Span, "", "the anonymous variable `$_` cannot be used as a value")
			return Operand{}, vtype{}, false
		}
		if v, ok := sc.lookup(e.Var.Name); ok {
			if v.poison {
				return Operand{}, vtype{}, false
			}
			if v.edge {
				return Operand{Kind: OpdID, Var: v.name, Type: scalarOf(schema.KindString)}, vtype{cls: vEdge, name: v.typ}, true
			}
			return Operand{Kind: OpdID, Var: v.name, Type: scalarOf(schema.KindString)}, vtype{cls: vNode, name: v.typ, t: scalarOf(schema.KindString)}, true
		}
		if t, ok := c.params[e.Var.Name]; ok {
			if t.Kind == schema.KindBlob {
				c.errorf(e.Var.Span, "T24", "Blob parameter `$%s` cannot be read as a value", e.Var.Name)
				return Operand{}, vtype{}, false
			}
			return Operand{Kind: OpdParam, Param: e.Var.Name, Type: t}, vtype{cls: vScalar, t: t}, true
		}
		c.errorf(e.Var.Span, "", "variable `$%s` is not bound", e.Var.Name)
		return Operand{}, vtype{}, false
	case *PropRef:
		v, ok := sc.lookup(e.Var.Name)
		if !ok || e.Var.Anonymous() {
			c.errorf(e.Var.Span, "T6", "variable `$%s` is not bound", e.Var.Name)
			return Operand{}, vtype{}, false
		}
		if v.poison {
			return Operand{}, vtype{}, false
		}
		var prop *schema.Property
		if v.edge {
			et, _ := c.cat.Edge(v.typ)
			prop, ok = et.Prop(e.Prop)
			if !ok {
				c.errorf(e.PropSpan, "T6", "edge type `%s` has no property `%s`%s", v.typ, e.Prop, c.propHint(v.typ, true, e.Prop))
				return Operand{}, vtype{}, false
			}
		} else {
			nt, _ := c.cat.Node(v.typ)
			prop, ok = nt.Prop(e.Prop)
			if !ok {
				c.errorf(e.PropSpan, "T6", "type `%s` has no property `%s`%s", v.typ, e.Prop, c.propHint(v.typ, false, e.Prop))
				return Operand{}, vtype{}, false
			}
		}
		return Operand{Kind: OpdProp, Var: v.name, Prop: e.Prop, Type: prop.Type}, vtype{cls: vScalar, t: prop.Type}, true
	case *Call:
		switch {
		case isRankFunc(e.Func):
			r, ok := c.checkRank(sc, e)
			return Operand{Kind: OpdRank, Rank: r, Type: scalarOf(schema.KindF64)}, vtype{cls: vRank, t: scalarOf(schema.KindF64)}, ok
		case isAgg(e.Func):
			c.errorf(e.Span, "", "aggregate `%s` is only allowed in return", e.Func)
		default:
			c.errorf(e.Span, "", "`%s` is a match clause and cannot be used as a value", e.Func)
		}
		return Operand{}, vtype{}, false
	case *AliasRef:
		c.errorf(e.Span, "", "unknown identifier `%s` (variables start with `$`; aliases are only usable in order)", e.Name)
		return Operand{}, vtype{}, false
	}
	return Operand{}, vtype{}, false
}

func exprVars(e Expr, out map[string]bool) {
	switch e := e.(type) {
	case *VarRef:
		out[e.Var.Name] = true
	case *PropRef:
		out[e.Var.Name] = true
	case *Call:
		for _, a := range e.Args {
			exprVars(a, out)
		}
	}
}

func (c *checker) checkFilter(sc *scope, f *FilterClause) {
	l, lt, okL := c.exprType(sc, f.Left)
	r, rt, okR := c.exprType(sc, f.Right)
	if !okL || !okR {
		return
	}
	for _, x := range []struct {
		vt vtype
		e  Expr
	}{{lt, f.Left}, {rt, f.Right}} {
		if x.vt.cls == vEdge {
			c.errorf(x.e.exprSpan(), "T23", "edge variable cannot be used bare; use `$w.prop`")
			return
		}
	}
	if lt.cls == vNode || rt.cls == vNode {
		c.errorf(f.Span, "T7", "filter comparisons require scalar operands, got %s and %s", lt, rt)
		return
	}
	if lt.t.Kind == schema.KindBlob || rt.t.Kind == schema.KindBlob {
		c.errorf(f.Span, "T7", "Blob values cannot be used in filters")
		return
	}
	switch f.Op {
	case OpContains:
		switch {
		case lt.t.Kind == schema.KindList:
			if rt.t.Kind == schema.KindList || rt.t.Kind == schema.KindVector || !comparable(scalarOf(lt.t.Elem), rt.t) {
				c.errorf(f.Span, "T7", "contains on %s requires an element of a compatible scalar type, got %s", typeName(lt.t), typeName(rt.t))
				return
			}
		case isStringy(lt.t.Kind):
			if !isStringy(rt.t.Kind) {
				c.errorf(f.Span, "T7", "contains on a String requires a String operand, got %s", typeName(rt.t))
				return
			}
		default:
			c.errorf(f.Span, "T7", "contains requires a list or String on the left, got %s", typeName(lt.t))
			return
		}
	case OpStartsWith:
		if !isStringy(lt.t.Kind) || !isStringy(rt.t.Kind) {
			c.errorf(f.Span, "T7", "starts_with requires String operands, got %s and %s", typeName(lt.t), typeName(rt.t))
			return
		}
	default:
		if !lt.t.IsScalar() || !rt.t.IsScalar() {
			c.errorf(f.Span, "T7", "cannot compare %s with %s: lists and vectors are not comparable", typeName(lt.t), typeName(rt.t))
			return
		}
		if !comparable(lt.t, rt.t) {
			c.errorf(f.Span, "T7", "cannot compare %s with %s", typeName(lt.t), typeName(rt.t))
			return
		}
	}
	if f.Op == OpEq || f.Op == OpNe {
		for _, pair := range [][2]Operand{{l, r}, {r, l}} {
			if pair[0].Kind == OpdProp {
				if v, ok := sc.lookup(pair[0].Var); ok {
					c.noteEnum(v.typ, pair[0], pair[1])
				}
			}
		}
	}
	c.addPred(sc, Pred{Left: l, Op: f.Op, Right: r}, f.Span)
}

// noteEnum records that a parameter is compared (for equality) with an
// enum property of typeName (ParamSpec.Enums).
func (c *checker) noteEnum(typeName string, prop, other Operand) {
	if prop.Kind != OpdProp || other.Kind != OpdParam {
		return
	}
	t := prop.Type // lists of enums do not exist (the schema refuses them)
	if t.Kind != schema.KindEnum {
		return
	}
	if c.enums == nil {
		c.enums = map[string][]EnumUse{}
	}
	target := typeName + "." + prop.Prop
	for _, e := range c.enums[other.Param] {
		if e.Target == target {
			return
		}
	}
	c.enums[other.Param] = append(c.enums[other.Param], EnumUse{Target: target, Values: t.Enum})
}

// addPred attaches a predicate: pushed into the scan of its only variable
// when that variable has a scan in this scope, else as a Filter once all of
// its variables are bound.
func (c *checker) addPred(sc *scope, p Pred, sp Span) {
	vars := map[string]bool{}
	for _, o := range []Operand{p.Left, p.Right} {
		if o.Kind == OpdProp || o.Kind == OpdID {
			vars[o.Var] = true
		}
		if o.Kind == OpdRank {
			vars[rankVar(o.Rank)] = true
		}
	}
	if len(vars) == 1 {
		for v := range vars {
			if s, ok := sc.scans[v]; ok {
				s.Filters = append(s.Filters, p)
				return
			}
		}
	}
	var needs []string
	for v := range vars {
		needs = append(needs, v)
	}
	sort.Strings(needs)
	sc.pending = append(sc.pending, pendingItem{needs: needs, span: sp, what: "filter `" + p.String() + "`",
		run: func() { c.addOp(sc, nil, func(in Op) Op { return &Filter{Input: in, Pred: p} }) }})
}

// textField checks the field argument of a search function: a scalar
// String property of a node variable.
func (c *checker) textField(sc *scope, fn, code string, e Expr) (Operand, bool) {
	pr, ok := e.(*PropRef)
	if !ok {
		c.errorf(e.exprSpan(), code, "%s field must be a String property `$v.prop`", fn)
		return Operand{}, false
	}
	if v, ok := sc.lookup(pr.Var.Name); ok && v.edge {
		c.errorf(pr.Span, "T23", "edge variable `$%s` cannot be used in %s", v.name, fn)
		return Operand{}, false
	}
	o, vt, ok := c.exprType(sc, pr)
	if !ok {
		return Operand{}, false
	}
	if vt.t.Kind != schema.KindString {
		c.errorf(pr.Span, code, "%s field must be a scalar String property, got %s", fn, vt.t.String())
		return Operand{}, false
	}
	return o, true
}

func (c *checker) textQuery(sc *scope, fn, code string, e Expr) (Operand, bool) {
	o, vt, ok := c.exprType(sc, e)
	if !ok {
		return Operand{}, false
	}
	if vt.cls != vScalar || vt.t.Kind != schema.KindString {
		c.errorf(e.exprSpan(), code, "%s query must be a String, got %s", fn, vt)
		return Operand{}, false
	}
	return o, true
}

func (c *checker) checkTextClause(sc *scope, ts *TextSearch) {
	call := ts.Call
	code := "T19"
	if call.Func == "match_text" {
		code = "T20"
	}
	want := 2
	if call.Func == "fuzzy" {
		if len(call.Args) != 2 && len(call.Args) != 3 {
			c.errorf(call.Span, code, "fuzzy takes 2 or 3 arguments, got %d", len(call.Args))
			return
		}
		want = len(call.Args)
	}
	if len(call.Args) != want {
		c.errorf(call.Span, code, "%s takes %d arguments, got %d", call.Func, want, len(call.Args))
		return
	}
	field, ok1 := c.textField(sc, call.Func, code, call.Args[0])
	query, ok2 := c.textQuery(sc, call.Func, code, call.Args[1])
	if !ok1 || !ok2 {
		return
	}
	p := Pred{Func: call.Func, Left: field, Right: query}
	if want == 3 {
		o, vt, ok := c.exprType(sc, call.Args[2])
		if !ok {
			return
		}
		if vt.cls != vScalar || !vt.t.Kind.IsInteger() {
			c.errorf(call.Args[2].exprSpan(), "T19", "fuzzy max_edits must be an integer, got %s", vt)
			return
		}
		p.MaxEdits = &o
	}
	c.addPred(sc, p, call.Span)
}

// checkRank checks nearest/bm25/rrf and returns the rank spec.
func (c *checker) checkRank(sc *scope, call *Call) (*RankSpec, bool) {
	switch call.Func {
	case "nearest":
		if len(call.Args) != 2 {
			c.errorf(call.Span, "T15", "nearest takes 2 arguments, got %d", len(call.Args))
			return nil, false
		}
		pr, ok := call.Args[0].(*PropRef)
		if !ok {
			c.errorf(call.Args[0].exprSpan(), "T15", "nearest requires a Vector property `$v.prop` as its first argument")
			return nil, false
		}
		if v, ok := sc.lookup(pr.Var.Name); ok && v.edge {
			c.errorf(pr.Span, "T23", "edge variable `$%s` cannot be used in nearest", v.name)
			return nil, false
		}
		o, vt, ok := c.exprType(sc, pr)
		if !ok {
			return nil, false
		}
		if vt.t.Kind != schema.KindVector {
			c.errorf(pr.Span, "T15", "nearest requires a Vector property, got %s", vt.t.String())
			return nil, false
		}
		q, qt, ok := c.exprType(sc, call.Args[1])
		if !ok {
			return nil, false
		}
		switch {
		case qt.cls == vScalar && qt.t.Kind == schema.KindVector:
			if qt.t.Dim != vt.t.Dim {
				c.errorf(call.Args[1].exprSpan(), "T15", "nearest query is Vector(%d) but `%s` is Vector(%d)", qt.t.Dim, pr.Prop, vt.t.Dim)
				return nil, false
			}
		case qt.cls == vScalar && qt.t.Kind == schema.KindList && q.Kind == OpdLit && (qt.emptyList || qt.t.Elem.IsNumeric()):
			if len(q.Lit.Elems) != vt.t.Dim {
				c.errorf(call.Args[1].exprSpan(), "T15", "nearest query has %d values but `%s` is Vector(%d)", len(q.Lit.Elems), pr.Prop, vt.t.Dim)
				return nil, false
			}
		case qt.cls == vScalar && qt.t.Kind == schema.KindString:
			// Embedded at query time.
		default:
			c.errorf(call.Args[1].exprSpan(), "T15", "nearest query must be a Vector(%d) or a String, got %s", vt.t.Dim, qt)
			return nil, false
		}
		return &RankSpec{Func: "nearest", Var: o.Var, Field: o.Prop, Query: q}, true
	case "bm25":
		if len(call.Args) != 2 {
			c.errorf(call.Span, "T20", "bm25 takes 2 arguments, got %d", len(call.Args))
			return nil, false
		}
		f, ok1 := c.textField(sc, "bm25", "T20", call.Args[0])
		q, ok2 := c.textQuery(sc, "bm25", "T20", call.Args[1])
		if !ok1 || !ok2 {
			return nil, false
		}
		return &RankSpec{Func: "bm25", Var: f.Var, Field: f.Prop, Query: q}, true
	}
	// rrf
	if len(call.Args) != 2 && len(call.Args) != 3 {
		c.errorf(call.Span, "T21", "rrf takes two rankings and an optional k, got %d arguments", len(call.Args))
		return nil, false
	}
	r := &RankSpec{Func: "rrf", K: Operand{Kind: OpdLit, Lit: &Lit{Kind: LitInt, Int: 60}, Type: scalarOf(schema.KindI64)}}
	for _, a := range call.Args[:2] {
		ac, ok := a.(*Call)
		if !ok || (ac.Func != "nearest" && ac.Func != "bm25") {
			c.errorf(a.exprSpan(), "T21", "rrf arguments must be nearest(...) or bm25(...)")
			return nil, false
		}
		arm, ok := c.checkRank(sc, ac)
		if !ok {
			return nil, false
		}
		r.Arms = append(r.Arms, arm)
	}
	if r.Arms[0].Var != r.Arms[1].Var {
		c.errorf(call.Span, "T21", "rrf arms must rank the same variable, got `$%s` and `$%s`", r.Arms[0].Var, r.Arms[1].Var)
		return nil, false
	}
	if len(call.Args) == 3 {
		k := call.Args[2]
		switch kv := k.(type) {
		case *Lit:
			if kv.Kind != LitInt || kv.Int <= 0 {
				c.errorf(k.exprSpan(), "T21", "rrf k must be a positive integer literal")
				return nil, false
			}
			r.K = Operand{Kind: OpdLit, Lit: kv, Type: scalarOf(schema.KindI64)}
		default:
			o, vt, ok := c.exprType(sc, k)
			if !ok {
				return nil, false
			}
			if o.Kind != OpdParam || !vt.t.Kind.IsInteger() {
				c.errorf(k.exprSpan(), "T21", "rrf k must be a positive integer literal")
				return nil, false
			}
			r.K = o
		}
	}
	return r, true
}

func (c *checker) checkNegation(sc *scope, n *Negation) {
	used := map[string]bool{}
	collectClauseVars(n.Clauses, used)
	var outer []string
	for v := range used {
		if _, ok := sc.lookup(v); ok {
			outer = append(outer, v)
		}
	}
	sort.Strings(outer)
	if len(outer) == 0 {
		c.errorf(n.Span, "T9", "negation must reference at least one variable bound outside it")
		return
	}
	arg := &Argument{Vars: outer}
	inner := &scope{parent: sc, vars: map[string]*varInfo{}, planBound: map[string]bool{}, scans: map[string]*Scan{}, cur: arg, anon: sc.anon}
	for _, v := range outer {
		inner.planBound[v] = true
	}
	nerr := len(c.errs)
	c.checkClauses(inner, n.Clauses)
	if len(c.errs) != nerr {
		return
	}
	c.finishScope(inner)
	aj := &AntiJoin{Sub: inner.cur, Outer: outer}
	sc.pending = append(sc.pending, pendingItem{needs: outer, span: n.Span, what: "negation",
		run: func() { c.addOp(sc, nil, func(in Op) Op { aj.Input = in; return aj }) }})
}

func collectClauseVars(cls []Clause, out map[string]bool) {
	for _, cl := range cls {
		switch cl := cl.(type) {
		case *Binding:
			out[cl.Var.Name] = true
			for _, pm := range cl.Props {
				exprVars(pm.Value, out)
			}
		case *Traversal:
			out[cl.Src.Name] = true
			out[cl.Dst.Name] = true
		case *FilterClause:
			exprVars(cl.Left, out)
			exprVars(cl.Right, out)
		case *TextSearch:
			exprVars(cl.Call, out)
		case *Negation:
			collectClauseVars(cl.Clauses, out)
		}
	}
	delete(out, "_")
}

// nodeHint, edgeHint and propHint suggest the declared name nearest to a
// misspelt one ("; did you mean `Person`?"), or nothing.
func (c *checker) nodeHint(name string) string {
	var names []string
	for _, n := range c.cat.Nodes {
		names = append(names, n.Name)
	}
	return hint(name, names)
}

func (c *checker) edgeHint(name string) string {
	var names []string
	for _, e := range c.cat.Edges {
		names = append(names, e.Name)
	}
	return hint(name, names)
}

func (c *checker) propHint(typeName string, edge bool, name string) string {
	var props []*schema.Property
	if edge {
		if et, ok := c.cat.Edge(typeName); ok {
			props = et.Props
		}
	} else if nt, ok := c.cat.Node(typeName); ok {
		props = nt.Props
	}
	var names []string
	for _, p := range props {
		names = append(names, p.Name)
	}
	return hint(name, names)
}

func hint(name string, cands []string) string {
	// Candidates are compared lowercased, so `knows` finds `Knows`.
	lower := make([]string, len(cands))
	for i, c := range cands {
		lower[i] = strings.ToLower(c)
	}
	s := schema.Closest(name, lower)
	if s == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean `%s`?", cands[slices.Index(lower, s)])
}
