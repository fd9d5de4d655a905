package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// maintFragmented builds a graph with auto-compaction off: 40 single-row
// commits, then updates and deletes that leave deletion vectors.
func maintFragmented(t *testing.T) (*Graph, storage.Store) {
	t.Helper()
	st := storage.NewMem()
	g := maintInit(t, st, Options{NoAutoCompact: true})
	maintHistory(t, g, 0, 40)
	ctx := context.Background()
	for _, name := range []string{"p3", "p7", "p11"} {
		if _, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": name, "age": 77}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Mutate(ctx, "main", engPlan(t, g, "remove_person"), map[string]any{"name": "p5"}, MutateOptions{}); err != nil {
		t.Fatal(err)
	}
	return g, st
}

// TestOptimizePreservesContent: optimize rewrites fragments into fewer ones,
// as one maintenance commit, and every table reads exactly as before — the
// same rows in the same order — with every fragment covered by a key index.
func TestOptimizePreservesContent(t *testing.T) {
	g, _ := maintFragmented(t)
	ctx := context.Background()
	before := maintContent(t, g, Target{})
	fragsBefore := maintFragments(t, g)
	res, err := g.Optimize(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit == nil || res.Commit.Kind != "maintenance" || res.Commit.Actor != MaintenanceActor {
		t.Fatalf("commit %+v", res.Commit)
	}
	if got := maintContent(t, g, Target{}); got != before {
		t.Fatalf("content changed:\n%s\nwant\n%s", got, before)
	}
	after := maintFragments(t, g)
	byKey := map[string]OptimizeDataset{}
	for _, ds := range res.Datasets {
		byKey[ds.TypeKey] = ds
	}
	for _, tk := range []string{"node:Person", "edge:Knows"} {
		ds := byKey[tk]
		if !ds.Committed || after[tk] != 1 || ds.FragmentsRemoved != fragsBefore[tk] || ds.FragmentsAdded != 1 {
			t.Errorf("%s: %+v, fragments %d → %d", tk, ds, fragsBefore[tk], after[tk])
		}
	}
	if len(res.Datasets) != 4 || byKey["node:Company"].Committed {
		t.Errorf("datasets %+v", res.Datasets)
	}
	// Every fragment is indexed — by its own fragment index (every fragment
	// this build writes) or by a key index — and lookups agree with the
	// table.
	snap, s := stateAt(t, g, Target{}, "node:Person")
	covered := map[string]bool{}
	for _, r := range s.Indexes() {
		for _, f := range r.Fragments {
			covered[f] = true
		}
	}
	for _, f := range s.Fragments() {
		if !covered[f.Key] && f.Index == "" {
			t.Errorf("fragment %s not indexed", f.Key)
		}
	}
	for _, id := range []string{"p3", "p5", "p19", "zz"} {
		rec, err := index.LookupIDs(ctx, g.st, s, []string{NodeIDFor(t, snap, "Person", id)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(1)
		if id == "p5" || id == "zz" {
			want = 0
		}
		if rec.NumRows() != want {
			t.Errorf("lookup %s: %d rows, want %d", id, rec.NumRows(), want)
		}
		rec.Release()
	}
}

// NodeIDFor returns the stored id of a keyed node, or the key itself when
// no such node exists.
func NodeIDFor(t *testing.T, snap *snapshot.Snapshot, typ, key string) string {
	t.Helper()
	nt, err := snap.Nodes(context.Background(), typ)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range nt.IDs {
		if !nt.Alive(i) {
			continue
		}
		if nt.Value(i, "name") == key {
			return id
		}
	}
	return key
}

// TestOptimizeIdempotent: a second optimize finds nothing to do, publishes
// nothing and leaves the head alone; so does optimize on an empty graph.
func TestOptimizeIdempotent(t *testing.T) {
	ctx := context.Background()
	g, _ := maintFragmented(t)
	if _, err := g.Optimize(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	empty := maintInit(t, storage.NewMem(), Options{})
	for name, g := range map[string]*Graph{"optimized": g, "empty": empty} {
		t.Run(name, func(t *testing.T) {
			head := engSnap(t, g, "main")
			res, err := g.Optimize(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Commit != nil || !engSnap(t, g, "main").equal(head) || len(res.Datasets) != 4 {
				t.Fatalf("second optimize: %+v", res)
			}
			for _, ds := range res.Datasets {
				if ds != (OptimizeDataset{TypeKey: ds.TypeKey}) {
					t.Errorf("dataset %+v", ds)
				}
			}
		})
	}
}

// TestOptimizeStrictWriterRebases: a strict write (update, delete) that
// loses its CAS to a maintenance commit rebases instead of failing with
// ReadSetChanged, and a conditional write on the pre-maintenance head
// still succeeds — compaction never conflicts with logical writes.
func TestOptimizeStrictWriterRebases(t *testing.T) {
	ctx := context.Background()
	optimize := func(h *Graph) error { _, err := h.Optimize(ctx, ""); return err }
	tests := []struct {
		name  string
		write func(g *Graph, ifCommit string) error
		want  string // a line maintContent must then hold
	}{
		{"update", func(g *Graph, _ string) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": "p2", "age": 55}, MutateOptions{})
			return err
		}, "p2 55"},
		{"delete", func(g *Graph, _ string) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "remove_person"), map[string]any{"name": "p9"}, MutateOptions{})
			return err
		}, ""},
		{"conditional update", func(g *Graph, head string) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": "p4", "age": 44}, MutateOptions{IfCommit: head})
			return err
		}, "p4 44"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := maintFragmented(t)
			head := engSnap(t, g, "main").head
			raceOnce(t, g, optimize)
			if err := tc.write(g, head); err != nil {
				t.Fatalf("write after a racing optimize: %v", err)
			}
			log := commitLog(t, g, "main", 2)
			if log[0].Kind != "mutate" || log[1].Kind != "maintenance" {
				t.Fatalf("log %+v, want the write on top of the maintenance commit", log)
			}
			if c := maintContent(t, g, Target{}); tc.want != "" && !strings.Contains(c, tc.want) {
				t.Fatalf("write lost: %s", c)
			}
		})
	}
	t.Run("conditional write after auto-compaction", func(t *testing.T) {
		g := maintInit(t, storage.NewMem(), Options{})
		maintHistory(t, g, 0, 2*(DefaultCompactFragments+1)) // the last write triggers compaction
		log := commitLog(t, g, "main", 2)
		if log[0].Kind != "maintenance" {
			t.Fatalf("no auto-compaction: %+v", log[0])
		}
		if _, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": "p1", "age": 9}, MutateOptions{IfCommit: log[1].ID}); err != nil {
			t.Fatalf("conditional write on the write's own receipt: %v", err)
		}
	})
}

// TestOptimizeRebasesOverWriters: optimize that loses its CAS to a logical
// write recomputes against the new head — keeping its work for tables the
// write did not touch — and the write is never lost.
func TestOptimizeRebasesOverWriters(t *testing.T) {
	ctx := context.Background()
	for _, other := range []string{"Person", "Company"} {
		t.Run("racing insert into "+other, func(t *testing.T) {
			g, st := maintFragmented(t)
			h := mustOpen(t, st, Options{NoAutoCompact: true})
			g.maint.testBeforePublish = func(attempt int) {
				if attempt == 0 {
					line := fmt.Sprintf(`{"type":%q,"data":{"name":"racer"}}`, other)
					if _, err := h.Load(ctx, strings.NewReader(line), LoadRequest{Mode: LoadAppend}); err != nil {
						t.Errorf("racing write: %v", err)
					}
				}
			}
			before := maintContent(t, h, Target{})
			res, err := g.Optimize(ctx, "")
			g.maint.testBeforePublish = nil
			if err != nil || res.Commit == nil {
				t.Fatalf("optimize: %+v %v", res, err)
			}
			after := maintContent(t, g, Target{})
			if !strings.Contains(after, "racer") {
				t.Fatalf("racing write lost")
			}
			// Content equals the pre-optimize content plus the racer.
			if len(after) <= len(before) {
				t.Fatalf("content shrank")
			}
			log, _ := g.Log(ctx, "main", 2)
			if log[0].Kind != "maintenance" || log[1].Kind != "load" {
				t.Fatalf("log %+v", log)
			}
		})
	}
}

// TestOptimizeConcurrentWriters: writers on separate handles insert while
// optimize runs in a loop: every write lands exactly once, no writer sees
// a conflict, and every commit of the history reads.
func TestOptimizeConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	g := maintInit(t, st, Options{})
	const writers, each = 4, 15
	stop := make(chan struct{})
	optimized := make(chan error, 1)
	go func() {
		optimized <- func() error {
			h, err := Open(ctx, st, Options{})
			if err != nil {
				return err
			}
			for {
				select {
				case <-stop:
					return nil
				default:
				}
				if _, err := h.Optimize(ctx, ""); err != nil {
					return fmt.Errorf("optimize: %w", err)
				}
			}
		}()
	}()
	errs := concurrently(writers, func(w int) error {
		h, err := Open(ctx, st, Options{})
		if err != nil {
			return err
		}
		for i := range each {
			line := fmt.Sprintf(`{"type":"Person","data":{"name":"w%d-%d","age":%d}}`, w, i, i)
			if _, err := h.Load(ctx, strings.NewReader(line), LoadRequest{Mode: LoadAppend}); err != nil {
				return fmt.Errorf("writer %d: %w", w, err)
			}
		}
		return nil
	})
	close(stop)
	if err := errors.Join(append(errs, <-optimized)...); err != nil {
		t.Fatal(err)
	}
	if got := len(engNodes(t, g, "Person", "")); got != writers*each {
		t.Fatalf("%d persons, want %d", got, writers*each)
	}
	log := commitLog(t, g, "main", 0)
	for _, c := range log {
		if _, err := g.Tables(ctx, Target{Snapshot: c.ID}); err != nil {
			t.Fatalf("commit %s (%s): %v", c.ID, c.Kind, err)
		}
	}
}

// TestOptimizeCrashPoints fails optimize at every durable step: the graph
// then reads exactly as before (or, after the CAS, as the optimized graph
// with identical content), and the next optimize completes.
func TestOptimizeCrashPoints(t *testing.T) {
	points := []struct {
		name    string
		visible bool
	}{
		{"table/before-fragment", false},
		{"table/after-fragment", false},
		{FPOptimizeAfterData, false},
		{"table/before-state", false},
		{"table/after-state", false},
		{FPOptimizeAfterState, false},
		{FPOptimizeBeforePublish, false},
		{commit.FPBeforeCommitObject, false},
		{commit.FPAfterCommitObject, false},
		{commit.FPBeforeCAS, false},
		{commit.FPAfterCAS, true},
		{FPOptimizeAfterPublish, true},
	}
	for _, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			g, st := maintFragmented(t)
			ctx := context.Background()
			before := engSnap(t, g, "main")
			content := maintContent(t, g, Target{})
			injectFailure(t, pt.name, "optimize", func() error {
				_, err := g.Optimize(ctx, "")
				return err
			})
			h := mustOpen(t, st, Options{})
			if moved := !engSnap(t, h, "main").equal(before); moved != pt.visible {
				t.Fatalf("head moved = %v, want %v", moved, pt.visible)
			}
			if got := maintContent(t, h, Target{}); got != content {
				t.Fatal("content changed")
			}
			if _, err := h.Optimize(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if got := maintContent(t, h, Target{}); got != content {
				t.Fatal("content changed after the retried optimize")
			}
		})
	}
}
