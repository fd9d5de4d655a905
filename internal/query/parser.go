package query

import (
	"fmt"
	"strconv"
)

// MaxDepth bounds nesting of `not { }` blocks and list literals so that
// hostile input cannot exhaust the stack.
const MaxDepth = 64

// MaxErrors caps the diagnostics collected from one file.
const MaxErrors = 10

// bailout unwinds the parser to the enclosing query declaration after an
// error has been recorded; tooMany unwinds the whole file. Only these two are
// recovered, so real bugs still crash.
type bailout struct{}
type tooMany struct{}

type parser struct {
	filename string
	src      string
	toks     []token
	pos      int
	depth    int
	errs     ErrorList
	query    string // name of the query being parsed, for diagnostics
}

// Parse parses a .gq source into an AST. It returns the queries that parsed
// and an ErrorList (nil if none) of the syntax errors; a query with a syntax
// error is left out of the Ast.
func Parse(filename, src string) (*Ast, error) {
	toks, lerrs := lex(src)
	p := &parser{filename: filename, src: src, toks: toks}
	ast := &Ast{Filename: filename, Src: src}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(tooMany); !ok {
					panic(r)
				}
			}
		}()
		for _, e := range lerrs {
			p.record(e.span, "%s", e.msg)
		}
		p.parseFile(ast)
	}()
	p.errs.sortList()
	return ast, p.errs.Err()
}

func (p *parser) tok() token { return p.toks[p.pos] }

func (p *parser) peekAt(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) advance() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

// record adds a diagnostic, dropping a second error on the same line (the
// first is nearly always the cause), and stops the parse after MaxErrors.
func (p *parser) record(sp Span, format string, args ...any) {
	sp = widen(sp, len(p.src))
	line, col := lineCol(p.src, sp.Start)
	for _, e := range p.errs {
		if e.Line == line {
			return
		}
	}
	p.errs = append(p.errs, &Error{Kind: KindParse, Msg: fmt.Sprintf(format, args...), Query: p.query,
		File: p.filename, Span: sp, Line: line, Col: col})
	if len(p.errs) >= MaxErrors {
		panic(tooMany{})
	}
}

func (p *parser) fail(sp Span, format string, args ...any) {
	p.record(sp, format, args...)
	panic(bailout{})
}

func (p *parser) expected(what string) {
	t := p.tok()
	p.fail(t.span, "expected %s, found %s", what, t.describe())
}

func (p *parser) expect(k tokKind) token {
	if p.tok().kind != k {
		p.expected(k.String())
	}
	return p.advance()
}

func (p *parser) isWord(w string) bool {
	t := p.tok()
	return t.kind == tIdent && t.text == w
}

func (p *parser) expectWord(w string) token {
	if !p.isWord(w) {
		p.expected(strconv.Quote(w))
	}
	return p.advance()
}

func (p *parser) enter(sp Span) {
	p.depth++
	if p.depth > MaxDepth {
		p.fail(sp, "nesting too deep (limit %d)", MaxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) parseFile(ast *Ast) {
	for p.tok().kind != tEOF {
		if !p.isWord("query") {
			t := p.tok()
			p.record(t.span, "expected query_file (a \"query\" declaration), found %s", t.describe())
			p.resync(p.pos + 1)
			continue
		}
		start := p.pos
		if q := p.parseQueryGuarded(); q != nil {
			ast.Queries = append(ast.Queries, q)
		} else {
			p.resync(max(p.pos, start+1))
		}
	}
}

// resync moves to the next token that starts a query declaration
// (`query ident (`), at or after from.
func (p *parser) resync(from int) {
	p.pos = min(from, len(p.toks)-1)
	p.depth = 0
	for p.tok().kind != tEOF {
		if p.isWord("query") && p.peekAt(1).kind == tIdent && p.peekAt(2).kind == tLParen {
			return
		}
		p.pos++
	}
}

func (p *parser) parseQueryGuarded() (q *QueryDecl) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			q = nil
		}
		p.query = ""
	}()
	return p.parseQuery()
}

func (p *parser) parseQuery() *QueryDecl {
	start := p.expectWord("query").span.Start
	name := p.tok()
	if name.kind != tIdent {
		p.expected("query name")
	}
	p.advance()
	p.query = name.text
	q := &QueryDecl{Name: name.text, NameSpan: name.span}
	p.expect(tLParen)
	p.commaList(tRParen, func() { q.Params = append(q.Params, p.parseParam()) })
	p.expect(tRParen)
	for p.tok().kind == tAt {
		p.parseQueryAnnotation(q)
	}
	p.expect(tLBrace)
	switch {
	case p.isWord("match"):
		p.parseReadBody(q)
	case p.isWord("insert") || p.isWord("update") || p.isWord("delete"):
		for p.tok().kind != tRBrace {
			q.Mutations = append(q.Mutations, p.parseMutation())
		}
	default:
		p.expected(`"match", "insert", "update" or "delete"`)
	}
	end := p.expect(tRBrace).span.End
	q.Span = Span{start, end}
	return q
}

func (p *parser) parseQueryAnnotation(q *QueryDecl) {
	at := p.advance()
	name := p.tok()
	if name.kind != tIdent || (name.text != "description" && name.text != "instruction") {
		p.expected(`"description" or "instruction"`)
	}
	p.advance()
	p.expect(tLParen)
	val := p.expect(tString)
	p.expect(tRParen)
	sp := Span{at.span.Start, val.span.End}
	if name.text == "description" {
		if q.Description != "" {
			p.fail(sp, "@description declared more than once")
		}
		q.Description = val.text
	} else {
		if q.Instruction != "" {
			p.fail(sp, "@instruction declared more than once")
		}
		q.Instruction = val.text
	}
}

func (p *parser) parseParam() *Param {
	v := p.expect(tVar)
	p.expect(tColon)
	pt := p.parseParamType()
	return &Param{Name: v.text, Type: pt, Span: Span{v.span.Start, pt.Span.End}}
}

func (p *parser) parseParamType() ParamType {
	var pt ParamType
	start := p.tok().span.Start
	if p.tok().kind == tLBrack {
		p.advance()
		pt.List = true
		pt.Base = p.expect(tTypeName).text
		p.expect(tRBrack)
	} else {
		t := p.tok()
		if t.kind != tTypeName {
			p.expected("parameter type")
		}
		p.advance()
		pt.Base = t.text
		if t.text == "Vector" {
			p.expect(tLParen)
			pt.Dim = p.expect(tInt).ival
			p.expect(tRParen)
		}
	}
	end := p.toks[p.pos-1].span.End
	if p.tok().kind == tQuestion {
		end = p.advance().span.End
		pt.Nullable = true
	}
	pt.Span = Span{start, end}
	return pt
}

func (p *parser) parseReadBody(q *QueryDecl) {
	p.expectWord("match")
	p.expect(tLBrace)
	q.Match = p.parseClauses()
	p.expectWord("return")
	p.expect(tLBrace)
	for {
		q.Return = append(q.Return, p.parseProjection())
		if p.tok().kind == tComma {
			p.advance()
		}
		if p.tok().kind == tRBrace {
			break
		}
	}
	p.advance()
	if p.isWord("order") {
		p.advance()
		p.expect(tLBrace)
		for {
			q.Order = append(q.Order, p.parseOrdering())
			if p.tok().kind != tComma {
				break
			}
			p.advance()
		}
		p.expect(tRBrace)
	}
	if p.isWord("limit") {
		kw := p.advance()
		n := p.expect(tInt)
		q.Limit = &LimitClause{N: n.ival, Span: Span{kw.span.Start, n.span.End}}
	}
}

// parseClauses parses clause+ up to and including the closing brace.
func (p *parser) parseClauses() []Clause {
	var out []Clause
	for {
		out = append(out, p.parseClause())
		if p.tok().kind == tRBrace {
			p.advance()
			return out
		}
	}
}

func (p *parser) parseClause() Clause {
	t := p.tok()
	if p.isWord("not") && p.peekAt(1).kind == tLBrace {
		p.advance()
		p.advance()
		p.enter(t.span)
		inner := p.parseClauses()
		p.leave()
		return &Negation{Clauses: inner, Span: Span{t.span.Start, p.toks[p.pos-1].span.End}}
	}
	if t.kind == tVar && p.peekAt(1).kind == tColon {
		return p.parseBinding()
	}
	if t.kind == tVar && p.looksLikeTraversal() {
		return p.parseTraversal()
	}
	left := p.parseExpr()
	if op, ok := p.filterOp(); ok {
		p.advance()
		right := p.parseExpr()
		return &FilterClause{Left: left, Op: op, Right: right, Span: Span{left.exprSpan().Start, right.exprSpan().End}}
	}
	if c, ok := left.(*Call); ok && (c.Func == "search" || c.Func == "fuzzy" || c.Func == "match_text") {
		return &TextSearch{Call: c}
	}
	p.expected("filter operator")
	return nil
}

func (p *parser) filterOp() (CmpOp, bool) {
	t := p.tok()
	switch t.kind {
	case tEq:
		return OpEq, true
	case tNe:
		return OpNe, true
	case tLt:
		return OpLt, true
	case tLe:
		return OpLe, true
	case tGt:
		return OpGt, true
	case tGe:
		return OpGe, true
	case tIdent:
		switch t.text {
		case "contains":
			return OpContains, true
		case "starts_with":
			return OpStartsWith, true
		}
	}
	return 0, false
}

// looksLikeTraversal reports whether the tokens at the cursor have the shape
// `$a [$w:] (edge | <edge>) ({ | $b)`. The spec tries traversal before
// filter, so `$a contains $b` is a traversal over an edge named contains.
func (p *parser) looksLikeTraversal() bool {
	i := 1
	if p.peekAt(i).kind == tVar && p.peekAt(i+1).kind == tColon {
		i += 2
	}
	switch t := p.peekAt(i); {
	case t.kind == tLt:
		if p.peekAt(i+1).kind != tIdent || p.peekAt(i+2).kind != tGt {
			return false
		}
		i += 3
	case t.kind == tIdent && t.text != "not":
		i++
	default:
		return false
	}
	next := p.peekAt(i).kind
	return next == tVar || next == tLBrace
}

func (p *parser) parseBinding() *Binding {
	v := p.advance()
	p.expect(tColon)
	tn := p.tok()
	if tn.kind != tTypeName {
		p.expected("node type name")
	}
	p.advance()
	b := &Binding{Var: Var{v.text, v.span}, Type: tn.text, TypeSpan: tn.span}
	end := tn.span.End
	if p.tok().kind == tLBrace {
		open := p.advance()
		if p.tok().kind == tRBrace {
			p.fail(Span{open.span.Start, p.tok().span.End}, "expected property match, found \"}\" (a binding's brace block must not be empty)")
		}
		for p.tok().kind != tRBrace {
			name, val := p.parseNameValue()
			b.Props = append(b.Props, &PropMatch{Name: name.text, NameSpan: name.span, Value: val,
				Span: Span{name.span.Start, val.exprSpan().End}})
			if p.tok().kind == tComma {
				p.advance()
			} else if p.tok().kind != tRBrace {
				p.expected(`"," or "}"`)
			}
		}
		end = p.advance().span.End
	}
	b.Span = Span{v.span.Start, end}
	return b
}

func (p *parser) parseTraversal() *Traversal {
	src := p.advance()
	tr := &Traversal{Src: Var{src.text, src.span}}
	if p.tok().kind == tVar {
		w := p.advance()
		tr.EdgeVar = &Var{w.text, w.span}
		p.expect(tColon)
	}
	if p.tok().kind == tLt {
		p.advance()
		e := p.expect(tIdent)
		p.expect(tGt)
		tr.Edge, tr.EdgeSpan, tr.Undirected = e.text, e.span, true
	} else {
		e := p.expect(tIdent)
		tr.Edge, tr.EdgeSpan = e.text, e.span
	}
	if p.tok().kind == tLBrace {
		open := p.advance()
		b := &Bounds{Min: p.expect(tInt).ival}
		p.expect(tComma)
		if p.tok().kind == tInt {
			b.Max = p.advance().ival
		} else {
			b.Unbounded = true
		}
		b.Span = Span{open.span.Start, p.expect(tRBrace).span.End}
		tr.Bounds = b
	}
	dst := p.expect(tVar)
	tr.Dst = Var{dst.text, dst.span}
	tr.Span = Span{src.span.Start, dst.span.End}
	return tr
}

func (p *parser) parseProjection() *Projection {
	e := p.parseExpr()
	pr := &Projection{Expr: e, Span: e.exprSpan()}
	if p.isWord("as") {
		p.advance()
		a := p.expect(tIdent)
		pr.Alias = a.text
		pr.Span.End = a.span.End
	}
	return pr
}

func (p *parser) parseOrdering() *Ordering {
	e := p.parseExpr()
	o := &Ordering{Expr: e, Span: e.exprSpan()}
	if p.isWord("asc") || p.isWord("desc") {
		if c, ok := e.(*Call); ok && c.Func == "nearest" {
			p.fail(p.tok().span, "expected \",\" or \"}\", found %s (nearest ordering takes no direction)", p.tok().describe())
		}
		t := p.advance()
		o.Desc = t.text == "desc"
		o.Span.End = t.span.End
	}
	return o
}

// callFuncs are the identifiers that form a call when followed by "(".
var callFuncs = map[string]bool{
	"nearest": true, "search": true, "fuzzy": true, "match_text": true, "bm25": true, "rrf": true,
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
}

func (p *parser) parseExpr() Expr {
	t := p.tok()
	switch t.kind {
	case tVar:
		p.advance()
		v := Var{t.text, t.span}
		if p.tok().kind == tDot {
			p.advance()
			prop := p.expect(tIdent)
			return &PropRef{Var: v, Prop: prop.text, PropSpan: prop.span, Span: Span{t.span.Start, prop.span.End}}
		}
		return &VarRef{Var: v}
	case tString, tInt, tFloat, tLBrack:
		return p.parseLiteral()
	case tIdent:
		next := p.peekAt(1).kind
		switch {
		case t.text == "true" || t.text == "false":
			return p.parseLiteral()
		case (t.text == "date" || t.text == "datetime") && next == tLParen:
			return p.parseLiteral()
		case t.text == "now" && next == tLParen:
			return p.parseNow()
		case callFuncs[t.text] && next == tLParen:
			return p.parseCall()
		}
		p.advance()
		return &AliasRef{Name: t.text, Span: t.span}
	}
	p.expected("expression")
	return nil
}

func (p *parser) parseNow() *Now {
	t := p.advance()
	p.expect(tLParen)
	end := p.expect(tRParen).span.End
	return &Now{Span: Span{t.span.Start, end}}
}

// commaList parses "item, item, …" up to, not including, the closing
// token (possibly empty).
func (p *parser) commaList(closing tokKind, item func()) {
	if p.tok().kind == closing {
		return
	}
	for {
		item()
		if p.tok().kind != tComma {
			return
		}
		p.advance()
	}
}

func (p *parser) parseCall() *Call {
	f := p.advance()
	p.expect(tLParen)
	p.enter(f.span)
	c := &Call{Func: f.text, FuncSpan: f.span}
	p.commaList(tRParen, func() { c.Args = append(c.Args, p.parseExpr()) })
	p.leave()
	c.Span = Span{f.span.Start, p.expect(tRParen).span.End}
	return c
}

// parseValue parses the restricted value form of prop matches, assignments
// and where-predicates: literal, variable or now().
func (p *parser) parseValue() Expr {
	t := p.tok()
	switch {
	case t.kind == tVar:
		p.advance()
		return &VarRef{Var: Var{t.text, t.span}}
	case t.kind == tIdent && t.text == "now" && p.peekAt(1).kind == tLParen:
		return p.parseNow()
	}
	return p.parseLiteral()
}

func (p *parser) parseLiteral() *Lit {
	t := p.tok()
	switch t.kind {
	case tString:
		p.advance()
		return &Lit{Kind: LitString, Str: t.text, Span: t.span}
	case tInt:
		p.advance()
		return &Lit{Kind: LitInt, Int: t.ival, Span: t.span}
	case tFloat:
		p.advance()
		return &Lit{Kind: LitFloat, Float: t.fval, Span: t.span}
	case tLBrack:
		p.advance()
		p.enter(t.span)
		l := &Lit{Kind: LitList}
		p.commaList(tRBrack, func() { l.Elems = append(l.Elems, p.parseLiteral()) })
		p.leave()
		l.Span = Span{t.span.Start, p.expect(tRBrack).span.End}
		return l
	case tIdent:
		switch t.text {
		case "true", "false":
			p.advance()
			return &Lit{Kind: LitBool, Bool: t.text == "true", Span: t.span}
		case "date", "datetime":
			if p.peekAt(1).kind == tLParen {
				p.advance()
				p.advance()
				s := p.expect(tString)
				end := p.expect(tRParen).span.End
				k := LitDate
				if t.text == "datetime" {
					k = LitDateTime
				}
				return &Lit{Kind: k, Str: s.text, Span: Span{t.span.Start, end}}
			}
		}
	}
	p.expected("literal")
	return nil
}

func (p *parser) parseMutation() Mutation {
	kw := p.tok()
	switch {
	case p.isWord("insert"):
		p.advance()
		tn := p.expect(tTypeName)
		assigns := p.parseAssigns()
		return &Insert{Type: tn.text, TypeSpan: tn.span, Assigns: assigns, Span: Span{kw.span.Start, p.toks[p.pos-1].span.End}}
	case p.isWord("update"):
		p.advance()
		tn := p.expect(tTypeName)
		p.expectWord("set")
		assigns := p.parseAssigns()
		w := p.parseWhere()
		return &Update{Type: tn.text, TypeSpan: tn.span, Assigns: assigns, Where: w, Span: Span{kw.span.Start, w.Span.End}}
	case p.isWord("delete"):
		p.advance()
		tn := p.expect(tTypeName)
		w := p.parseWhere()
		return &Delete{Type: tn.text, TypeSpan: tn.span, Where: w, Span: Span{kw.span.Start, w.Span.End}}
	}
	p.expected(`"insert", "update", "delete" or "}"`)
	return nil
}

// parseNameValue parses `name: value` (a property match or an assignment).
func (p *parser) parseNameValue() (token, Expr) {
	name := p.tok()
	if name.kind != tIdent {
		p.expected("property name")
	}
	p.advance()
	p.expect(tColon)
	return name, p.parseValue()
}

// parseAssigns parses `{ assign* }`. An empty block parses; the checker
// rejects it with T10.
func (p *parser) parseAssigns() []*Assign {
	p.expect(tLBrace)
	var out []*Assign
	for p.tok().kind != tRBrace {
		name, v := p.parseNameValue()
		out = append(out, &Assign{Name: name.text, NameSpan: name.span, Value: v, Span: Span{name.span.Start, v.exprSpan().End}})
		if p.tok().kind == tComma {
			p.advance()
		}
	}
	p.advance()
	return out
}

func (p *parser) parseWhere() *Where {
	kw := p.expectWord("where")
	prop := p.tok()
	if prop.kind != tIdent {
		p.expected("property name")
	}
	p.advance()
	op, ok := p.filterOp()
	if !ok || op == OpContains || op == OpStartsWith {
		p.expected("comparison operator")
	}
	p.advance()
	v := p.parseValue()
	return &Where{Prop: prop.text, PropSpan: prop.span, Op: op, Value: v, Span: Span{kw.span.Start, v.exprSpan().End}}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
