package query

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"hash comment", "# nope\nquery q() { match { $p: P } return { $p } }", `parse error: unexpected character "#" at 1:1`},
		{"bad escape", `query q() { match { $p: P { name: "a\qb" } } return { $p } }`, `parse error: unsupported escape sequence: \q at 1:37`},
		{"int overflow", `query q() { match { $p: P { n: 99999999999999999999 } } return { $p } }`, "parse error: invalid integer 99999999999999999999 at 1:32"},
		{"empty binding braces", `query q() { match { $d: Doc { } } return { $d } }`, `parse error: expected property match, found "}" (a binding's brace block must not be empty) at 1:29`},
		{"nearest desc", `query q($v: Vector(2)) { match { $d: Doc } return { $d } order { nearest($d.e, $v) desc } limit 1 }`, `parse error: expected "," or "}", found "desc" (nearest ordering takes no direction) at 1:84`},
		{"mutation wrapper", `mutation { insert Person { name: "a" } }`, `parse error: expected query_file (a "query" declaration), found "mutation" at 1:1`},
		{"single quotes", `query q() { match { $p: P { n: 'a' } } return { $p } }`, `parse error: unexpected character "'" at 1:32`},
		{"negative literal", `query q() { match { $p: P  $p.n > -1 } return { $p } }`, `parse error: unexpected character "-" at 1:35`},
		{"missing return", `query q() { match { $p: P } }`, `parse error: expected "return", found "}" at 1:29`},
		{"order needs commas", `query q() { match { $p: P } return { $p } order { $p.a $p.b } }`, `parse error: expected "}", found "$p" at 1:56`},
		{"limit param", `query q($n: I64) { match { $p: P } return { $p } limit $n }`, `parse error: expected integer, found "$n" at 1:56`},
		{"no filter op", `query q() { match { $p: P  $p.a } return { $p } }`, `parse error: expected filter operator, found "}" at 1:33`},
		{"no or", `query q() { match { $p: P  $p.a = 1 or $p.a = 2 } return { $p } }`, `parse error: expected filter operator`},
		{"contains in where", `query q() { delete P where name contains "a" }`, `parse error: expected comparison operator, found "contains" at 1:33`},
		{"enum param", `query q($s: enum(a, b)) { match { $p: P } return { $p } }`, `parse error: expected parameter type, found "enum" at 1:13`},
		{"duplicate description", `query q() @description("a") @description("b") { match { $p: P } return { $p } }`, `parse error: @description declared more than once at 1:29`},
		{"unknown annotation", `query q() @tag("a") { match { $p: P } return { $p } }`, `parse error: expected "description" or "instruction", found "tag" at 1:12`},
		{"unterminated string", `query q() { match { $p: P { n: "abc`, `parse error: unterminated string literal at 1:32`},
		{"empty body", `query q() { }`, `parse error: expected "match", "insert", "update" or "delete", found "}" at 1:13`},
		{"uppercase var", `query q() { match { $P: P } return { $P } }`, `parse error: invalid variable name "$P" at 1:21`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("q.gq", tc.src)
			if err == nil {
				t.Fatal("want a parse error")
			}
			if got := err.Error(); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			var list ErrorList
			if !errors.As(err, &list) || list[0].Kind != KindParse || list[0].Span.End <= list[0].Span.Start {
				t.Fatalf("want a KindParse ErrorList with a non-empty span, got %#v", err)
			}
		})
	}
}

func TestParseShapes(t *testing.T) {
	src := `query q($a: [String]?, $v: Vector(4)) @description("d") @instruction("i") {
    match {
        $p: Person { name: "x\n", tags: ["a", "b"], at: now() }
        $p $w:<knows>{1,1} $f
        $p knows{1,3} $g
        $p contains $h
        "lit" contains $p.name
        not { $p worksAt $_ }
        search($p.bio, "q")
    }
    return { $p.name as n  count($f) ,  $w.since }
    order { n desc, $p.age }
    limit 5
}`
	ast, err := Parse("q.gq", src)
	if err != nil {
		t.Fatal(err)
	}
	q := ast.Queries[0]
	if q.Description != "d" || q.Instruction != "i" || len(q.Params) != 2 || q.Params[0].Type.String() != "[String]?" || q.Params[1].Type.String() != "Vector(4)" {
		t.Fatalf("header: %+v", q)
	}
	if len(q.Match) != 7 {
		t.Fatalf("want 7 clauses, got %d", len(q.Match))
	}
	b := q.Match[0].(*Binding)
	if b.Props[0].Value.(*Lit).Str != "x\n" || len(b.Props[1].Value.(*Lit).Elems) != 2 {
		t.Fatalf("binding: %+v", b)
	}
	if _, ok := b.Props[2].Value.(*Now); !ok {
		t.Fatal("now() value")
	}
	tr := q.Match[1].(*Traversal)
	if !tr.Undirected || tr.EdgeVar.Name != "w" || tr.Bounds.Min != 1 || tr.Dst.Name != "f" || src[tr.Span.Start:tr.Span.End] != "$p $w:<knows>{1,1} $f" {
		t.Fatalf("traversal: %+v", tr)
	}
	if tr := q.Match[2].(*Traversal); tr.Bounds.Max != 3 {
		t.Fatal("bounds")
	}
	if tr := q.Match[3].(*Traversal); tr.Edge != "contains" {
		t.Fatal("`$p contains $h` must parse as a traversal (spec §5.1)")
	}
	if f := q.Match[4].(*FilterClause); f.Op != OpContains {
		t.Fatal("literal contains filter")
	}
	if _, ok := q.Match[5].(*Negation); !ok {
		t.Fatal("negation")
	}
	if _, ok := q.Match[6].(*TextSearch); !ok {
		t.Fatal("text search clause")
	}
	if len(q.Return) != 3 || q.Return[0].Alias != "n" || !q.Order[0].Desc || q.Order[1].Desc || q.Limit.N != 5 {
		t.Fatalf("tail: %+v %+v %+v", q.Return, q.Order, q.Limit)
	}
}

func TestParseErrorRecovery(t *testing.T) {
	src := `query a() { match { $p: P } return { $p } }
query b() { match { $p: P $$ } return { $p } }
query c() { match { $p: P } return { $p } }
query d() { match { $p P } return { $p } }
query e() { match { $p: P } return { $p } }`
	ast, err := Parse("q.gq", src)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 || list[0].Line != 2 || list[1].Line != 4 {
		t.Fatalf("want errors on lines 2 and 4, got %v", err)
	}
	var names []string
	for _, q := range ast.Queries {
		names = append(names, q.Name)
	}
	if strings.Join(names, ",") != "a,c,e" {
		t.Fatalf("recovered queries: %v", names)
	}
}

func TestParseErrorCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteString("query q() { match { # } }\n")
	}
	_, err := Parse("q.gq", b.String())
	var list ErrorList
	if !errors.As(err, &list) || len(list) != MaxErrors {
		t.Fatalf("want %d errors, got %v", MaxErrors, err)
	}
}

func TestParseDepthLimit(t *testing.T) {
	deepNot := "query q() { match { $p: P " + strings.Repeat("not { ", 200) + "$p.a = 1" + strings.Repeat(" }", 200) + " } return { $p } }"
	deepList := "query q() { match { $p: P  $p.a = " + strings.Repeat("[", 10000) + " } return { $p } }"
	for name, src := range map[string]string{"not": deepNot, "list": deepList} {
		_, err := Parse("q.gq", src)
		if err == nil || !strings.Contains(err.Error(), "nesting too deep") {
			t.Errorf("%s: want depth error, got %v", name, err)
		}
	}
	ok := "query q() { match { $p: P " + strings.Repeat("not { ", 10) + "$p.a = 1" + strings.Repeat(" }", 10) + " } return { $p } }"
	if _, err := Parse("q.gq", ok); err != nil {
		t.Fatalf("10 levels must parse: %v", err)
	}
}
