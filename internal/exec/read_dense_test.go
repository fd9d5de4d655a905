package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const denseSchema = `
node Person { name: String @key  age: I32?  city: String?  score: F64? }
node City { cname: String @key  size: I64? }
edge Knows: Person -> Person
edge Lives: Person -> City
edge Likes: Person -> Person
`

const denseWrites = `
query del_p($name: String) { delete Person where name = $name }
query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }
`

// denseGraph renders persons from..from+n with random properties and
// random Knows (parallel edges and self-loops included) and Lives edges
// among persons below from+n, as JSONL.
func denseGraph(rng *rand.Rand, from, n, cities int) string {
	var b strings.Builder
	opt := func(s string) string {
		if rng.IntN(6) == 0 {
			return "null"
		}
		return s
	}
	if from == 0 {
		for c := range cities {
			fmt.Fprintf(&b, `{"type":"City","data":{"cname":"c%d","size":%d}}`+"\n", c, rng.IntN(100))
		}
	}
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":"p%d","age":%s,"city":%s,"score":%s}}`+"\n", i,
			opt(fmt.Sprint(rng.IntN(90))), opt(fmt.Sprintf(`"c%d"`, rng.IntN(cities))), opt(fmt.Sprintf("%.2f", rng.Float64())))
	}
	for i := from; i < from+n; i++ {
		for range rng.IntN(6) {
			d := rng.IntN(from + n)
			switch rng.IntN(10) {
			case 0:
				d = i // self-loop
			case 1:
				fmt.Fprintf(&b, `{"edge":"Knows","from":"p%d","to":"p%d"}`+"\n", i, d) // parallel edge
			}
			fmt.Fprintf(&b, `{"edge":"Knows","from":"p%d","to":"p%d"}`+"\n", i, d)
		}
		if rng.IntN(3) > 0 {
			fmt.Fprintf(&b, `{"edge":"Lives","from":"p%d","to":"c%d"}`+"\n", i, rng.IntN(cities))
		}
	}
	return b.String()
}

// churnedDenseGraph loads three batches of denseGraph (three fragments per
// table), then updates and deletes persons (deletion vectors, dead ends),
// and opens the reference handle reading whole images.
func churnedDenseGraph(t *testing.T, seed uint64) (*Graph, storage.Store, *rand.Rand, *Graph) {
	t.Helper()
	ctx := context.Background()
	g, st, rng := readTestGraph(t, denseSchema, seed)
	const batch, cities = 2000, 7
	for k := range 3 {
		if _, err := g.Load(ctx, strings.NewReader(denseGraph(rng, k*batch, batch, cities)), LoadRequest{Mode: LoadAppend}); err != nil {
			t.Fatal(err)
		}
	}
	churn(t, g, rng, denseWrites, "set_age", "age", "del_p", "p", 3*batch, 25, func(i int) any { return i })
	return g, st, rng, imageHandle(t, st)
}

// TestDenseReadsMatchImages runs counts and projections over unanchored
// traversals on handles whose cache budget is too small for the tables'
// images (dense views: eval/dense.go, eval/dense_project.go,
// snapshot/dense.go) and on a handle reading whole images, and requires
// the same answer, projected rows in the same order: several fragments, deletion
// vectors, deleted nodes, parallel edges, self-loops, every direction, hop
// bounds, chains, stars and filters on either end.
func TestDenseReadsMatchImages(t *testing.T) {
	g, st, _, full := churnedDenseGraph(t, 11)
	queries := []struct {
		body  string
		dense bool // answered by dense views
	}{
		{`match { $p: Person  $p knows $f } return { count($f) as c }`, true},
		{`match { $p: Person  $p knows $f  $f.age > 50 } return { count($f) as c, count($p) as d }`, true},
		{`match { $p: Person  $p.age < $lim  $p knows $f  $f.city = "c3" } return { count($f) as c }`, true},
		{`match { $p: Person  $p.age >= 8  $p knows{1,2} $f } return { count($f) as c }`, true},
		{`match { $p: Person  $p knows{2,3} $f } return { count($f) as c }`, true},
		{`match { $p: Person  $p <knows> $f } return { count($f) as c }`, true},
		{`match { $p: Person  $p.city != "c1"  $p <knows>{1,2} $f  $f.age <= 40 } return { count($f) as c }`, true},
		{`match { $p: Person  $p knows $a  $a knows $b  $b.city = "c2" } return { count($b) as c, count($p) as d }`, true},
		{`match { $p: Person  $p knows $a  $p lives $c  $c.size > 30 } return { count($c) as c }`, true},
		{`match { $c: City  $p lives $c  $p.age > 20 } return { count($p) as c }`, true},
		{`match { $c: City { cname: "c4" }  $p lives $c  $p knows $f } return { count($f) as c }`, false}, // anchored
		{`match { $p: Person  $f knows $p  $f.name != "p7" } return { count($f) as c } limit 1`, true},
		{`match { $p: Person  $p likes $f } return { count($f) as c }`, true},                   // no edges at all
		{`match { $p: Person  $p knows $f  $p likes $g } return { count($g) as c }`, true},      // … in a star
		{`match { $p: Person  $p knows $f  $f.score > 0.5 } return { count($f) as c }`, false},  // float filter
		{`match { $p: Person  $p knows $f  $f.age > $p.age } return { count($f) as c }`, false}, // two variables
		{`match { $p: Person  $p knows $f } return { $p.city, count($f) as c } order { c desc }`, true},
		{`match { $p: Person  $p.age >= 8  $p knows{1,2} $f } return { $p.city, $p.age, count($f) as c }`, true},
		{`match { $c: City  $p lives $c  $p knows $f } return { $c, $c.size, count($f) as c }`, true},
		{`match { $p: Person  $p knows $f } return { $f.city, count($p) as c }`, true}, // grouped by the far end
		{`match { $p: Person  $p knows{1,2} $f  $f.age < 30 } return { $p.city, sum($p.age) as s, avg($p.score) as a, min($p.name) as m, max($p.age) as x } order { $p.city }`, true},
		{`match { $p: Person  $p knows $f } return { sum($f.age) as s }`, true}, // an aggregate of the far end
		{`match { $p: Person  $p.age < $lim  $p knows{1,2} $f } return { $f.city, $p.city, sum($f.score) as s, avg($p.score) as a, max($f.name) as m, count($f) as c }`, true},
		{`match { $c: City  $p lives $c  $p knows $f  $f.age > 30 } return { $f, count($c) as n, min($c.cname) as m } order { n desc } limit 20`, true},
		// Projections of traversal rows (eval/dense_project.go): the same
		// rows in the image path's order.
		{`match { $p: Person  $p knows $f } return { $p.name, $f.name, $f.age, $f.score }`, true},
		{`match { $p: Person  $p.age < $lim  $p knows $f  $f.city = "c3" } return { $p, $f.name, $p.city } limit 40`, true},
		{`match { $p: Person  $p.age >= 8  $p knows{1,2} $f } return { $p.name, $f, $f.city } limit 5000`, true},
		{`match { $p: Person  $p.city != "c2"  $p <knows> $f } return { $p.name, $f.name }`, true},
		{`match { $p: Person  $p knows $a  $p lives $c  $c.size > 30 } return { $p.name, $a.age, $c.cname, $c.size } limit 3000`, true},
		{`match { $c: City  $p lives $c  $p knows $f  $f.age > 70 } return { $c.cname, $p.name, $f.name }`, true},
		{`match { $p: Person  $p knows $f } return { $f.name } limit 1`, true},
		// Edge variables, counted (one binding row per edge).
		{`match { $p: Person  $p $e:knows $f } return { count($e) as c }`, true},
		{`match { $p: Person  $p.age < $lim  $p $e:<knows> $f  $f.city != "c0" } return { $p.city, count($e) as c }`, true},
		{`match { $p: Person  $p $e:knows $f } return { $p.name, $f.name }`, false}, // a walk would need edge ids
		// Cycle closing (a walk: dense_aggregate.go, dense_project.go).
		{`match { $p: Person  $p knows $f  $f knows $p } return { $p.name, $f.name }`, true},
		{`match { $p: Person  $p knows $f  $f <knows>{1,2} $p  $f.age > 20 } return { $f.city, count($p) as c, sum($p.score) as s }`, true},
		{`match { $p: Person  $p knows $f  $f.age > $p.age } return { $p.name, $f.name }`, false}, // two variables
		// order … limit: a top-k heap over the walk (eval/dense_topk.go).
		{`match { $p: Person  $p knows $f } return { $p.name, $f.name } order { $f.name } limit 3`, true},
		{`match { $p: Person  $p.age < $lim  $p knows{1,2} $f } return { $p.name, $f.name, $f.score } order { $f.score desc, $p.age } limit 50`, true},
		{`match { $p: Person  $p knows $f } return { $p.name, $f.name } order { $f.name }`, false}, // every row sorted
	}
	for qi, q := range queries {
		p := headPlan(t, g, "query q($lim: I32) { "+q.body+" }", "q")
		ps := map[string]any{"lim": 80}
		for _, budget := range []int64{64 << 10, 0} { // oversized tables; a cold handle
			got, want, dense := readFreshAndFull(t, st, full, p, ps, Options{CacheBytes: budget})
			// Under `limit` without `order` a projection reads root
			// chunks instead (eval/chunk_project.go): no image either.
			if took := dense.snaps.DenseReads()+dense.snaps.ChunkReads() == 1; took != q.dense {
				t.Fatalf("query %d (budget %d): dense path taken %v, want %v", qi, budget, took, q.dense)
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("query %d (budget %d): dense rows %v\nwant %v", qi, budget, got.Rows, want.Rows)
			}
			if len(got.Rows) > 3 {
				t.Logf("query %d: %d rows, first %v", qi, len(got.Rows), got.Rows[:3])
			} else {
				t.Logf("query %d: %v", qi, got.Rows)
			}
		}
	}
}

// TestDenseViewsKeptOnWarmHandle: a handle whose cache holds the dense views
// (each at most a quarter of its budget) answers the next count over the
// same table states without reading a fragment again; a budget too small
// for them rebuilds them. Counted with the counting store.
func TestDenseViewsKeptOnWarmHandle(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	cs := storage.NewCounting(storage.NewMem())
	g := mustInit(t, cs, "test.pg", denseSchema, "tester", Options{})
	appendJSONL(t, g, denseGraph(rng, 0, 3000, 5))
	p := headPlan(t, g, `query q() { match { $p: Person  $p knows $f } return { count($f) as c } }`, "q")
	for _, tc := range []struct {
		name   string
		budget int64
		kept   bool
	}{{"default budget", 0, true}, {"tiny budget", 64 << 10, false}} {
		t.Run(tc.name, func(t *testing.T) {
			h := mustOpen(t, cs, Options{CacheBytes: tc.budget})
			var first []any
			for i := range 2 {
				cs.Reset()
				res := queryAt(t, h, Target{}, p, nil)
				ranged := cs.Snapshot()[storage.OpGetRange].Requests
				t.Logf("read %d: %v, %d ranged reads", i, res.Rows, ranged)
				if i == 0 {
					first = res.Rows[0]
					if ranged == 0 {
						t.Fatal("the first count read no fragment")
					}
					continue
				}
				if !reflect.DeepEqual(res.Rows[0], first) {
					t.Fatalf("second count %v, first %v", res.Rows[0], first)
				}
				if (ranged == 0) != tc.kept {
					t.Fatalf("second count: %d ranged reads, views kept = %v", ranged, tc.kept)
				}
			}
			if h.snaps.DenseReads() != 2 {
				t.Fatalf("%d dense reads, want 2", h.snaps.DenseReads())
			}
		})
	}
}
