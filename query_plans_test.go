package omnigraph_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/query"
)

// TestQueryPlansFollowTheCatalog: a read query run again reuses its
// compiled plan only against the catalog it was compiled for. After a
// schema change on the branch the same source is compiled anew (a dropped
// property is a compile error, not a stale plan's answer), a time-travel
// read of the old commit compiles against the old catalog, and another
// branch with the old schema keeps answering.
func TestQueryPlansFollowTheCatalog(t *testing.T) {
	ctx := context.Background()
	const v1 = "node P { name: String @key  age: I32?  city: String? }\n"
	const v2 = "node P { name: String @key  city: String? }\n"
	g, err := omnigraph.Init(ctx, filepath.Join(t.TempDir(), "g"), "s.pg", v1, "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := g.Load(ctx, strings.NewReader(`{"type":"P","data":{"name":"a","age":7,"city":"x"}}`+"\n"), omnigraph.LoadOptions{Mode: omnigraph.Overwrite})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CreateBranch(ctx, "old", "main", ""); err != nil {
		t.Fatal(err)
	}
	const age = `query age($n: String) { match { $p: P { name: $n } } return { $p.age } }`
	const city = `query city($n: String) { match { $p: P { name: $n } } return { $p.city } }`
	ask := func(tg omnigraph.Target, src string) (string, error) {
		t.Helper()
		res, err := g.Query(ctx, tg, src, "", map[string]any{"n": "a"})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(res.Rows), nil
	}
	for range 3 { // compiled once, then kept
		if got, err := ask(omnigraph.Target{}, age); err != nil || got != "[[7]]" {
			t.Fatalf("age before the change: %s, %v", got, err)
		}
	}
	if _, err := g.ApplySchema(ctx, v2, omnigraph.SchemaApplyOptions{AllowDataLoss: true}); err != nil {
		t.Fatal(err)
	}
	var qe query.ErrorList
	if got, err := ask(omnigraph.Target{}, age); !errors.As(err, &qe) {
		t.Fatalf("age after dropping it: %s, %v; want a compile error", got, err)
	}
	if got, err := ask(omnigraph.Target{}, city); err != nil || got != "[[x]]" {
		t.Fatalf("city after the change: %s, %v", got, err)
	}
	for _, tg := range []omnigraph.Target{{Branch: "old"}, {Snapshot: loaded.Commit.ID}, {Branch: "old"}} {
		if got, err := ask(tg, age); err != nil || got != "[[7]]" {
			t.Fatalf("age at %+v (the old schema): %s, %v", tg, got, err)
		}
	}
	if got, err := ask(omnigraph.Target{}, age); !errors.As(err, &qe) {
		t.Fatalf("age on main again: %s, %v; want a compile error", got, err)
	}
}

// TestWarmQueryAllocs pins the allocations of a warm key lookup through
// the public Graph.Query (source text in, JSON-ready rows out): the plan
// is not compiled again (compiling this source alone allocates over a
// hundred times).
func TestWarmQueryAllocs(t *testing.T) {
	ctx := context.Background()
	g := agesGraph(t, 500)
	src := ageOf
	params := map[string]any{"n": "p42"}
	for range 16 {
		if _, err := g.Query(ctx, omnigraph.Target{}, src, "", params); err != nil {
			t.Fatal(err)
		}
	}
	const maxAllocs = 50
	allocs := testing.AllocsPerRun(100, func() {
		res, err := g.Query(ctx, omnigraph.Target{}, src, "", params)
		if err != nil || fmt.Sprint(res.Rows) != "[[42]]" {
			t.Fatalf("%v, %v", res, err)
		}
	})
	if allocs > maxAllocs {
		t.Errorf("warm Graph.Query key lookup: %v allocations, want ≤ %d", allocs, maxAllocs)
	}
	t.Logf("warm Graph.Query key lookup: %v allocations", allocs)
}

// TestQueryPlansShared: concurrent queries share one kept plan (reads never
// modify a plan), each with its own parameters and answer (-race checks the
// sharing).
func TestQueryPlansShared(t *testing.T) {
	ctx := context.Background()
	g := agesGraph(t, 100)
	src := ageOf
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				k := (w*50 + i) % 100
				res, err := g.Query(ctx, omnigraph.Target{}, src, "", map[string]any{"n": fmt.Sprintf("p%d", k)})
				if err != nil || fmt.Sprint(res.Rows) != fmt.Sprintf("[[%d]]", k) {
					errs <- fmt.Errorf("p%d: %v, %v", k, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// ageOf is the key lookup agesGraph answers: p<i> has age i.
const ageOf = `query age($n: String) { match { $p: P { name: $n } } return { $p.age } }`

// agesGraph is a graph of n P rows, p<i> aged i.
func agesGraph(t *testing.T, n int) *omnigraph.Graph {
	t.Helper()
	ctx := context.Background()
	g, err := omnigraph.Init(ctx, filepath.Join(t.TempDir(), "g"), "s.pg", "node P { name: String @key  age: I32? }\n", "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"type":"P","data":{"name":"p%d","age":%d}}`+"\n", i, i)
	}
	if _, err := g.Load(ctx, strings.NewReader(b.String()), omnigraph.LoadOptions{Mode: omnigraph.Overwrite}); err != nil {
		t.Fatal(err)
	}
	return g
}
