package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const typedAggSchema = `
node Item {
  name: String @key  n: I64? @index  m: I32?  u: U32?  w: U64?  f: F64?  g: F32?  s: String?
  e: enum(red, green, blue)?  d: Date?  t: DateTime?  b: Bool?  tags: [String]?
}
`

// typedItems renders n random items as JSONL: small domains so that
// filters, groups and extremes collide, nulls in every column, -0.0 and
// integral floats among the floats.
func typedItems(rng *rand.Rand, from, n int) string {
	var b strings.Builder
	opt := func(s string) string {
		if rng.IntN(4) == 0 {
			return "null"
		}
		return s
	}
	floats := []string{"0.0", "-0.0", "1.0", "-2.5", "0.1", "0.30000000000000004", "1e300", "3.0", "7.25"}
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"type":"Item","data":{"name":"i%d","n":%s,"m":%s,"u":%s,"w":%s,"f":%s,"g":%s,"s":%s,"e":%s,"d":%s,"t":%s,"b":%s,"tags":%s}}`+"\n", i,
			opt(fmt.Sprint(rng.IntN(41)-20)),
			opt(fmt.Sprint(rng.IntN(2001)-1000)),
			opt(fmt.Sprint(rng.IntN(50))),
			opt(fmt.Sprint(uint64(math.MaxUint64)-uint64(rng.IntN(3)))),
			opt(floats[rng.IntN(len(floats))]),
			opt(fmt.Sprintf("%.2f", rng.Float64()*10-5)),
			opt(fmt.Sprintf(`"s%d"`, rng.IntN(12))),
			opt(fmt.Sprintf(`"%s"`, []string{"red", "green", "blue"}[rng.IntN(3)])),
			opt(fmt.Sprintf(`"2024-01-%02d"`, 1+rng.IntN(28))),
			opt(fmt.Sprintf(`"2024-02-01T%02d:00:00Z"`, rng.IntN(24))),
			opt(fmt.Sprint(rng.IntN(2) == 0)),
			opt(fmt.Sprintf(`["t%d"]`, rng.IntN(3))))
	}
	return b.String()
}

// typedFilter returns a random filter on a flat property of $i, or "".
func typedFilter(rng *rand.Rand) string {
	ops := []string{"=", "!=", "<", "<=", ">", ">="}
	op := ops[rng.IntN(len(ops))]
	switch rng.IntN(12) {
	case 0:
		return fmt.Sprintf("$i.n %s %d", op, rng.IntN(21))
	case 1:
		return fmt.Sprintf("$i.m %s $k", op)
	case 2:
		return fmt.Sprintf("$i.u %s %d", op, rng.IntN(50))
	case 3:
		return fmt.Sprintf("$i.f %s %s", op, []string{"0.0", "1.0", "0.1", "$x", "2"}[rng.IntN(5)])
	case 4:
		return fmt.Sprintf("$i.g %s %.1f", op, rng.Float64()*5)
	case 5:
		return fmt.Sprintf(`$i.s %s "s%d"`, op, rng.IntN(12))
	case 6:
		return fmt.Sprintf(`$i.e %s "%s"`, []string{"=", "!="}[rng.IntN(2)], []string{"red", "green", "blue"}[rng.IntN(3)])
	case 7:
		return fmt.Sprintf(`$i.d %s date("2024-01-%02d")`, op, 1+rng.IntN(28))
	case 8:
		return fmt.Sprintf(`$i.b %s %v`, []string{"=", "!="}[rng.IntN(2)], rng.IntN(2) == 0)
	case 9:
		return `$i.s starts_with "s1"`
	case 10:
		return fmt.Sprintf("%d %s $i.n", rng.IntN(21), op)
	}
	return fmt.Sprintf(`$i.t %s datetime("2024-02-01T%02d:00:00Z")`, op, rng.IntN(24))
}

// TestTypedAggregatesMatchImages is the differential test of the typed
// aggregate path (eval/aggregate_typed.go): random filters on flat
// properties × every aggregate over every flat property, grouped by
// nothing or by one or two flat properties, on fresh handles (answered on
// the typed columns of a streaming scan, without a node table) and on a
// handle reading whole-table images; the answers must be identical to the
// bit (floats by their bits: sums in the same order, -0 kept where the
// row path keeps it). The table has several fragments, deletion vectors,
// updated rows, nulls everywhere and a scalar index on n for some of them.
func TestTypedAggregatesMatchImages(t *testing.T) {
	ctx := context.Background()
	g, st, rng := readTestGraph(t, typedAggSchema, 11)
	for k := range 3 {
		appendJSONL(t, g, typedItems(rng, k*500, 500))
		if k == 1 {
			if _, err := g.Optimize(ctx, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	setN := headPlan(t, g, scanWrites, "set_n")
	del := headPlan(t, g, scanWrites, "del")
	for i := range 20 {
		if _, err := g.Mutate(ctx, "main", setN, map[string]any{"name": fmt.Sprintf("i%d", rng.IntN(1500)), "n": i - 10}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Mutate(ctx, "main", del, map[string]any{"name": fmt.Sprintf("i%d", rng.IntN(1500))}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	queries := typedAggQueries(rng)
	for qi, body := range queries {
		p := headPlan(t, g, "query q($k: I64, $x: F64) { "+body+" }", "q")
		params := map[string]any{"k": rng.IntN(2001) - 1000, "x": rng.Float64()*10 - 5}
		// A fresh reference per query: an image read fewer than three
		// times has no typed column (the boxed row path answers).
		got, want, cold := readFreshAndFull(t, st, imageHandle(t, st), p, params, Options{})
		if cold.columnReads.Load() != 1 {
			t.Fatalf("query %d %s: not answered on typed columns (partial reads %d)", qi, body, cold.partialReads.Load())
		}
		if msg := sameRows(got.Rows, want.Rows); msg != "" {
			t.Fatalf("query %d %s: %s\ntyped %v\nimage %v", qi, body, msg, got.Rows, want.Rows)
		}
	}
}

// TestTypedImageAggregatesMatchRows is the warm counterpart: random
// queries of the same kind on one long-lived handle, each run three times (from the
// third, filters and aggregates read the images' typed columns,
// eval/aggregate_image.go: imageAggregate and countTyped), with writes
// through that handle every few queries (derived images with dead rows),
// against a fresh handle's first, boxed answer.
func TestTypedImageAggregatesMatchRows(t *testing.T) {
	ctx := context.Background()
	g, st, rng := readTestGraph(t, typedAggSchema, 12)
	for k := range 3 {
		appendJSONL(t, g, typedItems(rng, k*500, 500))
	}
	warm := imageHandle(t, st)
	setN := headPlan(t, g, scanWrites, "set_n")
	for qi, body := range typedAggQueries(rng) {
		if qi%8 == 7 {
			for i := range 3 {
				if _, err := warm.Mutate(ctx, "main", setN, map[string]any{"name": fmt.Sprintf("i%d", rng.IntN(1500)), "n": qi + i}, MutateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		p := headPlan(t, warm, "query q($k: I64, $x: F64) { "+body+" }", "q")
		params := map[string]any{"k": rng.IntN(2001) - 1000, "x": rng.Float64()*10 - 5}
		want, _, err := imageHandle(t, st).Query(ctx, Target{}, p, params)
		if err != nil {
			t.Fatal(err)
		}
		for run := range 3 {
			got := queryAt(t, warm, Target{}, p, params)
			if msg := sameRows(got.Rows, want.Rows); msg != "" {
				t.Fatalf("query %d run %d %s: %s\nwarm %v\nboxed %v", qi, run, body, msg, got.Rows, want.Rows)
			}
		}
	}
}

// typedAggQueries returns random aggregate queries over Item: 0–3 random
// filters × count, sum, avg, min and max of random flat properties,
// grouped by nothing or by one or two of them, and a few fixed edge
// cases (no row, float keys, grouped then ordered).
func typedAggQueries(rng *rand.Rand) []string {
	props := []string{"n", "m", "u", "w", "f", "g", "s", "e", "d", "t", "b"}
	numeric := []string{"n", "m", "u", "w", "f", "g"}
	ordered := append([]string{"s", "e"}, numeric...)
	var queries []string
	for q := range 120 {
		var filters []string
		for range rng.IntN(4) {
			filters = append(filters, typedFilter(rng))
		}
		var cols []string
		switch q % 4 {
		case 1:
			cols = append(cols, "$i."+props[rng.IntN(len(props))])
		case 2:
			cols = append(cols, "$i."+props[rng.IntN(len(props))], "$i."+props[rng.IntN(len(props))])
		}
		cols = append(cols, "count($i) as c")
		for k := range 3 {
			p, fn := props[rng.IntN(len(props))], "count"
			switch rng.IntN(3) {
			case 0: // min and max take numbers and strings (the checker's T8)
				p, fn = ordered[rng.IntN(len(ordered))], []string{"min", "max"}[rng.IntN(2)]
			case 1:
				p, fn = numeric[rng.IntN(len(numeric))], []string{"sum", "avg"}[rng.IntN(2)]
			}
			cols = append(cols, fmt.Sprintf("%s($i.%s) as a%d", fn, p, k))
		}
		queries = append(queries, fmt.Sprintf("match { $i: Item %s } return { %s }", strings.Join(filters, "  "), strings.Join(cols, ", ")))
	}
	queries = append(queries,
		`match { $i: Item } return { count($i) as c }`,
		`match { $i: Item  $i.s = "nope" } return { count($i) as c, sum($i.f) as s, min($i.s) as lo, max($i.e) as hi }`,
		`match { $i: Item  $i.s = "nope" } return { $i.e, count($i) as c }`,
		`match { $i: Item } return { sum($i.f) as s, avg($i.g) as a, min($i.f) as lo, max($i.f) as hi, sum($i.w) as sw }`,
		`match { $i: Item } return { $i.f, count($i) as c, min($i.name) as first }`,
		`match { $i: Item } return { $i.e, $i.b, count($i) as c } order { c desc }`,
	)
	return queries
}

// sameRows compares result rows cell by cell, floats by their bits;
// "" when identical.
func sameRows(got, want [][]any) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return fmt.Sprintf("row %d: %d cells, want %d", i, len(got[i]), len(want[i]))
		}
		for j, g := range got[i] {
			w := want[i][j]
			gf, gok := g.(float64)
			wf, wok := w.(float64)
			switch {
			case gok && wok:
				if math.Float64bits(gf) != math.Float64bits(wf) {
					return fmt.Sprintf("row %d cell %d: %v (%#x), want %v (%#x)", i, j, gf, math.Float64bits(gf), wf, math.Float64bits(wf))
				}
			case fmt.Sprintf("%T %v", g, g) != fmt.Sprintf("%T %v", w, w):
				return fmt.Sprintf("row %d cell %d: %T %v, want %T %v", i, j, g, g, w, w)
			}
		}
	}
	return ""
}

// coldQueryAllocs returns the fewest heap allocations, over three runs, of
// plan p on a fresh handle over st (the handle's opening not counted).
func coldQueryAllocs(t *testing.T, st storage.Store, p *query.Plan, indexPath bool) (uint64, *Graph) {
	t.Helper()
	ctx := context.Background()
	best := uint64(math.MaxUint64)
	var h *Graph
	for range 3 {
		var err error
		if h, err = Open(ctx, st, Options{}); err != nil {
			t.Fatal(err)
		}
		h.snaps.SetIndexPath(indexPath)
		if _, err := h.Resolve(ctx, Target{}); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, _, err := h.Query(ctx, Target{}, p, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		best = min(best, after.Mallocs-before.Mallocs)
	}
	return best, h
}

// TestTypedAggregateAllocsFlat pins that a cold filtered, grouped
// aggregate on typed columns allocates per page, not per row: on tables
// of the same fragments and row groups, 4× the rows cost under 0.2 more
// allocations per added row over six columns — the Parquet decoder's
// per-page buffers (8 KiB pages, ~1,000 rows; eval's fold itself makes
// none per row: TestTypedAggregateAllocsIndependentOfRows). Boxing one
// value per cell would cost at least one per row and column; the
// whole-image path, measured alike, shows the fixture tells them apart.
func TestTypedAggregateAllocsFlat(t *testing.T) {
	const body = `match { $i: Item  $i.n >= 0  $i.f > 0.5 } return { $i.e, count($i) as c, avg($i.m) as a, min($i.s) as lo, max($i.f) as hi, sum($i.g) as sg }`
	allocs := map[bool][2]uint64{}
	sizes := [2]int{4000, 16000}
	for k, n := range sizes {
		g, st, rng := readTestGraph(t, typedAggSchema, 21)
		for f := range 4 {
			appendJSONL(t, g, typedItems(rng, f*n/4, n/4))
		}
		p := headPlan(t, g, "query q() { "+body+" }", "q")
		for _, typed := range []bool{true, false} {
			a, h := coldQueryAllocs(t, st, p, typed)
			if typed && h.columnReads.Load() != 1 {
				t.Fatalf("%d rows: not answered on typed columns", n)
			}
			v := allocs[typed]
			v[k] = a
			allocs[typed] = v
		}
	}
	added := float64(sizes[1] - sizes[0])
	perRow := func(v [2]uint64) float64 { return (float64(v[1]) - float64(v[0])) / added }
	t.Logf("typed columns: %d → %d allocations (%.4f per added row); whole image: %d → %d (%.2f per added row)",
		allocs[true][0], allocs[true][1], perRow(allocs[true]), allocs[false][0], allocs[false][1], perRow(allocs[false]))
	if perRow(allocs[false]) < 1 {
		t.Fatalf("the whole-image reference allocates %.2f per row: the fixture does not tell the paths apart", perRow(allocs[false]))
	}
	if perRow(allocs[true]) > 0.2 {
		t.Fatalf("typed aggregate: %.4f allocations per added row, want the decoder's per-page ones only", perRow(allocs[true]))
	}
}
