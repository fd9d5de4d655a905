package query

import (
	"strings"
	"testing"
)

// TestPlanGolden pins the logical plans of representative queries.
func TestPlanGolden(t *testing.T) {
	cat := testCatalog(t)
	cases := []struct{ name, src, want string }{
		{"pushdown and tie-break", `query q($n: String) { match { $p: Person { name: $n }  $p knows $f  $f.age > 20  $p.age < 90 } return { $f.name as friend } order { friend desc } limit 2 }`, `
query q (read) params $n: String
  Limit 2
    Project $f.name as "friend"
      Sort $f.name desc then ids $f, $p
        Filter $f.age > 20
          Expand $p -[Knows out hops 1..1]-> $f: Person
            Scan $p: Person where $p.name = $n AND $p.age < 90
  => friend: String
`},
		{"reverse direction and later binding", `query q() { match { $p: Person  $p worksAt $c  $c: Company { name: "Acme" } } return { $p.name } }`, `
query q (read)
  Project $p.name as "p.name"
    Filter $c.name = "Acme"
      Expand $p -[WorksAt out hops 1..1]-> $c: Company
        Scan $p: Person
  => p.name: String
`},
		{"traversal before its binding", `query q() { match { $a knows $b  $b: Person { name: "Bob" } } return { $a.name } }`, `
query q (read)
  Project $a.name as "a.name"
    Expand $b -[Knows in hops 1..1]-> $a: Person
      Scan $b: Person where $b.name = "Bob"
  => a.name: String
`},
		{"anti-join with inner binding", `query q() { match { $p: Person  not { $p <knows>{1,2} $x  $x.age > 3 } } return { $p.name } }`, `
query q (read)
  Project $p.name as "p.name"
    AntiJoin on $p
      Scan $p: Person
      Filter $x.age > 3
        Expand $p -[Knows both hops 1..2]-> $x: Person
          Argument $p
  => p.name: String
`},
		{"edge binding and cycle", `query q() { match { $a: Person  $b: Person  $a $w:knows $b } return { $w.since } }`, `
query q (read)
  Project $w.since as "w.since"
    Expand $a -[Knows out as $w hops 1..1]-> $b: Person (join)
      CrossJoin
        Scan $a: Person
        Scan $b: Person
  => w.since: Date?
`},
		{"rank with prefilter", `query q($v: Vector(4)) { match { $d: Doc { title: "hit" } } return { $d.slug } order { nearest($d.embedding, $v) } limit 3 }`, `
query q (read) params $v: Vector(4)
  Limit 3
    Project $d.slug as "d.slug"
      Scan $d: Doc where $d.title = "hit" rank nearest($d.embedding, $v) k=3
  => d.slug: String
`},
		{"aggregate", `query q() { match { $p: Person  $p knows $f } return { $p.name, count($f) as n } order { n desc, $p.name } }`, `
query q (read)
  Sort n desc, p.name asc then columns p.name, n
    Aggregate key $p.name as "p.name", count($f.id) as "n"
      Expand $p -[Knows out hops 1..1]-> $f: Person
        Scan $p: Person
  => p.name: String, n: I64
`},
		{"mutations", `query q($n: String, $f: String) { insert Person { name: $n, age: 3 }  insert Knows { from: $n, to: $f, since: date("2024-01-01") }  update Person set { age: 4 } where name = $n }`, `
query q (mutation) params $n: String $f: String
  InsertNode Person set name=$n, age=3
  InsertEdge Knows from=$n to=$f set since=date("2024-01-01")
  UpdateNode Person set age=4 where name = $n
`},
		{"delete cascade", `query q($n: String) { delete Person where name = $n  delete Knows where from = $n }`, `
query q (mutation) params $n: String
  DeleteNode Person where name = $n cascade Knows, WorksAt, Owns
  DeleteEdge Knows where from = $n
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := CompileQuery(cat, "q.gq", tc.src, "q")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.String(), strings.TrimPrefix(tc.want, "\n"); got != want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestPlanTablesTouched(t *testing.T) {
	cat := testCatalog(t)
	p, err := CompileQuery(cat, "q.gq", `query q($a: String, $b: String) { insert Owns { from: $a, to: $b } }`, "q")
	if err != nil {
		t.Fatal(err)
	}
	if got := tableRefs(p.Reads) + " | " + tableRefs(p.Writes); got != "node:Person node:Thing | edge:Owns" {
		t.Fatalf("got %s", got)
	}
	p, err = CompileQuery(cat, "q.gq", `query q($a: String) { delete Thing where code = $a }`, "q")
	if err != nil {
		t.Fatal(err)
	}
	if got := tableRefs(p.Reads) + " | " + tableRefs(p.Writes); got != "node:Thing edge:Owns | node:Thing edge:Owns" {
		t.Fatalf("got %s", got)
	}
}

func tableRefs(rs []TableRef) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, " ")
}
