package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// FuzzJSONL feeds arbitrary bytes to the strict reader. It must never
// panic or loop; every failure is an *InputError with a line number in
// range; every accepted record re-encodes (AppendExportJSON) to values that
// convert back to equal values.
func FuzzJSONL(f *testing.F) {
	seeds := []string{
		`{"type": "Person", "data": {"name": "Alice", "age": 30, "role": "admin"}}`,
		`{"type": "Doc", "data": {"title": "t", "tags": ["a"], "embedding": [1, 2, 3], "born": "2024-06-01", "at": "2024-06-01T12:00:00Z", "blob": "base64:aGk=", "weight": 0.1, "big": 9007199254740993}}`,
		`{"type": "Pair", "data": {"first": "John", "last": "Smith", "id": "[\"John\",\"Smith\"]"}}`,
		`{"edge": "knows", "from": "Alice", "to": "Bob", "data": {"since": 19000, "id": "k1"}}`,
		`{"type": "Person", "type": "Person"}`,
		"{\"type\": \"Person\", \"data\": {\"name\": \"\\ud800\"}}\n\n{}",
		`[[[[[[[[[[]]]]]]]]]]`,
		"\r\n\r\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	cat, err := schema.Compile("test.pg", testSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + 1
		r := NewReader(bytes.NewReader(data), cat, ReaderOptions{MaxLineBytes: 4096})
		ctx := context.Background()
		for i := 0; ; i++ {
			if i > lines {
				t.Fatalf("more results (%d) than lines (%d)", i, lines)
			}
			rec, err := r.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) || ie.Line < 1 || ie.Line > lines {
					t.Fatalf("bad error %#v", err)
				}
				continue
			}
			var values map[string]any
			var props []*schema.Property
			switch rec := rec.(type) {
			case *NodeRecord:
				nt, _ := cat.Node(rec.Type)
				values, props = rec.Values, nt.Props
			case *EdgeRecord:
				et, _ := cat.Edge(rec.Type)
				values, props = rec.Values, et.Props
			}
			for _, p := range props {
				enc, err := value.AppendExportJSON(nil, p.Type, values[p.Name])
				if err != nil {
					t.Fatalf("encode %s: %v", p.Name, err)
				}
				back := mustConvertBytes(t, p.Type, enc)
				if !value.Equal(back, values[p.Name]) {
					t.Fatalf("%s: %#v -> %s -> %#v", p.Name, values[p.Name], enc, back)
				}
			}
		}
	})
}

func mustConvertBytes(t *testing.T, typ schema.Type, raw []byte) any {
	t.Helper()
	var x any
	dec := jsonDecoder(raw)
	if err := dec.Decode(&x); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	v, err := value.ConvertJSON("p", typ, x)
	if err != nil {
		t.Fatalf("convert %s: %v", raw, err)
	}
	return v
}

// FuzzLineParser checks the hand-written parser against encoding/json: it
// accepts exactly the valid JSON texts (up to its depth limit and duplicate
// rejection), and decodes strings and numbers to the same values.
func FuzzLineParser(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, -0.5e+3, "x\u00e9\ud83d\ude00", true, false, null, {"b": {}}]}`,
		`{"a": "\ud800"}`, `[]`, `"s"`, `{"a":1}{}`, `{"a" : 01}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := lineParser{b: data}
		v, err := p.value(false)
		if err == nil {
			p.skipSpace()
			if p.i < len(p.b) {
				err = p.fail("trailing data")
			}
		}
		var dup *jsonDuplicateError
		var deep *jsonDepthError
		if errors.As(err, &dup) || errors.As(err, &deep) {
			return
		}
		valid := json.Valid(data)
		if valid != (err == nil) {
			t.Fatalf("json.Valid=%v, parser error=%v", valid, err)
		}
		if !valid {
			return
		}
		var want any
		dec := jsonDecoder(data)
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := normalizeParsed(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("parsed %#v, encoding/json %#v", got, want)
		}
		// The strict mode the Reader uses accepts exactly the inputs whose
		// strings are valid text, with the same values; it refuses the rest
		// with a *jsonTextError instead of replacing.
		sp := lineParser{b: data, strictText: true}
		sv, serr := sp.value(false)
		var te *jsonTextError
		switch {
		case serr == nil && !reflect.DeepEqual(normalizeParsed(sv), want):
			t.Fatalf("strict parse %#v differs from %#v", sv, want)
		case serr != nil && !errors.As(serr, &te):
			t.Fatalf("strict parse failed with %v on valid JSON", serr)
		case serr != nil && utf8.Valid(data) && !loneSurrogateEscape.Match(data):
			t.Fatalf("strict parse refused valid text: %v", serr)
		}
	})
}

// loneSurrogateEscape matches a \u escape of a surrogate (paired or not):
// the only way valid UTF-8 JSON can hold a string that is not valid text.
var loneSurrogateEscape = regexp.MustCompile(`(?i)\\ud[89a-f][0-9a-f]{2}`)

// normalizeParsed converts []jsonMember objects to maps for comparison.
func normalizeParsed(v any) any {
	switch x := v.(type) {
	case []jsonMember:
		return normalizeParsed(membersToMap(x))
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeParsed(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeParsed(e)
		}
		return x
	}
	return v
}
