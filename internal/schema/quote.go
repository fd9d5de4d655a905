package schema

import (
	"fmt"
	"strings"
)

// escapes maps a byte to the escape that replaces it inside a quoted
// string; a byte without an entry is written as is.
type escapes [0x5d]string // up to '\\'

// pgEscapes are the only escapes a .pg string literal accepts.
var pgEscapes = escapes{'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

// jsonEscapes are the reference implementation's JSON serializer's: '"',
// '\\' and every control character (short forms where JSON has one), no
// HTML or U+2028 escaping, so node ids built from them match byte for byte.
var jsonEscapes = func() escapes {
	e := pgEscapes
	e['\b'], e['\f'] = `\b`, `\f`
	for c := range 0x20 {
		if e[c] == "" {
			e[c] = fmt.Sprintf(`\u%04x`, c)
		}
	}
	return e
}()

// writeQuoted writes s in double quotes, each byte esc names escaped.
func writeQuoted(b *strings.Builder, s string, esc *escapes) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; int(c) < len(esc) && esc[c] != "" {
			b.WriteString(esc[c])
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// quote renders s as a .pg string literal using only the escapes the
// language accepts.
func quote(s string) string {
	var b strings.Builder
	writeQuoted(&b, s, &pgEscapes)
	return b.String()
}
