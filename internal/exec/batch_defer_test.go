package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/integrity"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// deferOp is one write of TestGroupCommitDeferredParts: a mutation, or a
// schema apply when desired is set.
type deferOp struct {
	query   string
	params  map[string]any
	desired string
}

func (o deferOp) run(ctx context.Context, t *testing.T, g *Graph) (string, error) {
	if o.desired != "" {
		res, err := g.ApplySchema(ctx, o.desired, SchemaApplyOptions{})
		if err != nil || res.Commit == nil {
			return "", fmt.Errorf("apply: %+v %w", res, err)
		}
		return res.Commit.ID, nil
	}
	res, err := g.Mutate(ctx, "main", engPlan(t, g, o.query), o.params, MutateOptions{})
	if err != nil || res.Commit == nil {
		return "", fmt.Errorf("%s: %+v %w", o.query, res, err)
	}
	return res.Commit.ID, nil
}

// TestGroupCommitDeferredParts: in a batch of several writes each write's
// rows are staged as a deferred fragment (table.DeferFragment), encoded
// only when another staging of the batch reads them — here once, for the
// update of a row the batch inserted — and settleChain replaces every
// deferred fragment in every state it publishes: merged with the batch's
// other parts, or encoded alone where it cannot be merged (a schema change
// in the batch). Every commit of the chain then reads exactly what the same
// writes one by one read on a plain store, and a deep verify (which checks
// every fragment's recorded size against its file) finds nothing wrong.
func TestGroupCommitDeferredParts(t *testing.T) {
	evolved := strings.Replace(engSchema, "age: I32? }", "age: I32?  nick: String? }", 1)
	ins := func(name string, age int) deferOp {
		return deferOp{query: "insert_person", params: map[string]any{"name": name, "age": age}}
	}
	set := func(name string, age int) deferOp {
		return deferOp{query: "set_age", params: map[string]any{"name": name, "age": age}}
	}
	readP1 := []deferOp{ins("P1", 1), ins("P2", 2), set("Alice", 31), ins("P3", 3), set("Bob", 26), set("P1", 7), ins("P4", 4)}
	tests := []struct {
		name    string
		ops     []deferOp
		encodes int  // deferred fragments made for a reading staging (-1: any)
		fail    int  // the write that fails (-1: none)
		broken  bool // making a deferred fragment fails
	}{
		{"one table, one read of the batch's rows", readP1, 1, -1, false},
		{"no read of the batch's rows", []deferOp{
			ins("P1", 1), ins("P2", 2), set("Alice", 31), set("Bob", 26), ins("P3", 3),
		}, 0, -1, false},
		{"schema change in the batch", []deferOp{
			ins("P1", 1), set("Alice", 31), {desired: evolved}, ins("P2", 2), set("P1", 7), ins("P3", 3),
		}, -1, -1, false},
		// The write that reads P1's rows fails; the others land.
		{"making a read fragment fails", readP1, 1, 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, h, model := shareFixture(t, storage.NewMem())
			want := make([][]string, len(tc.ops))
			for i, op := range tc.ops {
				if i == tc.fail {
					continue
				}
				if _, err := op.run(ctx, t, model); err != nil {
					t.Fatalf("model: %v", err)
				}
				want[i] = engNodes(t, model, "Person", "age")
			}
			// A first write leads a batch of its own and holds it until
			// the others queued behind it in order: they are one batch.
			entered := holdFirstBatch(t, h, len(tc.ops))
			commits := make([]string, len(tc.ops))
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := ins("P0", 0).run(ctx, t, h); err != nil {
					t.Error(err)
				}
			}()
			<-entered
			// Armed to count the fragments made (a sleep changes nothing
			// else), or to fail them.
			action := failpoint.Sleep
			if tc.broken {
				action = failpoint.Error
			}
			defer failpoint.Enable(table.FPDeferredEncode, action)()
			encodes0 := failpoint.Hits(table.FPDeferredEncode)
			for i, op := range tc.ops {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id, err := op.run(ctx, t, h)
					switch {
					case i == tc.fail && err == nil:
						t.Errorf("write %d succeeded, want it to fail", i)
					case i != tc.fail && err != nil:
						t.Errorf("write %d: %v", i, err)
					}
					commits[i] = id
				}()
				for deadline := time.Now().Add(10 * time.Second); i < len(tc.ops)-1 && queued(h, "main") < i+1; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("write %d did not queue", i)
					}
				}
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if n := failpoint.Hits(table.FPDeferredEncode) - encodes0; tc.encodes >= 0 && n != tc.encodes {
				t.Errorf("%d deferred fragments encoded for reads, want %d", n, tc.encodes)
			}
			fresh, err := Open(ctx, st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.ops {
				if i == tc.fail {
					continue
				}
				exp := slices.Sorted(slices.Values(append(slices.Clone(want[i]), "P0=0")))
				for _, g := range []*Graph{h, fresh} {
					if got := engNodesAt(t, g, Target{Snapshot: commits[i]}, "Person", "age"); !slices.Equal(got, exp) {
						t.Errorf("at write %d's commit:\n got %v\nwant %v", i, got, exp)
					}
				}
				snap, err := fresh.Resolve(ctx, Target{Snapshot: commits[i]})
				if err != nil {
					t.Fatal(err)
				}
				ps, err := snap.State(ctx, "node:Person")
				if err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(ps.Fragments(), table.IsDeferred) {
					t.Errorf("write %d's commit names a deferred fragment", i)
				}
			}
			rep, err := integrity.Verify(ctx, st, integrity.Options{Deep: true})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Fatalf("verify: %+v", rep.Problems)
			}
		})
	}
}
