package exec

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/integrity"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// shareWrite is one write of the shared-fragment tests.
type shareWrite struct {
	name, query string
	params      map[string]any
}

// shareWrites mixes inserts, updates of committed rows and of rows the
// batch itself inserted, edge inserts to rows of the batch, and a delete
// (with its cascade) of a row the batch inserted and linked.
var shareWrites = []shareWrite{
	{"p1", "insert_person", map[string]any{"name": "P1", "age": 1}},
	{"p2", "insert_person", map[string]any{"name": "P2", "age": 2}},
	{"p1-7", "set_age", map[string]any{"name": "P1", "age": 7}},
	{"bob", "set_age", map[string]any{"name": "Bob", "age": 50}},
	{"f1", "add_friend", map[string]any{"from": "P1", "to": "P2"}},
	{"p3", "insert_person", map[string]any{"name": "P3", "age": 3}},
	{"f2", "add_friend", map[string]any{"from": "Alice", "to": "P3"}},
	{"bad", "add_friend", map[string]any{"from": "Alice", "to": "Nobody"}},
	{"rm-p3", "remove_person", map[string]any{"name": "P3"}},
	{"p1-8", "set_age", map[string]any{"name": "P1", "age": 8}},
	{"p4", "insert_person", map[string]any{"name": "P4", "age": 4}},
}

// TestGroupCommitSharesFragments: on a batching store (every public
// handle's) the writes of one batch share one fragment per table, and
// still every commit of the chain reads exactly what a handle without
// group commit reads after the same writes one by one (time travel to
// each commit), the batch's updates, deletes and cascades of its own rows
// included; the write that fails is left out; nothing the leader staged
// and replaced reaches the store, and verify finds every object reachable.
//
// On a local directory the batch's commits are also one chain object: one
// file under every commit's name (docs/format/commit.md), read back by
// time travel, a fresh handle and verify like separate objects.
func TestGroupCommitSharesFragments(t *testing.T) {
	t.Run("mem", func(t *testing.T) { testGroupCommitShares(t, storage.NewMem()) })
	t.Run("local", func(t *testing.T) {
		l, err := storage.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		testGroupCommitShares(t, l)
	})
}

// shareFixture is the fixture graph on mem behind a batching layer (st),
// a handle h on it without inline compaction, and the model: the same
// fixture on a plain store, for the same writes one by one.
func shareFixture(t *testing.T, mem storage.Store) (st storage.Store, h, model *Graph) {
	t.Helper()
	st = storage.NewBatching(mem)
	engFixtureOn(t, st)
	h, err := Open(context.Background(), st, Options{NoAutoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	return st, h, engFixtureOn(t, storage.NewMem())
}

func testGroupCommitShares(t *testing.T, mem storage.Store) {
	ctx := context.Background()
	st, h, model := shareFixture(t, mem)
	want := map[string][2][]string{}
	for _, w := range shareWrites {
		if _, err := model.Mutate(ctx, "main", engPlan(t, model, w.query), w.params, MutateOptions{}); err != nil {
			if w.name == "bad" {
				continue
			}
			t.Fatalf("model %s: %v", w.name, err)
		}
		want[w.name] = [2][]string{engNodes(t, model, "Person", "age"), engEdgesAt(t, model, Target{}, "Knows")}
	}

	count := func(prefix string) int {
		n := 0
		_ = mem.List(ctx, prefix, "", func(storage.Info) error { n++; return nil })
		return n
	}
	persons0, knows0 := count("tables/node-Person/data/"), count("tables/edge-Knows/data/")

	// The first write leads a batch of its own and holds it until the
	// others queued behind it, one at a time, so the chain's order is
	// shareWrites'.
	entered := holdFirstBatch(t, h, len(shareWrites))
	commits := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	run := func(w shareWrite) {
		defer wg.Done()
		res, err := h.Mutate(ctx, "main", engPlan(t, h, w.query), w.params, MutateOptions{Actor: w.name})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case w.name == "bad":
			if err == nil {
				t.Errorf("bad write succeeded")
			}
		case err != nil || res.Commit == nil:
			t.Errorf("%s: %+v %v", w.name, res, err)
		default:
			commits[w.name] = res.Commit.ID
		}
	}
	wg.Add(1)
	go run(shareWrite{"first", "insert_person", map[string]any{"name": "P0", "age": 0}})
	<-entered
	for i, w := range shareWrites {
		wg.Add(1)
		go run(w)
		// (The last one releases the first batch: no need to wait for it.)
		for deadline := time.Now().Add(10 * time.Second); i < len(shareWrites)-1 && queued(h, "main") < i+1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("write %s did not queue", w.name)
			}
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// One fragment for the first write, one for the batch; one for the
	// batch's edges.
	if n := count("tables/node-Person/data/") - persons0; n != 2 {
		t.Errorf("%d new Person fragments, want 2 (the first write's, the batch's)", n)
	}
	if n := count("tables/edge-Knows/data/") - knows0; n != 1 {
		t.Errorf("%d new Knows fragments, want 1", n)
	}
	for _, w := range shareWrites {
		if w.name == "bad" {
			continue
		}
		at := Target{Snapshot: commits[w.name]}
		got := [2][]string{engNodesAt(t, h, at, "Person", "age"), engEdgesAt(t, h, at, "Knows")}
		exp := want[w.name]
		exp[0] = slices.Sorted(slices.Values(append(slices.Clone(exp[0]), "P0=0")))
		if !slices.Equal(got[0], exp[0]) || !slices.Equal(got[1], exp[1]) {
			t.Errorf("at %s's commit:\n got %v\nwant %v", w.name, got, exp)
		}
	}
	// A fresh handle (no cache of the leader's stagings) reads the same.
	fresh, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := engNodesAt(t, fresh, Target{Snapshot: commits["p1-7"]}, "Person", "age"); !slices.Contains(got, "P1=7") || slices.Contains(got, "P4=4") {
		t.Errorf("fresh handle at p1-7: %v", got)
	}
	// The batch's states name the shared fragment through inline vectors.
	snap, err := fresh.Resolve(ctx, Target{Snapshot: commits["p2"]})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := snap.State(ctx, "node:Person")
	if err != nil {
		t.Fatal(err)
	}
	last := ps.Fragments()[ps.NumFragments()-1]
	if !table.IsInlineDV(last.DV) {
		t.Errorf("p2's state: the shared fragment %+v hides later rows without an inline vector", last)
	}
	if l, ok := mem.(*storage.Local); ok {
		// The batch (every write after the first) is one file.
		var files []os.FileInfo
		for _, w := range shareWrites {
			if w.name == "bad" {
				continue
			}
			id, err := commit.ParseID(commits[w.name])
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(filepath.Join(l.Root(), commit.CommitKey(id)))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, fi)
		}
		for i, fi := range files {
			if !os.SameFile(fi, files[0]) {
				t.Errorf("commit %d of the batch is a file of its own, want one chain object", i)
			}
		}
	}
	rep, err := integrity.Verify(ctx, st, integrity.Options{Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Unreachable != (integrity.Counts{}) {
		t.Fatalf("verify: problems %+v, unreachable %+v", rep.Problems, rep.Unreachable)
	}
}
