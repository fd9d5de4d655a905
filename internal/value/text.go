package value

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalidText: an input string is not valid Unicode text (invalid UTF-8,
// or a \u escape of a lone surrogate). Inputs are refused, never repaired
// with U+FFFD: repaired, two distinct keys would collapse into one.
var ErrInvalidText = errors.New("invalid text")

// TextError locates invalid text in a JSON document.
type TextError struct {
	Line   int    // 1-based line of the offending string
	Field  string // the top-level member it belongs to ("" outside one)
	Offset int    // byte offset in the document
	Msg    string
}

func (e *TextError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d, field '%s': %s", e.Line, e.Field, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalidText) hold.
func (e *TextError) Unwrap() error { return ErrInvalidText }

// CheckJSONText reports the first string of a JSON document that is not
// valid Unicode text, as a *TextError naming its line and top-level field,
// or nil. It checks text only: malformed JSON is left to the decoder, which
// encoding/json callers run next (encoding/json would silently replace what
// this refuses).
func CheckJSONText(data []byte) error {
	depth, line, field, lastStr := 0, 1, "", ""
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ':':
			if depth == 1 {
				field = lastStr
			}
		case '"':
			s, end, msg := scanString(data, i+1)
			if msg != "" {
				f := field
				if depth == 1 && end < len(data) && nextNonSpace(data, end) == ':' {
					f = "" // the bad string is a member name
				}
				return &TextError{Line: line, Field: f, Offset: i, Msg: msg}
			}
			lastStr, i = s, end-1
		}
	}
	return nil
}

func nextNonSpace(b []byte, i int) byte {
	for ; i < len(b); i++ {
		if c := b[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c
		}
	}
	return 0
}

// scanString scans a JSON string body starting after its opening quote and
// returns its (undecoded, for keys only) text, the offset after the closing
// quote, and a message if the string is not valid text.
func scanString(b []byte, start int) (string, int, string) {
	i := start
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			if !utf8.Valid(b[start:i]) {
				return "", i + 1, "invalid UTF-8 in string"
			}
			return string(b[start:i]), i + 1, ""
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			r, ok := hex4(b, i+2)
			if ok && utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					r2, ok2 = hex4(b, i+8)
				}
				if !ok2 || utf16.DecodeRune(r, r2) == utf8.RuneError {
					return "", i, fmt.Sprintf("lone surrogate \\u%04X in string (not a Unicode character)", r)
				}
				i += 12
				continue
			}
			i += 2
		case c == '\\':
			i += 2
		default:
			i++
		}
	}
	return "", len(b), "" // unterminated: the decoder reports it
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
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
	return r, true
}
