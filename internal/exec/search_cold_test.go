package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/query"
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
	g, err := Init(ctx, mem, "s.pg", `node Doc { slug: String @key  bio: String @index  pad: String  v: Vector(16) }`, "t", Options{NoAutoCompact: true, CompactTargetRows: 3000})
	if err != nil {
		t.Fatal(err)
	}
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
			cnt := storage.NewCounting(mem)
			cold, err := Open(ctx, cnt, Options{})
			if err != nil {
				t.Fatal(err)
			}
			snap, err := cold.Resolve(ctx, Target{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := query.Compile(snap.Catalog(), "q.gq", src)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := f.Query(name)
			params := map[string]any{"q": q}
			before := cnt.Snapshot()
			got, err := cold.QueryAt(ctx, snap, p, params)
			if err != nil {
				t.Fatal(err)
			}
			read := cnt.Snapshot().Sub(before)
			if cold.partialReads.Load() != 1 {
				t.Fatalf("%s(%q): the cold ranking did not take the index path", name, q)
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
			t.Logf("%s(%q): %d rows, %d requests, %d bytes of %d", name, q, len(got.Rows), read.Requests(), bytes, total)
		}
	}
}
