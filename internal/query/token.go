package query

import "fmt"

// Span is a half-open byte range [Start, End) in the source text.
type Span struct{ Start, End int }

// tokKind classifies a lexical token.
type tokKind uint8

const (
	tEOF      tokKind = iota
	tIllegal          // lexical error already reported
	tIdent            // [a-z_][A-Za-z0-9_]*
	tTypeName         // [A-Z][A-Za-z0-9_]*
	tVar              // $ident or $_ ; text excludes the '$'
	tString           // text is the unescaped value
	tInt
	tFloat
	tLBrace
	tRBrace
	tLParen
	tRParen
	tLBrack
	tRBrack
	tComma
	tColon
	tDot
	tAt
	tQuestion
	tLt
	tLe
	tGt
	tGe
	tEq
	tNe
)

var tokNames = [...]string{
	tEOF: "end of input", tIllegal: "illegal token", tIdent: "identifier", tTypeName: "type name",
	tVar: "variable", tString: "string", tInt: "integer", tFloat: "float",
	tLBrace: `"{"`, tRBrace: `"}"`, tLParen: `"("`, tRParen: `")"`, tLBrack: `"["`, tRBrack: `"]"`,
	tComma: `","`, tColon: `":"`, tDot: `"."`, tAt: `"@"`, tQuestion: `"?"`,
	tLt: `"<"`, tLe: `"<="`, tGt: `">"`, tGe: `">="`, tEq: `"="`, tNe: `"!="`,
}

func (k tokKind) String() string {
	if int(k) < len(tokNames) {
		return tokNames[k]
	}
	return fmt.Sprintf("token(%d)", k)
}

// token is one lexeme. Text is the identifier/variable name, the unescaped
// string value, or the digits of a number.
type token struct {
	kind tokKind
	span Span
	text string
	ival int64
	fval float64
}

// describe renders a token for "found Y" in error messages.
func (t token) describe() string {
	switch t.kind {
	case tIdent, tTypeName:
		return fmt.Sprintf("%q", t.text)
	case tVar:
		return fmt.Sprintf("%q", "$"+t.text)
	case tString:
		return "string " + fmt.Sprintf("%q", t.text)
	case tInt, tFloat:
		return t.kind.String() + " " + t.text
	}
	return t.kind.String()
}
