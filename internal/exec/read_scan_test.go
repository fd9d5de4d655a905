package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const scanSchema = `
node Item { name: String @key  n: I64?  u: U32?  f: F64?  s: String?  e: enum(red, green, blue)?  d: Date?  b: Bool?  tags: [String]? }
`

const scanWrites = `
query set_n($name: String, $n: I64) { update Item set { n: $n } where name = $name }
query del($name: String) { delete Item where name = $name }
`

// scanItems renders n random items (every property null at times) as JSONL.
func scanItems(rng *rand.Rand, from, n int) string {
	var b strings.Builder
	opt := func(s string) string {
		if rng.IntN(5) == 0 {
			return "null"
		}
		return s
	}
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"type":"Item","data":{"name":"i%d","n":%s,"u":%s,"f":%s,"s":%s,"e":%s,"d":%s,"b":%s,"tags":%s}}`+"\n", i,
			opt(fmt.Sprint(rng.IntN(200)-100)),
			opt(fmt.Sprint(rng.IntN(1000))),
			opt(fmt.Sprintf("%.3f", rng.Float64())),
			opt(fmt.Sprintf(`"s%d"`, rng.IntN(20))),
			opt(fmt.Sprintf(`"%s"`, []string{"red", "green", "blue"}[rng.IntN(3)])),
			opt(fmt.Sprintf(`"2024-01-%02d"`, 1+rng.IntN(28))),
			opt(fmt.Sprint(rng.IntN(2) == 0)),
			opt(fmt.Sprintf(`["t%d", "t%d"]`, rng.IntN(5), rng.IntN(5))))
	}
	return b.String()
}

// TestScanReadsMatchFull runs unanchored single-scan reads on fresh handles
// (answered by a streaming table scan with pushed-down filters, scan.go in
// internal/snapshot) and on a handle reading whole-table images, and
// requires the same rows in the same order, over several fragments with
// deletion vectors, nulls in every column, filters the table scan applies
// and filters it leaves to eval (floats, text, lists, out-of-range
// constants).
func TestScanReadsMatchFull(t *testing.T) {
	ctx := context.Background()
	g, st, rng := readTestGraph(t, scanSchema, 5)
	for k := range 3 {
		appendJSONL(t, g, scanItems(rng, k*700, 700))
	}
	setN := headPlan(t, g, scanWrites, "set_n")
	del := headPlan(t, g, scanWrites, "del")
	for i := range 30 {
		name := fmt.Sprintf("i%d", rng.IntN(2100))
		if _, err := g.Mutate(ctx, "main", setN, map[string]any{"name": name, "n": i}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Mutate(ctx, "main", del, map[string]any{"name": fmt.Sprintf("i%d", rng.IntN(2100))}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	full := imageHandle(t, st)
	const params = `$k: I64, $m: I64?, $s: String, $d: Date`
	queries := []string{
		`match { $i: Item  $i.n = $k } return { count($i) as c }`,
		`match { $i: Item  $i.n > 10  $i.s = $s } return { count($i) as c }`,
		`match { $i: Item  $i.n != 3 } return { count($i) as c }`,
		`match { $i: Item  $i.n >= $k  $i.n <= 20 } return { count($i) as c }`,
		`match { $i: Item  5 < $i.n } return { $i.name, $i.n }`,
		`match { $i: Item  $i.u >= 500 } return { $i.name, $i.u } order { $i.u desc } limit 7`,
		`match { $i: Item  $i.s != "s3" } return { $i.s, count($i) as c } order { c desc }`,
		`match { $i: Item  $i.e = "red" } return { count($i) as c, sum($i.n) as s, min($i.s) as lo, max($i.s) as hi, avg($i.u) as a }`,
		`match { $i: Item  $i.d >= $d } return { $i.name, $i.d } order { $i.d asc, $i.name asc }`,
		`match { $i: Item  $i.d < date("2024-01-05") } return { count($i) as c }`,
		`match { $i: Item  $i.b = true  $i.n < 0 } return { $i.name }`,
		`match { $i: Item  $i.f > 0.5 } return { count($i) as c }`,
		`match { $i: Item  $i.f <= 0.25  $i.n > 0 } return { $i.name, $i.f }`,
		`match { $i: Item  $i.tags contains "t1" } return { count($i) as c }`,
		`match { $i: Item  $i.name starts_with "i1" } return { $i.name } order { $i.name asc } limit 20`,
		`match { $i: Item  $i.u > $k } return { count($i) as c }`,
		`match { $i: Item  $i.n > 99999999999 } return { count($i) as c }`,
		`match { $i: Item  $i.n = $m } return { count($i) as c }`,
		`match { $i: Item } return { count($i) as c }`,
		`match { $i: Item } return { $i.name }`,
		`match { $i: Item } return { $i.e, $i.b, count($i) as c }`,
		`match { $i: Item  $i.s = "s1" } return { $i }`,
		`match { $i: Item  $i.s = "s2" } return { $i.name } order { $i.n desc }`,
		`match { $i: Item  $i.s = "nope" } return { count($i) as c, max($i.n) as m }`,
		// order … limit over the whole scan: a bounded top-k heap (ties on
		// s, n and e break by id; nulls first ascending, last descending).
		`match { $i: Item } return { $i.name, $i.s } order { $i.s desc } limit 9`,
		`match { $i: Item  $i.n > 3 } return { $i.name, $i.n, $i.u } order { $i.n asc, $i.u desc } limit 25`,
		`match { $i: Item } return { $i.name } order { $i.e, $i.d desc } limit 1`,
		`match { $i: Item  $i.s = $s } return { $i.name, $i.f } order { $i.f desc } limit 4`,
		`match { $i: Item } return { $i } order { $i.n desc } limit 3`,
	}
	for qi, body := range queries {
		p := headPlan(t, g, "query q("+params+") { "+body+" }", "q")
		for _, ps := range []map[string]any{
			{"k": 7, "s": "s4", "d": "2024-01-20"},
			{"k": -50, "m": 12, "s": "s19", "d": "2024-01-01"},
		} {
			got, want, cold := readFreshAndFull(t, st, full, p, ps, Options{})
			if cold.partialReads.Load() != 1 {
				t.Fatalf("query %d: the streaming scan path was not taken", qi)
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("query %d %v: scan rows %v\nwant %v", qi, ps, got.Rows, want.Rows)
			}
		}
	}
}

// TestOversizedTablesStayPartial: on a handle whose cache budget is smaller
// than twice a table's decoded image, reads that can run on the rows they
// touch (anchored reads, single unanchored scans) keep doing so however
// many reads the handle serves, instead of switching to whole-table images
// after partialBeforeImages reads; they answer like whole images.
func TestOversizedTablesStayPartial(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 9))
	st := storage.NewMem()
	g := mustInit(t, st, "test.pg", engSchema, "tester", Options{})
	var bulk strings.Builder
	const n = 3000
	for i := range n {
		fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"n%d","age":%d}}`+"\n", i, rng.IntN(100))
	}
	for range 4 * n {
		fmt.Fprintf(&bulk, `{"edge":"Knows","from":"n%d","to":"n%d"}`+"\n", rng.IntN(n), rng.IntN(n))
	}
	appendJSONL(t, g, bulk.String())
	full := imageHandle(t, st)
	// The Person image is ~290 KB (snapshot.imageSize): over half of 256 KiB.
	small, err := Open(ctx, st, Options{CacheBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	roomy, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var plans []*query.Plan
	for _, src := range []string{
		`query q($name: String) { match { $p: Person { name: $name } } return { $p.age } }`,
		`query q($name: String) { match { $p: Person { name: $name }  $p knows{1,2} $f } return { count($f) as c } }`,
		`query q($name: String) { match { $p: Person  $p.age = 31 } return { count($p) as c } }`,
	} {
		p := headPlan(t, g, src, "q")
		plans = append(plans, p)
	}
	const reads = 30
	for i := range reads {
		p := plans[i%len(plans)]
		params := map[string]any{"name": fmt.Sprintf("n%d", rng.IntN(n))}
		want, _, err := full.Query(ctx, Target{}, p, params)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []*Graph{small, roomy} {
			got, _, err := h.Query(ctx, Target{}, p, params)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("read %d: rows %v, want %v", i, got.Rows, want.Rows)
			}
		}
	}
	if got := small.partialReads.Load(); got != reads {
		t.Fatalf("small-budget handle: %d of %d reads partial, want all", got, reads)
	}
	if got := roomy.partialReads.Load(); got >= reads {
		t.Fatalf("default-budget handle: %d of %d reads partial, want a switch to images", got, reads)
	}
}

// TestFilterCountReadsOnlyItsColumns pins with the counting store that a
// cold unanchored filter count fetches only the filtered columns (and
// footers): on a table dominated by a text column it reads a small share
// of the table's bytes, where the whole-image path reads all of them.
func TestFilterCountReadsOnlyItsColumns(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	cnt := storage.NewCounting(storage.NewMem())
	g := mustInit(t, cnt, "test.pg", `node Person { name: String @key  age: I32?  city: String?  bio: String? }`, "tester", Options{})
	var bulk strings.Builder
	const n = 40_000
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	for i := range n {
		var bio strings.Builder
		for k := range 40 {
			if k > 0 {
				bio.WriteByte(' ')
			}
			bio.WriteString(words[rng.IntN(len(words))])
			fmt.Fprint(&bio, rng.IntN(1000))
		}
		fmt.Fprintf(&bulk, `{"type":"Person","data":{"name":"p%d","age":%d,"city":"c%d","bio":"%s"}}`+"\n", i, 18+rng.IntN(80), rng.IntN(100), bio.String())
	}
	appendJSONL(t, g, bulk.String())
	snap, pst := stateAt(t, g, Target{}, "node:Person")
	var total int64
	for _, f := range pst.Fragments() {
		total += f.Bytes + f.IndexBytes
	}
	p, _ := compileAt(t, snap, "q.gq", `query q() { match { $p: Person  $p.age = 31  $p.city = "c31" } return { count($p) as c } }`).Query("q")
	var want any
	for _, indexPath := range []bool{false, true} {
		h, err := Open(ctx, cnt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		h.snaps.SetIndexPath(indexPath)
		cnt.Reset()
		res, _, err := h.Query(ctx, Target{}, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var read int64
		for _, oc := range cnt.Snapshot() {
			read += oc.Bytes
		}
		t.Logf("index path %v: count %v, read %d of the table's %d bytes (%.1f%%)", indexPath, res.Rows[0][0], read, total, 100*float64(read)/float64(total))
		if !indexPath {
			want = res.Rows[0][0]
			if read < total/2 {
				t.Fatalf("the whole-image reference read only %d of %d bytes: the fixture does not show the difference", read, total)
			}
			continue
		}
		if !reflect.DeepEqual(res.Rows[0][0], want) || h.partialReads.Load() != 1 {
			t.Fatalf("streaming count %v (partial reads %d), whole image %v", res.Rows[0][0], h.partialReads.Load(), want)
		}
		if read*10 >= total {
			t.Fatalf("streaming filter count read %d bytes, ≥ 10%% of the table's %d", read, total)
		}
	}
}
