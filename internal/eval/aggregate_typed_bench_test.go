package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
)

// BenchmarkImageAggregate compares, on one warm 100k-row image, scans
// that filter, count and aggregate on the image's typed columns (typed)
// with the same on its boxed cells (boxed: Options.NoIndexes, which keeps
// to them; the filters are not selective enough for a sorted index
// either way). Sub-benchmarks alternate typed/boxed per query, so each
// pair runs in the same minute.
func BenchmarkImageAggregate(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	g, _ := typedPair(b, randomCells(rng, 100_000), 4096)
	params := map[string]any{"k": int64(-3), "x": -1.0}
	for _, q := range []struct{ name, body string }{
		{"count-filtered", `match { $i: Item  $i.n >= $k  $i.s != "s2" } return { count($i) as c }`},
		{"avg", `match { $i: Item } return { avg($i.n) as a, max($i.f) as hi }`},
		{"grouped", `match { $i: Item  $i.f > $x } return { $i.d, count($i) as c, sum($i.n) as s, min($i.s) as lo }`},
	} {
		f, err := query.Compile(g.cat, "q.gq", "query q($k: I64, $x: F64) { "+q.body+" }")
		if err != nil {
			b.Fatal(err)
		}
		p, _ := f.Query("q")
		for _, mode := range []string{"typed", "boxed"} {
			opts := Options{NoIndexes: mode == "boxed"}
			b.Run(fmt.Sprintf("%s/%s", q.name, mode), func(b *testing.B) {
				for range 4 { // past the typed columns' build (third request)
					if _, err := Run(context.Background(), g.ms, p, params, opts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Run(context.Background(), g.ms, p, params, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
