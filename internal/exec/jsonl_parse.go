package exec

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/omnigraph-go/omnigraph/internal/value"
)

// lineParser is a strict RFC 8259 parser for one JSONL line. It exists
// instead of encoding/json's token API for two reasons: it sees duplicate
// object members (which json.Unmarshal silently collapses), and it is an
// order of magnitude cheaper per token, which dominates bulk loads.
//
// Values come back as nil, bool, string, json.Number, []any, and objects as
// []jsonMember (input order kept) at any depth reached through objects, or
// map[string]any when nested inside an array.
type lineParser struct {
	b     []byte
	i     int
	depth int
	keys  []string // jsonMember keys from the record down to the current value
	// strictText rejects invalid UTF-8 and lone surrogate escapes in strings
	// (a *jsonTextError) instead of replacing them with U+FFFD as
	// encoding/json does: replaced, two distinct keys would collapse into one.
	// The Reader always sets it.
	strictText bool
	// names, if set, interns object keys and the values of the record's
	// "type" and "edge" members (Reader.names).
	names map[string]string
	// alias lets plain strings of the record's "from" and "to" members
	// point into b instead of being copied out: set only where b is never
	// written again (the parse blocks of eachRecord), so a string stays
	// valid as long as it is held. Holders that keep one (a skeleton, the
	// last source) clone it, so that a block's buffer is not pinned.
	alias bool
	// arena holds the members of the line's objects (object): one slab
	// reused line after line (Reader.arena) instead of a slice per object.
	// Nothing a parsed record or its error holds points into it.
	arena []jsonMember
	// last is the last type name interned (Reader.last), tried before
	// the names map.
	last string
	// recent, if set, holds the last object keys interned below the
	// record (Reader.recent), tried before the names map: a record's data
	// keys are those of the line before, as a rule.
	recent *recentNames
}

// recentNames are the last few names the names map gave, replaced round
// robin.
type recentNames struct {
	names [8]string
	next  int
}

// find returns the interned name b spells, if it is one of r's.
func (r *recentNames) find(b []byte) (string, bool) {
	for _, s := range r.names {
		if len(s) == len(b) && s == string(b) {
			return s, s != ""
		}
	}
	return "", false
}

// add remembers an interned name.
func (r *recentNames) add(s string) {
	r.names[r.next] = s
	r.next = (r.next + 1) % len(r.names)
}

// jsonTextError is a string that is not valid Unicode text; Path names the
// field (for a bad member name, the object holding it).
type jsonTextError struct {
	Offset int
	Path   string
	Msg    string
}

func (e *jsonTextError) Error() string { return e.Msg }

// badText reports invalid text at the current position, or repairs it.
func (p *lineParser) badText(msg string) error {
	return &jsonTextError{Offset: p.i, Path: p.path(""), Msg: msg}
}

// path renders the dotted path of the current value (plus key, if not
// empty). Built only for errors: concatenating per jsonMember would dominate.
func (p *lineParser) path(key string) string {
	parts := p.keys
	if key != "" {
		parts = append(parts[:len(parts):len(parts)], key)
	}
	return strings.Join(parts, ".")
}

func (p *lineParser) fail(format string, args ...any) error {
	return &jsonSyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *lineParser) unexpected(what string) error {
	if p.i >= len(p.b) {
		return &jsonSyntaxError{Offset: p.i, Msg: "unexpected end of line"}
	}
	r, _ := utf8.DecodeRune(p.b[p.i:])
	return p.fail("invalid character %q %s", r, what)
}

func (p *lineParser) skipSpace() {
	// One comparison for the usual case, a non-space byte (every byte a
	// JSON space is ≤ ' '; compact lines have none).
	for p.i < len(p.b) && p.b[p.i] <= ' ' {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// record parses the first value of the line. kind is "object" when it is
// an object (members hold it); otherwise it names the JSON type found.
// The caller checks that nothing follows.
func (p *lineParser) record() (members []jsonMember, kind string, err error) {
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] != '{' {
		v, err := p.value(false)
		if err != nil {
			return nil, "", err
		}
		return nil, value.JSONTypeName(v), nil
	}
	if p.i >= len(p.b) {
		return nil, "", p.unexpected("")
	}
	p.i++ // '{'
	members, err = p.object()
	if err != nil {
		return nil, "", err
	}
	return members, "object", nil
}

// object parses members after a consumed '{'.
func (p *lineParser) object() ([]jsonMember, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxJSONDepth {
		return nil, &jsonDepthError{Path: p.path("")}
	}
	var seen map[string]struct{}
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return nil, nil
	}
	// Records and their data hold a handful of members: gathered on the
	// stack, then copied into the arena once the object is complete (a
	// nested object is parsed in between).
	var local [8]jsonMember
	members := local[:0]
	for {
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.unexpected("looking for beginning of object key string")
		}
		p.i++
		key, err := p.name()
		if err != nil {
			return nil, err
		}
		// Linear scan for the usual handful of members; a set once objects
		// grow, so a hostile line with a million keys stays linear.
		dup := false
		if seen != nil {
			_, dup = seen[key]
			seen[key] = struct{}{}
		} else {
			for _, m := range members {
				if m.key == key {
					dup = true
					break
				}
			}
			if len(members) >= 16 {
				seen = make(map[string]struct{}, 2*len(members))
				for _, m := range members {
					seen[m.key] = struct{}{}
				}
				seen[key] = struct{}{}
			}
		}
		if dup {
			return nil, &jsonDuplicateError{Path: p.path(key)}
		}
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.unexpected("after object key")
		}
		p.i++
		p.keys = append(p.keys, key)
		// A plain string is kept unboxed in the member (str): the envelope
		// reads it as a string, and only a property value is boxed, once,
		// when it is converted.
		m := jsonMember{key: key}
		p.skipSpace()
		var c byte
		if p.i < len(p.b) {
			c = p.b[p.i]
		}
		switch {
		case c == '"':
			p.i++
			m.isStr = true
			switch {
			case p.depth == 1 && (key == "type" || key == "edge"):
				m.str, err = p.name()
			case p.alias && ((p.depth == 1 && (key == "from" || key == "to")) || p.depth == 2):
				// An edge's endpoint or a data value: a view for the
				// typed path, copied if boxed (jsonMember.value).
				m.str, m.view, err = p.aliasStr()
			default:
				m.str, err = p.str()
			}
		case c == '-' || (c >= '0' && c <= '9'):
			// The literal as a view of the line: jsonMember.value copies it.
			var n string
			n, err = p.numberView()
			m.isNum, m.str, m.view = true, n, true
		default:
			m.val, err = p.value(false)
		}
		p.keys = p.keys[:len(p.keys)-1]
		if err != nil {
			return nil, err
		}
		members = append(members, m)
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.unexpected("")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			start := len(p.arena)
			p.arena = append(p.arena, members...)
			return p.arena[start:len(p.arena):len(p.arena)], nil
		default:
			return nil, p.unexpected("after object key:value pair")
		}
	}
}

// value parses any JSON value. inArray selects the map form for objects.
func (p *lineParser) value(inArray bool) (any, error) {
	p.skipSpace()
	if p.i >= len(p.b) {
		return nil, p.unexpected("")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		ms, err := p.object()
		if err != nil {
			return nil, err
		}
		if inArray {
			return membersToMap(ms), nil
		}
		return ms, nil
	case c == '[':
		p.i++
		return p.array()
	case c == '"':
		p.i++
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.unexpected("looking for beginning of value")
}

// name parses a string body after the opening quote, returning the
// interned copy when the bytes spell a known name (no escapes): the same
// string str would return, without allocating it.
func (p *lineParser) name() (string, error) {
	start := p.i
	for i := start; i < len(p.b); i++ {
		c := p.b[i]
		if c == '"' {
			if s, ok := envelopeName(p.b[start:i]); ok && p.names != nil {
				p.i = i + 1
				return s, nil
			}
			if p.last != "" && string(p.b[start:i]) == p.last {
				// Lines come in runs of one type: no hashing for the
				// name the previous line had.
				p.i = i + 1
				return p.last, nil
			}
			if p.recent != nil && p.depth > 1 {
				if s, ok := p.recent.find(p.b[start:i]); ok {
					p.i = i + 1
					return s, nil
				}
			}
			if s, ok := p.names[string(p.b[start:i])]; ok {
				if p.depth == 1 {
					p.last = s // a record's type name (keys are envelope names)
				} else if p.recent != nil {
					p.recent.add(s)
				}
				p.i = i + 1
				return s, nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	return p.str()
}

// envelopeName returns the interned envelope field name b spells, if it
// is one: every line has two to four of them, and comparing bytes is
// cheaper than hashing them for the names map (which holds them too).
func envelopeName(b []byte) (string, bool) {
	switch len(b) {
	case 2:
		if string(b) == "to" {
			return "to", true
		}
		if string(b) == "id" {
			return "id", true
		}
	case 4:
		switch string(b) {
		case "type":
			return "type", true
		case "edge":
			return "edge", true
		case "from":
			return "from", true
		case "data":
			return "data", true
		}
	}
	return "", false
}

func (p *lineParser) literal(word string) error {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return nil
	}
	// Point at the first differing byte, as encoding/json does.
	for j := 0; j < len(word); j++ {
		if p.i >= len(p.b) || p.b[p.i] != word[j] {
			return p.unexpected("in literal " + word)
		}
		p.i++
	}
	return nil
}

func (p *lineParser) array() ([]any, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxJSONDepth {
		return nil, &jsonDepthError{Path: p.path("")}
	}
	arr := []any{}
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return arr, nil
	}
	for {
		v, err := p.value(true)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.unexpected("")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return arr, nil
		default:
			return nil, p.unexpected("after array element")
		}
	}
}

func jsonIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and returns
// its text: conversion to a typed value needs the literal, not a float.
func (p *lineParser) number() (json.Number, error) {
	s, err := p.numberView()
	return json.Number(strings.Clone(s)), err
}

// numberView is number as a view of b (valid while b is).
func (p *lineParser) numberView() (string, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && jsonIsDigit(p.b[p.i]):
		for p.i < len(p.b) && jsonIsDigit(p.b[p.i]) {
			p.i++
		}
	default:
		return "", p.unexpected("in numeric literal")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.i >= len(p.b) || !jsonIsDigit(p.b[p.i]) {
			return "", p.unexpected("after decimal point in numeric literal")
		}
		for p.i < len(p.b) && jsonIsDigit(p.b[p.i]) {
			p.i++
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.b) || !jsonIsDigit(p.b[p.i]) {
			return "", p.unexpected("in exponent of numeric literal")
		}
		for p.i < len(p.b) && jsonIsDigit(p.b[p.i]) {
			p.i++
		}
	}
	return unsafe.String(&p.b[start], p.i-start), nil
}

// aliasStr is str for a string without escapes, returned as a view of b
// (view set; p.alias: b is immutable); one with escapes is copied out by
// str.
func (p *lineParser) aliasStr() (s string, view bool, err error) {
	start := p.i
	var high byte // OR of the bytes: ASCII (high < 0x80) is valid UTF-8
	for i := start; i < len(p.b); i++ {
		c := p.b[i]
		high |= c
		if c == '"' {
			b := p.b[start:i]
			if high >= utf8.RuneSelf && !utf8.Valid(b) {
				break // str reports (or repairs) it
			}
			p.i = i + 1
			if len(b) == 0 {
				return "", false, nil
			}
			return unsafe.String(&b[0], len(b)), true, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	s, err = p.str()
	return s, false, err
}

// str parses a string body after the opening quote. Invalid UTF-8 and lone
// surrogates become U+FFFD, as with encoding/json.
func (p *lineParser) str() (string, error) {
	start := p.i
	// Fast path: no escapes (and no UTF-8 check for ASCII, as aliasStr).
	var high byte
	for p.i < len(p.b) {
		c := p.b[p.i]
		high |= c
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if high >= utf8.RuneSelf && !utf8.Valid(s) {
				if p.strictText {
					return "", p.badText("invalid UTF-8 in string")
				}
				return fixUTF8(string(s)), nil
			}
			return string(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	var sb strings.Builder
	sb.Write(p.b[start:p.i])
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			s := sb.String()
			if !utf8.ValidString(s) {
				if p.strictText {
					return "", p.badText("invalid UTF-8 in string")
				}
				s = fixUTF8(s)
			}
			return s, nil
		case c < 0x20:
			return "", p.fail("invalid character %q in string literal", rune(c))
		case c != '\\':
			sb.WriteByte(c)
			p.i++
			continue
		}
		p.i++ // backslash
		if p.i >= len(p.b) {
			break
		}
		esc := p.b[p.i]
		p.i++
		switch esc {
		case '"', '\\', '/':
			sb.WriteByte(esc)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("invalid \\u escape in string literal")
			}
			if utf16.IsSurrogate(r) {
				// A high surrogate must pair with a following low one.
				save := p.i
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					if r2, ok := p.hex4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							sb.WriteRune(dec)
							continue
						}
					}
				}
				p.i = save
				if p.strictText {
					return "", p.badText(fmt.Sprintf("lone surrogate \\u%04X in string (not a Unicode character)", r))
				}
				r = utf8.RuneError
			}
			sb.WriteRune(r)
		default:
			p.i--
			return "", p.unexpected("in string escape code")
		}
	}
	return "", p.unexpected("")
}

func (p *lineParser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// fixUTF8 replaces every byte of an invalid UTF-8 sequence with U+FFFD, the
// same repair encoding/json applies (strings.ToValidUTF8 would fold a run
// into one replacement and so decode differently).
func fixUTF8(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			sb.WriteString("\uFFFD")
		} else {
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	return sb.String()
}
