package exec

import (
	"strings"
	"unsafe"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// fastMaxData bounds the members of a data object the fast path takes:
// its duplicate test is a linear scan (the general parser switches to a
// set past 16), and records with more properties are rare.
const fastMaxData = 32

// fastLine parses the common lines of a bulk load without the general
// parser: a node {"type":"T","data":{...}} or an edge
// {"edge":"T","from":"a","to":"b"} with or without "data", in any member
// order and with any JSON whitespace between tokens — about a fifth of
// the general parser's cost for an edge without data, and about 40 % less
// than it for a node, whose typed conversion both share
// (BenchmarkParseNodeLine).
//
// It accepts a strict subset of what parseLine accepts: every envelope
// member exactly once, the envelope's keys and string values and every
// key of data plain strings of printable ASCII without escapes (so no
// UTF-8 or escape decoding can differ), data flat — each value such a
// string, a number (the literal numberView takes, the general parser's own
// scanner), true, false or null — with no key twice, and nothing after
// the object. On such a line it fills the data members exactly as
// lineParser.object does (the same keys, interned; strings and number
// literals as views of line, the empty string not) and ends in the same
// nodeRecord or edgeRecord call, so it returns what parseLine returns,
// errors included; on any other line ok is false and the caller parses
// it the general way (which also reports every error of syntax or
// shape). Views of line are kept, so it is used only where lines are
// never written again (Reader.alias).
func (r *Reader) fastLine(line []byte) (rec Record, ok bool, err error) {
	var name, from, to string
	var data []jsonMember
	var have uint8 // bit 0 type, 1 edge, 2 from, 3 to, 4 data
	i := fastSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, false, nil
	}
	i++
	for {
		i = fastSpace(line, i)
		key, j, good := fastPlainString(line, i)
		if !good {
			return nil, false, nil
		}
		i = fastSpace(line, j)
		if i >= len(line) || line[i] != ':' {
			return nil, false, nil
		}
		i = fastSpace(line, i+1)
		var bit uint8
		switch key {
		case "type", "edge":
			bit = 1
			if key == "edge" {
				bit = 2
			}
			name, i, good = fastPlainString(line, i)
		case "from":
			bit = 4
			from, i, good = fastPlainString(line, i)
		case "to":
			bit = 8
			to, i, good = fastPlainString(line, i)
		case "data":
			bit = 16
			if have&bit == 0 {
				// In the line parser's scratch: nothing a record or its
				// error holds points into it.
				data, i, good = fastData(line, i, r.arena[:0])
				r.arena = data[:0]
			}
		default:
			return nil, false, nil
		}
		if !good || have&bit != 0 {
			return nil, false, nil // a duplicate member: parseLine's error
		}
		have |= bit
		i = fastSpace(line, i)
		if i >= len(line) {
			return nil, false, nil
		}
		if line[i] == '}' {
			break
		}
		if line[i] != ',' {
			return nil, false, nil
		}
		i++
	}
	if fastSpace(line, i+1) != len(line) {
		return nil, false, nil
	}
	// The data keys are interned against the properties of the type the
	// record will have; for an unknown type the record is an error that
	// reads no key.
	switch have &^ 16 {
	case 1:
		if len(data) > 0 {
			if nt, _, found := r.nodeType(name); found {
				fastKeys(data, nt.Props)
			}
		}
		rec, err = r.nodeRecord(name, data)
	case 2 | 4 | 8:
		if len(data) > 0 {
			if et, _, found := r.edgeType(name); found {
				fastKeys(data, et.Props)
			}
		}
		rec, err = r.edgeRecord(name, from, to, data)
	default:
		return nil, false, nil
	}
	return rec, true, err
}

// fastData reads the flat data object starting at b[i] (its opening
// brace) into ms, as fastLine describes, returning the index after its
// closing brace; ok is false for anything else. Keys are views of b
// until fastKeys interns them.
func fastData(b []byte, i int, ms []jsonMember) (_ []jsonMember, next int, ok bool) {
	if i >= len(b) || b[i] != '{' {
		return ms, 0, false
	}
	i = fastSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return ms, i + 1, true
	}
	for {
		key, j, good := fastPlainString(b, i)
		if !good || len(ms) == fastMaxData {
			return ms, 0, false
		}
		for k := range ms {
			if ms[k].key == key {
				return ms, 0, false // a duplicate: the general parser's error
			}
		}
		i = fastSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return ms, 0, false
		}
		i = fastSpace(b, i+1)
		if i >= len(b) {
			return ms, 0, false
		}
		m := jsonMember{key: key}
		switch c := b[i]; {
		case c == '"':
			// aliasStr's result: a view, but the empty string is none.
			m.str, i, good = fastPlainString(b, i)
			m.isStr, m.view = true, m.str != ""
		case c == '-' || (c >= '0' && c <= '9'):
			p := lineParser{b: b, i: i}
			var err error
			m.str, err = p.numberView()
			m.isNum, m.view, i, good = true, true, p.i, err == nil
		case c == 't':
			m.val, good = true, fastWord(b, i, "true")
			i += 4
		case c == 'f':
			m.val, good = false, fastWord(b, i, "false")
			i += 5
		case c == 'n':
			good = fastWord(b, i, "null")
			i += 4
		default:
			good = false
		}
		if !good {
			return ms, 0, false
		}
		ms = append(ms, m)
		i = fastSpace(b, i)
		if i >= len(b) {
			return ms, 0, false
		}
		if b[i] == '}' {
			return ms, i + 1, true
		}
		if b[i] != ',' {
			return ms, 0, false
		}
		i = fastSpace(b, i+1)
	}
}

// fastKeys replaces the data keys fastData left as views of the line with
// strings equal to those lineParser.name gives and, like them, no view of
// the line: a property's own name, "id", or a copy (a key no property
// has, which only an error reports).
func fastKeys(ms []jsonMember, props []*schema.Property) {
	next := 0 // as typedValues: the property after the last one found first
members:
	for i := range ms {
		k := ms[i].key
		if k == "id" {
			ms[i].key = "id"
			continue
		}
		if next < len(props) && props[next].Name == k {
			ms[i].key = props[next].Name
			next++
			continue
		}
		for j, p := range props {
			if p.Name == k {
				ms[i].key = p.Name
				next = j + 1
				continue members
			}
		}
		ms[i].key = strings.Clone(k)
	}
}

// fastWord reports whether b holds word at i.
func fastWord(b []byte, i int, word string) bool {
	return len(b)-i >= len(word) && string(b[i:i+len(word)]) == word
}

// fastSpace returns the index of the first byte at or after i that is
// not JSON whitespace.
func fastSpace(b []byte, i int) int {
	// One comparison for the usual byte, not a space (lineParser.skipSpace).
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// fastPlainString reads the string starting at b[i] (its opening quote)
// when every byte of its body is printable ASCII other than a backslash,
// returning the body as a view of b and the index after the closing
// quote; ok is false for anything else.
func fastPlainString(b []byte, i int) (s string, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	start := i + 1
	j := start
	for j < len(b) && plainByte[b[j]] {
		j++
	}
	if j >= len(b) || b[j] != '"' {
		return "", 0, false
	}
	if j == start {
		return "", j + 1, true
	}
	return unsafe.String(&b[start], j-start), j + 1, true
}

// plainByte holds the bytes a plain string's body may hold: printable
// ASCII (and DEL) but the quote and the backslash. A table, one load a
// byte, where four comparisons were (a read-only constant: never written
// after its initialisation). Eight bytes at a time (SWAR) measured no
// better on these short strings.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
