package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// bh is a branching test harness: one graph, its store, and the named
// queries of bhQueries compiled against its schema.
type bh struct {
	t   testing.TB
	g   *Graph
	st  storage.Store
	qs  *query.File
	ctx context.Context
}

// bhQueries work on every schema of these tests that has Person and Knows.
const bhQueries = `
query add($name: String, $age: I32) { insert Person { name: $name, age: $age } }
query del($name: String) { delete Person where name = $name }
query link($from: String, $to: String) { insert Knows { from: $from, to: $to } }
query unlink($from: String) { delete Knows where from = $from }
query age($name: String, $age: I32) { update Person set { age: $age } where name = $name }
`

// ttSchema and ttData are the merge truth table's setup (spec/engine.md §3.6).
const (
	ttSchema = fixture.TruthSchema
	ttData   = fixture.TruthData
)

// newBH initializes a graph with schema, loads data (overwrite) if given,
// and compiles queries (bhQueries when empty).
func newBH(t testing.TB, st storage.Store, schemaSrc, data, queries string) *bh {
	t.Helper()
	ctx := context.Background()
	g, err := Init(ctx, st, "test.pg", schemaSrc, "tester", Options{})
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	t.Cleanup(func() { engCheck(t, st) })
	if data != "" {
		if _, err := g.Load(ctx, strings.NewReader(data), LoadRequest{Mode: LoadOverwrite}); err != nil {
			t.Fatalf("load: %v", err)
		}
	}
	if queries == "" {
		queries = bhQueries
	}
	return &bh{t: t, g: g, st: st, qs: compileAt(t, resolve(t, g, Target{}), "test.gq", queries), ctx: ctx}
}

func (h *bh) mut(branch, name string, params map[string]any) *MutationResult {
	h.t.Helper()
	p, err := h.qs.Query(name)
	if err != nil {
		h.t.Fatal(err)
	}
	res, err := h.g.Mutate(h.ctx, branch, p, params, MutateOptions{Actor: "tester"})
	if err != nil {
		h.t.Fatalf("mutate %s on %s: %v", name, branch, err)
	}
	return res
}

func (h *bh) load(branch, mode, data string) {
	h.t.Helper()
	if _, err := h.g.Load(h.ctx, strings.NewReader(data), LoadRequest{Branch: branch, Mode: LoadMode(mode)}); err != nil {
		h.t.Fatalf("load on %s: %v", branch, err)
	}
}

func (h *bh) branch(name, from string) {
	h.t.Helper()
	if err := h.g.CreateBranch(h.ctx, name, from, "tester"); err != nil {
		h.t.Fatalf("create branch %s from %s: %v", name, from, err)
	}
}

// reopen returns a harness on a new handle over the same store and
// queries: the graph as a new process sees it.
func (h *bh) reopen() *bh {
	h.t.Helper()
	g := mustOpen(h.t, h.st, Options{})
	return &bh{t: h.t, g: g, st: h.st, qs: h.qs, ctx: h.ctx}
}

func (h *bh) head(branch string) string {
	h.t.Helper()
	return engSnap(h.t, h.g, branch).head
}

// nodes returns "id=prop" (or ids when prop is "") of a node type at t, sorted.
func (h *bh) nodes(t Target, typ, prop string) []string {
	h.t.Helper()
	_, rows := liveNodes(h.t, h.g, t, typ)
	return sortedRows(rows, func(i int) string {
		if prop == "" {
			return rows.IDs[i]
		}
		return fmt.Sprintf("%s=%v", rows.IDs[i], cell(rows, i, prop))
	})
}

// edges returns "src>dst" of an edge type at t, sorted.
func (h *bh) edges(t Target, typ string) []string {
	h.t.Helper()
	return engEdgesAt(h.t, h.g, t, typ)
}

// ttState renders a branch in the truth table's notation: P persons, K
// Knows edges, A Alice's age ("–" when absent), +E when Eve is present.
func (h *bh) ttState(branch string) string {
	h.t.Helper()
	ps := h.nodes(Target{Branch: branch}, "Person", "age")
	alice, eve := "–", false
	for _, p := range ps {
		if a, ok := strings.CutPrefix(p, "Alice="); ok {
			alice = a
		}
		if strings.HasPrefix(p, "Eve=") {
			eve = true
		}
	}
	s := fmt.Sprintf("P%d K%d A%s", len(ps), len(h.edges(Target{Branch: branch}, "Knows")), alice)
	if eve {
		s += " +E"
	}
	return s
}

// outcomeTag abbreviates a merge outcome as the spec's table does.
func outcomeTag(o MergeOutcome) string {
	switch o {
	case MergeAlreadyUpToDate:
		return "UTD"
	case MergeFastForward:
		return "FF"
	case MergeMerged:
		return "M"
	}
	return string(o)
}
