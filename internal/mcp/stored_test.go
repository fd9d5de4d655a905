package mcp

import (
	"encoding/json"
	"testing"
)

// TestParamSchema: each parameter kind of the stored-query catalog gets
// the JSON Schema its values are checked against, and the schema admits
// exactly the values the kind's wire form allows.
func TestParamSchema(t *testing.T) {
	cases := []struct {
		name   string
		p      paramEntry
		schema string
		ok     []string
		bad    []string
	}{
		{"string", paramEntry{Kind: "string"}, `{"type":"string"}`, []string{`"a"`}, []string{`1`, `null`}},
		{"nullable bool", paramEntry{Kind: "bool", Nullable: true}, `{"type":["boolean","null"]}`, []string{`true`, `null`}, []string{`"true"`}},
		{"int", paramEntry{Kind: "int"}, `{"type":"integer"}`, []string{`3`}, []string{`3.5`, `"3"`}},
		{"bigint", paramEntry{Kind: "bigint"}, `{"type":["integer","string"],"description":"a 64-bit integer: a JSON number, or a decimal string beyond 2^53"}`,
			[]string{`3`, `"9007199254740993"`}, []string{`true`}},
		{"float", paramEntry{Kind: "float"}, `{"type":"number"}`, []string{`1.5`, `2`}, []string{`"1.5"`}},
		{"date", paramEntry{Kind: "date"}, `{"type":"string","description":"YYYY-MM-DD","format":"date"}`, []string{`"2024-01-02"`}, []string{`20240102`}},
		{"vector", paramEntry{Kind: "vector", VectorDim: 2}, `{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2}`,
			[]string{`[1,2]`}, []string{`[1]`, `[1,2,3]`, `["a","b"]`}},
		{"nullable list", paramEntry{Kind: "list", ItemKind: "string", Nullable: true}, `{"type":["array","null"],"items":{"type":"string"}}`,
			[]string{`["a"]`, `null`}, []string{`[1]`}},
		{"unknown kind", paramEntry{Kind: "future"}, `true`, []string{`1`, `"x"`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := paramSchema(c.p)
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.schema {
				t.Fatalf("schema = %s, want %s", b, c.schema)
			}
			r, err := s.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range c.ok {
				var x any
				_ = json.Unmarshal([]byte(v), &x)
				if err := r.Validate(x); err != nil {
					t.Errorf("%s refused: %v", v, err)
				}
			}
			for _, v := range c.bad {
				var x any
				_ = json.Unmarshal([]byte(v), &x)
				if r.Validate(x) == nil {
					t.Errorf("%s accepted", v)
				}
			}
		})
	}
}
