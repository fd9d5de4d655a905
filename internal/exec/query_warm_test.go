package exec

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// warmKeyGraph is a small local-disk graph of the peer schema (n Person
// rows, one Knows each) on a handle whose key lookups are warm.
func warmKeyGraph(t *testing.T, dir string, n int) *Graph {
	t.Helper()
	st := localStore(t, dir)
	ctx := t.Context()
	g := mustInit(t, st, "peer.pg", peerSchema, "test", Options{})
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":"p%d","age":%d,"city":"c%d","bio":"b"}}`+"\n", i, 20+i%50, i%10)
	}
	for i := range n {
		fmt.Fprintf(&b, `{"edge":"Knows","from":"p%d","to":"p%d","data":{"since":2020}}`+"\n", i, (i+1)%n)
	}
	if _, err := g.Load(ctx, &b, LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	return g
}

// warmAge runs the peer pk query for name and returns the age it found
// and the commit it read.
func warmAge(t *testing.T, g *Graph, name string) (int64, CommitInfo) {
	t.Helper()
	p := peerPlan(t, g, "pk")
	res, ci, err := g.Query(context.Background(), Target{}, p, map[string]any{"n": name})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("pk %s: %d rows", name, len(res.Rows))
	}
	age, ok := res.Rows[0][0].(int64)
	if !ok {
		t.Fatalf("pk %s: age %T %v", name, res.Rows[0][0], res.Rows[0][0])
	}
	return age, ci
}

// TestWarmKeyLookupAllocs pins the allocations of a warm key lookup
// through Graph.Query on local disk (BenchmarkPeer/pk's path): the ref
// read answers from the kept file with no copy, the head's checked schema
// and CommitInfo are reused, the key renders without a map. 44 before
// these cuts, 18 after branch pk's (no layout map or string-parameter
// box, one allocation for the runner and its budget, cache keys named
// once per commit); a cut undone fails here, not only in a benchmark.
func TestWarmKeyLookupAllocs(t *testing.T) {
	g := warmKeyGraph(t, t.TempDir(), 2000)
	p := peerPlan(t, g, "pk")
	ctx := context.Background()
	params := map[string]any{"n": "p17"}
	for range 16 { // past the partial reads of a fresh handle
		if _, _, err := g.Query(ctx, Target{}, p, params); err != nil {
			t.Fatal(err)
		}
	}
	const maxAllocs = 20
	allocs := testing.AllocsPerRun(200, func() {
		if _, _, err := g.Query(ctx, Target{}, p, params); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > maxAllocs {
		t.Errorf("warm key lookup: %v allocations per query, want ≤ %d", allocs, maxAllocs)
	}
	t.Logf("warm key lookup: %v allocations per query", allocs)
}

// TestWarmQuerySeesOtherHandleWrites: the memos of a warm read (the
// decoded ref, the head's checked schema and CommitInfo) never outlive the
// head they were made for. A second handle on the same directory (another
// writer as far as the first can tell: it shares nothing but the files)
// updates the row between reads; each read on the warm handle must see
// the write acknowledged before it and report the commit it read.
func TestWarmQuerySeesOtherHandleWrites(t *testing.T) {
	dir := t.TempDir()
	g := warmKeyGraph(t, dir, 200)
	for range 16 {
		warmAge(t, g, "p5")
	}
	st := localStore(t, dir)
	w := mustOpen(t, st, Options{})
	set := peerPlan(t, w, "set_age")
	for i := range 20 {
		want := int64(100 + i)
		if _, err := w.Mutate(t.Context(), "main", set, map[string]any{"name": "p5", "age": want}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The head as the writer left it (a compaction may follow the write).
		log := commitLog(t, w, "main", 1)
		got, ci := warmAge(t, g, "p5")
		if got != want || ci != log[0] {
			t.Fatalf("write %d: warm read found age %d at commit %+v; the other handle wrote %d, head %+v", i, got, ci, want, log[0])
		}
		// And again, from the memos (the head has not moved).
		if again, ci2 := warmAge(t, g, "p5"); again != want || ci2 != ci {
			t.Fatalf("write %d: second read %d at %+v, first %+v", i, again, ci2, ci)
		}
	}
}
