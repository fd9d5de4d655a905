package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// perfPG exercises every index path: a String key, an I64 key, nullable
// integer, float, string and date properties, and a same-type edge.
const perfPG = `
node Person { name: String @key  age: I32?  score: F64?  city: String?  born: Date? }
node Item { code: I64 @key  label: String? }
edge Knows: Person -> Person { since: I32? }
edge Likes: Person -> Item
`

// perfGraph builds a random graph: nodes nodes with nulls, -0/0 and NaN
// among the values, edges Knows edges including self-loops, parallel edges
// and edges whose endpoints are not nodes.
func perfGraph(t testing.TB, seed uint64, nodes, edges int) *runGraph {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	g := newRunGraph(t, perfPG)
	maybe := func(v any) any {
		if rng.IntN(10) == 0 {
			return nil
		}
		return v
	}
	for i := range nodes {
		score := []float64{0, math.Copysign(0, -1), 1.5, -2, math.NaN(), float64(rng.IntN(20))}[rng.IntN(6)]
		g.node("Person", fmt.Sprintf("p%d", i), "name", fmt.Sprintf("p%d", i),
			"age", maybe(int64(rng.IntN(30))), "score", maybe(score),
			"city", maybe(fmt.Sprintf("c%d", rng.IntN(8))), "born", maybe(int32(18000+rng.IntN(40))))
	}
	for i := range nodes / 4 {
		code := int64(i*7 - 50)
		g.node("Item", fmt.Sprint(code), "code", code, "label", maybe(fmt.Sprintf("l%d", i%5)))
	}
	end := func() string {
		if rng.IntN(25) == 0 {
			return fmt.Sprintf("ghost%d", rng.IntN(5))
		}
		return fmt.Sprintf("p%d", rng.IntN(nodes))
	}
	for i := range edges {
		src := end()
		dst := end()
		switch rng.IntN(20) {
		case 0:
			dst = src // self-loop
		case 2, 3:
			src = "p0" // a hub: degree above smallDegree
		case 1:
			if i > 0 { // parallel to the previous edge
				src, dst = g.ms.EdgeT["Knows"].Src[i-1], g.ms.EdgeT["Knows"].Dst[i-1]
			}
		}
		g.edge("Knows", fmt.Sprintf("k%04d", (i*7919)%10000), src, dst, "since", maybe(int64(2000+rng.IntN(5))))
	}
	for i := range nodes {
		g.edge("Likes", fmt.Sprintf("l%d", i), fmt.Sprintf("p%d", i), fmt.Sprint(int64(rng.IntN(nodes/4)*7-50)))
	}
	return g
}

// perfCompare runs each query with and without the indexes (Options.
// NoIndexes), the indexed run repeatedly (sorted indexes are built after
// snapshot.IndexAfterScans scans, pair indexes after as many requests
// more), and requires identical results, row order included.
func perfCompare(t *testing.T, g *runGraph, src string, params []map[string]any) {
	t.Helper()
	plan, err := query.CompileQuery(g.cat, "q.gq", src, "q")
	if err != nil {
		t.Fatalf("compile %s: %v", src, err)
	}
	ctx := context.Background()
	for _, ps := range params {
		want, werr := Run(ctx, g.ms, plan, ps, Options{NoIndexes: true})
		for round := range indexRounds {
			got, gerr := Run(ctx, g.ms, plan, ps, Options{})
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%s %v: error %v, reference %v", src, ps, gerr, werr)
			}
			if werr != nil {
				break
			}
			if !reflect.DeepEqual(fmtRows(got.Rows), fmtRows(want.Rows)) {
				t.Fatalf("%s %v round %d:\n got %v\nwant %v", src, ps, round, fmtRows(got.Rows), fmtRows(want.Rows))
			}
		}
	}
}

// indexRounds is how many times the index tests run a query: enough for
// its sorted indexes and then its pair index to be built and used.
const indexRounds = 2*snapshot.IndexAfterScans + 2

// fmtRows renders rows for comparison (NaN != NaN under DeepEqual).
func fmtRows(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r...)
	}
	return out
}

func TestScanIndexMatchesFullScan(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		// The large graph makes range intervals big enough for the bitmap
		// row ordering.
		g := perfGraph(t, seed, []int{400, 400, 3000}[seed-1], 0)
		ints := func(vals ...any) []map[string]any {
			var out []map[string]any
			for _, v := range vals {
				out = append(out, map[string]any{"v": v})
			}
			return out
		}
		cases := []struct {
			name, src string
			params    []map[string]any
		}{
			{"key", `query q($v: String) { match { $p: Person { name: $v } } return { $p.name, $p.age } }`,
				ints("p0", "p17", "p399", "p400", "nobody", "")},
			{"int key", `query q($v: I64) { match { $i: Item { code: $v } } return { $i.label } }`,
				ints(-50, -43, 0, 6, 20, 7*99-50, 1<<40)},
			{"int key float", `query q($v: F64) { match { $i: Item  $i.code = $v } return { $i.label } }`,
				ints(-43.0, -42.5, 6.0)},
			{"eq", `query q($v: I32) { match { $p: Person  $p.age = $v } return { $p.name } }`,
				ints(0, 5, 29, 30, -1)},
			{"eq string", `query q($v: String) { match { $p: Person  $p.city = $v } return { $p.name } }`,
				ints("c0", "c7", "zz")},
			{"range", `query q($v: I32) { match { $p: Person  $p.age >= $v  $p.age < 12 } return { $p.name } }`,
				ints(-3, 0, 10, 11, 12, 40)},
			{"range flipped", `query q($v: I32) { match { $p: Person  $v <= $p.age  20 > $p.age } return { $p.name } }`,
				ints(0, 15, 19)},
			{"range float bound", `query q() { match { $p: Person  $p.age > 2.5  $p.age <= 4 } return { $p.name } }`, ints(nil)},
			{"two props", `query q($v: String) { match { $p: Person  $p.city = $v  $p.age <= 3 } return { $p.name, $p.age } }`,
				ints("c1", "c2")},
			// Two equalities: their row-ordered intervals intersect, then
			// (from the pair's third request) are one pair index interval.
			{"two equalities", `query q($v: String) { match { $p: Person  $p.city = $v  $p.age = 3 } return { $p.name, $p.age } }`,
				ints("c1", "c2", "zz")},
			{"two equalities by age", `query q($v: I32) { match { $p: Person  $p.age = $v  $p.city = "c3" } return { $p.name } }`,
				ints(0, 3, 29, 30, 2.0)},
			{"two equalities of floats", `query q($v: F64) { match { $p: Person  $p.score = $v  $p.born = date("2019-04-20") } return { $p.name, $p.score } }`,
				ints(0.0, math.Copysign(0, -1), math.NaN(), 1.5, 19.0)},
			{"three equalities", `query q($v: I32) { match { $p: Person  $p.age = $v  $p.city = "c2"  $p.score = 1.5 } return { $p.name } }`,
				ints(1, 4, 7)},
			{"two equalities and a range", `query q($v: I32) { match { $p: Person  $p.city = "c1"  $p.age = $v  $p.age >= 2  $p.score < 9.5 } return { $p.name } }`,
				ints(1, 2, 3, 7)},
			{"float", `query q($v: F64) { match { $p: Person  $p.score >= $v } return { $p.name } }`,
				ints(0.0, -1.0, 1.5, 19.0, math.Inf(1))},
			{"float zero", `query q() { match { $p: Person  $p.score = 0 } return { $p.name } }`, ints(nil)},
			{"date", `query q() { match { $p: Person  $p.born >= date("2019-04-10")  $p.born < date("2019-04-15") } return { $p.name } }`, ints(nil)},
			{"ne not indexed", `query q() { match { $p: Person  $p.age != 3  $p.age < 5 } return { $p.name } }`, ints(nil)},
			{"count", `query q() { match { $p: Person  $p.age >= 3  $p.age <= 9 } return { count($p) as n } }`, ints(nil)},
			{"traversal from key", `query q($v: String) { match { $p: Person { name: $v }  $p likes $i } return { $i.code } }`,
				ints("p1", "p2")},
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%d", c.name, seed), func(t *testing.T) {
				perfCompare(t, g, c.src, c.params)
			})
		}
	}
}

func TestExpandRowsMatchByID(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		g := perfGraph(t, seed, 120, 500)
		var starts []map[string]any
		for i := range 12 {
			starts = append(starts, map[string]any{"n": fmt.Sprintf("p%d", i*10)})
		}
		for _, src := range []string{
			`query q($n: String) { match { $p: Person { name: $n }  $p knows $f } return { $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $f knows $p } return { $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $p <knows> $f } return { $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $p knows{1,3} $f } return { $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $p knows{2,2} $f } return { $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $p <knows>{1,2} $f } return { $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $f knows{1,2} $p } return { $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $p $w:knows $f } return { $w.since, $f.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $p knows $a  $a knows $b  $b knows $p } return { $a.name, $b.name } }`,
			`query q($n: String) { match { $p: Person { name: $n }  $p knows $a  $a knows $b } return { $b.name } }`,
			`query q() { match { $p: Person  $p.age = 3  $p knows $f } return { $p.name, $f.name } }`,
			`query q() { match { $p: Person  $p knows{1,2} $f } return { count($f) as n } }`,
		} {
			t.Run(fmt.Sprint(seed), func(t *testing.T) { perfCompare(t, g, src, starts) })
		}
	}
}

// TestCountOnlyMatchesRows pins countOnly (count($v) over a scan, rows
// counted without being emitted) against the number of rows the same scan
// emits, with and without indexes, over equality, range, float, inequality
// and unfiltered scans and several count columns.
func TestCountOnlyMatchesRows(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{1, 3} {
		g := perfGraph(t, seed, []int{0, 400, 0, 3000}[seed], 0)
		for _, filters := range []string{
			`$p.age >= 3  $p.age <= 9`,
			`$p.age = 5`,
			`$p.city = "c1"  $p.age <= 3`,
			`$p.city = "c1"  $p.age = 3`,
			`$p.age = 3  $p.city = "c2"  $p.score >= 1.5`,
			`$p.age > 2.5  $p.age <= 40`,
			`$p.score >= 1.5`,
			`$p.age != 3`,
			`$p.age >= 30000`,
			``,
		} {
			count := g.plan(t, `query q() { match { $p: Person `+filters+` } return { count($p) as n, count($p) as m } }`)
			rows := g.plan(t, `query q() { match { $p: Person `+filters+` } return { $p.name } }`)
			for _, opts := range []Options{{}, {NoIndexes: true}} {
				for round := range indexRounds {
					want, err := Run(ctx, g.ms, rows, nil, opts)
					if err != nil {
						t.Fatal(err)
					}
					got, err := Run(ctx, g.ms, count, nil, opts)
					if err != nil {
						t.Fatal(err)
					}
					n := int64(len(want.Rows))
					if len(got.Rows) != 1 || !reflect.DeepEqual(got.Rows[0], []any{n, n}) {
						t.Fatalf("%q %+v round %d: count %v, scan emitted %d rows", filters, opts, round, got.Rows, n)
					}
				}
			}
		}
	}
}
