package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// groupFixture is the engine fixture on a counting store, with a second
// handle h (no inline compaction, so the tests count the chain's commits)
// whose group commit the tests steer.
func groupFixture(t *testing.T, o Options) (g, h *Graph, st *storage.Counting) {
	t.Helper()
	st = storage.NewCounting(storage.NewMem())
	g = engFixtureOn(t, st)
	o.NoAutoCompact = true
	h = mustOpen(t, st, o)
	return g, h, st
}

// queued is the number of writes waiting in h's queue for branch.
func queued(h *Graph, branch string) int {
	h.queues.mu.Lock()
	defer h.queues.mu.Unlock()
	if q := h.queues.byBranch[branch]; q != nil {
		return len(q.waiting)
	}
	return 0
}

// holdFirstBatch makes h's first publish wait until n writes queue behind
// it, so they form the next batch; the channel it returns is closed when
// that first publish is reached (its batch is taken).
func holdFirstBatch(t *testing.T, h *Graph, n int) <-chan struct{} {
	t.Helper()
	var once sync.Once
	entered := make(chan struct{})
	h.testBeforePublish = func(int) {
		once.Do(func() {
			close(entered)
			deadline := time.Now().Add(10 * time.Second)
			for queued(h, "main") < n {
				if time.Now().After(deadline) {
					t.Errorf("only %d of %d writes queued", queued(h, "main"), n)
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	t.Cleanup(func() { h.testBeforePublish = nil })
	return entered
}

type groupOutcome struct {
	name string
	res  *MutationResult
	err  error
}

// TestGroupCommit: writes queued on one branch of one handle publish as one
// chain with one CAS; each keeps its own commit and receipt; a write that
// fails validation is left out and the others land; two updates of one row
// in a batch both apply, in chain order.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	g, h, st := groupFixture(t, Options{})
	base := engSnap(t, g, "main").head
	type write struct {
		name, query string
		params      map[string]any
	}
	first := write{"first", "insert_person", map[string]any{"name": "P0", "age": 1}}
	writes := []write{
		{"p1", "insert_person", map[string]any{"name": "P1", "age": 1}},
		{"p2", "insert_person", map[string]any{"name": "P2", "age": 2}},
		{"p3", "insert_person", map[string]any{"name": "P3", "age": 3}},
		{"bob50", "set_age", map[string]any{"name": "Bob", "age": 50}},
		{"bob51", "set_age", map[string]any{"name": "Bob", "age": 51}},
		{"bad", "add_friend", map[string]any{"from": "Alice", "to": "Nobody"}},
		{"p4", "insert_person", map[string]any{"name": "P4", "age": 4}},
	}
	entered := holdFirstBatch(t, h, len(writes))
	before := st.Snapshot()
	out := make([]groupOutcome, len(writes)+1)
	var wg sync.WaitGroup
	run := func(i int, w write) {
		defer wg.Done()
		res, err := h.Mutate(ctx, "main", engPlan(t, h, w.query), w.params, MutateOptions{Actor: w.name})
		out[i] = groupOutcome{w.name, res, err}
	}
	wg.Add(1)
	go run(0, first)
	<-entered // the first write leads a batch of its own
	for i, w := range writes {
		wg.Add(1)
		go run(i+1, w)
	}
	wg.Wait()
	cas := st.Snapshot().Sub(before)[storage.OpPutIfMatch].Requests

	byCommit := map[string]string{}
	for _, o := range out {
		if o.name == "bad" {
			var ce *ConstraintError
			if !errors.As(o.err, &ce) || ce.Kind != ConstraintReference {
				t.Fatalf("bad write: %v, want its reference error", o.err)
			}
			continue
		}
		if o.err != nil || o.res.Commit == nil || o.res.AffectedNodes != 1 {
			t.Fatalf("%s: %+v %v", o.name, o.res, o.err)
		}
		if prev, dup := byCommit[o.res.Commit.ID]; dup {
			t.Fatalf("%s and %s share commit %s", o.name, prev, o.res.Commit.ID)
		}
		byCommit[o.res.Commit.ID] = o.name
	}
	// History: one linear chain base ← first ← the batch, each commit one
	// write's, authored by it.
	log := commitLog(t, g, "main", len(writes)+1)
	if log[len(log)-1].ID != base {
		t.Fatalf("chain does not start at the pre-batch head: %+v", log)
	}
	var order []string
	for i, c := range log[:len(log)-1] {
		if c.Parent != log[i+1].ID || byCommit[c.ID] != c.Actor {
			t.Fatalf("commit %d %+v: not linear or not its write's", i, c)
		}
		order = append([]string{c.Actor}, order...)
	}
	if len(order) != len(writes) || order[0] != "first" {
		t.Fatalf("chain order %v", order)
	}
	// One CAS for the first write, one for the rest.
	if cas != 2 {
		t.Fatalf("%d ref CAS for %d writes, want 2", cas, len(writes))
	}
	want := "Bob=51"
	if slices.Index(order, "bob51") < slices.Index(order, "bob50") {
		want = "Bob=50"
	}
	got := engNodes(t, g, "Person", "age")
	for _, n := range []string{"P0=1", "P1=1", "P2=2", "P3=3", "P4=4", want} {
		if !slices.Contains(got, n) {
			t.Fatalf("persons %v lack %s", got, n)
		}
	}
	if friends := engNodes(t, g, "Person", ""); len(friends) != 9 {
		t.Fatalf("persons %v", friends)
	}
}

// TestGroupCommitCancel: a write whose context ends while it waits in the
// queue returns at once and leaves no trace; one cancelled after its leader
// staged it is left out of the chain, the others are staged again without
// it and land.
func TestGroupCommitCancel(t *testing.T) {
	ctx := context.Background()
	g, h, st := groupFixture(t, Options{})
	companies := func() int {
		n := 0
		_ = st.List(ctx, "tables/node-Company/", "", func(storage.Info) error { n++; return nil })
		return n
	}

	// Queued: the leader is held until the doomed write was cancelled.
	entered := make(chan struct{})
	release := make(chan struct{})
	h.testBeforePublish = func(int) {
		select {
		case <-entered:
		default:
			close(entered)
			<-release
		}
	}
	var wg sync.WaitGroup
	var leadErr, keptErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, leadErr = h.Mutate(ctx, "main", engPlan(t, h, "insert_person"), map[string]any{"name": "Lead", "age": 1}, MutateOptions{})
	}()
	<-entered
	objects := companies()
	cctx, cancel := context.WithCancel(ctx)
	doomed := make(chan error, 1)
	go func() {
		_, err := h.Mutate(cctx, "main", engPlan(t, h, "insert_company"), map[string]any{"name": "Doomed"}, MutateOptions{})
		doomed <- err
	}()
	for queued(h, "main") < 1 {
		time.Sleep(time.Millisecond)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, keptErr = h.Mutate(ctx, "main", engPlan(t, h, "insert_person"), map[string]any{"name": "Kept", "age": 2}, MutateOptions{})
	}()
	for queued(h, "main") < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-doomed; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued write: %v", err)
	}
	if n := queued(h, "main"); n != 1 {
		t.Fatalf("%d writes queued after the cancellation, want 1", n)
	}
	close(release)
	wg.Wait()
	if leadErr != nil || keptErr != nil {
		t.Fatalf("lead %v, kept %v", leadErr, keptErr)
	}
	if got := engNodes(t, g, "Company", ""); slices.Contains(got, "Doomed") {
		t.Fatalf("cancelled write visible: %v", got)
	}
	if companies() != objects {
		t.Fatalf("cancelled queued write wrote objects: %d → %d", objects, companies())
	}

	// Staged: the hook cancels the middle write of a batch of three just
	// before the CAS.
	h.testBeforePublish = nil
	entered2 := holdFirstBatch(t, h, 3)
	var mu sync.Mutex
	errs := map[string]error{}
	mid, cancelMid := context.WithCancel(ctx)
	inner := h.testBeforePublish
	calls := 0
	h.testBeforePublish = func(a int) {
		inner(a)
		calls++
		if calls == 2 {
			cancelMid()
		}
	}
	mutate := func(c context.Context, name string) {
		defer wg.Done()
		_, err := h.Mutate(c, "main", engPlan(t, h, "insert_person"), map[string]any{"name": name, "age": 5}, MutateOptions{Actor: name})
		mu.Lock()
		errs[name] = err
		mu.Unlock()
	}
	wg.Add(1)
	go mutate(ctx, "L2")
	<-entered2
	for i, name := range []string{"A", "M", "B"} {
		for queued(h, "main") < i {
			time.Sleep(time.Millisecond)
		}
		c := ctx
		if name == "M" {
			c = mid
		}
		wg.Add(1)
		go mutate(c, name)
	}
	wg.Wait()
	if !errors.Is(errs["M"], context.Canceled) || errs["A"] != nil || errs["B"] != nil || errs["L2"] != nil {
		t.Fatalf("outcomes %v", errs)
	}
	got := engNodes(t, g, "Person", "")
	if slices.Contains(got, "M") || !slices.Contains(got, "A") || !slices.Contains(got, "B") {
		t.Fatalf("persons %v", got)
	}
	log, _ := g.Log(ctx, "main", 3)
	if actors := []string{log[0].Actor, log[1].Actor, log[2].Actor}; slices.Contains(actors, "M") || log[0].Parent != log[1].ID {
		t.Fatalf("chain %v", actors)
	}
}

// TestContentionBudget: a write that loses every race gives up with the
// typed *ContentionError after its retry budget (rounds or time), with no
// effect.
func TestContentionBudget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		o        Options
		attempts int
	}{
		{"rounds", Options{MaxRetries: 3}, 4},
		{"time", Options{RetryBudget: time.Nanosecond}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, h, _ := groupFixture(t, tc.o)
			n := 0
			h.testBeforePublish = func(int) {
				n++
				if _, err := g.Mutate(ctx, "main", engPlan(t, g, "insert_company"), map[string]any{"name": fmt.Sprintf("Racer%d", n)}, MutateOptions{}); err != nil {
					t.Errorf("racing write: %v", err)
				}
			}
			_, err := h.Mutate(ctx, "main", engPlan(t, h, "set_age"), map[string]any{"name": "Bob", "age": 77}, MutateOptions{})
			var ce *ContentionError
			if !errors.As(err, &ce) || !errors.Is(err, ErrContention) || ce.Attempts != tc.attempts || ce.Branch != "main" ||
				!strings.Contains(err.Error(), "no effect") {
				t.Fatalf("err = %v, want contention after %d lost races", err, tc.attempts)
			}
			if got := engNodes(t, g, "Person", "age"); slices.Contains(got, "Bob=77") {
				t.Fatalf("gave-up write visible: %v", got)
			}
		})
	}
}
