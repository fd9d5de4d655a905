package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestColdSearchReadsIndexes: a bm25 top-k on a fresh handle (a CLI
// process) over a table whose fragments have full-text indexes reads the
// table state, the indexes and deletion vectors, and only the rows it
// returns (their pages) — at 8k rows under half the table's bytes, index
// objects included — and answers exactly
// what a warm handle and the exact scorer answer, ties and score
// projections included.
func TestColdSearchReadsIndexes(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	g := mustInit(t, mem, "s.pg", `node Doc { slug: String @key  bio: String @index  pad: String  v: Vector(16) }`, "t", Options{NoAutoCompact: true, CompactTargetRows: 3000})
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "delta", "graph", "vector", "search", "learning", "time", "omega"}
	var b strings.Builder
	for i := range 8000 {
		var w []string
		for range 2 + r.IntN(6) {
			w = append(w, words[r.IntN(len(words))])
		}
		vec := make([]string, 16)
		for k := range vec {
			vec[k] = fmt.Sprintf("%.3f", r.Float64())
		}
		pad := make([]byte, 100)
		for k := range pad {
			pad[k] = byte('a' + r.IntN(26))
		}
		fmt.Fprintf(&b, `{"type":"Doc","data":{"slug":"d%05d","bio":%q,"pad":"%s","v":[%s]}}`+"\n", i, strings.Join(w, " "), pad, strings.Join(vec, ","))
		if i%3000 == 2999 {
			if _, err := g.Load(ctx, strings.NewReader(b.String()), LoadRequest{Mode: LoadAppend}); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if _, err := g.Load(ctx, strings.NewReader(b.String()), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Optimize(ctx, ""); err != nil {
		t.Fatal(err)
	}
	mutate(t, g, `query del($s: String) { delete Doc where slug = $s }`, map[string]any{"s": "d00010"})
	src := `
query top($q: String) { match { $d: Doc } return { $d.slug, $d.bio, bm25($d.bio, $q) as s } order { bm25($d.bio, $q) } limit 7 }
query ids($q: String) { match { $d: Doc } return { $d } order { bm25($d.bio, $q) } limit 25 }
`
	var total int64
	mem.List(ctx, "tables/", "", func(info storage.Info) error {
		if strings.Contains(info.Key, "/data/") {
			total += info.Size
		}
		return nil
	})
	for _, q := range []string{"graph", "alpha beta", "omega time learning", "nothing"} {
		for _, name := range []string{"top", "ids"} {
			params := map[string]any{"q": q}
			got, snap, p, read, objs := coldRun(t, mem, src, name, params)
			// The full-text indexes are read by range only: each one's
			// front, then per query term at most its dictionary block and
			// its postings.
			if fts := objs["fts"]; fts.Gets != 0 || fts.Ranges > int64(len(fts.Keys)*(1+2*len(index.QueryTerms(q)))) {
				t.Errorf("%s(%q): full-text index reads %+v", name, q, fts)
			}
			for class := range objs {
				if class == "ivf" || class == "idx" {
					t.Errorf("%s(%q): read %s objects", name, q, class)
				}
			}
			var bytes int64
			for _, c := range read {
				bytes += c.Bytes
			}
			if bytes*2 > total {
				t.Errorf("%s(%q): read %d bytes, more than half the table's %d", name, q, bytes, total)
			}
			want, err := eval.Run(ctx, snap, p, params, eval.Options{NoIndexes: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("%s(%q): cold %v\nexact %v", name, q, got.Rows, want.Rows)
			}
			t.Logf("%s(%q): %d rows, %d requests, %d bytes of %d; by object: %v", name, q, len(got.Rows), read.Requests(), bytes, total, objs)
		}
	}
}

// coldRun runs query name of src on a fresh handle over mem (a CLI
// process) and returns the result, the snapshot and plan, the requests
// and bytes the query cost and its reads per object class; it fails
// unless the ranking took the partial (index) path.
func coldRun(t *testing.T, mem storage.Store, src, name string, params map[string]any) (*eval.Result, *snapshot.Snapshot, *query.Plan, storage.Counts, map[string]objCost) {
	t.Helper()
	ctx := context.Background()
	kl := newObjLog(mem)
	cnt := storage.NewCounting(kl)
	cold := mustOpen(t, cnt, Options{})
	snap := resolve(t, cold, Target{})
	p, err := compileAt(t, snap, "q.gq", src).Query(name)
	if err != nil {
		t.Fatal(err)
	}
	before := cnt.Snapshot()
	kl.take()
	got, err := cold.QueryAt(ctx, snap, p, params)
	if err != nil {
		t.Fatal(err)
	}
	read := cnt.Snapshot().Sub(before)
	objs := kl.take()
	if cold.partialReads.Load() != 1 {
		t.Fatalf("%s(%v): the cold ranking did not take the index path", name, params)
	}
	return got, snap, p, read, objs
}

// hybridGraph is a 14,000-row table over three fragments (two with IVF
// lists, one flat) with a full-text and a vector index, one row deleted;
// vecOf draws a vector near one of its 32 clusters.
func hybridGraph(t *testing.T) (g *Graph, mem *storage.Mem, vecOf func() []any) {
	ctx := context.Background()
	mem = storage.NewMem()
	const dim = 16
	g = mustInit(t, mem, "s.pg", `node Doc { slug: String @key  bio: String @index  pad: String  v: Vector(16) @index }`, "t", Options{NoAutoCompact: true, CompactTargetRows: 6000})
	r := rand.New(rand.NewPCG(3, 4))
	cent := make([][]float64, 32)
	for c := range cent {
		cent[c] = make([]float64, dim)
		for k := range cent[c] {
			cent[c][k] = r.NormFloat64()
		}
	}
	vecOf = func() []any {
		ce := cent[r.IntN(len(cent))]
		out := make([]any, dim)
		for k := range out {
			out[k] = float64(float32(ce[k] + 0.3*r.NormFloat64()))
		}
		return out
	}
	words := []string{"alpha", "beta", "gamma", "delta", "graph", "vector", "search", "learning", "time", "omega"}
	var b strings.Builder
	const n = 14000
	for i := range n {
		pad := make([]byte, 64)
		for k := range pad {
			pad[k] = byte('a' + r.IntN(26))
		}
		var w []string
		for range 1 + r.IntN(5) {
			w = append(w, words[r.IntN(len(words))])
		}
		v, _ := json.Marshal(vecOf())
		fmt.Fprintf(&b, `{"type":"Doc","data":{"slug":"d%05d","bio":%q,"pad":"%s","v":%s}}`+"\n", i, strings.Join(w, " "), pad, v)
		if i%6000 == 5999 || i == n-1 {
			if _, err := g.Load(ctx, strings.NewReader(b.String()), LoadRequest{Mode: LoadAppend}); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if _, err := g.Optimize(ctx, ""); err != nil {
		t.Fatal(err)
	}
	mutate(t, g, `query del($s: String) { delete Doc where slug = $s }`, map[string]any{"s": "d00010"})
	return g, mem, vecOf
}

// TestColdVectorRankingsReadIndexes: an unfiltered nearest() top-k on a fresh
// handle over a table whose fragments have IVF indexes reads the table
// state, deletion vectors, each vector index's front and the lists it
// probes (by range: never a whole index object), and the candidate rows
// only; it answers exactly what a warm handle answers (the same IVF
// candidates re-ranked exactly), distances included.
// The hybrid rrf(nearest, bm25) reads the same vector index pieces, the
// full-text indexes' query terms and the fragments' id indexes, and
// answers as a warm handle does, fused scores included.
func TestColdVectorRankingsReadIndexes(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	g, mem, vecOf := hybridGraph(t)
	src := `
query nn($x: Vector(16)) { match { $d: Doc } return { $d.slug, nearest($d.v, $x) as dist } order { nearest($d.v, $x) } limit 10 }
query nodes($x: Vector(16)) { match { $d: Doc } return { $d } order { nearest($d.v, $x) } limit 5 }
query hy($x: Vector(16), $q: String) { match { $d: Doc } return { $d.slug, rrf(nearest($d.v, $x), bm25($d.bio, $q)) as s } order { rrf(nearest($d.v, $x), bm25($d.bio, $q)) } limit 10 }
query hyb($x: Vector(16), $q: String) { match { $d: Doc } return { $d.slug, $d.bio } order { rrf(bm25($d.bio, $q), nearest($d.v, $x), 20) } limit 8 }
`
	var total, ivfTotal int64
	mem.List(ctx, "tables/", "", func(info storage.Info) error {
		if strings.Contains(info.Key, "/data/") {
			total += info.Size
		}
		if strings.HasSuffix(info.Key, ".ivf") {
			ivfTotal += info.Size
		}
		return nil
	})
	fw := compileAt(t, resolve(t, g, Target{}), "q.gq", src)
	hits, all := 0, 0
	for qi := range 6 {
		params := map[string]any{"x": vecOf(), "q": []string{"graph", "alpha beta", "omega time", "nothing", "search vector", "delta"}[qi]}
		for _, name := range []string{"nn", "nodes", "hy", "hyb"} {
			got, snap, p, read, objs := coldRun(t, mem, src, name, params)
			ivf := objs["ivf"]
			if ivf.Gets != 0 || ivf.Ranges > int64(len(ivf.Keys)*(1+eval.DefaultNProbe)) || len(ivf.Keys) != 3 || ivf.Bytes*2 > ivfTotal {
				t.Errorf("%s #%d: vector index reads %v", name, qi, ivf)
			}
			fts := objs["fts"]
			if hybrid := strings.HasPrefix(name, "hy"); fts.Gets != 0 || (!hybrid && fts.Ranges > 0) || (hybrid && len(fts.Keys) != 3) {
				t.Errorf("%s #%d: full-text index reads %v", name, qi, fts)
			}
			if _, ok := objs["idx"]; ok {
				t.Errorf("%s #%d: read the key index", name, qi)
			}
			var bytes int64
			for _, c := range read {
				bytes += c.Bytes
			}
			if data := objs["data"]; data.Bytes*5 > total {
				t.Errorf("%s #%d: read %d fragment bytes, over a fifth of the table's %d", name, qi, data.Bytes, total)
			}
			pw, _ := fw.Query(name)
			warm := queryAt(t, g, Target{}, pw, params)
			if !reflect.DeepEqual(got.Rows, warm.Rows) {
				t.Fatalf("%s #%d: cold %v\nwarm %v", name, qi, got.Rows, warm.Rows)
			}
			if name == "nn" {
				exact, err := eval.Run(ctx, snap, p, params, eval.Options{NoIndexes: true})
				if err != nil {
					t.Fatal(err)
				}
				hits += hitsOf(got, exact)
				all += len(exact.Rows)
			}
			t.Logf("%s #%d: %d rows, %d requests, %d bytes (fragments %d, vector indexes %d); by object: %v", name, qi, len(got.Rows), read.Requests(), bytes, total, ivfTotal, objs)
		}
	}
	if recall := float64(hits) / float64(all); recall < 0.95 {
		t.Errorf("cold recall@10 %.3f < 0.95", recall)
	}
}
