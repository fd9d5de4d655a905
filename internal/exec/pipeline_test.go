package exec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/integrity"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// pipelineRig is a handle whose first ref CAS is held by a Faulty hook
// until the test answers it (nil, or an error to fail it), with one write
// (A) publishing alone and more queued behind it: the next batch must
// stage on A's tip while A's CAS is in flight.
type pipelineRig struct {
	h       *Graph
	st      storage.Store
	release chan error
	casSeen chan struct{}
	res     map[string]error
	commits map[string]string
	wg      sync.WaitGroup
	mu      sync.Mutex
}

func newPipelineRig(t *testing.T) *pipelineRig {
	t.Helper()
	r := &pipelineRig{release: make(chan error, 1), casSeen: make(chan struct{}), res: map[string]error{}, commits: map[string]string{}}
	f := storage.NewFaulty(storage.NewMem())
	r.st = storage.NewBatching(f)
	engFixtureOn(t, r.st)
	var once sync.Once
	f.SetHook(func(ctx context.Context, op storage.Op, key string, stage storage.Stage) error {
		if op != storage.OpPutIfMatch || key != commit.RefKey("main") || stage != storage.Before {
			return nil
		}
		held := false
		once.Do(func() { held = true })
		if !held {
			return nil
		}
		close(r.casSeen)
		return <-r.release
	})
	h, err := Open(context.Background(), r.st, Options{NoAutoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	return r
}

// mutate runs a named mutation in the background; load (query "") runs
// params["jsonl"] as an append load.
func (r *pipelineRig) run(t *testing.T, name, query string, params map[string]any) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		ctx := context.Background()
		var id string
		var err error
		if query == "" {
			var res *LoadResult
			if res, err = r.h.Load(ctx, strings.NewReader(params["jsonl"].(string)), LoadRequest{Mode: LoadAppend, Actor: name}); err == nil && res.Commit != nil {
				id = res.Commit.ID
			}
		} else {
			var res *MutationResult
			if res, err = r.h.Mutate(ctx, "main", engPlan(t, r.h, query), params, MutateOptions{Actor: name}); err == nil && res.Commit != nil {
				id = res.Commit.ID
			}
		}
		r.mu.Lock()
		r.res[name], r.commits[name] = err, id
		r.mu.Unlock()
	}()
}

type rigWrite struct {
	name, query string
	params      map[string]any
}

// start runs a alone, holds it before its CAS until the others queued,
// lets it reach its (held) CAS and waits until the batch behind it has
// taken the others (staging on a's tip: without pipelining they would wait
// in the queue until a is over).
func (r *pipelineRig) start(t *testing.T, a rigWrite, rest ...rigWrite) {
	t.Helper()
	entered := holdFirstBatch(t, r.h, len(rest))
	r.run(t, a.name, a.query, a.params)
	<-entered
	for i, w := range rest {
		r.run(t, w.name, w.query, w.params)
		// (The last one releases a's hold: no need to wait for it.)
		for deadline := time.Now().Add(10 * time.Second); i < len(rest)-1 && queued(r.h, "main") < i+1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not queue", w.name)
			}
		}
	}
	<-r.casSeen
	for deadline := time.Now().Add(10 * time.Second); queued(r.h, "main") > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the batch behind did not start while the first CAS was held: %d still queued", queued(r.h, "main"))
		}
	}
}

func (r *pipelineRig) verify(t *testing.T) {
	t.Helper()
	rep, err := integrity.Verify(context.Background(), r.st, integrity.Options{Deep: true})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
}

// TestGroupCommitPipelined: while a batch's ref CAS is in flight, the
// batch behind it stages on its tip, then publishes after it, from the
// head it made: one chain A, B, C in arrival order.
func TestGroupCommitPipelined(t *testing.T) {
	r := newPipelineRig(t)
	r.start(t,
		rigWrite{"A", "insert_person", map[string]any{"name": "PA", "age": 1}},
		rigWrite{"B", "set_age", map[string]any{"name": "PA", "age": 2}}, // reads A's row
		rigWrite{"C", "insert_person", map[string]any{"name": "PC", "age": 3}})
	r.release <- nil
	r.wg.Wait()
	for _, n := range []string{"A", "B", "C"} {
		if r.res[n] != nil || r.commits[n] == "" {
			t.Fatalf("%s: %q %v", n, r.commits[n], r.res[n])
		}
	}
	ctx := context.Background()
	head, err := r.h.repo.Head(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	log, err := r.h.repo.Log(ctx, head.Commit, commit.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range log[:3] {
		order = append(order, c.Actor)
	}
	if !slices.Equal(order, []string{"C", "B", "A"}) || log[2].ID.String() != r.commits["A"] {
		t.Fatalf("chain newest first %v, want C, B, A", order)
	}
	if got := strings.Join(engNodes(t, r.h, "Person", "age"), ","); !strings.Contains(got, "PA=2") || !strings.Contains(got, "PC=3") {
		t.Errorf("persons %s", got)
	}
	r.verify(t)
}

// TestGroupCommitPipelinedAheadFails: when the batch ahead fails, the
// batch staged on its tip is staged again on the head it finds, as if the
// one ahead had never been: B's update of A's row then matches nothing (a
// no-op, not a conflict); C and the load D land on the old head, and every
// object their commits name is in the store (a load staged again reuses
// what it staged first).
func TestGroupCommitPipelinedAheadFails(t *testing.T) {
	r := newPipelineRig(t)
	ctx := context.Background()
	before, err := r.h.repo.Head(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	r.start(t,
		rigWrite{"A", "insert_person", map[string]any{"name": "PA", "age": 1}},
		rigWrite{"B", "set_age", map[string]any{"name": "PA", "age": 2}},
		rigWrite{"C", "insert_person", map[string]any{"name": "PC", "age": 3}},
		rigWrite{"D", "", map[string]any{"jsonl": `{"type":"Person","data":{"name":"PD","age":4}}` + "\n"}})
	r.release <- errors.New("injected CAS failure")
	r.wg.Wait()
	if r.res["A"] == nil {
		t.Fatal("A succeeded")
	}
	if r.res["B"] != nil || r.commits["B"] != "" {
		t.Fatalf("B: %q %v, want a no-op (A's row never existed)", r.commits["B"], r.res["B"])
	}
	for _, n := range []string{"C", "D"} {
		if r.res[n] != nil || r.commits[n] == "" {
			t.Fatalf("%s: %q %v", n, r.commits[n], r.res[n])
		}
	}
	head, err := r.h.repo.Head(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	log, err := r.h.repo.Log(ctx, head.Commit, commit.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if log[0].ID.String() != r.commits["D"] || log[1].ID.String() != r.commits["C"] || log[2].ID != before.Commit {
		t.Fatalf("chain %v, want D, C on the old head %s", log[:3], before.Commit)
	}
	if got := strings.Join(engNodes(t, r.h, "Person", "age"), ","); strings.Contains(got, "PA=") || !strings.Contains(got, "PC=3") || !strings.Contains(got, "PD=4") {
		t.Errorf("persons %s", got)
	}
	r.verify(t)
}
