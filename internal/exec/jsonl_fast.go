package exec

import "unsafe"

// fastEdgeLine parses the commonest line of a bulk load, an edge without
// data — {"edge":"T","from":"a","to":"b"} in any member order, with any
// JSON whitespace between tokens — without the general parser: about a
// fifth of its cost per line, and edges are most of a graph's lines.
//
// It accepts a strict subset of what parseLine accepts: every member key
// and value a plain string of printable ASCII without escapes (so no
// UTF-8 or escape decoding can differ), each of the three members exactly
// once, nothing else in the object and nothing after it. On such a line
// it returns what parseLine returns, since both end in the same
// edgeRecord call with the same strings; on any other line ok is false
// and the caller parses it the general way (which also reports every
// error of syntax or shape). Endpoints are views of line, so it is used
// only where lines are never written again (Reader.alias).
func (r *Reader) fastEdgeLine(line []byte) (rec Record, ok bool, err error) {
	var name, from, to string
	var have uint8 // bit 0 edge, 1 from, 2 to
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
		val, j, good := fastPlainString(line, fastSpace(line, i+1))
		if !good {
			return nil, false, nil
		}
		var bit uint8
		switch key {
		case "edge":
			bit, name = 1, val
		case "from":
			bit, from = 2, val
		case "to":
			bit, to = 4, val
		default:
			return nil, false, nil
		}
		if have&bit != 0 {
			return nil, false, nil // a duplicate member: parseLine's error
		}
		have |= bit
		i = fastSpace(line, j)
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
	if have != 7 || fastSpace(line, i+1) != len(line) {
		return nil, false, nil
	}
	rec, err = r.edgeRecord(name, from, to, nil)
	return rec, true, err
}

// fastSpace returns the index of the first byte at or after i that is
// not JSON whitespace.
func fastSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
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
	for j := start; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			if j == start {
				return "", j + 1, true
			}
			return unsafe.String(&b[start], j-start), j + 1, true
		}
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return "", 0, false
		}
	}
	return "", 0, false
}
