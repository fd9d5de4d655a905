package eval

import (
	"context"
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// testPG is the schema of the spec/languages.md §8 fixture.
const testPG = fixture.SocialSchema

// fixtureGraph is the §8 fixture: 4 persons, 2 companies, 3 Knows and 2
// WorksAt edges.
func fixtureGraph(t testing.TB) *runGraph {
	g := newRunGraph(t, testPG)
	g.node("Person", "Alice", "name", "Alice", "age", int64(30)).
		node("Person", "Bob", "name", "Bob", "age", int64(25)).
		node("Person", "Charlie", "name", "Charlie", "age", int64(35)).
		node("Person", "Diana", "name", "Diana", "age", int64(28)).
		node("Company", "Acme", "name", "Acme").
		node("Company", "Globex", "name", "Globex").
		edge("Knows", "k1", "Alice", "Bob").
		edge("Knows", "k2", "Alice", "Charlie").
		edge("Knows", "k3", "Bob", "Diana").
		edge("WorksAt", "w1", "Alice", "Acme").
		edge("WorksAt", "w2", "Bob", "Globex")
	return g
}

const (
	qGetPerson = `query q($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }`
	qFriendsOf = `query q($name: String) { match { $p: Person { name: $name }  $p knows $f } return { $f.name, $f.age } }`
)

// TestRunAcceptance runs every read example of spec/languages.md §9 on the
// §8 fixture (examples 1–36).
func TestRunAcceptance(t *testing.T) {
	g := fixtureGraph(t)
	checkRunCases(t, g, []runCase{
		{name: "01 get_person", src: qGetPerson, params: `{"name":"Alice"}`, want: []string{`"Alice",30`}, ordered: true, cols: "p.name,p.age"},
		{name: "02 get_person not found", src: qGetPerson, params: `{"name":"Nobody"}`, want: nil, ordered: true},
		{name: "03 adults", src: `query q() { match { $p: Person  $p.age > 30 } return { $p.name, $p.age } order { $p.age desc } }`,
			want: []string{`"Charlie",35`}, ordered: true},
		{name: "04 top_by_age", src: `query q() { match { $p: Person } return { $p.name, $p.age } order { $p.age desc } limit 2 }`,
			want: []string{`"Charlie",35`, `"Alice",30`}, ordered: true},
		{name: "05 friends_of", src: qFriendsOf, params: `{"name":"Alice"}`, want: []string{`"Bob",25`, `"Charlie",35`}},
		{name: "06 employees_of", src: `query q($company: String) { match { $c: Company { name: $company }  $p worksAt $c } return { $p.name } }`,
			params: `{"company":"Acme"}`, want: []string{`"Alice"`}, ordered: true},
		{name: "07 friends_of_friends", src: `query q($name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof } return { $fof.name } }`,
			params: `{"name":"Alice"}`, want: []string{`"Diana"`}},
		{name: "08 unemployed", src: `query q() { match { $p: Person  not { $p worksAt $_ } } return { $p.name } }`,
			want: []string{`"Charlie"`, `"Diana"`}},
		{name: "09 friend_counts", src: `query q() { match { $p: Person  $p knows $f } return { $p.name  count($f) as friends } order { friends desc } limit 20 }`,
			want: []string{`"Alice",2`, `"Bob",1`}, ordered: true, cols: "p.name,friends"},
		{name: "10 total_people", src: `query q() { match { $p: Person } return { count($p) as total } }`, want: []string{`4`}, ordered: true},
		{name: "11 age_stats", src: `query q() { match { $p: Person  $p worksAt $c } return { $c.name  sum($p.age) as total_age  avg($p.age) as avg_age  min($p.age) as youngest  max($p.age) as oldest  count($p) as headcount } }`,
			want: []string{`"Acme",30.0,30.0,30,30,1`, `"Globex",25.0,25.0,25,25,1`}, cols: "c.name,total_age,avg_age,youngest,oldest,headcount"},
		{name: "12 top_connected", src: `query q() { match { $p: Person  $p knows $f } return { $p.name, count($f) as friends } order { friends desc } limit 1 }`,
			want: []string{`"Alice",2`}, ordered: true},
		{name: "13 order asc", src: `query q() { match { $p: Person } return { $p.name, $p.age } order { $p.age asc } }`,
			want: []string{`"Bob",25`, `"Diana",28`, `"Alice",30`, `"Charlie",35`}, ordered: true},
		{name: "14 order desc unprojected key", src: `query q() { match { $p: Person } return { $p.name } order { $p.age desc } }`,
			want: []string{`"Charlie"`, `"Alice"`, `"Diana"`, `"Bob"`}, ordered: true},
		{name: "15 young", src: `query q($age: I32) { match { $p: Person  $p.age < $age } return { $p.name, $p.age } order { $p.age asc } }`,
			params: `{"age":28}`, want: []string{`"Bob",25`}, ordered: true},
		{name: "16 >=", src: `query q() { match { $p: Person  $p.age >= 30 } return { $p.name } order { $p.age asc } }`,
			want: []string{`"Alice"`, `"Charlie"`}, ordered: true},
		{name: "17 <=", src: `query q() { match { $p: Person  $p.age <= 28 } return { $p.name } order { $p.age asc } }`,
			want: []string{`"Bob"`, `"Diana"`}, ordered: true},
		{name: "18 !=", src: `query q() { match { $p: Person  $p.name != "Alice" } return { $p.name } order { $p.name asc } }`,
			want: []string{`"Bob"`, `"Charlie"`, `"Diana"`}, ordered: true},
		{name: "19 directional", src: `query q($name: String) { match { $p: Person { name: $name }  $p knows $f } return { $f.name } }`,
			params: `{"name":"Bob"}`, want: []string{`"Diana"`}},
		{name: "19 undirected", src: `query q($name: String) { match { $p: Person { name: $name }  $p <knows> $f } return { $f.name } }`,
			params: `{"name":"Bob"}`, want: []string{`"Alice"`, `"Diana"`}},
		{name: "20 undirected hops", src: `query q() { match { $p: Person { name: "Charlie" }  $p <knows>{1,2} $f } return { $f.name } }`,
			want: []string{`"Alice"`, `"Bob"`}},
		{name: "21 anti-join directed", src: `query q() { match { $p: Person  not { $p knows $x } } return { $p.name } }`,
			want: []string{`"Charlie"`, `"Diana"`}},
		{name: "21 anti-join undirected", src: `query q() { match { $p: Person  not { $p <knows> $x } } return { $p.name } }`, want: nil},
		{name: "22 predicated negation", src: `query q() { match { $p: Person  not { $p worksAt $c  $c.name = "Acme" } } return { $p.name } }`,
			want: []string{`"Bob"`, `"Charlie"`, `"Diana"`}},
		{name: "22 negation with inner binding", src: `query q() { match { $p: Person  not { $p worksAt $c  $c: Company { name: "Acme" } } } return { $p.name } }`,
			want: []string{`"Bob"`, `"Charlie"`, `"Diana"`}},
		{name: "23 double negation", src: `query q() { match { $p: Person  not { $p worksAt $c  not { $c.name = "Acme" } } } return { $p.name } }`,
			want: []string{`"Alice"`, `"Charlie"`, `"Diana"`}},
		{name: "24 negation always-true filter", src: `query q() { match { $p: Person  not { $p worksAt $c  $c.name != "" } } return { $p.name } }`,
			want: []string{`"Charlie"`, `"Diana"`}},
		{name: "25 destination binding", src: `query q() { match { $p: Person  $p worksAt $c  $c: Company { name: "Acme" } } return { $p.name } }`,
			want: []string{`"Alice"`}, ordered: true},
		{name: "25 destination no match", src: `query q() { match { $p: Person  $p worksAt $c  $c: Company { name: "NonExistent" } } return { $p.name } }`, want: nil},
		{name: "26 aligned projection", src: `query q() { match { $p: Person  $p worksAt $c  $c: Company } return { $p.name, $c.name } }`,
			want: []string{`"Alice","Acme"`, `"Bob","Globex"`}},
		{name: "27 pushdown with param", src: `query q($company: String) { match { $p: Person  $p worksAt $c  $c: Company { name: $company } } return { $p.name, $c.name } }`,
			params: `{"company":"Globex"}`, want: []string{`"Bob","Globex"`}, ordered: true},
		{name: "28 multi-hop aligned", src: `query q($name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof } return { $p.name, $mid.name, $fof.name } }`,
			params: `{"name":"Alice"}`, want: []string{`"Alice","Bob","Diana"`}, ordered: true, cols: "p.name,mid.name,fof.name"},
		{name: "29 intermediate binding", src: `query q($name: String, $mid_name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof  $mid: Person { name: $mid_name } } return { $fof.name } }`,
			params: `{"name":"Alice","mid_name":"Bob"}`, want: []string{`"Diana"`}, ordered: true},
		{name: "30 fan-out", src: `query q($name: String) { match { $p: Person { name: $name }  $p knows $f  $p worksAt $c } return { $f.name, $c.name } }`,
			params: `{"name":"Alice"}`, want: []string{`"Bob","Acme"`, `"Charlie","Acme"`}},
		{name: "31 multi-hop aggregate", src: `query q($name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof } return { $p.name, count($fof) as fof_count } }`,
			params: `{"name":"Alice"}`, want: []string{`"Alice",1`}, ordered: true},
		{name: "32 min max string", src: `query q() { match { $p: Person } return { min($p.name) as first_name  max($p.name) as last_name } }`,
			want: []string{`"Alice","Diana"`}, ordered: true},
		{name: "33 count no friends", src: `query q() { match { $p: Person  $p knows $f } return { $p.name, count($f) as friends } order { friends desc } }`,
			want: []string{`"Alice",2`, `"Bob",1`}, ordered: true},
		{name: "34 no injection", src: `query q($d: String) { match { $p: Person { name: $d } } return { $p.name } }`,
			params: `{"d":"2025-01-01' OR '1'='1"}`, want: nil},
		{name: "35 hops 1..2", src: `query q() { match { $p: Person { name: "Alice" }  $p knows{1,2} $f } return { $f.name } }`,
			want: []string{`"Bob"`, `"Charlie"`, `"Diana"`}},
		{name: "35 hops 2..2", src: `query q() { match { $p: Person { name: "Alice" }  $p knows{2,2} $f } return { $f.name } }`,
			want: []string{`"Diana"`}},
		{name: "36 count edges", src: `query q() { match { $p: Person  $p knows $f } return { count($f) as n } }`, want: []string{`3`}, ordered: true},
		{name: "36 starts_with", src: `query q() { match { $p: Person  $p.name starts_with "C" } return { $p.name } }`, want: []string{`"Charlie"`}, ordered: true},
		{name: "36 contains", src: `query q() { match { $p: Person  $p.name contains "li" } return { $p.name } }`, want: []string{`"Alice"`, `"Charlie"`}},
	})
}

// TestRunUndirectedAfterReverseEdge is the second half of §9 example 19: a
// reverse edge Diana→Bob does not duplicate Diana in the undirected union.
func TestRunUndirectedAfterReverseEdge(t *testing.T) {
	g := fixtureGraph(t)
	g.edge("Knows", "k4", "Diana", "Bob")
	checkRunCases(t, g, []runCase{
		{name: "undirected deduplicated", src: `query q($name: String) { match { $p: Person { name: $name }  $p <knows> $f } return { $f.name } }`,
			params: `{"name":"Bob"}`, want: []string{`"Alice"`, `"Diana"`}},
	})
}

// TestRunEdgeBindings is §9 example 37: after two more Knows edges (one
// parallel to Alice→Bob) edge bindings give one row per edge.
func TestRunEdgeBindings(t *testing.T) {
	g := fixtureGraph(t)
	g.edge("Knows", "k4", "Alice", "Bob", "since", date(t, "2020-05-01")).
		edge("Knows", "k5", "Alice", "Diana", "since", date(t, "2024-11-30"))
	checkRunCases(t, g, []runCase{
		{name: "filter on edge property", src: `query q() { match { $p: Person { name: "Alice" }  $p $w:knows $f  $w.since >= date("2023-01-01") } return { $f.name, $w.since } }`,
			want: []string{`"Diana","2024-11-30"`}, ordered: true, cols: "f.name,w.since"},
		{name: "one row per edge", src: `query q() { match { $p: Person { name: "Alice" }  $p $w:knows $f } return { $f.name, $w.since } }`,
			want: []string{`"Bob",null`, `"Bob","2020-05-01"`, `"Charlie",null`, `"Diana","2024-11-30"`}},
		{name: "count edge property", src: `query q() { match { $p: Person { name: "Alice" }  $p $w:knows $f } return { $f.name, count($w.since) } }`,
			want: []string{`"Bob",1`, `"Charlie",0`, `"Diana",1`}, cols: "f.name,w.since"},
		{name: "negated edge filter", src: `query q() { match { $p: Person  not { $p $w:knows $f  $w.since >= date("2030-01-01") } } return { $p.name } }`,
			want: []string{`"Alice"`, `"Bob"`, `"Charlie"`, `"Diana"`}},
		{name: "unknown source", src: `query q() { match { $p: Person { name: "Nobody" }  $p $w:knows $f } return { $f.name, $w.since } }`, want: nil},
		{name: "ordered by edge id within source", src: `query q() { match { $p: Person { name: "Alice" }  $p $w:knows $f } return { $w.since } order { $p.name } }`,
			want: []string{`null`, `"2020-05-01"`, `null`, `"2024-11-30"`}, ordered: true}, // ties: $f id, then $w id
		{name: "undirected edge binding", src: `query q() { match { $p: Person { name: "Bob" }  $p $w:<knows> $f } return { $f.name } }`,
			want: []string{`"Alice"`, `"Alice"`, `"Diana"`}},
	})
	plan := g.plan(t, `query q() { match { $p: Person { name: "Nobody" }  $p $w:knows $f } return { $f.name, $w.since } }`)
	res, err := Run(context.Background(), g.ms, plan, nil, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 0 || res.Columns[1].Type.Kind != schema.KindDate {
		t.Fatalf("rows %v, column type %v; want no rows and a Date column", res.Rows, res.Columns[1].Type)
	}
}

// TestRunChainHops is §9 example 54 (chain A→B→C→D).
func TestRunChainHops(t *testing.T) {
	g := newRunGraph(t, `node Person { name: String @key }  edge Knows: Person -> Person`)
	for _, n := range []string{"A", "B", "C", "D"} {
		g.node("Person", n, "name", n)
	}
	g.edge("Knows", "e1", "A", "B").edge("Knows", "e2", "B", "C").edge("Knows", "e3", "C", "D")
	q := func(b string) string {
		return `query q() { match { $p: Person { name: "A" }  $p knows` + b + ` $f } return { $f.name } }`
	}
	checkRunCases(t, g, []runCase{
		{name: "1..3", src: q("{1,3}"), want: []string{`"B"`, `"C"`, `"D"`}},
		{name: "2..3", src: q("{2,3}"), want: []string{`"C"`, `"D"`}},
		{name: "2..2", src: q("{2,2}"), want: []string{`"C"`}},
		{name: "reverse 1..3 from D", src: `query q() { match { $p: Person { name: "D" }  $f knows{1,3} $p } return { $f.name } }`,
			want: []string{`"A"`, `"B"`, `"C"`}},
	})
}

// TestRunAntiJoinHopBounds is §9 example 55 (a→b, c→d→e).
func TestRunAntiJoinHopBounds(t *testing.T) {
	g := newRunGraph(t, `node Person { name: String @key }  edge Knows: Person -> Person`)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		g.node("Person", n, "name", n)
	}
	g.edge("Knows", "e1", "a", "b").edge("Knows", "e2", "c", "d").edge("Knows", "e3", "d", "e")
	checkRunCases(t, g, []runCase{
		{name: "not 2..2", src: `query q() { match { $p: Person  not { $p knows{2,2} $x } } return { $p.name } }`,
			want: []string{`"a"`, `"b"`, `"d"`, `"e"`}},
	})
}

// TestRunCycles checks BFS shortest-distance semantics on cycles and
// self-loops: every node once per source, at its shortest distance.
func TestRunCycles(t *testing.T) {
	g := newRunGraph(t, `node Person { name: String @key }  edge Knows: Person -> Person`)
	for _, n := range []string{"a", "b", "c", "s"} {
		g.node("Person", n, "name", n)
	}
	// a→b→c→a is a cycle; a→c is a shortcut; s has a self-loop and s→a.
	g.edge("Knows", "e1", "a", "b").edge("Knows", "e2", "b", "c").edge("Knows", "e3", "c", "a").
		edge("Knows", "e4", "a", "c").edge("Knows", "e5", "s", "s").edge("Knows", "e6", "s", "a")
	q := func(src, b string) string {
		return `query q() { match { $p: Person { name: "` + src + `" }  $p knows` + b + ` $f } return { $f.name } }`
	}
	checkRunCases(t, g, []runCase{
		{name: "cycle 1..5 never re-reports source", src: q("a", "{1,5}"), want: []string{`"b"`, `"c"`}},
		{name: "shortest distance excludes c at 2", src: q("a", "{2,2}"), want: nil},
		{name: "cycle back to source", src: q("b", "{1,3}"), want: []string{`"c"`, `"a"`}},
		{name: "self-loop reports source at hop 1", src: q("s", "{1,2}"), want: []string{`"s"`, `"a"`, `"b"`, `"c"`}},
		{name: "self-loop not at hop 2", src: q("s", "{2,2}"), want: []string{`"b"`, `"c"`}},
		{name: "single hop self-loop", src: q("s", ""), want: []string{`"s"`, `"a"`}},
		{name: "undirected 2..2", src: `query q() { match { $p: Person { name: "b" }  $p <knows>{2,2} $f } return { $f.name } }`,
			want: []string{`"s"`}},
		{name: "parallel-free set semantics 1 hop", src: `query q() { match { $p: Person  $p knows $f } return { count($f) as n } }`,
			want: []string{`6`}},
		{name: "cycle-closing join", src: `query q() { match { $x: Person  $y: Person  $x knows $y  $y knows $x } return { $x.name, $y.name } }`,
			want: []string{`"a","c"`, `"c","a"`, `"s","s"`}},
	})
}

// TestRunParallelEdges: an unbound traversal yields each destination once
// per source row even with parallel edges; an edge binding yields one row
// per edge.
func TestRunParallelEdges(t *testing.T) {
	g := fixtureGraph(t)
	g.edge("Knows", "k0", "Alice", "Bob")
	checkRunCases(t, g, []runCase{
		{name: "set semantics", src: qFriendsOf, params: `{"name":"Alice"}`, want: []string{`"Bob",25`, `"Charlie",35`}},
		{name: "edge rows", src: `query q() { match { $p: Person { name: "Alice" }  $p $w:knows $f } return { $f.name } }`,
			want: []string{`"Bob"`, `"Bob"`, `"Charlie"`}},
	})
}

// TestRunNulls: comparisons with null never match, including !=, and null
// params match nothing.
func TestRunNulls(t *testing.T) {
	g := fixtureGraph(t)
	g.node("Person", "Eve", "name", "Eve")
	checkRunCases(t, g, []runCase{
		{name: "!= skips null", src: `query q() { match { $p: Person  $p.age != 30 } return { $p.name } }`,
			want: []string{`"Bob"`, `"Charlie"`, `"Diana"`}},
		{name: "< skips null", src: `query q() { match { $p: Person  $p.age < 100 } return { count($p) as n } }`, want: []string{`4`}},
		{name: "null param", src: `query q($a: I32?) { match { $p: Person  $p.age != $a } return { $p.name } }`, params: `{"a":null}`, want: nil},
		{name: "omitted nullable param", src: `query q($a: I32?) { match { $p: Person { age: $a } } return { $p.name } }`, want: nil},
		{name: "projection of null", src: `query q() { match { $p: Person { name: "Eve" } } return { $p.name, $p.age } }`, want: []string{`"Eve",null`}},
		{name: "order nulls first asc", src: `query q() { match { $p: Person } return { $p.name } order { $p.age asc } limit 2 }`,
			want: []string{`"Eve"`, `"Bob"`}, ordered: true},
		{name: "order nulls last desc", src: `query q() { match { $p: Person } return { $p.name } order { $p.age desc } }`,
			want: []string{`"Charlie"`, `"Alice"`, `"Diana"`, `"Bob"`, `"Eve"`}, ordered: true},
		{name: "count skips null", src: `query q() { match { $p: Person } return { count($p.age) as n, count($p) as m } }`, want: []string{`4,5`}},
	})
}

// TestRunAggregatesEmpty: no rows without keys is one row (count 0, the
// rest null); with keys it is no rows.
func TestRunAggregatesEmpty(t *testing.T) {
	g := fixtureGraph(t)
	checkRunCases(t, g, []runCase{
		{name: "no keys", src: `query q() { match { $p: Person  $p.age > 99 } return { count($p) as n, sum($p.age) as s, avg($p.age) as a, min($p.age) as lo, max($p.name) as hi } }`,
			want: []string{`0,null,null,null,null`}, ordered: true},
		{name: "with keys", src: `query q() { match { $p: Person  $p.age > 99 } return { $p.name, count($p) as n } }`, want: nil},
		{name: "grouping first-seen and multiplicity", src: `query q() { match { $p: Person  $p knows $f  $f knows{1,1} $g } return { $p.name, count($g) as n } }`,
			want: []string{`"Alice",1`}},
		{name: "sum is float", src: `query q() { match { $p: Person } return { sum($p.age) as s, avg($p.age) as a } }`, want: []string{`118.0,29.5`}},
		{name: "group by node var", src: `query q() { match { $p: Person  $p knows $f } return { $p, count($f) as n } order { n asc } }`,
			want: []string{`"Bob",1`, `"Alice",2`}, ordered: true, cols: "p,n"},
	})
}

// TestRunTieBreak: order is total — ties on the user key break by the id
// of every bound variable, sorted by variable name (§5.6, example 56).
func TestRunTieBreak(t *testing.T) {
	pg := `node Person { name: String @key  age: I32? }`
	g := newRunGraph(t, pg)
	g.node("Person", "Bob", "name", "Bob", "age", int64(30)).
		node("Person", "Alice", "name", "Alice", "age", int64(30)).
		node("Person", "Charlie", "name", "Charlie", "age", int64(25))
	checkRunCases(t, g, []runCase{
		{name: "desc then name", src: `query q() { match { $p: Person } return { $p.name } order { $p.age desc, $p.name asc } }`,
			want: []string{`"Alice"`, `"Bob"`, `"Charlie"`}, ordered: true},
		{name: "tie by id", src: `query q() { match { $p: Person } return { $p.name } order { $p.age asc } }`,
			want: []string{`"Charlie"`, `"Alice"`, `"Bob"`}, ordered: true},
		{name: "cross join ties by both ids", src: `query q() { match { $a: Person  $b: Person } return { $a.name, $b.name } order { $a.age desc } limit 3 }`,
			want: []string{`"Alice","Alice"`, `"Alice","Bob"`, `"Alice","Charlie"`}, ordered: true},
	})
	g2 := newRunGraph(t, pg)
	g2.node("Person", "Alice", "name", "Alice", "age", int64(30)).
		node("Person", "Bob", "name", "Bob").
		node("Person", "Charlie", "name", "Charlie", "age", int64(25))
	checkRunCases(t, g2, []runCase{
		{name: "nulls first asc", src: `query q() { match { $p: Person } return { $p.name } order { $p.age asc } }`,
			want: []string{`"Bob"`, `"Charlie"`, `"Alice"`}, ordered: true},
		{name: "nulls last desc", src: `query q() { match { $p: Person } return { $p.name } order { $p.age desc } }`,
			want: []string{`"Alice"`, `"Charlie"`, `"Bob"`}, ordered: true},
	})
}

// TestRunLiteralFilters is §9 example 57 on the metric fixture.
func TestRunLiteralFilters(t *testing.T) {
	g := newRunGraph(t, `
node Metric { name: String @key  label: String? @index  score: F64?  ratio: F32?  count: I32?  active: Bool?  born: Date?  seen: DateTime?  tags: [String]? }
node Tag { tname: String @key }
edge Tagged: Metric -> Tag`)
	f32 := func(f float32) float64 { return float64(f) }
	g.node("Metric", "m1", "name", "m1", "label", "alpha one", "score", 2.5, "ratio", f32(0.5), "count", int64(1), "active", true,
		"born", date(t, "2024-06-01"), "seen", datetime(t, "2024-06-01T12:00:00Z"), "tags", []any{"red", "blue"}).
		node("Metric", "m2", "name", "m2", "label", "alps", "score", 1.0, "ratio", f32(0.25), "count", int64(2), "active", false,
			"born", date(t, "2023-01-01"), "seen", datetime(t, "2023-01-01T00:00:00Z"), "tags", []any{"green"}).
		node("Metric", "m3", "name", "m3", "label", "beta ray", "score", 3.0, "ratio", f32(0.75), "count", int64(3), "active", true,
			"born", date(t, "2025-01-01"), "seen", datetime(t, "2025-01-01T00:00:00Z")).
		node("Metric", "m4", "name", "m4", "score", 0.5, "ratio", f32(0.1), "count", int64(4), "active", false,
			"born", date(t, "2022-12-31"), "seen", datetime(t, "2022-01-01T00:00:00Z"))
	q := func(filter string) string {
		return `query q() { match { $m: Metric  ` + filter + ` } return { $m.name } }`
	}
	checkRunCases(t, g, []runCase{
		{name: "score > 1.5", src: q(`$m.score > 1.5`), want: []string{`"m1"`, `"m3"`}},
		{name: "ratio <= 0.25", src: q(`$m.ratio <= 0.25`), want: []string{`"m2"`, `"m4"`}},
		{name: "count 2.7", src: `query q() { match { $m: Metric { count: 2.7 } } return { $m.name } }`, want: nil},
		{name: "count = 2.0", src: q(`$m.count = 2.0`), want: []string{`"m2"`}},
		{name: "active != true", src: q(`$m.active != true`), want: []string{`"m2"`, `"m4"`}},
		{name: "born >= date", src: q(`$m.born >= date("2024-01-01")`), want: []string{`"m1"`, `"m3"`}},
		{name: "seen < datetime", src: q(`$m.seen < datetime("2024-01-01T00:00:00Z")`), want: []string{`"m2"`, `"m4"`}},
		{name: "starts_with", src: q(`$m.label starts_with "alp"`), want: []string{`"m1"`, `"m2"`}},
		{name: "contains substring", src: q(`$m.label contains "ta r"`), want: []string{`"m3"`}},
		{name: "literal contains prop", src: q(`"the alps are tall" contains $m.label`), want: []string{`"m2"`}},
		{name: "prop starts_with prop", src: `query q() { match { $a: Metric  $b: Metric  $b.label starts_with $a.label } return { $a.name, $b.name } }`,
			want: []string{`"m1","m1"`, `"m2","m2"`, `"m3","m3"`}},
		{name: "list membership inline", src: `query q() { match { $m: Metric { tags: "red" } } return { $m.name } }`, want: []string{`"m1"`}},
		{name: "list contains", src: q(`$m.tags contains "green"`), want: []string{`"m2"`}},
		{name: "list literal contains", src: q(`["m2", "m4"] contains $m.name`), want: []string{`"m2"`, `"m4"`}},
		{name: "now", src: `query q() { match { $m: Metric  $m.seen < now() } return { count($m) as n, now() as t } }`,
			err: "aggregate"},
		{name: "now filter", src: q(`$m.seen < now()`), want: []string{`"m1"`, `"m2"`, `"m3"`, `"m4"`}},
		{name: "now projection", src: `query q() { match { $m: Metric { name: "m1" } } return { now() } }`,
			want: []string{`"2026-01-02T03:04:05.000Z"`}, cols: "now"},
		{name: "literal projection", src: `query q() { match { $m: Metric { name: "m1" } } return { 7, "x" as s } }`,
			want: []string{`7,"x"`}, cols: "literal,s"},
	})
}

// TestRunParams: conversion per ParamSpec and the typed errors of §5.2.
func TestRunParams(t *testing.T) {
	g := fixtureGraph(t)
	checkRunCases(t, g, []runCase{
		{name: "missing non-nullable", src: qGetPerson, params: `{}`, err: "parameter 'name' not provided"},
		{name: "null for non-nullable", src: qGetPerson, params: `{"name":null}`, err: "null is not accepted"},
		{name: "wrong type", src: qGetPerson, params: `{"name":3}`, err: "param 'name': expected string, got number"},
		{name: "integer from string", src: `query q($a: I32) { match { $p: Person { age: $a } } return { $p.name } }`, params: `{"a":"30"}`, want: []string{`"Alice"`}},
		{name: "undeclared ignored", src: qGetPerson, params: `{"name":"Bob","extra":1}`, want: []string{`"Bob",25`}},
		{name: "param projection", src: `query q($x: String) { match { $p: Person { name: "Bob" } } return { $x } }`, params: `{"x":"hi"}`, want: []string{`"hi"`}, cols: "x"},
	})
	plan := g.plan(t, qGetPerson)
	_, err := Run(context.Background(), g.ms, plan, nil, Options{})
	var ve *value.Error
	if !errors.As(err, &ve) || ve.Name != "name" {
		t.Fatalf("err = %v (%T), want *value.Error for name", err, err)
	}
}

func TestRunCancelled(t *testing.T) {
	g := fixtureGraph(t)
	plan := g.plan(t, qFriendsOf)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, g.ms, plan, map[string]any{"name": "Alice"}, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
