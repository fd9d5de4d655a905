package schema

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// parser is a recursive-descent parser over the pre-scanned token slice.
// The .pg grammar has no recursive productions, so the call depth is
// bounded by construction; the token count is bounded by maxSourceBytes.
//
// Error handling follows go/parser: errors are collected; a syntax error
// abandons the current declaration (panic declBail, recovered per
// declaration) and the parser resynchronizes at the next top-level
// keyword; after MaxErrors it gives up (panic fileBail).
type parser struct {
	lines *lineIndex
	toks  []token
	i     int
	tok   token
	depth int // unclosed '{' consumed in the current declaration
	errs  ErrorList
}

type declBail struct{}
type fileBail struct{}

// constraintNames are the annotation names that, followed by '(', form a
// body constraint rather than an annotation.
var constraintNames = map[string]bool{"key": true, "unique": true, "index": true, "range": true, "check": true}

func parse(lines *lineIndex, src string) ([]*declAST, ErrorList) {
	p := &parser{lines: lines, toks: tokenize(src)}
	p.tok = p.toks[0]
	var decls []*declAST
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fileBail); !ok {
					panic(r)
				}
			}
		}()
		for p.tok.kind != tEOF {
			if d := p.declOrSync(); d != nil {
				decls = append(decls, d)
			}
		}
	}()
	return decls, p.errs
}

func (p *parser) declOrSync() (d *declAST) {
	start := p.i
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(declBail); !ok {
				panic(r)
			}
			d = nil
			if p.i == start {
				p.next() // always make progress
			}
			p.sync()
		}
	}()
	p.depth = 0
	return p.decl()
}

// sync skips to the next declaration keyword outside any braces.
func (p *parser) sync() {
	for p.tok.kind != tEOF {
		if p.depth <= 0 && p.tok.kind == tWord {
			switch p.tok.text {
			case "node", "edge", "interface":
				return
			}
		}
		p.next()
	}
}

func (p *parser) next() {
	switch p.tok.kind {
	case tLBrace:
		p.depth++
	case tRBrace:
		p.depth--
	case tEOF:
		return
	}
	p.i++
	p.tok = p.toks[p.i]
}

func (p *parser) peek(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func tokSpan(t token) Span { return Span{Start: t.pos, End: t.end} }

// errorAt records an error; it bails out of the whole file after MaxErrors.
func (p *parser) errorAt(sp Span, msg string) {
	if n := len(p.errs); n > 0 {
		// Same-line repeats are one mistake seen twice.
		if last := p.errs[n-1]; p.lines.pos(sp.Start).Line == last.Pos.Line {
			return
		}
	}
	p.errs = append(p.errs, p.lines.newError(ParseError, sp, msg))
	if len(p.errs) >= MaxErrors {
		panic(fileBail{})
	}
}

// fail records an error and abandons the current declaration.
func (p *parser) fail(sp Span, format string, args ...any) {
	p.errorAt(sp, fmt.Sprintf(format, args...))
	panic(declBail{})
}

// failExpected reports "expected X, found Y" at the current token; a lexical
// error at that token is reported instead, as it is the real cause.
func (p *parser) failExpected(what string) {
	if p.tok.kind == tIllegal {
		p.fail(tokSpan(p.tok), "%s", p.tok.text)
	}
	p.fail(tokSpan(p.tok), "expected %s, found %s", what, p.tok.describe())
}

func (p *parser) expect(k tokKind, what string) token {
	if p.tok.kind != k {
		p.failExpected(what)
	}
	t := p.tok
	p.next()
	return t
}

func (p *parser) isWord(text string) bool { return p.tok.kind == tWord && p.tok.text == text }

func isTypeName(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }
func isIdent(s string) bool    { return s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_') }

func (p *parser) typeName(what string) nameRef {
	if p.tok.kind != tWord || !isTypeName(p.tok.text) {
		p.failExpected(what + " (a capitalized name)")
	}
	n := nameRef{name: p.tok.text, span: tokSpan(p.tok)}
	p.next()
	return n
}

func (p *parser) decl() *declAST {
	if p.tok.kind == tWord {
		switch p.tok.text {
		case "interface":
			return p.interfaceDecl()
		case "node":
			return p.nodeDecl()
		case "edge":
			return p.edgeDecl()
		case "enum":
			p.fail(tokSpan(p.tok), "top-level enum declarations are not supported; write the values inline, e.g. status: enum(open, closed)")
		}
	}
	p.failExpected("declaration (interface, node or edge)")
	return nil
}

// declHead starts a declaration at its keyword: the keyword's span and
// the type name after it (what names it, for the error when it is missing).
func (p *parser) declHead(kind declKind, what string) *declAST {
	d := &declAST{kind: kind, span: tokSpan(p.tok)}
	p.next()
	d.name = p.typeName(what)
	return d
}

func (p *parser) interfaceDecl() *declAST {
	d := p.declHead(declInterface, "interface name")
	if p.tok.kind == tAt {
		p.fail(tokSpan(p.tok), "interfaces take no annotations; annotate their properties instead")
	}
	p.expect(tLBrace, "'{'")
	p.body(d)
	return d
}

func (p *parser) nodeDecl() *declAST {
	d := p.declHead(declNode, "node type name")
	d.annotations = p.headerAnnotations()
	if p.isWord("implements") {
		p.next()
		for {
			d.implements = append(d.implements, p.typeName("interface name"))
			if p.tok.kind != tComma {
				break
			}
			p.next()
		}
		if p.tok.kind == tAt {
			p.fail(tokSpan(p.tok), "node annotations must come before 'implements'")
		}
	}
	if p.tok.kind != tLBrace {
		p.failExpected("'implements' or '{'")
	}
	p.next()
	p.body(d)
	return d
}

func (p *parser) edgeDecl() *declAST {
	d := p.declHead(declEdge, "edge type name")
	p.expect(tColon, "':'")
	d.from = p.typeName("source node type")
	p.expect(tArrow, "'->'")
	d.to = p.typeName("target node type")
	if p.tok.kind == tAt && p.peek(1).kind == tWord && p.peek(1).text == "card" {
		d.card = p.card()
	}
	d.annotations = p.headerAnnotations()
	if p.tok.kind == tLBrace {
		p.next()
		p.body(d)
	}
	return d
}

// headerAnnotations parses type-level annotations. Body-constraint forms
// are not annotations and cannot appear in a header.
func (p *parser) headerAnnotations() []annotationAST {
	var out []annotationAST
	for p.tok.kind == tAt {
		if p.constraintAhead() {
			p.fail(tokSpan(p.tok), "@%s(...) is a body constraint; write it inside the type's braces", p.peek(1).text)
		}
		if p.peek(1).kind == tWord && p.peek(1).text == "card" {
			p.fail(tokSpan(p.tok), "@card must come directly after the edge endpoints, before other annotations")
		}
		out = append(out, p.annotation())
	}
	return out
}

// constraintAhead reports whether the tokens at '@' form a body constraint.
func (p *parser) constraintAhead() bool {
	n := p.peek(1)
	return n.kind == tWord && constraintNames[n.text] && p.peek(2).kind == tLParen
}

// card parses @card(min..max?).
func (p *parser) card() *cardAST {
	start := p.tok.pos
	p.next() // @
	p.next() // card
	p.expect(tLParen, "'(' after @card")
	c := &cardAST{}
	minTok := p.tok
	c.card.Min = p.cardBound()
	p.expect(tDotDot, "'..' in @card(min..max)")
	if p.tok.kind == tRParen {
		c.card.Unbounded = true
	} else {
		maxTok := p.tok
		c.card.Max = p.cardBound()
		if c.card.Min > c.card.Max {
			p.fail(Span{minTok.pos, maxTok.end}, "cardinality min (%d) exceeds max (%d)", c.card.Min, c.card.Max)
		}
	}
	end := p.expect(tRParen, "')'")
	c.span = Span{start, end.end}
	return c
}

func (p *parser) cardBound() int64 {
	if p.tok.kind != tInt || p.tok.text[0] == '-' {
		p.failExpected("non-negative integer")
	}
	v, err := strconv.ParseUint(p.tok.text, 10, 32)
	if err != nil {
		p.fail(tokSpan(p.tok), "invalid cardinality bound %s (must fit in 32 bits)", p.tok.text)
	}
	p.next()
	return int64(v)
}

// body parses declarations up to and including the closing '}'.
func (p *parser) body(d *declAST) {
	for {
		switch {
		case p.tok.kind == tRBrace:
			p.next()
			return
		case p.tok.kind == tAt:
			if !p.constraintAhead() {
				if n := p.peek(1); n.kind == tWord {
					p.fail(tokSpan(p.tok), "expected property declaration or body constraint (@key, @unique, @index, @range, @check), found '@%s'; annotations follow a property's type or the type name", n.text)
				}
				p.failExpected("property declaration or body constraint")
			}
			if d.kind == declInterface {
				p.fail(tokSpan(p.tok), "interfaces cannot declare body constraints; put @key/@unique/@index on the property")
			}
			d.constraints = append(d.constraints, p.constraint())
		case p.tok.kind == tWord:
			d.props = append(d.props, p.prop())
		default:
			p.failExpected("property declaration or '}'")
		}
	}
}

func (p *parser) prop() *propAST {
	if !isIdent(p.tok.text) {
		p.fail(tokSpan(p.tok), "expected property name (starting with a lowercase letter or '_'), found '%s'", p.tok.text)
	}
	pr := &propAST{name: nameRef{name: p.tok.text, span: tokSpan(p.tok)}}
	p.next()
	p.expect(tColon, "':' after property name")
	start := p.tok.pos
	pr.typ = p.typeRef()
	pr.typSpan = Span{start, p.toks[p.i-1].end}
	for p.tok.kind == tAt && !p.constraintAhead() {
		pr.annotations = append(pr.annotations, p.annotation())
	}
	return pr
}

func (p *parser) typeRef() Type {
	var t Type
	switch {
	case p.tok.kind == tLBrack:
		p.next()
		if p.tok.kind == tLBrack {
			p.fail(tokSpan(p.tok), "nested lists are not supported")
		}
		if p.tok.kind != tWord {
			p.failExpected("list element type")
		}
		switch el := p.tok.text; el {
		case "enum":
			p.fail(tokSpan(p.tok), "lists of enum are not supported; use [String]")
		case "Vector":
			p.fail(tokSpan(p.tok), "lists of Vector are not supported")
		case "Blob":
			p.fail(tokSpan(p.tok), "list of Blob is not supported")
		default:
			k, ok := baseKinds[el]
			if !ok {
				p.fail(tokSpan(p.tok), "unknown list element type: %s (expected one of %s)", el, baseTypeList)
			}
			t = Type{Kind: KindList, Elem: k}
		}
		p.next()
		p.expect(tRBrack, "']'")
	case p.isWord("enum") && p.peek(1).kind == tLParen:
		t = p.enumType()
	case p.isWord("Vector"):
		t = p.vectorType()
	case p.tok.kind == tWord:
		k, ok := baseKinds[p.tok.text]
		if !ok {
			p.fail(tokSpan(p.tok), "unknown type: %s (expected one of %s, [T], enum(...) or Vector(N))", p.tok.text, baseTypeList)
		}
		t = Type{Kind: k}
		p.next()
	default:
		p.failExpected("type")
	}
	if p.tok.kind == tQuest {
		t.Nullable = true
		p.next()
	}
	return t
}

const baseTypeList = "String, Bool, I32, I64, U32, U64, F32, F64, Date, DateTime, Blob"

func (p *parser) enumType() Type {
	start := p.tok.pos
	p.next() // enum
	p.next() // (
	var vals []string
	if p.tok.kind == tRParen {
		p.fail(Span{start, p.tok.end}, "enum type must include at least one value")
	}
	for {
		if p.tok.kind != tEnumWord {
			p.failExpected("enum value")
		}
		vals = append(vals, p.tok.text)
		p.next()
		if p.tok.kind != tComma {
			break
		}
		p.next()
	}
	end := p.expect(tRParen, "',' or ')' in enum(...)")
	sort.Strings(vals)
	for i := 1; i < len(vals); i++ {
		if vals[i] == vals[i-1] {
			p.fail(Span{start, end.end}, "enum type cannot include duplicate values")
		}
	}
	return Type{Kind: KindEnum, Enum: vals}
}

func (p *parser) vectorType() Type {
	p.next()
	p.expect(tLParen, "'(' after Vector")
	if p.tok.kind != tInt || p.tok.text[0] == '-' {
		p.failExpected("Vector dimension (a positive integer)")
	}
	dimTok := p.tok
	dim, err := strconv.ParseUint(dimTok.text, 10, 64)
	if err != nil {
		p.fail(tokSpan(dimTok), "Vector dimension %s exceeds maximum supported %d", dimTok.text, math.MaxInt32)
	}
	if dim == 0 {
		p.fail(tokSpan(dimTok), "Vector dimension must be greater than zero")
	}
	if dim > math.MaxInt32 {
		p.fail(tokSpan(dimTok), "Vector dimension %d exceeds maximum supported %d", dim, math.MaxInt32)
	}
	p.next()
	p.expect(tRParen, "')'")
	return Type{Kind: KindVector, Dim: int(dim)}
}

// annotation parses @name or @name(positional, k = literal, ...).
func (p *parser) annotation() annotationAST {
	at := p.expect(tAt, "'@'")
	if p.tok.kind != tWord || !isIdent(p.tok.text) {
		p.failExpected("annotation name")
	}
	a := annotationAST{name: p.tok.text}
	end := p.tok.end
	p.next()
	if p.tok.kind == tLParen {
		p.next()
		if p.tok.kind == tRParen {
			p.failExpected("annotation argument")
		}
		a.args = []Literal{p.literalOrIdent()}
		for p.tok.kind == tComma {
			p.next()
			if p.tok.kind != tWord || !isIdent(p.tok.text) || p.peek(1).kind != tEq {
				p.failExpected("keyword argument (name = value)")
			}
			key := nameRef{name: p.tok.text, span: tokSpan(p.tok)}
			p.next()
			p.next() // =
			if a.kwargs == nil {
				a.kwargs = make(map[string]Literal)
			}
			if _, dup := a.kwargs[key.name]; dup {
				p.fail(key.span, "@%s repeats keyword argument '%s'", a.name, key.name)
			}
			a.kwargs[key.name] = p.literal()
			a.kwSeen = append(a.kwSeen, key)
		}
		end = p.expect(tRParen, "',' or ')'").end
	}
	a.span = Span{at.pos, end}
	return a
}

func (p *parser) literalOrIdent() Literal {
	if p.tok.kind == tWord && p.tok.text != "true" && p.tok.text != "false" {
		l := Literal{Kind: LitIdent, Str: p.tok.text}
		p.next()
		return l
	}
	return p.literal()
}

func (p *parser) literal() Literal {
	t := p.tok
	var l Literal
	switch {
	case t.kind == tString:
		l = Literal{Kind: LitString, Str: t.text}
	case t.kind == tInt:
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			p.fail(tokSpan(t), "invalid integer %s (out of 64-bit range)", t.text)
		}
		l = Literal{Kind: LitInt, Int: v, Str: t.text}
	case t.kind == tFloat:
		l = Literal{Kind: LitFloat, Float: p.float(t), Str: t.text}
	case t.kind == tWord && (t.text == "true" || t.text == "false"):
		l = Literal{Kind: LitBool, Bool: t.text == "true"}
	default:
		p.failExpected("literal (string, number, true or false)")
	}
	p.next()
	return l
}

func (p *parser) float(t token) float64 {
	v, err := strconv.ParseFloat(t.text, 64)
	if err != nil || math.IsInf(v, 0) {
		p.fail(tokSpan(t), "invalid float %s (out of 64-bit range)", t.text)
	}
	return v
}

// number parses a range bound (int or float, possibly negative) as float64.
func (p *parser) number() float64 {
	t := p.tok
	var v float64
	switch t.kind {
	case tInt:
		i, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			p.fail(tokSpan(t), "invalid integer %s (out of 64-bit range)", t.text)
		}
		v = float64(i)
	case tFloat:
		v = p.float(t)
	default:
		p.failExpected("number")
	}
	p.next()
	return v
}

// constraint parses @name(carg, ...) with name in constraintNames.
func (p *parser) constraint() *constraintAST {
	at := p.tok
	p.next()
	c := &constraintAST{name: p.tok.text}
	p.next()
	p.next() // (
	for {
		c.args = append(c.args, p.carg())
		if p.tok.kind != tComma {
			break
		}
		p.next()
	}
	end := p.expect(tRParen, "',' or ')'")
	c.span = Span{at.pos, end.end}
	return c
}

func (p *parser) carg() cargAST {
	start := p.tok.pos
	switch {
	case p.tok.kind == tDotDot:
		// `..max`: an upper bound only. (The reference parser reads this as
		// a minimum; we deliberately do not.)
		p.next()
		v := p.number()
		return cargAST{kind: cargRange, span: Span{start, p.toks[p.i-1].end}, max: &v}
	case (p.tok.kind == tInt || p.tok.kind == tFloat) && p.peek(1).kind == tDotDot:
		lo := p.number()
		p.next() // ..
		c := cargAST{kind: cargRange, min: &lo}
		if p.tok.kind == tInt || p.tok.kind == tFloat {
			hi := p.number()
			c.max = &hi
		}
		c.span = Span{start, p.toks[p.i-1].end}
		return c
	case p.tok.kind == tWord && p.tok.text != "true" && p.tok.text != "false":
		c := cargAST{kind: cargIdent, span: tokSpan(p.tok), ident: p.tok.text}
		p.next()
		return c
	}
	l := p.literal()
	return cargAST{kind: cargLiteral, span: Span{start, p.toks[p.i-1].end}, lit: l}
}
