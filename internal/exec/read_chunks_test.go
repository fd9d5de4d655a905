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

// chunkQuery returns a random projection of traversal rows from an
// unanchored Person scan under a limit: filters on the root and the far
// ends (pushed down or not), one to three expansions in every direction,
// hop bounds, edge variables, a cycle, a negation.
func chunkQuery(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("$p: Person ")
	switch rng.IntN(5) {
	case 1:
		fmt.Fprintf(&b, "$p.age < %d ", rng.IntN(90))
	case 2:
		fmt.Fprintf(&b, `$p.city = "c%d" `, rng.IntN(7))
	case 3:
		b.WriteString("$p.score > 0.5 ") // left to eval
	}
	persons := []string{"p"}
	var cols []string
	city := ""
	for i := range 1 + rng.IntN(3) {
		from := persons[rng.IntN(len(persons))]
		to := fmt.Sprintf("v%d", i)
		switch rng.IntN(7) {
		case 6:
			fmt.Fprintf(&b, "$%s $e%d:knows $%s ", from, i, to) // one row per edge, by edge id
		case 0:
			fmt.Fprintf(&b, "$%s <knows> $%s ", from, to)
		case 1:
			fmt.Fprintf(&b, "$%s knows $%s ", to, from)
		case 2:
			fmt.Fprintf(&b, "$%s knows{1,2} $%s ", from, to)
		case 3:
			if city == "" {
				city = "c" + to
				fmt.Fprintf(&b, "$%s lives $%s ", from, city)
				if rng.IntN(2) == 0 {
					fmt.Fprintf(&b, "$%s.size > %d ", city, rng.IntN(100))
				}
				cols = append(cols, "$"+city+".cname")
				continue
			}
			fallthrough
		default:
			fmt.Fprintf(&b, "$%s knows $%s ", from, to)
		}
		persons = append(persons, to)
		switch rng.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "$%s.age > %d ", to, rng.IntN(90))
		case 1:
			fmt.Fprintf(&b, `$%s.city != "c%d" `, to, rng.IntN(7))
		}
	}
	last := persons[len(persons)-1]
	switch rng.IntN(6) {
	case 0:
		fmt.Fprintf(&b, "not { $%s knows $x } ", last)
	case 1:
		fmt.Fprintf(&b, "not { $%s lives $y  $y.size > 50 } ", last)
	case 2:
		if last != "p" {
			fmt.Fprintf(&b, "$%s knows $p ", last) // closes a cycle
		}
	}
	for _, v := range persons {
		switch rng.IntN(3) {
		case 0:
			cols = append(cols, "$"+v+".name")
		case 1:
			cols = append(cols, "$"+v+".age")
		}
	}
	if len(cols) == 0 {
		cols = append(cols, "$"+last)
	}
	limits := []int{1, 3, 7, 50, 400, 3000}
	return fmt.Sprintf("match { %s} return { %s } limit %d", b.String(), strings.Join(cols, ", "), limits[rng.IntN(len(limits))])
}

// TestRootChunksMatchRows runs random traversal projections under a limit
// (chunk_project.go, snapshot/root_chunks.go) on handles whose tables are
// read root chunk by root chunk — a cache budget too small for their
// images, and a cold handle — and requires exactly the rows, in order, of
// a handle running the row executor on whole images: several fragments,
// deletion vectors, deleted nodes, parallel edges, self-loops.
func TestRootChunksMatchRows(t *testing.T) {
	g, st, rng, full := churnedDenseGraph(t, 31)
	chunked, rows := 0, 0
	const queries = 60
	for qi := range queries {
		q := chunkQuery(rng)
		p := headPlan(t, g, "query q() { "+q+" }", "q")
		for _, budget := range []int64{64 << 10, 0} {
			got, want, fresh := readFreshAndFull(t, st, full, p, nil, Options{CacheBytes: budget})
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("query %d %q (budget %d): rows %v\nwant %v", qi, q, budget, got.Rows, want.Rows)
			}
			if fresh.snaps.ChunkReads() != 1 {
			}
			if fresh.snaps.ChunkReads() == 1 {
				chunked++
				rows += len(got.Rows)
			}
		}
	}
	t.Logf("%d of %d reads chunk by chunk (%d rows)", chunked, 2*queries, rows)
	if chunked < queries/2 {
		t.Fatalf("only %d of %d reads took the chunks", chunked, 2*queries)
	}
}

// TestRootChunksReadFewBytes: `limit 5` over every `knows` reads the first
// roots' pages and index entries, not the tables: the bytes read do not
// grow with the graph (counted by the counting store), and they are a
// small share of what a count of every edge reads.
func TestRootChunksReadFewBytes(t *testing.T) {
	ctx := context.Background()
	limitQ := `query q() { match { $p: Person  $p knows $f  $f.age > 10 } return { $p.name, $f.name, $f.age } limit 5 }`
	countQ := `query q() { match { $p: Person  $p knows $f } return { count($f) as c } }`
	var limited []int64
	for _, n := range []int{20000, 80000} {
		rng := rand.New(rand.NewPCG(41, 42))
		cs := storage.NewCounting(storage.NewMem())
		g := mustInit(t, cs, "test.pg", denseSchema, "tester", Options{})
		appendJSONL(t, g, denseGraph(rng, 0, n, 5))
		read := func(src string) (int64, []any) {
			p := headPlan(t, g, src, "q")
			h, err := Open(ctx, cs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cs.Reset()
			res, _, err := h.Query(ctx, Target{}, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			bytes := cs.Snapshot().Bytes()
			if src == limitQ && h.snaps.ChunkReads() != 1 {
				t.Fatalf("%d persons: the limit read did not take the chunks", n)
			}
			return bytes, res.Rows[0]
		}
		lb, first := read(limitQ)
		cb, _ := read(countQ)
		t.Logf("%d persons: limit 5 read %d bytes (first row %v), the count %d", n, lb, first, cb)
		if n == 80000 && lb*4 > cb {
			t.Fatalf("%d persons: limit 5 read %d bytes, a quarter of the count's %d or more", n, lb, cb)
		}
		limited = append(limited, lb)
	}
	if limited[1] > limited[0]*3/2 {
		t.Fatalf("bytes read by limit 5 grew with the graph: %v", limited)
	}
}
