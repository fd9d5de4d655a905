package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// benchGraph generates nodes Person rows and edges random Knows edges with
// a fixed seed (deterministic across runs).
func benchGraph(b *testing.B, nodes, edges int) *runGraph {
	b.Helper()
	g := newRunGraph(b, testPG)
	nt, _ := g.cat.Node("Person")
	pt := &snapshot.NodeTable{Type: nt, IDs: make([]string, nodes), Cols: map[string][]any{"name": make([]any, nodes), "age": make([]any, nodes)}}
	for i := range nodes {
		id := fmt.Sprintf("p%06d", i)
		pt.IDs[i] = id
		pt.Cols["name"][i] = id
		pt.Cols["age"][i] = int64(i % 100)
	}
	et, _ := g.cat.Edge("Knows")
	kt := &snapshot.EdgeTable{Type: et, IDs: make([]string, edges), Src: make([]string, edges), Dst: make([]string, edges), Cols: map[string][]any{"since": make([]any, edges)}}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range edges {
		kt.IDs[i] = fmt.Sprintf("k%07d", i)
		kt.Src[i] = pt.IDs[rng.IntN(nodes)]
		kt.Dst[i] = pt.IDs[rng.IntN(nodes)]
	}
	g.ms.NodeT["Person"] = pt
	g.ms.EdgeT["Knows"] = kt
	return g
}

func benchRun(b *testing.B, g *runGraph, src string, params map[string]any) {
	b.Helper()
	plan := g.plan(b, src)
	ctx := context.Background()
	// Warm the table caches (the row index and adjacency are built once per
	// table image, not per query).
	if _, err := Run(ctx, g.ms, plan, params, Options{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Run(ctx, g.ms, plan, params, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRunTwoHop(b *testing.B) {
	g := benchGraph(b, 100_000, 500_000)
	b.Run("chain", func(b *testing.B) {
		benchRun(b, g, `query q($n: String) { match { $p: Person { name: $n }  $p knows $m  $m knows $f } return { $f.name } }`, map[string]any{"name": "p000042", "n": "p000042"})
	})
	b.Run("bounded", func(b *testing.B) {
		benchRun(b, g, `query q($n: String) { match { $p: Person { name: $n }  $p knows{1,2} $f } return { $f.name } }`, map[string]any{"n": "p000042"})
	})
}

func BenchmarkRunFilter(b *testing.B) {
	g := benchGraph(b, 100_000, 0)
	b.Run("point", func(b *testing.B) {
		benchRun(b, g, `query q($n: String) { match { $p: Person { name: $n } } return { $p.age } }`, map[string]any{"n": "p054321"})
	})
	b.Run("range", func(b *testing.B) {
		benchRun(b, g, `query q() { match { $p: Person  $p.age >= 10  $p.age < 12 } return { $p.name } }`, nil)
	})
}
