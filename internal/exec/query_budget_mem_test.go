package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/eval"
)

// budgetGraph is the generated graph of TestQueryRSSWithinCacheBudget:
// Person i has name p<i>, age i%90, city c<i%50>; it knows budgetDst(i, k)
// for k < 5.
const (
	budgetPersons = 200_000
	budgetDegree  = 5
	budgetSchema  = "node Person { name: String @key  age: I32?  city: String? }\nedge Knows: Person -> Person\n"
	// budgetCache is a quarter of the graph's decoded images (Person ~32
	// MB and Knows ~128 MB by snapshot.imageSize).
	budgetCache = 40 << 20
	// budgetSlack is what a query process may hold beyond its cache
	// budget: the runtime, the binary, a query's own rows. Decoding the
	// Knows image alone takes several times this.
	budgetSlack = 100 << 20
	// traversalSlack is the bound for unanchored traversals
	// (budget + 200 MB): their dense views are O(nodes + edges) int32s.
	traversalSlack = 200_000_000
)

func budgetDst(i, k int) int {
	d := (i*7919 + k*104729 + 13) % budgetPersons
	if d == i {
		d = (d + 1) % budgetPersons
	}
	return d
}

// budgetInput streams the graph's JSONL: persons, then edges.
type budgetInput struct {
	i   int
	buf []byte
}

func (g *budgetInput) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.i < budgetPersons:
			g.buf = fmt.Appendf(g.buf[:0], `{"type":"Person","data":{"name":"p%d","age":%d,"city":"c%d"}}`+"\n", g.i, g.i%90, g.i%50)
		case g.i < budgetPersons*(1+budgetDegree):
			e := g.i - budgetPersons
			src := e / budgetDegree
			g.buf = fmt.Appendf(g.buf[:0], `{"edge":"Knows","from":"p%d","to":"p%d"}`+"\n", src, budgetDst(src, e%budgetDegree))
		default:
			return 0, io.EOF
		}
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// TestQueryRSSWithinCacheBudget: each query runs in a fresh process (this
// test binary, TestQueryRSSHelper) over a graph whose decoded images are 4×
// its cache budget, and answers correctly with a peak RSS (the child's
// VmHWM) within the budget plus budgetSlack. It pins the
// query shapes whose memory the budget bounds: key lookups, bounded
// traversals from a key, filtered counts, grouped aggregates and sums over
// a streaming scan, and order … limit over a whole table (top-k). Not
// timed; skipped with -short (the load takes a few seconds).
//
// INVARIANT: a read the partial paths answer holds O(budget + rows it
// touches), never a whole table's image (docs/performance.md, cache budget).
func TestQueryRSSWithinCacheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a 1.2M-entity graph")
	}
	ctx := context.Background()
	dir := t.TempDir()
	st := localStore(t, dir)
	g := mustInit(t, st, "budget.pg", budgetSchema, "tester", Options{})
	if _, err := g.Load(ctx, &budgetInput{}, LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	// Expected answers, from the generator.
	filterCount := 0
	var sum int64
	var oldest []string
	for i := range budgetPersons {
		if i%90 == 31 && i%50 == 31 {
			filterCount++
		}
		if i%90 > 10 {
			sum += int64(i % 90)
		}
		if i%90 == 89 {
			oldest = append(oldest, "p"+strconv.Itoa(i))
		}
	}
	slices.Sort(oldest)
	var top5 [][]any
	for _, name := range oldest[:5] {
		top5 = append(top5, []any{name, 89})
	}
	reach := map[int]bool{}
	for k := range budgetDegree {
		d := budgetDst(777, k)
		reach[d] = true
		for k2 := range budgetDegree {
			reach[budgetDst(d, k2)] = true
		}
	}
	perCity := budgetPersons / 50
	// The unanchored traversals, counted from the generator: distinct
	// out-neighbours per person (edges to all of them; from the 22k
	// persons under 10 to persons over 50), and the 2-hop reach of the
	// persons under 10.
	out := func(i int) []int {
		var ns []int
		for k := range budgetDegree {
			if d := budgetDst(i, k); !slices.Contains(ns, d) {
				ns = append(ns, d)
			}
		}
		return ns
	}
	allEdges, farFiltered, hop2Large := 0, 0, 0
	edgesByCity := map[string]int{}
	// The projections' rows, as streamed digests (rowDigest), and the
	// first rows in the row executor's order (persons in load order, each
	// one's distinct neighbours in edge order).
	var allRows, farRows, hop2Rows rowDigest
	var first10 [][]any
	farAgeSum, cycles := 0, 0
	var oldestFar [][2]string // (far name, near name) of the edges to the oldest
	edgesByFarCity := map[string]int{}
	for i := range budgetPersons {
		ns := out(i)
		allEdges += len(ns)
		edgesByCity["c"+strconv.Itoa(i%50)] += len(ns)
		for _, d := range ns {
			if slices.Contains(out(d), i) {
				cycles++
			}
			farAgeSum += d % 90
			if d%90 == 89 {
				oldestFar = append(oldestFar, [2]string{"p" + strconv.Itoa(d), "p" + strconv.Itoa(i)})
			}
			edgesByFarCity["c"+strconv.Itoa(d%50)]++
			allRows.add([]any{"p" + strconv.Itoa(i), "p" + strconv.Itoa(d)})
			if len(first10) < 10 {
				first10 = append(first10, []any{"p" + strconv.Itoa(i), "c" + strconv.Itoa(d%50)})
			}
		}
		if i%90 >= 10 {
			continue
		}
		seen := map[int]bool{i: true}
		for _, d := range ns {
			if d%90 > 50 {
				farFiltered++
				farRows.add([]any{"p" + strconv.Itoa(i), "p" + strconv.Itoa(d), d % 90})
			}
			seen[d] = true
		}
		for _, d := range ns {
			for _, d2 := range out(d) {
				seen[d2] = true
			}
		}
		for d := range seen {
			if d != i {
				hop2Rows.add([]any{"p" + strconv.Itoa(i), "p" + strconv.Itoa(d)})
			}
		}
		hop2Large += len(seen) - 1
		if slices.Contains(ns, i) {
			hop2Large++ // a self-loop reports the source at hop 1 (none here)
		}
	}
	// The three cities with the most edges, by the near and by the far
	// end's city (ties by name, as the column sort breaks them).
	cities := slices.Collect(maps.Keys(edgesByCity))
	top3 := func(edges map[string]int) [][]any {
		slices.SortFunc(cities, func(a, b string) int {
			if d := edges[b] - edges[a]; d != 0 {
				return d
			}
			return strings.Compare(a, b)
		})
		var top [][]any
		for _, c := range cities[:3] {
			top = append(top, []any{c, edges[c]})
		}
		return top
	}
	topCities, topFarCities := top3(edgesByCity), top3(edgesByFarCity)
	// The first edges by the far end's age descending, then names.
	slices.SortFunc(oldestFar, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	var topOldestFar [][]any
	for _, e := range oldestFar[:5] {
		topOldestFar = append(topOldestFar, []any{e[1], e[0], 89})
	}
	cases := []struct {
		name, src string
		want      [][]any
		slack     int64
		stream    bool // the helper streams the rows and prints their digest
	}{
		{"key", `match { $p: Person { name: "p777" } } return { $p.age }`, [][]any{{777 % 90}}, budgetSlack, false},
		{"2-hop", `match { $p: Person { name: "p777" }  $p knows{1,2} $f } return { count($f) as c }`, [][]any{{len(reach)}}, budgetSlack, false},
		{"filter count", `match { $p: Person  $p.age = 31  $p.city = "c31" } return { count($p) as c }`, [][]any{{filterCount}}, budgetSlack, false},
		{"group by", `match { $p: Person } return { $p.city, count($p) as c } order { c desc } limit 3`,
			[][]any{{"c0", perCity}, {"c1", perCity}, {"c10", perCity}}, budgetSlack, false},
		{"sum", `match { $p: Person  $p.age > 10 } return { sum($p.age) as s }`, [][]any{{sum}}, budgetSlack, false},
		{"order limit", `match { $p: Person } return { $p.name, $p.age } order { $p.age desc } limit 5`, top5, budgetSlack, false},
		// Unanchored traversals (dense views, eval/dense.go): the issue's
		// bound, budget + 200 MB.
		{"all edges", `match { $p: Person  $p knows $f } return { count($f) as c }`, [][]any{{allEdges}}, traversalSlack, false},
		{"far filter", `match { $p: Person  $p.age < 10  $p knows $f  $f.age > 50 } return { count($f) as c }`, [][]any{{farFiltered}}, traversalSlack, false},
		{"edges by city", `match { $p: Person  $p knows $f } return { $p.city, count($f) as c } order { c desc } limit 3`, topCities, traversalSlack, false},
		{"2-hop large", `match { $p: Person  $p.age < 10  $p knows{1,2} $f } return { count($f) as c }`, [][]any{{hop2Large}}, traversalSlack, false},
		// Projections of traversal rows (eval/dense_project.go), streamed.
		{"project all edges", `match { $p: Person  $p knows $f } return { $p.name, $f.name }`, allRows.rows(), traversalSlack, true},
		{"project far filter", `match { $p: Person  $p.age < 10  $p knows $f  $f.age > 50 } return { $p.name, $f.name, $f.age }`, farRows.rows(), traversalSlack, true},
		{"project 2-hop", `match { $p: Person  $p.age < 10  $p knows{1,2} $f } return { $p.name, $f.name }`, hop2Rows.rows(), traversalSlack, true},
		// Aggregates of the far end (eval/dense_aggregate.go).
		{"edges by far city", `match { $p: Person  $p knows $f } return { $f.city, count($p) as c } order { c desc } limit 3`, topFarCities, traversalSlack, false},
		{"far sum", `match { $p: Person  $p knows $f } return { sum($f.age) as s }`, [][]any{{farAgeSum}}, traversalSlack, false},
		{"cycle", `match { $p: Person  $p knows $f  $f knows $p } return { count($f) as c }`, [][]any{{cycles}}, traversalSlack, false},
		{"edge variable", `match { $p: Person  $p $e:knows $f } return { count($e) as c }`, [][]any{{budgetPersons * budgetDegree}}, traversalSlack, false},
		{"project limit", `match { $p: Person  $p knows $f } return { $p.name, $f.city } limit 10`, first10, traversalSlack, false},
		// order … limit over traversal rows: a top-k heap over the dense
		// walk (eval/dense_topk.go).
		{"project order limit", `match { $p: Person  $p knows $f } return { $p.name, $f.name, $f.age } order { $f.age desc, $f.name, $p.name } limit 5`, topOldestFar, traversalSlack, false},
	}
	for _, tc := range cases {
		cmd := osexec.Command(bin, "-test.run=^TestQueryRSSHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "OMNIGRAPH_RSS_HELPER="+dir, "OMNIGRAPH_RSS_QUERY="+tc.src, "OMNIGRAPH_RSS_STREAM="+strconv.FormatBool(tc.stream))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: helper: %v\n%s", tc.name, err, out)
		}
		got, rest, _ := strings.Cut(string(out), "\n")
		hwm, _, _ := strings.Cut(rest, "\n")
		rss, err := strconv.ParseInt(hwm, 10, 64)
		if err != nil {
			t.Fatalf("%s: helper output %q", tc.name, out)
		}
		want, _ := json.Marshal(tc.want)
		t.Logf("%s: peak RSS %.1f MiB (budget %d MiB + slack %d MiB)", tc.name, float64(rss)/(1<<20), budgetCache>>20, tc.slack>>20)
		if got != string(want) {
			t.Errorf("%s: rows %s, want %s", tc.name, got, want)
		}
		if rss > budgetCache+tc.slack {
			t.Errorf("%s: peak RSS %d bytes over the budget %d + %d", tc.name, rss, budgetCache, tc.slack)
		}
	}
}

// TestQueryRSSHelper runs one query for TestQueryRSSWithinCacheBudget in
// its own process (cache budget budgetCache) and prints its rows as JSON.
func TestQueryRSSHelper(t *testing.T) {
	dir := os.Getenv("OMNIGRAPH_RSS_HELPER")
	if dir == "" {
		t.Skip("helper process only")
	}
	ctx := context.Background()
	st := localStore(t, dir)
	g := mustOpen(t, st, Options{CacheBytes: budgetCache})
	p := headPlan(t, g, "query q() { "+os.Getenv("OMNIGRAPH_RSS_QUERY")+" }", "q")
	var rows [][]any
	if os.Getenv("OMNIGRAPH_RSS_STREAM") == "true" {
		snap := resolve(t, g, Target{})
		var dg rowDigest
		err := g.QueryStreamAt(ctx, snap, p, nil, func(ctx context.Context, st *eval.Stream) error {
			return st.Each(ctx, func(row []any) error {
				dg.add(row)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		rows = dg.rows()
	} else {
		res := queryAt(t, g, Target{}, p, nil)
		rows = res.Rows
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s\n%d\n", b, peakRSS(t))
}

// rowDigest sums a hash of each row's JSON: equal for the same rows in any
// order, so a streamed result of a million rows is checked without holding
// it (the language leaves the order of rows without `order` unspecified).
type rowDigest struct {
	n   int
	sum uint64
}

func (d *rowDigest) add(row []any) {
	b, err := json.Marshal(row)
	if err != nil {
		panic(err)
	}
	h := fnv.New64a()
	h.Write(b)
	d.n++
	d.sum += h.Sum64()
}

// rows is the digest as the helper prints it: one row of the row count and
// the sum (as a string: JSON numbers lose its low bits).
func (d *rowDigest) rows() [][]any { return [][]any{{d.n, strconv.FormatUint(d.sum, 16)}} }

// peakRSS returns this process's peak resident set (VmHWM, bytes). Not
// getrusage from the parent: a child's ru_maxrss starts from its parent's
// resident set at the fork, before the exec.
func peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: ", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
