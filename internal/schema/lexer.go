package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StringEscape returns the byte the escape sequence \e stands for in a
// string literal: \" \\ \n \r \t, the same in .pg and .gq sources
// (spec/languages.md); any other e is not an escape.
func StringEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\':
		return e, true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// tokKind is the lexical class of a token.
type tokKind uint8

const (
	tEOF      tokKind = iota
	tIllegal          // lexical error; tok.text holds the message
	tWord             // [A-Za-z_][A-Za-z0-9_]*: keywords, type names, idents
	tEnumWord         // [A-Za-z0-9_-]+ inside enum( ... )
	tInt              // -?[0-9]+
	tFloat            // -?[0-9]+.[0-9]+
	tString           // "..." (text holds the decoded value)
	tLBrace
	tRBrace
	tLParen
	tRParen
	tLBrack
	tRBrack
	tColon
	tComma
	tArrow  // ->
	tDotDot // ..
	tQuest  // ?
	tAt     // @
	tEq     // =
)

var tokNames = [...]string{
	tEOF: "end of file", tIllegal: "illegal token", tWord: "identifier", tEnumWord: "enum value",
	tInt: "integer", tFloat: "float", tString: "string",
	tLBrace: "'{'", tRBrace: "'}'", tLParen: "'('", tRParen: "')'", tLBrack: "'['", tRBrack: "']'",
	tColon: "':'", tComma: "','", tArrow: "'->'", tDotDot: "'..'", tQuest: "'?'", tAt: "'@'", tEq: "'='",
}

func (k tokKind) String() string { return tokNames[k] }

// token is one lexeme with its byte span [pos, end).
type token struct {
	kind tokKind
	pos  int
	end  int
	text string // source text; decoded value for strings; message for tIllegal
}

// describe renders the token for "expected X, found Y" messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tWord, tEnumWord:
		return "'" + t.text + "'"
	case tInt, tFloat:
		return t.kind.String() + " " + t.text
	case tString:
		return "string " + strconv.Quote(t.text)
	}
	return t.kind.String()
}

// MaxIdentBytes bounds identifiers and enum values. Type names become
// object-store key segments (tables/node-<Type>/…) and column names, so
// they must stay far below file-name limits (255 bytes); 128 is generous
// for names people write and keeps every error message short.
const MaxIdentBytes = 128

// tooLong is the illegal token for an over-long identifier: its message
// gives the length, never the text.
func tooLong(what string, start, end int) token {
	return token{kind: tIllegal, pos: start, end: start + 1,
		text: fmt.Sprintf("%s is %d bytes long; at most %d are allowed", what, end-start, MaxIdentBytes)}
}

// maxSourceBytes bounds the input so that tokenizing a hostile or accidental
// huge file cannot exhaust memory; real schemas are tens of kilobytes.
const maxSourceBytes = 1 << 20

// lexer turns .pg source into tokens. It is a scanner with one piece of
// state: after `enum (` it reads enum values, which may contain '-' and
// start with digits, until the closing ')'.
type lexer struct {
	src    string
	off    int
	inEnum bool
	prevW  string // text of the previous token if it was a word, to spot `enum (`
}

// tokenize scans the whole source. Lexical errors become tIllegal tokens so
// the parser reports them where it meets them.
func tokenize(src string) []token {
	lx := &lexer{src: src}
	toks := make([]token, 0, len(src)/4+1)
	for {
		t := lx.next()
		toks = append(toks, t)
		if t.kind == tEOF {
			return toks
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (lx *lexer) next() token {
	if t, ok := lx.skipSpace(); !ok {
		return t
	}
	t := lx.scan()
	// Track `enum (` so enum values lex as bare words.
	switch {
	case t.kind == tLParen && lx.prevW == "enum":
		lx.inEnum = true
	case t.kind == tRParen:
		lx.inEnum = false
	}
	lx.prevW = ""
	if t.kind == tWord {
		lx.prevW = t.text
	}
	return t
}

// skipSpace skips whitespace and comments. It returns ok=false with an
// illegal token for an unterminated block comment.
func (lx *lexer) skipSpace() (token, bool) {
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			lx.off++
		case strings.HasPrefix(lx.src[lx.off:], "//"):
			if i := strings.IndexByte(lx.src[lx.off:], '\n'); i >= 0 {
				lx.off += i + 1
			} else {
				lx.off = len(lx.src)
			}
		case strings.HasPrefix(lx.src[lx.off:], "/*"):
			i := strings.Index(lx.src[lx.off+2:], "*/")
			if i < 0 {
				start := lx.off
				lx.off = len(lx.src)
				return token{kind: tIllegal, pos: start, end: start + 2, text: "unterminated block comment"}, false
			}
			lx.off += i + 4
		default:
			return token{}, true
		}
	}
	return token{}, true
}

func (lx *lexer) scan() token {
	start := lx.off
	if start >= len(lx.src) {
		return token{kind: tEOF, pos: start, end: start}
	}
	c := lx.src[start]
	if lx.inEnum && (isLetter(c) || isDigit(c) || c == '-') {
		end := start
		for end < len(lx.src) && (isLetter(lx.src[end]) || isDigit(lx.src[end]) || lx.src[end] == '-') {
			end++
		}
		lx.off = end
		if end-start > MaxIdentBytes {
			return tooLong("enum value", start, end)
		}
		return token{kind: tEnumWord, pos: start, end: end, text: lx.src[start:end]}
	}
	simple := func(k tokKind, n int) token {
		lx.off += n
		return token{kind: k, pos: start, end: start + n, text: lx.src[start : start+n]}
	}
	switch {
	case isLetter(c):
		end := start + 1
		for end < len(lx.src) && (isLetter(lx.src[end]) || isDigit(lx.src[end])) {
			end++
		}
		lx.off = end
		if end-start > MaxIdentBytes {
			return tooLong("identifier", start, end)
		}
		return token{kind: tWord, pos: start, end: end, text: lx.src[start:end]}
	case isDigit(c) || c == '-' && start+1 < len(lx.src) && isDigit(lx.src[start+1]):
		return lx.number()
	case c == '"':
		return lx.str()
	}
	switch c {
	case '{':
		return simple(tLBrace, 1)
	case '}':
		return simple(tRBrace, 1)
	case '(':
		return simple(tLParen, 1)
	case ')':
		return simple(tRParen, 1)
	case '[':
		return simple(tLBrack, 1)
	case ']':
		return simple(tRBrack, 1)
	case ':':
		return simple(tColon, 1)
	case ',':
		return simple(tComma, 1)
	case '?':
		return simple(tQuest, 1)
	case '@':
		return simple(tAt, 1)
	case '=':
		return simple(tEq, 1)
	case '-':
		if strings.HasPrefix(lx.src[start:], "->") {
			return simple(tArrow, 2)
		}
	case '.':
		if strings.HasPrefix(lx.src[start:], "..") {
			return simple(tDotDot, 2)
		}
	case '#':
		lx.off++
		return token{kind: tIllegal, pos: start, end: start + 1,
			text: "unexpected '#': comments are written // ... or /* ... */"}
	}
	// Report the whole (possibly multi-byte) character.
	r, n := utf8.DecodeRuneInString(lx.src[start:])
	lx.off += n
	return token{kind: tIllegal, pos: start, end: start + n, text: fmt.Sprintf("unexpected character %q", r)}
}

// number scans -?digits or -?digits.digits. A '.' not followed by a digit
// ends the number, so `0..1` lexes as 0, .., 1.
func (lx *lexer) number() token {
	start := lx.off
	end := start
	if lx.src[end] == '-' {
		end++
	}
	for end < len(lx.src) && isDigit(lx.src[end]) {
		end++
	}
	kind := tInt
	if end+1 < len(lx.src) && lx.src[end] == '.' && isDigit(lx.src[end+1]) {
		kind = tFloat
		end++
		for end < len(lx.src) && isDigit(lx.src[end]) {
			end++
		}
	}
	lx.off = end
	return token{kind: kind, pos: start, end: end, text: lx.src[start:end]}
}

// str scans a double-quoted string, decoding the five escapes the language
// has. Raw newlines are allowed inside strings.
func (lx *lexer) str() token {
	start := lx.off
	var b strings.Builder
	i := start + 1
	for i < len(lx.src) {
		c := lx.src[i]
		switch c {
		case '"':
			lx.off = i + 1
			return token{kind: tString, pos: start, end: i + 1, text: b.String()}
		case '\\':
			if i+1 >= len(lx.src) {
				i++
				continue
			}
			if r, ok := StringEscape(lx.src[i+1]); ok {
				b.WriteByte(r)
			} else {
				r, n := utf8.DecodeRuneInString(lx.src[i+1:])
				lx.off = lx.skipString(i + 1)
				return token{kind: tIllegal, pos: i, end: i + 1 + n,
					text: fmt.Sprintf("unsupported escape sequence: \\%c", r)}
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	lx.off = len(lx.src)
	return token{kind: tIllegal, pos: start, end: start + 1, text: "unterminated string literal"}
}

// skipString returns the offset just past the closing quote of the string
// containing offset i (or the end of input), so one bad escape yields one
// error rather than a cascade.
func (lx *lexer) skipString(i int) int {
	for i < len(lx.src) {
		switch lx.src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		}
		i++
	}
	return len(lx.src)
}
