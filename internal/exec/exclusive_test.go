package exec

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// waitQueued waits until n writes wait in h's queue for branch (each
// goroutine below starts only once the one before it has queued, so the
// queue order is the start order).
func waitQueued(t *testing.T, h *Graph, branch string, n int) {
	t.Helper()
	waitQueuedOr(t, h, branch, n, nil)
}

// waitQueuedOr is waitQueued that also stops waiting when done is closed
// (the write waited for returned without queueing, e.g. with an error the
// test then reports).
func waitQueuedOr(t *testing.T, h *Graph, branch string, n int, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for queued(h, branch) < n {
		select {
		case <-done:
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d writes queued on %s", queued(h, branch), n, branch)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestExclusiveWriteOrder: a merge queued among mutations of its target
// runs alone at its place in the queue: the mutations ahead of it publish
// as one chain before it, those behind it as one chain after it, and the
// history is exactly the arrival order. Once every write is done the
// handle keeps no queue (TestWriteQueuesDrain's invariant).
func TestExclusiveWriteOrder(t *testing.T) {
	ctx := context.Background()
	g, h, st := groupFixture(t, Options{})
	if err := g.CreateBranch(ctx, "feature", "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Mutate(ctx, "feature", engPlan(t, g, "insert_person"), map[string]any{"name": "F", "age": 7}, MutateOptions{Actor: "feature"}); err != nil {
		t.Fatal(err)
	}
	order := []string{"m1", "m2", "merge", "m3", "m4"}
	entered := holdFirstBatch(t, h, len(order))
	before := st.Snapshot()
	errs := make([]error, len(order)+1)
	var wg sync.WaitGroup
	write := func(i int, name string) {
		defer wg.Done()
		if name == "merge" {
			_, errs[i] = h.Merge(ctx, "feature", "main", name)
			return
		}
		_, errs[i] = h.Mutate(ctx, "main", engPlan(t, h, "insert_person"), map[string]any{"name": name, "age": i}, MutateOptions{Actor: name})
	}
	wg.Add(1)
	go write(len(order), "first")
	<-entered // "first" leads a batch of its own and holds it
	for i, name := range order {
		wg.Add(1)
		go write(i, name)
		if i < len(order)-1 {
			// The last one is awaited by holdFirstBatch, which then lets
			// the queue drain at once.
			waitQueued(t, h, "main", i+1)
		}
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	cas := st.Snapshot().Sub(before)[storage.OpPutIfMatch].Requests
	log := commitLog(t, g, "main", len(order)+1)
	var got []string
	for _, c := range slices.Backward(log) {
		got = append(got, c.Actor)
	}
	if want := append([]string{"first"}, order...); !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	// first; m1+m2; the merge; m3+m4.
	if cas != 4 {
		t.Fatalf("%d ref CAS, want 4", cas)
	}
	if persons := engNodes(t, g, "Person", ""); !slices.Contains(persons, "F") || !slices.Contains(persons, "m4") {
		t.Fatalf("persons %v", persons)
	}
	if n := h.queues.size(); n != 0 {
		t.Fatalf("%d branch queues left after the writes", n)
	}
}

// TestWriteQueuesDrain: a handle's queues exist only while writes use
// them, so writing (and deleting) many branches leaves none behind.
func TestWriteQueuesDrain(t *testing.T) {
	ctx := context.Background()
	_, h, _ := groupFixture(t, Options{})
	p := engPlan(t, h, "insert_person")
	var wg sync.WaitGroup
	for i := range 8 {
		b := "b" + string(rune('a'+i))
		if err := h.CreateBranch(ctx, b, "", ""); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Mutate(ctx, b, p, map[string]any{"name": b, "age": i}, MutateOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		if err := h.DeleteBranch(ctx, "b"+string(rune('a'+i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.queues.size(); n != 0 {
		t.Fatalf("%d branch queues left", n)
	}
}
