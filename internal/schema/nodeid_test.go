package schema

import (
	"errors"
	"math"
	"testing"
)

func TestNodeID(t *testing.T) {
	c := mustCompile(t, `
node S { k: String @key }
node I32k { k: I32 @key }
node I64k { k: I64 @key }
node U64k { k: U64 @key }
node U32k { k: U32 @key }
node B { k: Bool @key }
node D { k: Date @key }
node T { k: DateTime @key }
node F32k { k: F32 @key }
node F64k { k: F64 @key }
node E { k: enum(a, b) @key }
node Name { last: String first: String @key(last, first) }
node Mixed { z: I32 a: String m: Bool @key(z, m, a) }
node NoKey { x: String }
`)
	tests := []struct {
		typ    string
		values map[string]any
		want   string
	}{
		{"S", map[string]any{"k": "Alice"}, "Alice"},
		{"S", map[string]any{"k": `quo"te, [x]`}, `quo"te, [x]`},
		{"S", map[string]any{"k": ""}, ""},
		{"I32k", map[string]any{"k": int64(-42)}, "-42"},
		{"I64k", map[string]any{"k": int64(math.MaxInt64)}, "9223372036854775807"},
		{"U64k", map[string]any{"k": uint64(math.MaxUint64)}, "18446744073709551615"},
		{"U32k", map[string]any{"k": uint64(7)}, "7"},
		{"B", map[string]any{"k": true}, "true"},
		{"B", map[string]any{"k": false}, "false"},
		{"D", map[string]any{"k": int32(19875)}, "19875"},
		{"D", map[string]any{"k": int32(-1)}, "-1"},
		{"T", map[string]any{"k": int64(1717243200000)}, "1717243200000"},
		{"F64k", map[string]any{"k": 0.1}, "0.1"},
		{"F64k", map[string]any{"k": 1e21}, "1000000000000000000000"},
		{"F64k", map[string]any{"k": 1e-7}, "0.0000001"},
		{"F64k", map[string]any{"k": 2.0}, "2"},
		{"F64k", map[string]any{"k": math.Copysign(0, -1)}, "0"},
		{"F32k", map[string]any{"k": 0.1}, "0.1"}, // shortest at 32-bit width, not 0.10000000149011612
		{"F32k", map[string]any{"k": float64(float32(0.1))}, "0.1"},
		{"F32k", map[string]any{"k": 16777217.0}, "16777216"},
		{"E", map[string]any{"k": "b"}, "b"},
		// Composite: members ordered by property id (alphabetical at creation).
		{"Name", map[string]any{"first": "John", "last": "Smith"}, `["John","Smith"]`},
		{"Name", map[string]any{"first": "J\"o\\n\n\x01", "last": "<&>\u2028"}, `["J\"o\\n\n\u0001","<&>` + "\u2028" + `"]`},
		{"Name", map[string]any{"first": "\b\f\t\r", "last": "\x1f\x7f"}, `["\b\f\t\r","\u001f` + "\x7f" + `"]`},
		{"Mixed", map[string]any{"z": int64(3), "a": "x", "m": true}, `["x","true","3"]`},
	}
	for _, tc := range tests {
		n, _ := c.Node(tc.typ)
		got, err := n.NodeID(tc.values)
		if err != nil || got != tc.want {
			t.Errorf("%s.NodeID(%v) = %q, %v; want %q", tc.typ, tc.values, got, err, tc.want)
		}
		if len(n.Key) == 1 {
			if got, err := n.SingleKeyID(tc.values[n.Key[0]]); err != nil || got != tc.want {
				t.Errorf("%s.SingleKeyID(%v) = %q, %v; want %q", tc.typ, tc.values, got, err, tc.want)
			}
		}
	}

	errTests := []struct {
		typ    string
		values map[string]any
		want   string
	}{
		{"S", map[string]any{}, "node S @key property 'k': missing"},
		{"S", map[string]any{"k": nil}, "node S @key property 'k': missing"},
		{"Name", map[string]any{"last": "Smith"}, "node Name @key property 'first': missing"},
		{"F64k", map[string]any{"k": math.NaN()}, "node F64k @key property 'k': value must be finite"},
		{"F64k", map[string]any{"k": math.Inf(1)}, "node F64k @key property 'k': value must be finite"},
		{"F32k", map[string]any{"k": math.Inf(-1)}, "node F32k @key property 'k': value must be finite"},
		{"S", map[string]any{"k": 3}, "node S @key property 'k': value of Go type int is not valid for String"},
		{"U64k", map[string]any{"k": int64(3)}, "node U64k @key property 'k': value of Go type int64 is not valid for U64"},
	}
	for _, tc := range errTests {
		n, _ := c.Node(tc.typ)
		_, err := n.NodeID(tc.values)
		var kv *KeyValueError
		if !errors.As(err, &kv) || err.Error() != tc.want {
			t.Errorf("%s.NodeID(%v) error = %v, want %q", tc.typ, tc.values, err, tc.want)
		}
		// SingleKeyID: the same error, given the first member's value.
		_, err = n.SingleKeyID(tc.values[n.Key[0]])
		if !errors.As(err, &kv) || err.Error() != tc.want {
			t.Errorf("%s.SingleKeyID(%v) error = %v, want %q", tc.typ, tc.values, err, tc.want)
		}
	}
	n, _ := c.Node("NoKey")
	if _, err := n.NodeID(map[string]any{"x": "a"}); !errors.Is(err, ErrNoKey) {
		t.Errorf("NoKey.NodeID error = %v, want ErrNoKey", err)
	}
	if _, err := n.SingleKeyID("a"); !errors.Is(err, ErrNoKey) {
		t.Errorf("NoKey.SingleKeyID error = %v, want ErrNoKey", err)
	}
	// A String key renders without allocating (a warm key lookup does it
	// per query).
	s, _ := c.Node("S")
	var v any = "Alice"
	if a := testing.AllocsPerRun(100, func() { _, _ = s.SingleKeyID(v) }); a != 0 {
		t.Errorf("S.SingleKeyID: %v allocations, want 0", a)
	}
}
