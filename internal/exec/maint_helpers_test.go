package exec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// fakeClock is a manual clock shared by a Mem store (object ages) and a
// graph handle (commit times), so grace periods are tested without sleeping.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Now advances by a microsecond per call so commit times stay ordered.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// maintInit creates an empty graph of the engine fixture's schema.
func maintInit(t testing.TB, st storage.Store, o Options) *Graph {
	t.Helper()
	g, err := Init(context.Background(), st, "test.pg", engSchema, "tester", o)
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	t.Cleanup(func() { engCheck(t, st) })
	return g
}

// maintRow is the JSONL line of the i-th single-row commit of the history
// workload: even i adds person p<i/2>, odd i adds an edge p<k> knows p<k-1>.
func maintRow(i int) string {
	k := i / 2
	if i%2 == 0 {
		return fmt.Sprintf(`{"type":"Person","data":{"name":"p%d","age":%d}}`, k, k%90)
	}
	return fmt.Sprintf(`{"edge":"Knows","from":"p%d","to":"p%d"}`, k, max(k-1, 0))
}

// maintHistory publishes rows [from, to) of the workload, one commit each.
func maintHistory(t testing.TB, g *Graph, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := g.Load(context.Background(), strings.NewReader(maintRow(i)), LoadRequest{Mode: LoadAppend}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
}

// maintBulk loads rows [0, n) of the workload in one commit.
func maintBulk(t testing.TB, g *Graph, n int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString(maintRow(i))
		b.WriteByte('\n')
	}
	if _, err := g.Load(context.Background(), strings.NewReader(b.String()), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatalf("bulk load: %v", err)
	}
}

const (
	maintPointQ = `query q($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }`
	maintHopQ   = `query q($name: String) { match { $p: Person { name: $name }  $p knows $m  $m knows $f } return { $f.name } }`
)

// maintQuery runs a read query on branch main of g and returns its rows as
// strings.
func maintQuery(t testing.TB, g *Graph, target Target, src string, params map[string]any) []string {
	t.Helper()
	snap := resolve(t, g, target)
	plan, err := query.CompileQuery(snap.Catalog(), "q.gq", src, "q")
	if err != nil {
		t.Fatal(err)
	}
	res := queryAt(t, g, target, plan, params)
	var out []string
	for _, r := range res.Rows {
		out = append(out, fmt.Sprint(r))
	}
	return out
}

// maintContent is every row of every table of a target, in table order:
// equal content means equal rows in equal order.
func maintContent(t testing.TB, g *Graph, target Target) string {
	t.Helper()
	snap := resolve(t, g, target)
	var b strings.Builder
	table := func(tk, name string, props []*schema.Property) {
		rows := liveRows(t, snap, tk)
		for i, id := range rows.IDs {
			fmt.Fprintf(&b, "%s %s", name, id)
			if rows.Src != nil {
				fmt.Fprintf(&b, " %s>%s", rows.Src[i], rows.Dst[i])
			}
			for _, p := range props {
				fmt.Fprintf(&b, " %v", cell(rows, i, p.Name))
			}
			b.WriteByte('\n')
		}
	}
	for _, nt := range snap.Catalog().Nodes {
		table(snapshot.NodeKey(nt.Name), nt.Name, nt.Props)
	}
	for _, et := range snap.Catalog().Edges {
		table(snapshot.EdgeKey(et.Name), et.Name, et.Props)
	}
	return b.String()
}

// maintFragments returns the fragment count of every table at main's head.
func maintFragments(t testing.TB, g *Graph) map[string]int {
	t.Helper()
	tabs, err := g.Tables(context.Background(), Target{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, ti := range tabs {
		out[ti.Kind+":"+ti.Name] = ti.Fragments
	}
	return out
}

// maintHistoryAndBulk writes the same n Person rows two ways: as n
// single-row commits on hist (g is its handle) and as one bulk load on
// bulk.
func maintHistoryAndBulk(tb testing.TB, n int) (hist storage.Store, g *Graph, bulk storage.Store) {
	tb.Helper()
	hist = storage.NewMem()
	g = maintInit(tb, hist, Options{})
	maintHistory(tb, g, 0, n)
	bulk = storage.NewMem()
	maintBulk(tb, maintInit(tb, bulk, Options{}), n)
	return hist, g, bulk
}
