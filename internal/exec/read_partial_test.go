package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestPartialReadsMatchFull runs anchored reads on a fresh handle (answered
// from a partial snapshot gathered through the fragment indexes) and on a
// handle with the index path off (whole-table images), and requires the
// same rows in the same order. Scans pinned by pushed-down filters rather
// than a key take the partial path too (their candidates come from a table
// scan); a traversal from an unfiltered scan must not.
func TestPartialReadsMatchFull(t *testing.T) {
	ctx := context.Background()
	g, st, rng := readTestGraph(t, engSchema, 31)
	var bulk strings.Builder
	const n = 3000
	for i := range n {
		fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"n%d","age":%d}}`+"\n", i, rng.IntN(1<<30))
	}
	for i := range 40 {
		fmt.Fprintf(&bulk, `{"type":"Company","data":{"name":"c%d"}}`+"\n", i)
	}
	for i := range 4 * n {
		src, dst := rng.IntN(n), rng.IntN(n)
		if i%97 == 0 {
			dst = src // self-loops
		}
		fmt.Fprintf(&bulk, `{"edge":"Knows","from":"n%d","to":"n%d","data":{"since":"2024-01-%02d"}}`+"\n", src, dst, 1+i%28)
	}
	for i := range n / 2 {
		fmt.Fprintf(&bulk, `{"edge":"WorksAt","from":"n%d","to":"c%d"}`+"\n", i, rng.IntN(40))
	}
	appendJSONL(t, g, bulk.String())
	// A write after the load: deletion vectors and a second fragment.
	if _, err := g.Mutate(ctx, "main", lookupPlan(t, g, "del"), map[string]any{"name": "n7"}, MutateOptions{}); err != nil {
		t.Fatal(err)
	}
	full := imageHandle(t, st)
	queries := []struct {
		src     string
		partial bool
	}{
		{`query q($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows $f } return { $f.name, $f.age } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows{1,2} $f } return { count($f) as c } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows{1,3} $f } return { $f.name } order { $f.name asc } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows{2,2} $f } return { $f.name } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p <knows>{1,2} $f } return { $f.name } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $f knows $p } return { $f.name } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows $mid  $mid knows $fof } return { $p.name, $mid.name, $fof.name } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows $f  $p worksAt $c } return { $f.name, $c.name } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows $f  $f.age > 500000000 } return { $f.name, $f.age } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  not { $p worksAt $_ } } return { $p.name } }`, true},
		{`query q($name: String) { match { $c: Company { name: "c3" }  $p worksAt $c  $p knows $f } return { count($f) as n } }`, true},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows $f } return { $f.name } order { $f.age desc } limit 3 }`, true},
		{`query q($name: String) { match { $p: Person  $p.age > 1000000000 } return { count($p) as n } }`, true},
		{`query q($name: String) { match { $p: Person  $p knows $f  $p.age > 1070000000 } return { count($f) as n } }`, true},
		{`query q($name: String) { match { $p: Person  $p.age < 2000000  $p knows{1,2} $f } return { $p.name, $f.name, $f.age } }`, true},
		{`query q($name: String) { match { $p: Person  $p.age < 3000000  $p knows $f  $f.age < 500000000 } return { $p.name, $f.name } order { $f.name asc } }`, true},
		{`query q($name: String) { match { $p: Person  $p.age > 100  $p knows $f } return { count($f) as n } }`, true},
		{`query q($name: String) { match { $p: Person  $p knows $f } return { count($f) as n } }`, false},
	}
	for _, name := range []string{"n1", "n7", "n42", "n2999", "nobody"} {
		for qi, qc := range queries {
			p := headPlan(t, g, qc.src, "q")
			params := map[string]any{"name": name}
			got, want, cold := readFreshAndFull(t, st, full, p, params, Options{})
			if took := cold.partialReads.Load() == 1; took != qc.partial {
				t.Fatalf("query %d (%s): partial path taken = %v, want %v", qi, name, took, qc.partial)
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("query %d (%s): partial rows %v\nwant %v", qi, name, got.Rows, want.Rows)
			}
		}
	}
}

// catalog0 is the catalog of the head commit.
func (g *Graph) catalog0(t *testing.T) *schema.Catalog {
	t.Helper()
	return resolve(t, g, Target{}).Catalog()
}

// readFreshAndFull runs p with params on the reference handle full and on
// a fresh handle over st opened with opts, and returns the fresh handle's
// rows, the reference rows and the fresh handle (whose counters say which
// path answered).
func readFreshAndFull(t *testing.T, st storage.Store, full *Graph, p *query.Plan, params map[string]any, opts Options) (got, want *eval.Result, fresh *Graph) {
	t.Helper()
	ctx := context.Background()
	want, _, err := full.Query(ctx, Target{}, p, params)
	if err != nil {
		t.Fatalf("%s on the reference handle: %v", p.Name, err)
	}
	fresh = mustOpen(t, st, opts)
	got, _, err = fresh.Query(ctx, Target{}, p, params)
	if err != nil {
		t.Fatalf("%s on a fresh handle: %v", p.Name, err)
	}
	return got, want, fresh
}

// imageHandle opens the reference handle of the read tests over st: every
// read decodes whole-table images (no index, partial or dense path).
func imageHandle(t *testing.T, st storage.Store) *Graph {
	t.Helper()
	full := mustOpen(t, st, Options{})
	full.snaps.SetIndexPath(false)
	return full
}

// readTestGraph initializes a graph of schema pg on an in-memory store
// for the read tests, with a random source seeded by seed.
func readTestGraph(t *testing.T, pg string, seed uint64) (*Graph, storage.Store, *rand.Rand) {
	t.Helper()
	st := storage.NewMem()
	g := mustInit(t, st, "test.pg", pg, "tester", Options{})
	return g, st, rand.New(rand.NewPCG(seed, seed+1))
}

// TestPartialKeyColumnFromIndex: a cold anchored read that wants only the
// key of the nodes it reaches takes it from their ids (the fragments'
// indexes say the key column equals the id) and reads no node row; the
// same read wanting another property reads the rows. Rows as the
// whole-table reference's.
func TestPartialKeyColumnFromIndex(t *testing.T) {
	ctx := context.Background()
	g, st, rng := readTestGraph(t, engSchema, 47)
	var bulk strings.Builder
	const n = 20000 // fragments past the size read whole instead of probed
	for i := range n {
		fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"n%d","age":%d}}`+"\n", i, i)
	}
	for range 2 * n {
		fmt.Fprintf(&bulk, `{"edge":"Knows","from":"n%d","to":"n%d"}`+"\n", rng.IntN(n), rng.IntN(n))
	}
	appendJSONL(t, g, bulk.String())
	full := imageHandle(t, st)
	for _, tc := range []struct {
		src      string
		readRows bool
	}{
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows{1,2} $f } return { count($f) as c } }`, false},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows{1,2} $f } return { $f.name } order { $f.name asc } }`, false},
		{`query q($name: String) { match { $p: Person { name: $name }  $p knows $f } return { $f.name, $f.age } }`, true},
	} {
		rec := storage.NewRecording(st)
		p := headPlan(t, g, tc.src, "q")
		params := map[string]any{"name": "n5"}
		want, _, err := full.Query(ctx, Target{}, p, params)
		if err != nil {
			t.Fatal(err)
		}
		fresh := mustOpen(t, rec, Options{})
		rec.Reset()
		got, _, err := fresh.Query(ctx, Target{}, p, params)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.partialReads.Load() != 1 {
			t.Fatalf("%s: not answered by the partial path", tc.src)
		}
		if !reflect.DeepEqual(got.Rows, want.Rows) || len(got.Rows) == 0 {
			t.Fatalf("%s: rows %v, want %v", tc.src, got.Rows, want.Rows)
		}
		read := slices.ContainsFunc(rec.Requests(), func(r storage.Request) bool {
			return strings.Contains(r.Key, "node-Person/data/")
		})
		if read != tc.readRows {
			t.Errorf("%s: read Person rows = %v, want %v\n%s", tc.src, read, tc.readRows, rec.Trace())
		}
	}
}
