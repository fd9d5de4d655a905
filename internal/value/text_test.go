package value

import (
	"errors"
	"testing"
)

func TestCheckJSONText(t *testing.T) {
	tests := []struct {
		in    string
		line  int    // 0 = valid text
		field string // top-level member named
	}{
		{`{"name": "Alice", "n": 3}`, 0, ""},
		{`{"name": "\ud83d\ude00 é \u00e9 \\ud800"}`, 0, ""},
		{`{"bad": "x\y"}`, 0, ""}, // malformed JSON is the decoder's business
		{"{\"name\": \"X\xff\xfeY\"}", 1, "name"},
		{"{\n \"a\": 1,\n \"name\": \"\\ud800\"\n}", 3, "name"},
		{`{"name": "\udc00\ud800"}`, 1, "name"},
		{`{"list": ["ok", "\ud83dx"]}`, 1, "list"},
		{`{"obj": {"inner": "\ud800"}}`, 1, "obj"},
		{"{\"na\xffme\": 1}", 1, ""},
		{"\"\xff\"", 1, ""},
	}
	for _, tt := range tests {
		err := CheckJSONText([]byte(tt.in))
		if tt.line == 0 {
			if err != nil {
				t.Errorf("%q: %v", tt.in, err)
			}
			continue
		}
		var te *TextError
		if !errors.As(err, &te) || !errors.Is(err, ErrInvalidText) || te.Line != tt.line || te.Field != tt.field {
			t.Errorf("%q: got %v, want line %d field %q", tt.in, err, tt.line, tt.field)
		}
	}
}
