package query

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// lexer turns .gq source into tokens with byte spans. It runs to completion
// before parsing (queries are small) so the parser can look ahead freely.
type lexer struct {
	src  string
	pos  int
	toks []token
	errs []lexErr
}

type lexErr struct {
	span Span
	msg  string
}

func lex(src string) ([]token, []lexErr) {
	lx := &lexer{src: src, toks: make([]token, 0, len(src)/5+1)}
	if !utf8.ValidString(src) {
		// Never replaced silently: strings differing only in invalid bytes
		// would otherwise compare equal. One error, at the first bad byte.
		for i := 0; i < len(src); {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && n == 1 {
				lx.errorf(i, i+1, "invalid UTF-8 (byte 0x%02x); query sources must be UTF-8", src[i])
				break
			}
			i += n
		}
		// Nothing of such a file compiles: no query may run from it.
		return []token{{kind: tEOF, span: Span{len(src), len(src)}}}, lx.errs
	}
	for {
		t := lx.next()
		lx.toks = append(lx.toks, t)
		if t.kind == tEOF {
			return lx.toks, lx.errs
		}
	}
}

func (lx *lexer) errorf(start, end int, format string, args ...any) token {
	sp := Span{start, end}
	lx.errs = append(lx.errs, lexErr{span: sp, msg: fmt.Sprintf(format, args...)})
	return token{kind: tIllegal, span: sp}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipSpace skips whitespace and comments. An unterminated block comment
// runs to end of input and is reported.
func (lx *lexer) skipSpace() {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			lx.pos++
		case c == '/' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '/':
			i := strings.IndexByte(lx.src[lx.pos:], '\n')
			if i < 0 {
				lx.pos = len(lx.src)
			} else {
				lx.pos += i + 1
			}
		case c == '/' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == '*':
			i := strings.Index(lx.src[lx.pos+2:], "*/")
			if i < 0 {
				lx.errorf(lx.pos, lx.pos+2, "unterminated block comment")
				lx.pos = len(lx.src)
			} else {
				lx.pos += i + 4
			}
		default:
			return
		}
	}
}

func (lx *lexer) next() token {
	lx.skipSpace()
	start := lx.pos
	if start >= len(lx.src) {
		return token{kind: tEOF, span: Span{start, start}}
	}
	c := lx.src[start]
	one := func(k tokKind) token {
		lx.pos++
		return token{kind: k, span: Span{start, start + 1}}
	}
	two := func(k tokKind) token {
		lx.pos += 2
		return token{kind: k, span: Span{start, start + 2}}
	}
	peek := byte(0)
	if start+1 < len(lx.src) {
		peek = lx.src[start+1]
	}
	switch c {
	case '{':
		return one(tLBrace)
	case '}':
		return one(tRBrace)
	case '(':
		return one(tLParen)
	case ')':
		return one(tRParen)
	case '[':
		return one(tLBrack)
	case ']':
		return one(tRBrack)
	case ',':
		return one(tComma)
	case ':':
		return one(tColon)
	case '.':
		return one(tDot)
	case '@':
		return one(tAt)
	case '?':
		return one(tQuestion)
	case '=':
		return one(tEq)
	case '<':
		if peek == '=' {
			return two(tLe)
		}
		return one(tLt)
	case '>':
		if peek == '=' {
			return two(tGe)
		}
		return one(tGt)
	case '!':
		if peek == '=' {
			return two(tNe)
		}
	case '"':
		return lx.lexString()
	case '$':
		lx.pos++
		for lx.pos < len(lx.src) && isWordByte(lx.src[lx.pos]) {
			lx.pos++
		}
		name := lx.src[start+1 : lx.pos]
		if name == "" || isDigit(name[0]) || name[0] >= 'A' && name[0] <= 'Z' {
			return lx.errorf(start, max(lx.pos, start+1), "invalid variable name %q", lx.src[start:lx.pos])
		}
		return token{kind: tVar, span: Span{start, lx.pos}, text: name}
	}
	switch {
	case isDigit(c):
		return lx.lexNumber()
	case isWordByte(c):
		for lx.pos < len(lx.src) && isWordByte(lx.src[lx.pos]) {
			lx.pos++
		}
		w := lx.src[start:lx.pos]
		k := tIdent
		if w[0] >= 'A' && w[0] <= 'Z' {
			k = tTypeName
		}
		return token{kind: k, span: Span{start, lx.pos}, text: w}
	}
	// Consume one whole UTF-8 sequence so the span never splits a rune.
	end := start + 1
	for end < len(lx.src) && lx.src[end]&0xC0 == 0x80 {
		end++
	}
	lx.pos = end
	return lx.errorf(start, end, "unexpected character %q", lx.src[start:end])
}

func (lx *lexer) lexNumber() token {
	start := lx.pos
	for lx.pos < len(lx.src) && isDigit(lx.src[lx.pos]) {
		lx.pos++
	}
	if lx.pos+1 < len(lx.src) && lx.src[lx.pos] == '.' && isDigit(lx.src[lx.pos+1]) {
		lx.pos++
		for lx.pos < len(lx.src) && isDigit(lx.src[lx.pos]) {
			lx.pos++
		}
		text := lx.src[start:lx.pos]
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return lx.errorf(start, lx.pos, "invalid float %s", text)
		}
		return token{kind: tFloat, span: Span{start, lx.pos}, text: text, fval: f}
	}
	text := lx.src[start:lx.pos]
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return lx.errorf(start, lx.pos, "invalid integer %s", text)
	}
	return token{kind: tInt, span: Span{start, lx.pos}, text: text, ival: v}
}

func (lx *lexer) lexString() token {
	start := lx.pos
	lx.pos++ // opening quote
	var b strings.Builder
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch c {
		case '"':
			lx.pos++
			return token{kind: tString, span: Span{start, lx.pos}, text: b.String()}
		case '\\':
			if lx.pos+1 >= len(lx.src) {
				lx.pos++
				return lx.errorf(start, lx.pos, "unterminated string literal")
			}
			if r, ok := schema.StringEscape(lx.src[lx.pos+1]); ok {
				b.WriteByte(r)
			} else {
				escStart := lx.pos
				lx.pos += 2
				// Skip to the closing quote so one bad escape is one error.
				for lx.pos < len(lx.src) && lx.src[lx.pos] != '"' && lx.src[lx.pos] != '\n' {
					if lx.src[lx.pos] == '\\' {
						lx.pos++
					}
					lx.pos++
				}
				if lx.pos < len(lx.src) && lx.src[lx.pos] == '"' {
					lx.pos++
				}
				lx.pos = min(lx.pos, len(lx.src))
				r, size := utf8.DecodeRuneInString(lx.src[escStart+1:])
				return lx.errorf(escStart, escStart+1+size, "unsupported escape sequence: \\%c", r)
			}
			lx.pos += 2
		default:
			b.WriteByte(c)
			lx.pos++
		}
	}
	return lx.errorf(start, lx.pos, "unterminated string literal")
}
