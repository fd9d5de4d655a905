package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// TestAcceptanceQueriesCompile compiles every query of spec §8/§9 that must
// type-check.
func TestAcceptanceQueriesCompile(t *testing.T) {
	cat := testCatalog(t)
	cases := map[string]string{
		"1 get_person":        `query get_person($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }`,
		"3 adults":            `query adults() { match { $p: Person  $p.age > 30 } return { $p.name, $p.age } order { $p.age desc } }`,
		"4 top_by_age":        `query top_by_age() { match { $p: Person } return { $p.name, $p.age } order { $p.age desc } limit 2 }`,
		"5 friends_of":        `query friends_of($name: String) { match { $p: Person { name: $name }  $p knows $f } return { $f.name, $f.age } }`,
		"6 employees_of":      `query employees_of($company: String) { match { $c: Company { name: $company }  $p worksAt $c } return { $p.name } }`,
		"7 fof":               `query fof($name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof } return { $fof.name } }`,
		"8 unemployed":        `query unemployed() { match { $p: Person  not { $p worksAt $_ } } return { $p.name } }`,
		"9 friend_counts":     `query friend_counts() { match { $p: Person  $p knows $f } return { $p.name  count($f) as friends } order { friends desc } limit 20 }`,
		"10 total_people":     `query total_people() { match { $p: Person } return { count($p) as total } }`,
		"11 age_stats":        `query age_stats() { match { $p: Person  $p worksAt $c } return { $c.name  sum($p.age) as total_age  avg($p.age) as avg_age  min($p.age) as youngest  max($p.age) as oldest  count($p) as headcount } }`,
		"12 top_connected":    `query top_connected() { match { $p: Person  $p knows $f } return { $p.name, count($f) as friends } order { friends desc } limit 1 }`,
		"13 asc":              `query q() { match { $p: Person } return { $p.name, $p.age } order { $p.age asc } }`,
		"14 unprojected":      `query q() { match { $p: Person } return { $p.name } order { $p.age desc } }`,
		"15 young":            `query young($age: I32) { match { $p: Person  $p.age < $age } return { $p.name, $p.age } order { $p.age asc } }`,
		"16 ge":               `query q() { match { $p: Person  $p.age >= 30 } return { $p.name } order { $p.age asc } }`,
		"18 ne":               `query q() { match { $p: Person  $p.name != "Alice" } return { $p.name } order { $p.name asc } }`,
		"19 undirected":       `query q($name: String) { match { $p: Person { name: $name }  $p <knows> $f } return { $f.name } }`,
		"20 undirected hops":  `query q() { match { $p: Person { name: "Charlie" }  $p <knows>{1,2} $f } return { $f.name } }`,
		"21 not undirected":   `query q() { match { $p: Person  not { $p <knows> $x } } return { $p.name } }`,
		"22 not predicated":   `query q() { match { $p: Person  not { $p worksAt $c  $c.name = "Acme" } } return { $p.name } }`,
		"22 not binding":      `query q() { match { $p: Person  not { $p worksAt $c  $c: Company { name: "Acme" } } } return { $p.name } }`,
		"23 double not":       `query q() { match { $p: Person  not { $p worksAt $c  not { $c.name = "Acme" } } } return { $p.name } }`,
		"25 later binding":    `query q() { match { $p: Person  $p worksAt $c  $c: Company { name: "Acme" } } return { $p.name } }`,
		"27 at_company":       `query at_company($company: String) { match { $p: Person  $p worksAt $c  $c: Company { name: $company } } return { $p.name, $c.name } }`,
		"29 intermediate":     `query q($name: String, $mid_name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof  $mid: Person { name: $mid_name } } return { $fof.name } }`,
		"30 fan out":          `query q($name: String) { match { $p: Person { name: $name }  $p knows $f  $p worksAt $c } return { $f.name, $c.name } }`,
		"32 min max string":   `query q() { match { $p: Person } return { min($p.name) as first_name  max($p.name) as last_name } }`,
		"34 filter_date":      `query filter_date($d: String) { match { $p: Person { name: $d } } return { $p.name } }`,
		"35 hops":             `query q() { match { $p: Person { name: "Alice" }  $p knows{2,2} $f } return { $f.name } }`,
		"36 starts_with":      `query q() { match { $p: Person  $p.name starts_with "C" } return { $p.name } }`,
		"36 contains":         `query q() { match { $p: Person  $p.name contains "li" } return { $p.name } }`,
		"37 edge binding":     `query q() { match { $p: Person { name: "Alice" }  $p $w:knows $f  $w.since >= date("2023-01-01") } return { $f.name, $w.since } }`,
		"37 edge count":       `query q() { match { $p: Person { name: "Alice" }  $p $w:knows $f } return { $f.name, count($w.since) } }`,
		"37 edge not":         `query q() { match { $p: Person  not { $p $w:knows $f  $w.since >= date("2030-01-01") } } return { $p.name } }`,
		"37 undirected edge":  `query q() { match { $p: Person  $p $w:<knows> $f } return { $w.since } }`,
		"54 chain":            `query q() { match { $p: Person { name: "A" }  $p knows{1,3} $f } return { $f.name } }`,
		"55 not hops":         `query q() { match { $p: Person  not { $p knows{2,2} $x } } return { $p.name } }`,
		"56 two keys":         `query q() { match { $p: Person } return { $p.name } order { $p.age desc, $p.name asc } }`,
		"57 literals":         `query q() { match { $m: Thing  $m.ratio <= 0.25  $m.flag != true  $m.born >= date("2024-01-01")  $m.seen < datetime("2024-01-01T00:00:00Z") } return { $m.code } }`,
		"57 positional":       `query q() { match { $m: Thing  "the alps are tall" contains $m.text } return { $m.code } }`,
		"57 two vars":         `query q() { match { $a: Thing  $b: Thing  $b.text starts_with $a.text } return { $a.code, $b.code } }`,
		"57 float inline":     `query q() { match { $p: Person { age: 2.7 } } return { $p.name } }`,
		"59 filtered nearest": `query q($q: Vector(4)) { match { $d: Doc { title: "hit" }  $d.title <= "hit" } return { $d.slug } order { nearest($d.embedding, $q) } limit 3 }`,
		"60 ranked edges":     `query q($q: Vector(4)) { match { $p: Person  $p $w:owns $t } return { $p.name, $w.weight } order { nearest($t.emb, [1.0, 2.0, 3.0]) } limit 4 }`,
		"enum inline":         `query q() { match { $t: Thing { status: "active" } } return { $t.code } }`,
		"enum param":          `query q($s: String) { match { $t: Thing { status: $s } } return { $t.code } }`,
		"list membership":     `query q() { match { $t: Thing { tags: "red" }  $t.tags contains "blue"  $t.scores contains 3 } return { $t.tags } }`,
		"list literal filter": `query q() { match { $t: Thing  $t.text contains "x" } return { $t.code, [1, 2.5] as l, "s" } }`,
		"nearest string":      `query q($q: String) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $q) } limit 5 }`,
		"bm25 no limit":       `query q($q: String) { match { $d: Doc } return { $d.slug } order { bm25($d.title, $q) } }`,
		"rrf k":               `query q($q: String, $v: Vector(4)) { match { $d: Doc } return { $d.slug } order { rrf(nearest($d.embedding, $v), bm25($d.body, $q), 10) } limit 3 }`,
		"score projection":    `query q($q: String) { match { $d: Doc } return { $d.slug, bm25($d.title, $q) as score } order { bm25($d.title, $q) } limit 3 }`,
		"text clauses":        `query q($q: String) { match { $d: Doc  search($d.title, $q)  fuzzy($d.title, $q, 2)  match_text($d.body, "x") } return { $d.slug } }`,
		"now read":            `query q() { match { $t: Thing  $t.seen < now() } return { $t.code, now() } }`,
		"bare node projected": `query q() { match { $p: Person } return { $p } }`,
		"param projected":     `query q($x: I64) { match { $p: Person } return { $p.name, $x } }`,
		"same type rebind":    `query q() { match { $p: Person  $p: Person { name: "Alice" } } return { $p.name } }`,
		"cartesian":           `query q() { match { $p: Person  $c: Company } return { $p.name, $c.name } }`,
		"cycle join":          `query q() { match { $a: Person  $b: Person  $a knows $b } return { $a.name } }`,
		"reverse written":     `query q() { match { $c: Company  $c worksAt $p } return { $p.name } }`,
		"traversal first":     `query q() { match { $a knows $b  $a: Person { name: "Alice" } } return { $b.name } }`,
		"nullable params":     `query q($a: I32?, $b: [String], $c: Vector(4)?, $d: Date, $e: DateTime?, $f: U64, $g: F32, $h: Bool, $i: Blob) { match { $p: Person } return { $p.name } }`,
		"description":         `query q() @description("all people") @instruction("use for lists") { match { $p: Person } return { $p.name } }`,
		"comments":            "// c\nquery q() { /* block */ match { $p: Person } // x\n return { $p.name } }",
		"alias order asc":     `query q() { match { $p: Person } return { $p.name as n } order { n asc } }`,
		"38 insert_person":    `query insert_person($name: String, $age: I32) { insert Person { name: $name, age: $age } }`,
		"39 add_friend":       `query add_friend($from: String, $to: String) { insert Knows { from: $from, to: $to } }`,
		"41 set_age":          `query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }`,
		"42 remove_person":    `query remove_person($name: String) { delete Person where name = $name }`,
		"43 remove_friend":    `query remove_friendship($from: String) { delete Knows where from = $from }`,
		"40 two inserts":      `query insert_person_and_friend($name: String, $age: I32, $friend: String) { insert Person { name: $name, age: $age }  insert Knows { from: $name, to: $friend } }`,
		"insert embed target": `query q($c: String, $l: String, $x: String) { insert Thing { code: $c, label: $l, text: $x, seen: now(), status: "inactive", tags: ["a", "b"], photo: $x } }`,
		"insert vector lit":   `query q($c: String, $l: String) { insert Thing { code: $c, label: $l, auto: [1.0, 2, 3] } }`,
		"two deletes":         `query q($n: String) { delete Person where name = $n  delete Knows where from = $n }`,
		"update where lt":     `query q() { update Person set { age: 3 } where age < 2 }`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			if msg := compileErr(t, cat, src); msg != "" {
				t.Fatalf("unexpected error:\n%s", msg)
			}
		})
	}
}

// TestTypeErrors pins the code and message of every §6 rule and the §5
// error cases.
func TestTypeErrors(t *testing.T) {
	cat := testCatalog(t)
	m := func(body string) string { return `query q() { match { ` + body + ` } return { $p.name } }` }
	cases := []struct {
		name, src, want string
	}{
		{"T1 unknown type", m(`$p: Nope`), "type error: T1: unknown node type `Nope`"},
		{"T1 interface", `query q() { match { $x: Named } return { $x } }`, "type error: T1: unknown node type `Named`"},
		{"T2 unknown inline", m(`$p: Person { nope: 1 }`), "type error: T2: type `Person` has no property `nope`"},
		{"T3 literal mismatch", m(`$p: Person { age: "x" }`), "type error: T3: property `age` has type I32?, got String literal"},
		{"T3 enum", `query q() { match { $t: Thing { status: "z" } } return { $t.code } }`, "type error: T3: property `status` expects one of [active, inactive], got 'z'"},
		{"T3 list equality", `query q() { match { $t: Thing { tags: ["a"] } } return { $t.code } }`, "type error: T3: list property `tags` cannot be matched by list equality"},
		{"T3 blob pattern", `query q($b: String) { match { $t: Thing { photo: $b } } return { $t.code } }`, "type error: T3: Blob property `photo` cannot be used in a pattern"},
		{"T3 vector length", `query q() { match { $t: Thing { emb: [1.0, 2.0] } } return { $t.code } }`, "type error: T3: vector literal has 2 values, property `emb` is Vector(3)"},
		{"T4 unknown edge", m(`$p: Person  $p foo $x`), "type error: T4: unknown edge type `foo`"},
		{"T4 contains traversal", m(`$p: Person  $q: Person  $p contains $q`), "type error: T4: unknown edge type `contains`"},
		{"T5 endpoint", m(`$p: Person  $c: Company  $c knows $p`), "type error: T5: variable `$c` has type `Company`, which is not an endpoint of edge `Knows` (Person -> Person)"},
		{"T6 unbound", m(`$p: Person  $x.name = "a"`), "type error: T6: variable `$x` is not bound"},
		{"T6 unknown prop", m(`$p: Person  $p.nope = "a"`), "type error: T6: type `Person` has no property `nope`"},
		{"T6 edge prop", m(`$p: Person  $p $w:knows $f  $w.nope = 1`), "type error: T6: edge type `Knows` has no property `nope`"},
		{"T6 return", `query q() { match { $p: Person } return { $p.nope } }`, "type error: T6: type `Person` has no property `nope`"},
		{"T7 compare", m(`$p: Person  $p.age = "x"`), "type error: T7: cannot compare I32 with String"},
		{"T7 date vs string", `query q() { match { $t: Thing  $t.born > "2024-01-01" } return { $t.code } }`, "type error: T7: cannot compare Date with String"},
		{"T7 node operand", m(`$p: Person  $p = 3`), "type error: T7: filter comparisons require scalar operands, got node `Person` and I64"},
		{"T7 list compare", `query q() { match { $t: Thing  $t.tags = "a" } return { $t.code } }`, "type error: T7: cannot compare [String] with String: lists and vectors are not comparable"},
		{"T7 contains bad", m(`$p: Person  $p.age contains 3`), "type error: T7: contains requires a list or String on the left, got I32"},
		{"T7 starts_with", m(`$p: Person  $p.name starts_with 3`), "type error: T7: starts_with requires String operands, got String and I64"},
		{"T7 blob filter", `query q() { match { $t: Thing  $t.photo = "x" } return { $t.code } }`, "type error: T7: Blob values cannot be used in filters"},
		{"T7 param pattern", `query q($a: String) { match { $p: Person { age: $a } } return { $p.name } }`, "type error: T7: cannot compare I32 with String for property `age`"},
		{"T7 assign", `query q($a: String) { insert Person { name: "x", age: $a } }`, "type error: T7: cannot assign I32 with String for property `age`"},
		{"T7 now non-datetime", `query q() { insert Person { name: "x", age: now() } }`, "type error: T7: now() is a DateTime and cannot be used for property `age` of type I32"},
		{"T8 sum", `query q() { match { $p: Person } return { sum($p.name) as s } }`, "type error: T8: sum requires a numeric argument, got String"},
		{"T8 min", `query q() { match { $t: Thing } return { min($t.flag) as s } }`, "type error: T8: min requires a numeric or String argument, got Bool"},
		{"T9 negation", m(`$p: Person  not { $x: Person }`), "type error: T9: negation must reference at least one variable bound outside it"},
		{"T9 aggregate", `query q() { match { $p: Person } return { "x", count($p) as n } }`, "type error: T9: in an aggregate query every non-aggregate projection must be `$v.prop` or `$v`"},
		{"T10 unknown", `query q() { insert Nope { a: 1 } }`, "type error: T10: unknown node or edge type `Nope`"},
		{"T10 empty", `query q() { insert Person { } }`, "type error: T10: insert into `Person` has no assignments"},
		{"T11 prop", `query q() { insert Person { name: "a", nope: 1 } }`, "type error: T11: type `Person` has no property `nope`"},
		{"T11 blob where", `query q() { delete Thing where photo = "x" }`, "type error: T11: Blob property `photo` cannot be used in a where predicate"},
		{"T12 missing (46)", `query q($age: I32) { insert Person { age: $age } }`, "type error: T12: insert into `Person` is missing required property `name`"},
		{"T12 edge to", `query q($f: String) { insert Knows { from: $f } }`, "type error: T12: insert into edge `Knows` is missing `to`"},
		{"T13 duplicate", `query q() { insert Person { name: "a", name: "b" } }`, "type error: T13: property `name` is assigned more than once"},
		{"T14 undeclared", `query q() { insert Person { name: $n } }`, "type error: T14: `$n` is not a declared parameter"},
		{"T15 min zero", m(`$p: Person  $p knows{0,2} $f`), "type error: T15: hop bounds require min >= 1, got 0"},
		{"T15 max<min", m(`$p: Person  $p knows{3,2} $f`), "type error: T15: hop bounds max (2) is less than min (3)"},
		{"T15 unbounded", m(`$p: Person  $p knows{1,} $f`), "type error: T15: unbounded traversal is disabled"},
		{"T15 nearest non-vector", `query q($v: Vector(4)) { match { $d: Doc } return { $d.slug } order { nearest($d.title, $v) } limit 1 }`, "type error: T15: nearest requires a Vector property, got String"},
		{"T15 nearest dim", `query q($v: Vector(3)) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $v) } limit 1 }`, "type error: T15: nearest query is Vector(3) but `embedding` is Vector(4)"},
		{"T15 nearest query type", `query q($v: I64) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $v) } limit 1 }`, "type error: T15: nearest query must be a Vector(4) or a String, got I64"},
		{"T16 (47)", `query q($from: String) { update Knows set { since: "2025-01-01" } where from = $from }`, "type error: T16: update is not supported on edge type `Knows`"},
		{"T17", `query q($v: Vector(4)) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $v) } }`, "type error: T17: nearest ordering requires a limit"},
		{"T18", `query q($v: Vector(4)) { match { $d: Doc } return { $d.slug as s } order { nearest($d.embedding, $v), s } limit 2 }`, "type error: T18: alias-based ordering cannot be combined with a standalone nearest ordering"},
		{"T19 search field", `query q($s: String) { match { $p: Person  search($p.age, $s) } return { $p.name } }`, "type error: T19: search field must be a scalar String property, got I32?"},
		{"T19 search query", `query q() { match { $d: Doc  search($d.title, 3) } return { $d.slug } }`, "type error: T19: search query must be a String, got I64"},
		{"T19 fuzzy edits", `query q($s: String) { match { $d: Doc  fuzzy($d.title, $s, "2") } return { $d.slug } }`, "type error: T19: fuzzy max_edits must be an integer, got String"},
		{"T20 match_text", `query q($s: String) { match { $t: Thing  match_text($t.tags, $s) } return { $t.code } }`, "type error: T20: match_text field must be a scalar String property, got [String]?"},
		{"T20 bm25", `query q() { match { $d: Doc } return { $d.slug } order { bm25($d.title, 1) } }`, "type error: T20: bm25 query must be a String, got I64"},
		{"T21 no limit", `query q($s: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.title, $s), bm25($d.body, $s)) } }`, "type error: T21: rrf ordering requires a limit"},
		{"T21 arg", `query q($s: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.title, $s), $d.slug) } limit 1 }`, "type error: T21: rrf arguments must be nearest(...) or bm25(...)"},
		{"T21 k", `query q($s: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.title, $s), bm25($d.body, $s), 0) } limit 1 }`, "type error: T21: rrf k must be a positive integer literal"},
		{"T22", m(`$p: Person  $p <worksAt> $c`), "type error: T22: undirected traversal requires an edge between one node type; `WorksAt` is Person -> Company"},
		{"T23 bare", `query q() { match { $p: Person  $p $w:knows $f } return { $w } }`, "type error: T23: edge variable cannot be projected bare"},
		{"T23 endpoint", m(`$p: Person  $p $w:knows $f  $w knows $g`), "type error: T23: edge variable `$w` cannot be a traversal endpoint"},
		{"T23 bounds", m(`$p: Person  $p $w:knows{1,2} $f`), "type error: T23: edge variable `$w` cannot be used with hop bounds"},
		{"T23 reused", m(`$p: Person  $f: Person  $p $f:knows $g`), "type error: T23: edge variable `$f` is already bound"},
		{"T23 same as endpoint", m(`$p: Person  $p $f:knows $f`), "type error: T23: edge variable `$f` has the same name as a traversal endpoint"},
		{"T23 rebind", m(`$p: Person  $p $w:knows $f  $w: Person`), "type error: T23: edge variable `$w` cannot be rebound as a node of type `Person`"},
		{"T23 search", `query q($s: String) { match { $p: Person  $p $w:owns $t  search($w.weight, $s) } return { $p.name } }`, "type error: T23: edge variable `$w` cannot be used in search"},
		{"T24 projection", `query q() { match { $t: Thing } return { $t.photo } }`, "type error: T24: Blob property cannot be read in a projection"},
		{"T24 param", `query q($b: Blob) { match { $t: Thing } return { $b } }`, "type error: T24: Blob parameter `$b` cannot be read as a value"},
		{"T24 order", `query q() { match { $t: Thing } return { $t.code } order { $t.photo } }`, "type error: T24: Blob property cannot be used as an order key"},
		{"T24 aggregate", `query q() { match { $t: Thing } return { count($t.photo) as n } }`, "type error: T24: Blob values cannot be aggregated"},
		{"unbound var", `query q() { match { $p: Person } return { $zz } }`, "type error: variable `$zz` is not bound"},
		{"rebind other type", m(`$p: Person  $p: Company`), "type error: variable `$p` already bound to type `Person`, cannot rebind to `Company`"},
		{"unknown param type", `query q($x: Nope) { match { $p: Person } return { $p.name } }`, "type error: unknown parameter type `Nope`"},
		{"reserved param", `query q($__nanograph_now: DateTime) { match { $p: Person } return { $p.name } }`, "type error: parameter name `$__nanograph_now` is reserved"},
		{"nested list", m(`$p: Person  $p.name = [[1]]`), "type error: nested list literals are not supported"},
		{"mixed list", m(`$p: Person  $p.name = [1, "a"]`), "type error: list literal elements must share a compatible scalar type"},
		{"update key (45)", `query q($new_name: String, $old_name: String) { update Person set { name: $new_name } where name = $old_name }`, "type error: cannot update @key property 'name' — delete and re-insert instead"},
		{"D2 (48)", `query mix($n: String) { insert Person { name: $n }  delete Person where name = $n }`, "plan error: mutation 'mix' on the same query mixes inserts/updates and deletes; split into separate mutations: (1) inserts and updates, then (2) deletes"},
		{"unconnected traversal", m(`$p: Person  $a knows $b`), "type error: traversal `$a knows $b` is not connected to any binding"},
		{"inline undeclared param", m(`$p: Person { name: $nobody }`), "type error: T14: `$nobody` is not a declared parameter"},
		{"rank not first", `query q($v: Vector(4)) { match { $d: Doc } return { $d.slug } order { $d.slug, nearest($d.embedding, $v) } limit 1 }`, "plan error: ranking function `nearest` must be the first order key"},
		{"order unknown alias", `query q() { match { $p: Person } return { $p.name } order { nope } }`, "plan error: order key `nope` is not a projection alias"},
		{"order expression", `query q() { match { $p: Person  $p knows $f } return { $p.name, count($f) as n } order { count($f) } }`, "plan error: order key must be an output column or alias in an aggregate query"},
		{"duplicate param", `query q($a: I32, $a: I32) { match { $p: Person } return { $p.name } }`, "type error: parameter `$a` is declared more than once"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := compileErr(t, cat, tc.src)
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got:\n%s\nwant prefix:\n%s", got, tc.want)
			}
		})
	}
}

func TestTypeErrorSpan(t *testing.T) {
	cat := testCatalog(t)
	src := "query q() {\n  match { $p: Nope }\n  return { $p }\n}"
	_, err := Compile(cat, "q.gq", src)
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("want ErrorList, got %v", err)
	}
	e := list[0]
	if e.Code != "T1" || e.Kind != KindType || src[e.Span.Start:e.Span.End] != "Nope" || e.Line != 2 || e.Col != 15 || e.Query != "q" {
		t.Fatalf("got %+v", e)
	}
}

func TestSelectQuery(t *testing.T) {
	cat := testCatalog(t)
	src := `query a() { match { $p: Person } return { $p.name } }
query b() { match { $p: Nope } return { $p } }
query a() { match { $c: Company } return { $c.name } }`
	f, err := Compile(cat, "q.gq", src)
	if err == nil {
		t.Fatal("want error from query b")
	}
	p, err := f.Query("a")
	if err != nil || !strings.Contains(p.String(), "Person") {
		t.Fatalf("first duplicate must win: %v %v", p, err)
	}
	_, err = f.Query("zz")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrQueryNotFound) || err.Error() != "query 'zz' not found; available: a, b" {
		t.Fatalf("got %v", err)
	}
	if _, err := CompileQuery(cat, "q.gq", src, "a"); err != nil {
		t.Fatalf("a must compile despite b: %v", err)
	}
	if _, err := CompileQuery(cat, "q.gq", src, "b"); err == nil || !strings.Contains(err.Error(), "T1") {
		t.Fatalf("b: got %v", err)
	}
}

// TestLitType pins the type of every literal kind: scalar literals take
// the widest type of their family (so an I32 property compares with an int
// literal and a F32 one with a float literal), list literals are lists.
func TestLitType(t *testing.T) {
	tests := []struct {
		kind LitKind
		want schema.Kind
	}{
		{LitString, schema.KindString},
		{LitInt, schema.KindI64},
		{LitFloat, schema.KindF64},
		{LitBool, schema.KindBool},
		{LitDate, schema.KindDate},
		{LitDateTime, schema.KindDateTime},
		{LitList, schema.KindList},
	}
	for _, tc := range tests {
		if got := litType(&Lit{Kind: tc.kind}); got.Kind != tc.want || got.Nullable || got.Elem != 0 {
			t.Errorf("litType(%v) = %v, want %v", tc.kind, got, tc.want)
		}
	}
}
