package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

const typedPG = `node Item { name: String @key  n: I64?  u: U64?  f: F64?  s: String?  d: Date? }`

// columnSnap streams prebuilt Arrow batches of Item as a ColumnSource;
// its node table (the embedded Mem's) is empty, so a read that does not
// take the typed path sees no row.
type columnSnap struct {
	*snapshot.Mem
	batches []map[string]arrow.Array
	rows    []int
	scans   int
}

func (c *columnSnap) ScanColumns(_ context.Context, typ string, props []string, fn func(int, []arrow.Array) error) (bool, error) {
	if typ != "Item" {
		return false, nil
	}
	c.scans++
	cols := make([]arrow.Array, len(props))
	for b, m := range c.batches {
		for k, p := range props {
			cols[k] = m[p]
		}
		if err := fn(c.rows[b], cols); err != nil {
			return true, err
		}
	}
	return true, nil
}

// typedCells is the values of Item's columns, row by row (nil: null).
type typedCells struct {
	n []any // int64
	u []any // uint64
	f []any // float64
	s []any // string
	d []any // int32 days
}

func randomCells(rng *rand.Rand, rows int) typedCells {
	var c typedCells
	floats := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1.5, -2.25, 1e300, 3}
	opt := func(v any) any {
		if rng.IntN(4) == 0 {
			return nil
		}
		return v
	}
	for range rows {
		c.n = append(c.n, opt(int64(rng.IntN(21)-10)))
		c.u = append(c.u, opt(uint64(math.MaxUint64)-uint64(rng.IntN(4))))
		c.f = append(c.f, opt(floats[rng.IntN(len(floats))]))
		c.s = append(c.s, opt(fmt.Sprintf("s%d", rng.IntN(7))))
		c.d = append(c.d, opt(int32(19000+rng.IntN(10))))
	}
	return c
}

// arrays builds rows [lo, hi) of the cells as Arrow columns.
func (c typedCells) arrays(lo, hi int) map[string]arrow.Array {
	mem := memory.DefaultAllocator
	nb, ub, fb := array.NewInt64Builder(mem), array.NewUint64Builder(mem), array.NewFloat64Builder(mem)
	sb, db := array.NewStringBuilder(mem), array.NewDate32Builder(mem)
	for i := lo; i < hi; i++ {
		appendOr(c.n[i], nb.AppendNull, func(v any) { nb.Append(v.(int64)) })
		appendOr(c.u[i], ub.AppendNull, func(v any) { ub.Append(v.(uint64)) })
		appendOr(c.f[i], fb.AppendNull, func(v any) { fb.Append(v.(float64)) })
		appendOr(c.s[i], sb.AppendNull, func(v any) { sb.Append(v.(string)) })
		appendOr(c.d[i], db.AppendNull, func(v any) { db.Append(arrow.Date32(v.(int32))) })
	}
	return map[string]arrow.Array{"n": nb.NewArray(), "u": ub.NewArray(), "f": fb.NewArray(), "s": sb.NewArray(), "d": db.NewArray()}
}

func appendOr(v any, null func(), add func(any)) {
	if v == nil {
		null()
		return
	}
	add(v)
}

// typedPair returns the same rows as a boxed node table (g) and as Arrow
// batches of batch rows (cs).
func typedPair(t testing.TB, cells typedCells, batch int) (*runGraph, *columnSnap) {
	g := newRunGraph(t, typedPG)
	for i := range cells.n {
		g.node("Item", fmt.Sprintf("i%d", i), "name", fmt.Sprintf("i%d", i), "n", cells.n[i], "u", cells.u[i], "f", cells.f[i], "s", cells.s[i], "d", cells.d[i])
	}
	empty := newRunGraph(t, typedPG)
	cs := &columnSnap{Mem: empty.ms}
	for lo := 0; lo < len(cells.n); lo += batch {
		hi := min(lo+batch, len(cells.n))
		cs.batches = append(cs.batches, cells.arrays(lo, hi))
		cs.rows = append(cs.rows, hi-lo)
	}
	return g, cs
}

func runOn(t testing.TB, snap Snapshot, cat *runGraph, src string) *Result {
	t.Helper()
	f, err := query.Compile(cat.cat, "q.gq", src)
	if err != nil {
		t.Fatalf("compile %s: %v", src, err)
	}
	p, err := f.Query("q")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), snap, p, map[string]any{"k": int64(-3), "x": -1.0}, Options{})
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return res
}

// TestTypedAggregateMatchesRows: aggregates folded on Arrow columns give
// the row path's answer on the same rows, bit for bit, with NaN, ±0 and
// the infinities among the floats (NaN orders last and equals NaN; -0
// equals 0 and the first of them is kept), uint64 values past 2^63,
// dates and nulls everywhere.
func TestTypedAggregateMatchesRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g, cs := typedPair(t, randomCells(rng, 3000), 512)
	queries := []string{
		`match { $i: Item } return { count($i) as c, count($i.f) as cf, sum($i.f) as s, avg($i.f) as a, min($i.f) as lo, max($i.f) as hi }`,
		`match { $i: Item  $i.f > $x } return { count($i) as c, min($i.f) as lo, max($i.f) as hi, sum($i.n) as sn }`,
		`match { $i: Item  $i.f != 0.0 } return { $i.f, count($i) as c, min($i.s) as lo }`,
		`match { $i: Item  $i.f <= 0 } return { $i.f, $i.s, count($i) as c, avg($i.u) as a, max($i.u) as hi }`,
		`match { $i: Item  $i.n >= $k  $i.n < 5 } return { $i.d, count($i) as c, sum($i.u) as su, min($i.n) as lo, max($i.s) as hi }`,
		`match { $i: Item  $i.d >= date("2022-01-05")  $i.s starts_with "s1" } return { count($i) as c, max($i.f) as hi }`,
		`match { $i: Item  $i.s > "s3"  $i.u > 9223372036854775807 } return { $i.n, count($i) as c }`,
		`match { $i: Item  $i.s = "none" } return { count($i) as c, sum($i.f) as s, min($i.s) as lo }`,
		`match { $i: Item  $i.s = "none" } return { $i.s, count($i) as c }`,
	}
	for _, body := range queries {
		src := "query q($k: I64, $x: F64) { " + body + " }"
		cs.scans = 0
		got := runOn(t, cs, g, src)
		if cs.scans != 1 {
			t.Fatalf("%s: typed columns scanned %d times, want once", body, cs.scans)
		}
		want := runOn(t, g.ms, g, src)
		if msg := sameCells(got.Rows, want.Rows); msg != "" {
			t.Fatalf("%s: %s\ntyped %v\nrows  %v", body, msg, got.Rows, want.Rows)
		}
	}
}

// sameCells compares result rows, floats by their bits; "" when identical.
func sameCells(got, want [][]any) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		for j := range got[i] {
			g, w := got[i][j], want[i][j]
			gf, gok := g.(float64)
			wf, wok := w.(float64)
			if gok && wok {
				if math.Float64bits(gf) != math.Float64bits(wf) {
					return fmt.Sprintf("row %d cell %d: %v, want %v (bits differ: %x, %x)", i, j, gf, wf, math.Float64bits(gf), math.Float64bits(wf))
				}
				continue
			}
			if fmt.Sprintf("%T %v", g, g) != fmt.Sprintf("%T %v", w, w) {
				return fmt.Sprintf("row %d cell %d: %T %v, want %T %v", i, j, g, g, w, w)
			}
		}
	}
	return ""
}

// TestTypedAggregateAllocsIndependentOfRows pins that folding typed
// columns boxes nothing per cell: the same grouped, filtered aggregate
// over 4× the rows (in 4× the batches) makes no more allocations. (Both
// sizes give every group more than 255 rows: a result count below 256
// boxes without allocating, which would make the smaller run cheaper.)
func TestTypedAggregateAllocsIndependentOfRows(t *testing.T) {
	const src = `query q($k: I64, $x: F64) { match { $i: Item  $i.n >= $k  $i.f > $x } return { $i.d, count($i) as c, sum($i.f) as s, avg($i.n) as a, min($i.s) as lo, max($i.u) as hi, count($i.s) as cs } }`
	var allocs [2]float64
	for k, rows := range []int{32768, 131072} {
		rng := rand.New(rand.NewPCG(7, 8))
		g, cs := typedPair(t, randomCells(rng, rows), 4096)
		f, err := query.Compile(g.cat, "q.gq", src)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := f.Query("q")
		params := map[string]any{"k": int64(-3), "x": -1.0}
		allocs[k] = testing.AllocsPerRun(20, func() {
			if _, err := Run(context.Background(), cs, p, params, Options{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("allocations per run: %.0f at 32,768 rows, %.0f at 131,072", allocs[0], allocs[1])
	if allocs[1] > allocs[0] {
		t.Fatalf("4× the rows made %.0f allocations, %.0f at 1×: something is allocated per row or batch", allocs[1], allocs[0])
	}
}

// TestImageAggregateMatchesRows: on a decoded image, aggregates and
// filters answered on its typed columns (built on the third request)
// give the boxed reference's answer (Options.NoIndexes keeps to the
// boxed cells), bit for bit, with NaN, ±0, ±Inf, large uint64 and nulls.
func TestImageAggregateMatchesRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	// More rows than typedScanRows: filtered counts visit them typed too.
	g, _ := typedPair(t, randomCells(rng, 6000), 512)
	queries := []string{
		`match { $i: Item } return { count($i.f) as cf, sum($i.f) as s, avg($i.f) as a, min($i.f) as lo, max($i.f) as hi }`,
		`match { $i: Item  $i.f > $x } return { count($i) as c, min($i.f) as lo, max($i.f) as hi, sum($i.n) as sn }`,
		`match { $i: Item  $i.f != 0.0 } return { $i.f, count($i) as c, min($i.s) as lo }`,
		`match { $i: Item  $i.n >= $k  $i.n < 5 } return { $i.d, count($i) as c, sum($i.u) as su, min($i.n) as lo, max($i.s) as hi }`,
		`match { $i: Item  $i.n = 3 } return { count($i) as c, avg($i.f) as a }`,
		`match { $i: Item  $i.s > "s3"  $i.u > 9223372036854775807 } return { $i.n, count($i) as c }`,
		`match { $i: Item  $i.f < 2 } return { count($i) as c }`,
		`match { $i: Item  $i.s != "s2"  $i.n > $k } return { count($i) as c }`,
		`match { $i: Item  $i.s = "none" } return { count($i) as c, sum($i.f) as s, min($i.s) as lo }`,
	}
	for _, body := range queries {
		src := "query q($k: I64, $x: F64) { " + body + " }"
		f, err := query.Compile(g.cat, "q.gq", src)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := f.Query("q")
		params := map[string]any{"k": int64(-3), "x": -1.0}
		want, err := Run(context.Background(), g.ms, p, params, Options{NoIndexes: true})
		if err != nil {
			t.Fatal(err)
		}
		for run := range 4 { // the typed columns exist from the third
			got, err := Run(context.Background(), g.ms, p, params, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if msg := sameCells(got.Rows, want.Rows); msg != "" {
				t.Fatalf("%s, run %d: %s\ntyped %v\nrows  %v", body, run, msg, got.Rows, want.Rows)
			}
		}
	}
	for _, p := range []string{"n", "u", "f", "s", "d"} {
		if g.ms.NodeT["Item"].TypedColumn(p) == nil {
			t.Fatalf("no typed column of %s was built", p)
		}
	}
}
