package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

const searchIdxSchema = `node Doc { slug: String @key  body: String? @index  n: I32  v: Vector(8)? @index }`

const searchIdxQueries = `
query bm($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 15 }
query bmall($q: String) { match { $d: Doc } return { $d.slug } order { bm25($d.body, $q) } }
query bmf($q: String) { match { $d: Doc  $d.n > 50 } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 10 }
query se($q: String) { match { $d: Doc  search($d.body, $q) } return { $d.slug } order { $d.slug } }
query mt($q: String) { match { $d: Doc  match_text($d.body, $q) } return { count($d) as c } }
query fz($q: String) { match { $d: Doc  fuzzy($d.body, $q, 1) } return { $d.slug } order { $d.slug } }
query hy($q: String, $x: Vector(8)) { match { $d: Doc } return { $d.slug, rrf(bm25($d.body, $q), nearest($d.v, $x)) as s } order { rrf(bm25($d.body, $q), nearest($d.v, $x)) } limit 10 }
query nn($x: Vector(8)) { match { $d: Doc  $d.n < 30 } return { $d.slug, nearest($d.v, $x) as dist } order { nearest($d.v, $x) } limit 7 }
`

var searchWords = []string{"graph", "graphs", "graphing", "learning", "learned", "learn", "the", "vector", "vectors",
	"search", "time", "travel", "travelling", "zeta", "omega", "x1", "and", "branch", "merge", "commit", "alpha"}

func searchDocs(r *rand.Rand, lo, hi int) string {
	var b strings.Builder
	for i := lo; i < hi; i++ {
		body := "null"
		if r.IntN(9) != 0 {
			var w []string
			for range r.IntN(10) {
				w = append(w, searchWords[r.IntN(len(searchWords))])
			}
			body = fmt.Sprintf("%q", strings.Join(w, " "))
		}
		vec := "null"
		if r.IntN(8) != 0 {
			var c []string
			for range 8 {
				c = append(c, fmt.Sprintf("%.3f", r.NormFloat64()))
			}
			vec = "[" + strings.Join(c, ",") + "]"
		}
		fmt.Fprintf(&b, `{"type":"Doc","data":{"slug":"d%04d","body":%s,"n":%d,"v":%s}}`+"\n", i, body, r.IntN(100), vec)
	}
	return b.String()
}

func randomQueryText(r *rand.Rand) string {
	var w []string
	for range 1 + r.IntN(3) {
		w = append(w, searchWords[r.IntN(len(searchWords))])
	}
	return strings.Join(w, " ")
}

// TestSearchIndexesMatchExact builds a table of several fragments — some
// with persisted full-text and vector indexes (optimize), some without,
// some with deletion vectors — and checks that every search function
// answers exactly what the per-run exact scorer answers (eval
// Options.NoIndexes), scores included, bit for bit.
func TestSearchIndexesMatchExact(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			ctx := context.Background()
			st := localStore(t, t.TempDir())
			g := mustInit(t, st, "s.pg", searchIdxSchema, "t", Options{NoAutoCompact: true, CompactTargetRows: 40})
			load := func(lo, hi int, mode LoadMode) {
				t.Helper()
				if _, err := g.Load(ctx, strings.NewReader(searchDocs(r, lo, hi)), LoadRequest{Mode: mode}); err != nil {
					t.Fatal(err)
				}
			}
			load(0, 60, LoadAppend)
			load(60, 130, LoadAppend)
			load(130, 200, LoadAppend)
			built, _ := optimizeIndexes(t, g, "")
			if built != 6 {
				t.Fatalf("optimize built %d search indexes, want 6 (3 fragments × 2 columns)", built)
			}
			load(200, 240, LoadAppend) // an unindexed fragment
			load(10, 30, LoadMerge)    // rewrites rows of an indexed fragment: deletion vector
			mutate(t, g, `query del($s: String) { delete Doc where slug = $s }`, map[string]any{"s": "d0070"})
			mutate(t, g, `query del($s: String) { delete Doc where slug = $s }`, map[string]any{"s": "d0205"})

			snap, nt := headNodes(t, g, "Doc")
			parts, ok, err := snap.TextParts(ctx, nt, "body")
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			persisted, deleted := 0, 0
			for _, p := range parts {
				if p.Persisted {
					persisted++
				}
				if len(p.Deleted()) > 0 {
					deleted++
				}
			}
			if persisted != 3 || len(parts) != 5 || deleted < 2 {
				t.Fatalf("%d parts, %d persisted, %d with deletions: want 5, 3, ≥2", len(parts), persisted, deleted)
			}
			f := compileAt(t, snap, "q.gq", searchIdxQueries)
			for round := range 25 {
				q := randomQueryText(r)
				x := make([]any, 8)
				for i := range x {
					x[i] = r.NormFloat64()
				}
				params := map[string]any{"q": q, "x": x}
				for _, name := range []string{"bm", "bmall", "bmf", "se", "mt", "fz", "hy", "nn"} {
					p, err := f.Query(name)
					if err != nil {
						t.Fatal(err)
					}
					got, want := indexedAndExact(t, snap, p, params)
					if !reflect.DeepEqual(got.Rows, want.Rows) {
						t.Fatalf("round %d %s(%q): indexed\n%v\nexact\n%v", round, name, q, got.Rows, want.Rows)
					}
				}
			}
		})
	}
}

func mutate(t *testing.T, g *Graph, src string, params map[string]any) {
	t.Helper()
	p := headPlan(t, g, src, "del")
	if _, err := g.Mutate(context.Background(), "main", p, params, MutateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var _ = index.KindText
var _ = snapshot.NodeKey
