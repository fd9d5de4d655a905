package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// scalarSchema is scanSchema with scalar indexes: single-property ones
// on an integer, an unsigned, an enum, a date and a bool, and a
// composite over an integer and a String (one object per column). f is
// a float (never indexed), tags a list.
const scalarSchema = `
node Item {
  name: String @key  n: I64? @index  u: U32? @index  f: F64?  s: String?  e: enum(red, green, blue)? @index
  d: Date? @index  b: Bool? @index  tags: [String]?
  @index(n, s)
}
edge Rel: Item -> Item
`

// scalarRefs counts the scalar index objects of the Item table by column.
func scalarRefs(t *testing.T, g *Graph) map[string]int {
	t.Helper()
	snap := resolve(t, g, Target{})
	s, err := snap.State(context.Background(), snapshot.NodeKey("Item"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range s.Indexes() {
		if r.Kind == index.KindBTree {
			out[r.Columns[0]]++
		}
	}
	return out
}

// TestScalarIndexMatchesScan is the differential test of the scalar
// index path: random data with nulls in every column over several
// fragments, an optimize that indexes them, then updates and deletes
// after the build and a fragment loaded after it (unindexed); every
// comparison operator, alone and in conjunctions over one and several
// indexed columns, mixed with filters no index decides, under counts,
// projections, orderings and aggregates. A fresh handle (the cold path:
// scalar indexes) must answer exactly the rows, in the same order, of a
// handle reading whole-table images.
func TestScalarIndexMatchesScan(t *testing.T) {
	ctx := context.Background()
	g, st, rng := readTestGraph(t, scalarSchema, 11)
	for k := range 3 {
		if _, err := g.Load(ctx, strings.NewReader(scanItems(rng, k*700, 700)), LoadRequest{Mode: LoadAppend}); err != nil {
			t.Fatal(err)
		}
	}
	var edges strings.Builder
	for range 3000 {
		fmt.Fprintf(&edges, `{"edge":"Rel","from":"i%d","to":"i%d"}`+"\n", rng.IntN(2100), rng.IntN(2100))
	}
	if _, err := g.Load(ctx, strings.NewReader(edges.String()), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	_, built := optimizeIndexes(t, g, "main")
	refs := scalarRefs(t, g)
	if built == 0 || len(refs) != 6 || refs["s"] == 0 || refs["f"] != 0 {
		t.Fatalf("optimize built %d scalar indexes: %v", built, refs)
	}
	// A second optimize has nothing to build.
	if res, err := g.Optimize(ctx, "main"); err != nil || res.Commit != nil {
		t.Fatalf("second optimize: %+v %v", res, err)
	}
	churn(t, g, rng, scanWrites, "set_n", "n", "del", "i", 2100, 40, func(i int) any { return i - 20 })
	if _, err := g.Load(ctx, strings.NewReader(scanItems(rng, 2100, 300)), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	tabs, err := g.Tables(ctx, Target{})
	if err != nil {
		t.Fatal(err)
	}
	covered, uncovered := 0, 0
	for _, c := range tabs[0].Indexes {
		if c.Kind == index.KindBTree {
			covered += c.FragmentsIndexed
			uncovered += c.FragmentsUnindexed
		}
	}
	if covered == 0 || uncovered == 0 {
		t.Fatalf("coverage %+v: want indexed and unindexed fragments", tabs[0].Indexes)
	}
	full := imageHandle(t, st)
	ops := []string{"=", "<", "<=", ">", ">="}
	type prop struct {
		name  string
		param string // the parameter type
		draw  func() any
	}
	props := []prop{
		{"n", "I64", func() any { return rng.IntN(220) - 110 }},
		{"u", "U32", func() any { return rng.IntN(1100) }},
		{"e", "String", func() any { return []string{"red", "green", "blue", "mauve"}[rng.IntN(4)] }},
		{"d", "Date", func() any { return fmt.Sprintf("2024-01-%02d", 1+rng.IntN(28)) }},
		{"b", "Bool", func() any { return rng.IntN(2) == 0 }},
		{"s", "String", func() any { return fmt.Sprintf("s%d", rng.IntN(22)) }},
	}
	returns := []string{
		`return { count($i) as c }`,
		`return { $i.name, $i.n, $i.s } order { $i.name asc }`,
		`return { $i.name }`,
		`return { $i.e, count($i) as c, sum($i.n) as t }`,
		`return { $i.name, $i.u } order { $i.u desc } limit 5`,
		// Traversals from the filtered scan: its anchors (partial
		// snapshots) or its filter bitmap (dense counts).
		`$i rel $j return { count($j) as c }`,
		`$i rel $j  $j rel $k return { count($k) as c }`,
		`$i rel $j return { $i.name, $j.name } order { $i.name asc, $j.name asc }`,
	}
	viaIndex, ran := 0, 0
	for q := range 160 {
		var conds, decl []string
		params := map[string]any{}
		for k := range 1 + rng.IntN(3) {
			p := props[rng.IntN(len(props))]
			if p.name == "e" {
				// enum comparisons take literals of the enum
				conds = append(conds, fmt.Sprintf(`$i.e %s "%s"`, ops[rng.IntN(5)], p.draw()))
				continue
			}
			pn := fmt.Sprintf("p%d", k)
			decl = append(decl, fmt.Sprintf("$%s: %s", pn, p.param))
			params[pn] = p.draw()
			conds = append(conds, fmt.Sprintf("$i.%s %s $%s", p.name, ops[rng.IntN(5)], pn))
		}
		if rng.IntN(4) == 0 {
			conds = append(conds, `$i.f > 0.3`) // no index: left to the scan and eval
		}
		ret := returns[rng.IntN(len(returns))]
		if tail, ok := strings.CutPrefix(ret, "$i rel"); ok {
			// the traversal goes inside the match
			m, r, _ := strings.Cut(tail, " return ")
			conds = append(conds, "$i rel"+m)
			ret = "return " + r
		}
		src := fmt.Sprintf("query q(%s) { match { $i: Item  %s } %s }", strings.Join(decl, ", "), strings.Join(conds, "  "), ret)
		f, err := query.Compile(g.catalog0(t), "q.gq", src)
		if err != nil {
			if strings.Contains(err.Error(), "enum") {
				continue // a value outside the enum: rejected by the type checker
			}
			t.Fatalf("query %d %s: %v", q, src, err)
		}
		p, _ := f.Query("q")
		ran++
		want := queryAt(t, full, Target{}, p, params)
		rec := storage.NewRecording(st)
		fresh := mustOpen(t, rec, Options{})
		got, _, err := fresh.Query(ctx, Target{}, p, params)
		if err != nil {
			t.Fatalf("query %d %s: %v", q, src, err)
		}
		for _, r := range rec.Requests() {
			if strings.HasSuffix(r.Key, ".btr") {
				viaIndex++
				break
			}
		}
		if !reflect.DeepEqual(got.Rows, want.Rows) {
			t.Fatalf("query %d %s %v:\n index rows %v\n want %v", q, src, params, got.Rows, want.Rows)
		}
	}
	if viaIndex*2 < ran {
		t.Fatalf("only %d of %d queries read a scalar index", viaIndex, ran)
	}
	t.Logf("%d of %d queries read scalar indexes", viaIndex, ran)
}

// TestScalarIndexColdCountReads pins what a cold equality count over two
// indexed properties reads: the indexes' fronts and the blocks holding
// the two values, no column of the table, under 1% of the table's bytes
// (OMNIGRAPH_SCALAR_ROWS scales the table; default 200,000 rows).
func TestScalarIndexColdCountReads(t *testing.T) {
	ctx := context.Background()
	rows := envInt(t, "OMNIGRAPH_SCALAR_ROWS", 200_000)
	g, st, tableBytes := scalarPeople(t, rows, 100)
	f, err := query.Compile(g.catalog0(t), "q.gq", `query q() { match { $p: Person  $p.age = 31  $p.city = "c31" } return { count($p) as n } }`)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := f.Query("q")
	want := 0
	for i := range rows {
		if 18+(i*7919)%80 == 31 && (i*104729)%100 == 31 {
			want++
		}
	}
	rec := storage.NewRecording(st)
	cnt := storage.NewCounting(rec)
	fresh := mustOpen(t, cnt, Options{})
	cnt.Reset()
	rec.Reset()
	res := queryAt(t, fresh, Target{}, p, nil)
	if got := res.Rows[0][0]; got != int64(want) {
		t.Fatalf("count %v, want %d", got, want)
	}
	c := cnt.Snapshot()
	read := c[storage.OpGet].Bytes + c[storage.OpGetRange].Bytes
	frags := 0
	st.List(ctx, "tables/", "", func(info storage.Info) error {
		if strings.HasSuffix(info.Key, ".parquet") {
			frags++
		}
		return nil
	})
	t.Logf("%d fragments", frags)
	t.Logf("%d rows: table %d bytes, the count read %d bytes in %d requests", rows, tableBytes, read, c.Requests())
	if read*100 > tableBytes {
		t.Fatalf("a cold indexed count read %d bytes of a %d-byte table (%v)", read, tableBytes, c)
	}
	// No fragment is opened: every filter is decided by the indexes.
	for _, r := range rec.Requests() {
		if strings.HasSuffix(r.Key, ".parquet") {
			t.Fatalf("the count read fragment %s", r)
		}
	}
}

// scalarPeople loads rows people shaped like the peer benchmark's
// (peer_bench_test.go) into a fresh graph with `@index(age, city)` and
// optimizes it: ages by the same formula, a city among cities, a bio of
// 12 words drawn from 5,000. It returns the graph, its store and the bytes
// of its Parquet fragments.
func scalarPeople(t *testing.T, rows, cities int) (*Graph, storage.Store, int64) {
	t.Helper()
	ctx := context.Background()
	st := storage.NewMem()
	const pg = `node Person { name: String @key  age: I32?  city: String?  bio: String?  @index(age, city) }`
	g := mustInit(t, st, "p.pg", pg, "tester", Options{})
	var b strings.Builder
	r := rand.New(rand.NewPCG(5, 6))
	for i := range rows {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":"p%d","age":%d,"city":"c%d","bio":"`, i, 18+(i*7919)%80, (i*104729)%cities)
		for k := range 12 {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(fixture.PeerWord(r.IntN(5000)))
		}
		b.WriteString(`"}}` + "\n")
	}
	if _, err := g.Load(ctx, strings.NewReader(b.String()), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Optimize(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	var tableBytes int64
	if err := st.List(ctx, "tables/", "", func(info storage.Info) error {
		if strings.HasSuffix(info.Key, ".parquet") {
			tableBytes += info.Size
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return g, st, tableBytes
}

// envInt is the integer value of environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// TestScalarIndexDenseMatchesImages: the dense counts' filter bitmaps
// (snapshot DenseMask) come from the scalar indexes where fragments have
// them; after deletes and updates past the index build they count what
// whole-table images count, and the dense path reads the indexes.
func TestScalarIndexDenseMatchesImages(t *testing.T) {
	ctx := context.Background()
	pg := strings.Replace(denseSchema, "score: F64? }", "score: F64?  @index(age, city) }", 1)
	g, st, rng := readTestGraph(t, pg, 12)
	for k := range 3 {
		if _, err := g.Load(ctx, strings.NewReader(denseGraph(rng, k*2000, 2000, 7)), LoadRequest{Mode: LoadAppend}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Optimize(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	churn(t, g, rng, denseWrites, "set_age", "age", "del_p", "p", 6000, 25, func(i int) any { return i })
	full := imageHandle(t, st)
	for qi, q := range []struct {
		body  string
		dense bool // else a partial snapshot of the few anchors
	}{
		{`match { $p: Person  $p.age < $lim  $p knows $f  $f.city = "c3" } return { count($f) as c }`, true},
		{`match { $p: Person  $p.age >= 8  $p.age <= 80  $p knows{1,2} $f } return { count($f) as c }`, true},
		{`match { $p: Person  $p.age >= 8  $p.age <= 30  $p knows{1,2} $f } return { count($f) as c }`, false},
		{`match { $p: Person  $p.city = "c2"  $p.age = 40  $p knows $f } return { $p.city, count($f) as c }`, false},
		{`match { $p: Person  $p knows $a  $a knows $b  $b.city = "c2"  $b.age > 11 } return { count($b) as c, count($p) as d }`, true},
	} {
		body := q.body
		p, err := query.CompileQuery(g.catalog0(t), "q.gq", "query q($lim: I32) { "+body+" }", "q")
		if err != nil {
			t.Fatalf("query %d: %v", qi, err)
		}
		want := queryAt(t, full, Target{}, p, map[string]any{"lim": 50})
		rec := storage.NewRecording(st)
		dense := mustOpen(t, rec, Options{CacheBytes: 64 << 10})
		got := queryAt(t, dense, Target{}, p, map[string]any{"lim": 50})
		if took := dense.snaps.DenseReads() == 1; took != q.dense {
			t.Fatalf("query %d: dense path taken %v, want %v", qi, took, q.dense)
		}
		btr := 0
		for _, r := range rec.Requests() {
			if strings.HasSuffix(r.Key, ".btr") {
				btr++
			}
		}
		if btr == 0 {
			t.Fatalf("query %d: no scalar index read", qi)
		}
		if !reflect.DeepEqual(got.Rows, want.Rows) {
			t.Fatalf("query %d: dense rows %v, want %v", qi, got.Rows, want.Rows)
		}
	}
}

// churn runs rounds of an update and a delete of random rows (named
// prefix0 … prefix<rows-1>) through queries set and del of writes: set's
// parameter param gets val(round), both take the row's name as "name".
func churn(t *testing.T, g *Graph, rng *rand.Rand, writes, set, param, del, prefix string, rows, rounds int, val func(int) any) {
	t.Helper()
	ctx := context.Background()
	wf, err := query.Compile(g.catalog0(t), "w.gq", writes)
	if err != nil {
		t.Fatal(err)
	}
	sq, _ := wf.Query(set)
	dq, _ := wf.Query(del)
	for i := range rounds {
		if _, err := g.Mutate(ctx, "main", sq, map[string]any{"name": fmt.Sprintf("%s%d", prefix, rng.IntN(rows)), param: val(i)}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Mutate(ctx, "main", dq, map[string]any{"name": fmt.Sprintf("%s%d", prefix, rng.IntN(rows))}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScalarIndexCorruptIsTyped: a flipped byte in a scalar index object
// makes a cold read that uses it fail with a *table.CorruptError naming
// the object, or (a byte no lookup reads) answer exactly as before —
// never a wrong count.
func TestScalarIndexCorruptIsTyped(t *testing.T) {
	ctx := context.Background()
	g, st, rng := readTestGraph(t, scalarSchema, 13)
	if _, err := g.Load(ctx, strings.NewReader(scanItems(rng, 0, 3000)), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Optimize(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	var key string
	if err := st.List(ctx, "tables/", "", func(info storage.Info) error {
		if strings.HasSuffix(info.Key, ".btr") && key == "" {
			key = info.Key
		}
		return nil
	}); err != nil || key == "" {
		t.Fatalf("no scalar index object (%v)", err)
	}
	orig, _, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	p, err := query.CompileQuery(g.catalog0(t), "q.gq", `query q($lo: I64) { match { $i: Item  $i.n >= $lo  $i.u >= 0  $i.e >= "blue"  $i.d >= date("2000-01-01")  $i.s >= ""  $i.b >= false } return { count($i) as c } }`, "q")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := imageHandle(t, st).Query(ctx, Target{}, p, map[string]any{"lo": -100})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := 0; i < len(orig); i += 1 + len(orig)/97 {
		bad := slices.Clone(orig)
		bad[i] ^= 0x21
		if _, err := st.Put(ctx, key, bad); err != nil {
			t.Fatal(err)
		}
		fresh := mustOpen(t, st, Options{})
		got, _, err := fresh.Query(ctx, Target{}, p, map[string]any{"lo": -100})
		var ce *table.CorruptError
		switch {
		case err != nil && (!errors.As(err, &ce) || ce.Key != key):
			t.Fatalf("byte %d: %v is not a corruption of %s", i, err, key)
		case err != nil:
			failed++
		case !reflect.DeepEqual(got.Rows, want.Rows):
			t.Fatalf("byte %d: SILENT WRONG ANSWER %v, want %v", i, got.Rows, want.Rows)
		}
	}
	if failed == 0 {
		t.Fatal("no flipped byte was detected")
	}
	if _, err := st.Put(ctx, key, orig); err != nil {
		t.Fatal(err)
	}
}
