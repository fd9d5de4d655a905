package value

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"plain ascii", `"plain ascii"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x1f", `"\u0000\u001f"`},
		{"<&>", `"<&>"`}, // no HTML escaping
		{"héllo ✓", `"héllo ✓"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xe2\x9c", `"\ufffd\ufffd"`}, // each byte of a cut rune
		{"end\\", `"end\\"`},
	} {
		if got := string(AppendJSONString([]byte("x"), c.in)); got != "x"+c.want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// FuzzAppendJSONString: the output is one JSON string that decodes to the
// input with every invalid UTF-8 byte replaced by U+FFFD, and holds no raw
// control character.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\x7f\x80", "héllo\n", "\xed\xa0\x80", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q → %s: not a JSON string: %v", s, out, err)
		}
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r) // RuneError for an invalid byte
			i += n
		}
		if got != want.String() {
			t.Fatalf("%q → %s decodes to %q, want %q", s, out, got, want.String())
		}
		for _, c := range out {
			if c < 0x20 {
				t.Fatalf("%q → %s holds a raw control byte", s, out)
			}
		}
	})
}
