package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// clusteredJSONL renders n P nodes with dim-dimensional vectors around
// `clusters` Gaussian centres (the shape of real embeddings: searchgen's).
func clusteredJSONL(r *rand.Rand, n, dim, clusters int) (string, [][]float32) {
	cent := make([][]float64, clusters)
	for c := range cent {
		cent[c] = make([]float64, dim)
		for k := range cent[c] {
			cent[c][k] = r.NormFloat64()
		}
	}
	var b strings.Builder
	vecs := make([][]float32, n)
	for i := range n {
		c := cent[r.IntN(clusters)]
		v := make([]float32, dim)
		parts := make([]string, dim)
		for k := range v {
			v[k] = float32(c[k] + 0.3*r.NormFloat64())
			parts[k] = fmt.Sprint(v[k])
		}
		vecs[i] = v
		fmt.Fprintf(&b, `{"type":"P","data":{"slug":"p%05d","g":%d,"v":[%s]}}`+"\n", i, i%100, strings.Join(parts, ","))
	}
	return b.String(), vecs
}

// TestVectorIndexRecall: after optimize builds IVF indexes, nearest() with
// the default probe count has recall@10 ≥ 0.95 against the exact scan,
// unfiltered and with filters keeping 50% and 1% of the rows, and always
// returns k rows (filtered nearest never starves).
func TestVectorIndexRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20k-vector index")
	}
	const n, dim = 20000, 16
	r := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	st := localStore(t, t.TempDir())
	g := mustInit(t, st, "v.pg", `node P { slug: String @key  g: I32  v: Vector(16) @index }`, "t", Options{NoAutoCompact: true})
	data, vecs := clusteredJSONL(r, n, dim, 64)
	appendJSONL(t, g, data)
	if _, err := g.Optimize(ctx, ""); err != nil {
		t.Fatal(err)
	}
	snap, nt := headNodes(t, g, "P")
	parts, _, err := snap.VectorParts(ctx, nt, "v")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if !p.Persisted || p.Index.Lists() == 0 {
			t.Fatalf("fragment not covered by a persisted IVF index (persisted %v, lists %d)", p.Persisted, p.Index.Lists())
		}
	}
	f := compileAt(t, snap, "q.gq", `
query all($x: Vector(16)) { match { $p: P } return { $p.slug } order { nearest($p.v, $x) } limit 10 }
query half($x: Vector(16)) { match { $p: P  $p.g < 50 } return { $p.slug } order { nearest($p.v, $x) } limit 10 }
query one($x: Vector(16)) { match { $p: P  $p.g = 7 } return { $p.slug } order { nearest($p.v, $x) } limit 10 }
`)
	for _, name := range []string{"all", "half", "one"} {
		p, _ := f.Query(name)
		hits, total := 0, 0
		for range 40 {
			base := vecs[r.IntN(n)]
			x := make([]any, dim)
			for k := range x {
				x[k] = float64(base[k]) + 0.1*r.NormFloat64()
			}
			params := map[string]any{"x": x}
			got, want := indexedAndExact(t, snap, p, params)
			if len(got.Rows) != 10 || len(want.Rows) != 10 {
				t.Fatalf("%s: %d rows (exact %d), want 10", name, len(got.Rows), len(want.Rows))
			}
			hits += hitsOf(got, want)
			total += 10
		}
		recall := float64(hits) / float64(total)
		t.Logf("%s: recall@10 = %.3f", name, recall)
		if recall < 0.95 {
			t.Errorf("%s: recall@10 = %.3f, want ≥ 0.95", name, recall)
		}
	}
}
