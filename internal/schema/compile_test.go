package schema

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustCompile(t testing.TB, src string) *Catalog {
	t.Helper()
	c, err := Compile("t.pg", src)
	if err != nil {
		var list ErrorList
		if errors.As(err, &list) {
			t.Fatalf("compile: %s", list.Detail())
		}
		t.Fatalf("compile: %v", err)
	}
	return c
}

const fullSchema = `// A schema exercising the whole grammar.
/* block
   comment */
interface Named {
    name: String @key @description("display name")
}

interface Dated { created: DateTime? @index }

edge WorksAt: Person -> Company @card(0..1) @description("employment") {
    since: Date?
    role: enum(ic, manager)? @index
    @unique(src, dst)
    @index(src)
}

node Person @description("a human") @instruction("be nice") @rename_from("Human") implements Named, Dated {
    age: I32? @rename_from(years)
    score: F64?
    ratio: F32?
    big: U64?
    small: U32?
    count: I64?
    ok: Bool
    born: Date?
    tags: [String]?
    nums: [I64]
    status: enum(zeta, alpha, mid-1, 0-10)
    bio: String? @description("say \"hi\"\\\n\t\r")
    embedding: Vector(3)? @embed(bio, model = "text-embedding-3-small") @index
    photo: Blob?
    handle: String? @unique @default("x") @custom(flag, level = 3, on = true, w = 0.5)
    @range(age, 0..150)
    @range(score, -1.5..)
    @range(count, ..200)
    @check(handle, "^[a-z]+$")
    @unique(handle, age)
    @index(age)
}

node Company { slug: String @key  name: String }
edge Knows: Person -> Person
edge Person: Company -> Person
`

func TestCompileFullSchema(t *testing.T) {
	c := mustCompile(t, fullSchema)
	if c.Source != fullSchema {
		t.Errorf("Source not kept")
	}
	if got := names(c.Interfaces, func(i *Interface) string { return i.Name }); !reflect.DeepEqual(got, []string{"Named", "Dated"}) {
		t.Errorf("interfaces = %v", got)
	}
	if got := names(c.Nodes, func(n *NodeType) string { return n.Name }); !reflect.DeepEqual(got, []string{"Person", "Company"}) {
		t.Errorf("nodes = %v", got)
	}
	if got := names(c.Edges, func(e *EdgeType) string { return e.Name }); !reflect.DeepEqual(got, []string{"WorksAt", "Knows", "Person"}) {
		t.Errorf("edges = %v", got)
	}

	p, _ := c.Node("Person")
	if p.Description != "a human" || p.Instruction != "be nice" || p.RenameFrom != "Human" {
		t.Errorf("metadata = %q %q %q", p.Description, p.Instruction, p.RenameFrom)
	}
	if !reflect.DeepEqual(p.Implements, []string{"Named", "Dated"}) {
		t.Errorf("implements = %v", p.Implements)
	}
	wantTypes := map[string]string{
		"age": "I32?", "score": "F64?", "ratio": "F32?", "big": "U64?", "small": "U32?", "count": "I64?",
		"ok": "Bool", "born": "Date?", "tags": "[String]?", "nums": "[I64]",
		"status": "enum(0-10, alpha, mid-1, zeta)", "bio": "String?", "embedding": "Vector(3)?",
		"photo": "Blob?", "handle": "String?", "name": "String", "created": "DateTime?",
	}
	if len(p.Props) != len(wantTypes) {
		t.Errorf("Person has %d props, want %d", len(p.Props), len(wantTypes))
	}
	for name, want := range wantTypes {
		prop, ok := p.Prop(name)
		if !ok {
			t.Errorf("missing prop %s", name)
			continue
		}
		if got := prop.Type.String(); got != want {
			t.Errorf("%s: type %s, want %s", name, got, want)
		}
	}
	// Injected props come last, in implements order, with their interface.
	last := p.Props[len(p.Props)-2:]
	if last[0].Name != "name" || last[0].Injected != "Named" || last[1].Name != "created" || last[1].Injected != "Dated" {
		t.Errorf("injected = %+v %+v", last[0], last[1])
	}
	if last[0].Description != "display name" {
		t.Errorf("injected description = %q", last[0].Description)
	}
	if !reflect.DeepEqual(p.Key, []string{"name"}) {
		t.Errorf("key from interface = %v", p.Key)
	}
	bio, _ := p.Prop("bio")
	if bio.Description != "say \"hi\"\\\n\t\r" {
		t.Errorf("escapes decoded to %q", bio.Description)
	}
	age, _ := p.Prop("age")
	if age.RenameFrom != "years" {
		t.Errorf("prop rename_from = %q", age.RenameFrom)
	}
	emb, _ := p.Prop("embedding")
	if emb.Embed == nil || *emb.Embed != (Embed{Source: "bio", Model: "text-embedding-3-small"}) {
		t.Errorf("embed = %+v", emb.Embed)
	}
	if emb.Type.Dim != 3 || emb.Type.Kind != KindVector {
		t.Errorf("vector type = %+v", emb.Type)
	}
	handle, _ := p.Prop("handle")
	wantAnn := []Annotation{
		{Name: "unique"},
		{Name: "default", Args: []Literal{{Kind: LitString, Str: "x"}}},
		{Name: "custom", Args: []Literal{{Kind: LitIdent, Str: "flag"}}, KwArgs: map[string]Literal{
			"level": {Kind: LitInt, Int: 3, Str: "3"}, "on": {Kind: LitBool, Bool: true}, "w": {Kind: LitFloat, Float: 0.5, Str: "0.5"},
		}},
	}
	for i := range handle.Annotations {
		handle.Annotations[i].Pos = Pos{}
	}
	if !reflect.DeepEqual(handle.Annotations, wantAnn) {
		t.Errorf("annotations = %+v", handle.Annotations)
	}

	f := func(v float64) *float64 { return &v }
	wantRanges := []RangeConstraint{{"age", f(0), f(150)}, {"score", f(-1.5), nil}, {"count", nil, f(200)}}
	if !reflect.DeepEqual(p.Ranges, wantRanges) {
		t.Errorf("ranges = %s", fmtRanges(p.Ranges))
	}
	if len(p.Checks) != 1 || p.Checks[0].Prop != "handle" || p.Checks[0].Pattern != "^[a-z]+$" ||
		!p.Checks[0].Re.MatchString("abc") || p.Checks[0].Re.MatchString("ab1") {
		t.Errorf("checks = %+v", p.Checks)
	}
	// Property-level forms desugar first (declared, then injected), then body forms.
	if want := [][]string{{"handle"}, {"handle", "age"}}; !reflect.DeepEqual(p.Uniques, want) {
		t.Errorf("uniques = %v", p.Uniques)
	}
	if want := [][]string{{"embedding"}, {"created"}, {"age"}}; !reflect.DeepEqual(p.Indexes, want) {
		t.Errorf("indexes = %v", p.Indexes)
	}

	w, _ := c.Edge("WorksAt")
	if w.From != "Person" || w.To != "Company" || w.Card != (Card{Min: 0, Max: 1}) || w.Description != "employment" {
		t.Errorf("WorksAt = %+v", w)
	}
	if want := [][]string{{"src", "dst"}}; !reflect.DeepEqual(w.Uniques, want) {
		t.Errorf("edge uniques = %v", w.Uniques)
	}
	if want := [][]string{{"role"}, {"src"}}; !reflect.DeepEqual(w.Indexes, want) {
		t.Errorf("edge indexes = %v", w.Indexes)
	}
	k, _ := c.Edge("Knows")
	if k.Card != (Card{Unbounded: true}) || len(k.Props) != 0 {
		t.Errorf("Knows default card = %+v", k.Card)
	}
}

func fmtRanges(rs []RangeConstraint) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Prop + ":")
		if r.Min != nil {
			b.WriteString(fmtF(*r.Min))
		}
		b.WriteString("..")
		if r.Max != nil {
			b.WriteString(fmtF(*r.Max))
		}
		b.WriteString(" ")
	}
	return b.String()
}

func fmtF(f float64) string { return Literal{Kind: LitFloat, Float: f}.String() }

func names[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// TestRangeUpperOnly pins our deliberate deviation: `..200` is a maximum.
func TestRangeUpperOnly(t *testing.T) {
	tests := []struct {
		name     string
		bound    string
		min, max string // "" = open
	}{
		{"upper only", "..200", "", "200"},
		{"lower only", "10..", "10", ""},
		{"both", "10..200", "10", "200"},
		{"negative", "-5..-1", "-5", "-1"},
		{"floats", "-0.5..2.25", "-0.5", "2.25"},
		{"negative upper", "..-3", "", "-3"},
		{"equal", "7..7", "7", "7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCompile(t, "node A { x: F64 @range(x, "+tc.bound+") }")
			n, _ := c.Node("A")
			r := n.Ranges[0]
			got := func(p *float64) string {
				if p == nil {
					return ""
				}
				return fmtF(*p)
			}
			if got(r.Min) != tc.min || got(r.Max) != tc.max {
				t.Errorf("@range(x, %s) = [%s, %s], want [%s, %s]", tc.bound, got(r.Min), got(r.Max), tc.min, tc.max)
			}
		})
	}
}

func TestEdgeLookup(t *testing.T) {
	c := mustCompile(t, `
node Person { name: String @key }
node Company { name: String @key }
edge Knows: Person -> Person
edge WorksAt: Person -> Company
edge Person: Person -> Company
`)
	tests := []struct {
		query string
		want  string // "" = not found
	}{
		{"Knows", "Knows"},
		{"knows", "Knows"},
		{"KNOWS", "Knows"},
		{"worksAt", "WorksAt"},
		{"worksat", "WorksAt"},
		{"works_at", ""}, // only case folds, no snake_case
		{"Person", "Person"},
		{"Nope", ""},
	}
	for _, tc := range tests {
		e, ok := c.Edge(tc.query)
		got := ""
		if ok {
			got = e.Name
		}
		if got != tc.want {
			t.Errorf("Edge(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
	// Node and edge namespaces are independent; Node is exact only.
	if n, ok := c.Node("Person"); !ok || n.Name != "Person" {
		t.Errorf("Node(Person) = %v %v", n, ok)
	}
	if _, ok := c.Node("person"); ok {
		t.Errorf("Node lookup must be exact")
	}
	if _, ok := c.Interface("Person"); ok {
		t.Errorf("no interfaces declared")
	}
}

func TestAccepted(t *testing.T) {
	tests := []struct{ name, src string }{
		{"empty", ""},
		{"only comments", "// x\n/* y */"},
		{"edge before nodes", "edge E: A -> B\nnode A { x: String }\nnode B { y: String }"},
		{"self edge", "node P { x: String }\nedge E: P -> P"},
		{"node and edge share name", "node P { x: String }\nnode Q { x: String }\nedge P: P -> Q"},
		{"row_id is not reserved", "node A { _row_id: String }"},
		{"src on a node is allowed", "node A { src: String dst: String }"},
		{"empty body", "node A { }\nedge E: A -> A { }"},
		{"prop named like keyword", "node A { node: String edge: String enum: enum(a) implements: I32 }"},
		{"no whitespace", "node A{x:String@key y:I32?@index z:[I32]?}edge E:A->A@card(1..)"},
		{"crlf", "node A {\r\n  x: String\r\n}\r\n"},
		{"interface prop redeclared identically", "interface I { x: String }\nnode A implements I { x: String }"},
		{"two interfaces agree", "interface I { x: String }\ninterface J { x: String }\nnode A implements I, J { }"},
		{"inert annotations", `node A @default(1) @ui(hidden, width = 3) { x: String @default("a") @todo }`},
		{"check on nullable string", `node A { x: String? @check(x, "a") }`},
		{"range on every numeric kind", "node A { a: I32 b: I64 c: U32 d: U64 e: F32 f: F64? @range(a, 0..1) @range(b, 0..1) @range(c, 0..1) @range(d, 0..1) @range(e, 0..1) @range(f, 0..1) }"},
		{"key on every scalar kind", "node A { a: Bool @key }\nnode B { d: Date @key }\nnode C { t: DateTime @key }\nnode D { e: enum(x) @key }\nnode F { f: F32 @key }"},
		{"unique on list body form", "node A { t: [String] @unique(t) }"},
		{"vector index", "node A { v: Vector(8) @index }"},
		{"embed identifier source", "node A { t: String v: Vector(2) @embed(t) }"},
		{"embed source nullable", "node A { t: String? v: Vector(2)? @embed(\"t\") }"},
		{"max dim", "node A { v: Vector(2147483647) }"},
		{"card unbounded", "node A { x: String }\nedge E: A -> A @card(1..)"},
		{"card exact", "node A { x: String }\nedge E: A -> A @card(2..2)"},
		{"rename_from ident", "node A @rename_from(Old) { x: String @rename_from(y) }"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustCompile(t, tc.src)
		})
	}
}

func TestEnumValuesSortedAndOrderInsensitive(t *testing.T) {
	a := mustCompile(t, "node A { s: enum(c, a, b) }")
	b := mustCompile(t, "node A { s: enum(b, c, a) }")
	pa, _ := a.Nodes[0].Prop("s")
	pb, _ := b.Nodes[0].Prop("s")
	if !pa.Type.Equal(pb.Type) || !reflect.DeepEqual(pa.Type.Enum, []string{"a", "b", "c"}) {
		t.Errorf("enum = %v / %v", pa.Type.Enum, pb.Type.Enum)
	}
}

func TestStableIDs(t *testing.T) {
	c := mustCompile(t, `
node Person { last: String first: String middle: String? @key(last, first) }
edge Knows: Person -> Person { weight: F64 at: Date }
node Company { name: String @key }
`)
	p, _ := c.Node("Person")
	k, _ := c.Edge("Knows")
	co, _ := c.Node("Company")
	if p.ID != 1 || k.ID != 2 || co.ID != 3 {
		t.Errorf("type ids = %d %d %d, want declaration order 1 2 3", p.ID, k.ID, co.ID)
	}
	ids := map[string]uint32{}
	for _, pr := range p.Props {
		ids["Person."+pr.Name] = pr.ID
	}
	for _, pr := range k.Props {
		ids["Knows."+pr.Name] = pr.ID
	}
	for _, pr := range co.Props {
		ids["Company."+pr.Name] = pr.ID
	}
	want := map[string]uint32{
		"Person.first": 1, "Person.last": 2, "Person.middle": 3,
		"Knows.at": 4, "Knows.weight": 5, "Company.name": 6,
	}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("property ids = %v, want %v", ids, want)
	}
	if !reflect.DeepEqual(p.Key, []string{"first", "last"}) {
		t.Errorf("composite key order = %v, want alphabetical", p.Key)
	}
	// Compiling again yields the same ids.
	c2 := mustCompile(t, c.Source)
	if c2.Nodes[0].Props[0].ID != c.Nodes[0].Props[0].ID {
		t.Errorf("ids not deterministic")
	}
}

func TestTypeMethods(t *testing.T) {
	tests := []struct {
		typ       Type
		str       string
		numeric   bool
		orderable bool
	}{
		{Type{Kind: KindString}, "String", false, true},
		{Type{Kind: KindString, Nullable: true}, "String?", false, true},
		{Type{Kind: KindList, Elem: KindString, Nullable: true}, "[String]?", false, false},
		{Type{Kind: KindVector, Dim: 3}, "Vector(3)", false, false},
		{Type{Kind: KindEnum, Enum: []string{"a", "b"}}, "enum(a, b)", false, true},
		{Type{Kind: KindI32}, "I32", true, true},
		{Type{Kind: KindU64}, "U64", true, true},
		{Type{Kind: KindF32}, "F32", true, true},
		{Type{Kind: KindDate}, "Date", false, true},
		{Type{Kind: KindDateTime}, "DateTime", false, true},
		{Type{Kind: KindBool}, "Bool", false, true},
		{Type{Kind: KindBlob, Nullable: true}, "Blob?", false, false},
	}
	for _, tc := range tests {
		if got := tc.typ.String(); got != tc.str {
			t.Errorf("String() = %q, want %q", got, tc.str)
		}
		if tc.typ.IsNumeric() != tc.numeric || tc.typ.IsOrderable() != tc.orderable {
			t.Errorf("%s: numeric=%v orderable=%v", tc.str, tc.typ.IsNumeric(), tc.typ.IsOrderable())
		}
	}
}

func TestCardAllows(t *testing.T) {
	tests := []struct {
		card Card
		n    int64
		want bool
	}{
		{Card{Unbounded: true}, 0, true},
		{Card{Unbounded: true}, 1000, true},
		{Card{Min: 0, Max: 1}, 1, true},
		{Card{Min: 0, Max: 1}, 2, false},
		{Card{Min: 1, Max: 1}, 0, false},
		{Card{Min: 1, Unbounded: true}, 0, false},
	}
	for _, tc := range tests {
		if got := tc.card.Allows(tc.n); got != tc.want {
			t.Errorf("%s.Allows(%d) = %v", tc.card, tc.n, got)
		}
	}
}

func TestErrorList(t *testing.T) {
	t.Run("parse errors recover per declaration", func(t *testing.T) {
		_, err := Compile("m.pg", "node A { x: Strin }\nnode B { y: }\nnode C { z: String }\nnode D { # }")
		var list ErrorList
		if !errors.As(err, &list) {
			t.Fatalf("got %v", err)
		}
		want := []string{
			"m.pg:1:13: parse error: unknown type: Strin (expected one of String, Bool, I32, I64, U32, U64, F32, F64, Date, DateTime, Blob, [T], enum(...) or Vector(N))",
			"m.pg:2:13: parse error: expected type, found '}'",
			"m.pg:4:10: parse error: unexpected '#': comments are written // ... or /* ... */",
		}
		if got := strings.Split(list.Detail(), "\n"); !reflect.DeepEqual(got, want) {
			t.Errorf("got\n%s", list.Detail())
		}
		if !strings.HasSuffix(list.Error(), "(and 2 more errors)") {
			t.Errorf("Error() = %s", list.Error())
		}
		var one *Error
		if !errors.As(err, &one) || one.Kind != ParseError {
			t.Errorf("errors.As(*Error) = %v", one)
		}
	})
	t.Run("catalog errors sorted, same line dropped", func(t *testing.T) {
		src := "node B { x: String }\nnode A { x: String }\nnode A { y: String }\nedge E: X -> Y\nnode B { }"
		_, err := Compile("c.pg", src)
		var list ErrorList
		errors.As(err, &list)
		want := []string{
			"c.pg:3:6: catalog error: duplicate node type: A",
			"c.pg:4:9: catalog error: edge E references unknown source type: X", // target error on the same line dropped
			"c.pg:5:6: catalog error: duplicate node type: B",
		}
		if got := strings.Split(list.Detail(), "\n"); !reflect.DeepEqual(got, want) {
			t.Errorf("got\n%s", list.Detail())
		}
	})
	t.Run("capped at ten", func(t *testing.T) {
		src := strings.Repeat("node A { x: Nope }\n", 50)
		_, err := Compile("x.pg", src)
		var list ErrorList
		errors.As(err, &list)
		if len(list) != MaxErrors {
			t.Errorf("got %d errors, want %d", len(list), MaxErrors)
		}
		src = strings.Repeat("node A { x: String }\n", 50)
		_, err = Compile("x.pg", src)
		errors.As(err, &list)
		if len(list) != MaxErrors || list[0].Pos.Line != 2 || list[9].Pos.Line != 11 {
			t.Errorf("got %d catalog errors, first line %d", len(list), list[0].Pos.Line)
		}
	})
	t.Run("too large", func(t *testing.T) {
		_, err := Compile("big.pg", strings.Repeat(" ", maxSourceBytes+1))
		if err == nil || !strings.Contains(err.Error(), "the limit is 1048576") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("span widened", func(t *testing.T) {
		_, err := Compile("e.pg", "node A {")
		var list ErrorList
		errors.As(err, &list)
		if sp := list[0].Span; sp.Start != 8 || sp.End != 9 {
			t.Errorf("EOF span = %+v, want zero-width widened to [8,9)", sp)
		}
	})
}

// TestDocExample keeps the opening example of docs/schema-language.md valid.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema-language.md"))
	if err != nil {
		t.Skipf("doc not found: %v", err)
	}
	_, rest, ok := strings.Cut(string(doc), "```pg\n")
	src, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no ```pg block in the doc")
	}
	c := mustCompile(t, src)
	p, _ := c.Node("Person")
	if !reflect.DeepEqual(p.Key, []string{"name"}) || len(p.Ranges) != 1 || len(p.Checks) != 1 {
		t.Errorf("doc example compiled to key %v ranges %v checks %v", p.Key, p.Ranges, p.Checks)
	}
}
