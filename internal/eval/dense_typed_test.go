package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// memDenseTyped is memDense with the typed scan of snapshot.Snapshot
// (denseTypedSource): Item's rows as prebuilt Arrow batches, the same
// cells as the Mem table's.
type memDenseTyped struct {
	memDense
	cs *columnSnap
}

func (m *memDenseTyped) DenseScanColumns(_ context.Context, d *snapshot.DenseNodes, props []string, fn func(n int, cols []arrow.Array) error) error {
	if d.Type != "Item" {
		return fmt.Errorf("no typed batches of %s", d.Type)
	}
	cols := make([]arrow.Array, len(props))
	for b, bm := range m.cs.batches {
		for k, p := range props {
			cols[k] = bm[p]
		}
		if err := fn(m.cs.rows[b], cols); err != nil {
			return err
		}
	}
	return nil
}

// typedTraversal returns a random graph of Items (NaN, ±0, ±Inf, uint64
// past 2^63, nulls in every column) with Link edges (parallel edges,
// self-loops), boxed (memDense) and typed (memDenseTyped, batches of
// batch rows).
func typedTraversal(t testing.TB, seed uint64, rows, batch int) (*runGraph, *memDense, *memDenseTyped) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	cells := randomCells(rng, rows)
	_, cs := typedPair(t, cells, batch)
	linked := newRunGraph(t, typedPG+"\nedge Link: Item -> Item")
	for i := range rows {
		linked.node("Item", fmt.Sprintf("i%d", i), "name", fmt.Sprintf("i%d", i), "n", cells.n[i], "u", cells.u[i], "f", cells.f[i], "s", cells.s[i], "d", cells.d[i])
	}
	e := 0
	for i := range rows {
		for range rng.IntN(5) {
			d := rng.IntN(rows)
			if rng.IntN(10) == 0 {
				d = i
			}
			linked.edge("Link", fmt.Sprintf("e%d", e), fmt.Sprintf("i%d", i), fmt.Sprintf("i%d", d))
			e++
		}
	}
	cs.Mem = linked.ms
	return linked, &memDense{Mem: linked.ms}, &memDenseTyped{memDense: memDense{Mem: linked.ms}, cs: cs}
}

// TestDenseTypedMatchesBoxed: dense traversal reads on typed columns —
// the projected columns of the walk (dense_columns.go fillColumns) and
// root aggregates (dense.go aggregateByRootTyped) — give the boxed dense
// path's and the row executor's answers bit for bit: NaN, ±0 and ±Inf
// among floats (as keys too), uint64 values past 2^63, nulls, Date keys,
// groups in first-seen order and float sums added row by row.
func TestDenseTypedMatchesBoxed(t *testing.T) {
	bodies := []string{
		`$a: Item  $a link $b } return { $a.n, $b.u, $b.f, $a.s, $b.d, $b }`,
		`$a: Item  $a link $b  $b.n > 0 } return { $a.f, $b.f, $b.u } limit 40`,
		`$a: Item  $a link{1,2} $b } return { $a.d, $b.s }`,
		`$a: Item  $a link $b } return { count($b) as c, sum($a.f) as s, avg($a.n) as v, min($a.f) as lo, max($a.u) as hi }`,
		`$a: Item  $a link $b } return { $a.s, count($b) as c, sum($a.f) as sf, max($a.s) as ms }`,
		`$a: Item  $a link $b } return { $a.f, count($a) as c, sum($a.u) as su, avg($a.f) as af }`,
		`$a: Item  $a.n < 3  $a <link> $b } return { $a.d, $a.u, min($a.u) as mu, max($a.f) as mf, sum($a.n) as sn }`,
		// Walks (dense_aggregate.go): keys and arguments of the far end.
		`$a: Item  $a link $b } return { $b.s, sum($b.f) as s, max($b.u) as m }`,
		`$a: Item  $a link{1,2} $b } return { $b.f, count($a) as c, min($b.s) as ms, max($b.f) as mf, avg($b.u) as au }`,
		`$a: Item  $a.s != "s1"  $a <link> $b } return { $b.d, $a.n, count($b.n) as c, min($b.n) as mn, sum($b.n) as sn }`,
		`$a: Item  $a link $b } return { min($b.f) as lo, max($b.f) as hi, sum($b.f) as s, count($b.f) as c }`,
		`$a: Item  $a link $b } return { $b, count($a) as c }`, // an id key: boxed fold
	}
	for _, seed := range []uint64{1, 2, 3} {
		g, boxed, typed := typedTraversal(t, seed, 600, 97)
		for bi, body := range bodies {
			src := "query q() { match { " + body + " }"
			want := runOn(t, g.ms, g, src)
			for name, snap := range map[string]Snapshot{"boxed": boxed, "typed": typed} {
				got := runOn(t, snap, g, src)
				if msg := sameCells(got.Rows, want.Rows); msg != "" {
					t.Fatalf("seed %d query %d (%s): %s", seed, bi, name, msg)
				}
			}
			if boxed.built == 0 || typed.built == 0 {
				t.Fatalf("seed %d query %d: dense path not taken", seed, bi)
			}
		}
	}
}

// TestDenseTypedAllocsIndependentOfRows: a root aggregate and a walk's
// aggregate over a traversal, grouped by a string with a float sum and a
// string extreme, fold typed columns with allocations that do not grow
// with the rows; the boxed folds make at least one per row.
func TestDenseTypedAllocsIndependentOfRows(t *testing.T) {
	for _, q := range []struct {
		src string
		// boxed: the memDense read folds boxed cells (a root aggregate);
		// a walk's fold is typed on either (its columns are typed either
		// way): the boxed fold it replaced made 21,609 and 87,331.
		boxed bool
	}{
		{`query q() { match { $a: Item  $a link $b } return { $a.s, sum($a.f) as s, max($a.s) as m, count($b) as c } }`, true},
		{`query q() { match { $a: Item  $a link $b } return { $b.s, sum($b.f) as s, max($b.s) as m, count($a) as c } }`, false},
	} {
		src := q.src
		allocs := map[string][]float64{}
		for _, rows := range []int{2000, 8000} {
			g, boxed, typed := typedTraversal(t, 7, rows, rows)
			for name, snap := range map[string]Snapshot{"boxed": boxed, "typed": typed} {
				runOn(t, snap, g, src) // warm
				allocs[name] = append(allocs[name], testing.AllocsPerRun(3, func() { runOn(t, snap, g, src) }))
			}
		}
		t.Logf("%s: allocations per run at 2,000 and 8,000 items: %v", src, allocs)
		if a := allocs["typed"]; a[1] > a[0]*1.1+50 {
			t.Fatalf("typed allocations grew with the rows: %v", a)
		}
		if a := allocs["boxed"]; q.boxed && a[1]-a[0] < 6000 {
			t.Fatalf("boxed allocations %v: expected one per added row at least", a)
		}
	}
}
