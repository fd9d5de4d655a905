package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// checkServable asserts the applied state is whole: it loads, every graph
// opens, and every stored query compiles against its graph.
func checkServable(t *testing.T, dir string) *Applied {
	t.Helper()
	ctx := context.Background()
	a, err := LoadApplied(ctx, dir, Options{})
	if err != nil {
		t.Fatalf("applied state does not load: %v", err)
	}
	for _, g := range a.Graphs {
		h, err := omnigraph.Open(ctx, g.URI, omnigraph.Options{})
		if err != nil {
			t.Fatalf("applied graph %s does not open: %v", g.ID, err)
		}
		for _, q := range g.Queries {
			if err := h.CheckQuery(ctx, omnigraph.Target{}, q.Source, q.Name); err != nil {
				t.Fatalf("applied query %s.%s: %v", g.ID, q.Name, err)
			}
		}
	}
	return a
}

// TestApplyFaultsLeaveNoHalfAppliedCluster injects a failure at every
// durable step of a first apply. Each time the ledger is either the old one
// (byte for byte) or the complete new one, never in between, and a clean
// re-run converges to the same applied state.
func TestApplyFaultsLeaveNoHalfAppliedCluster(t *testing.T) {
	cases := []struct {
		name      string
		failpoint string
		fault     *storage.Fault
		published bool // the failure happens after the state CAS landed
	}{
		{name: "sidecar write fails", fault: &storage.Fault{Op: storage.OpPutIfAbsent, Prefix: recoveryPrefix}},
		{name: "before graph init", failpoint: "cluster/before-graph-init"},
		{name: "after graph init", failpoint: "cluster/after-graph-init"},
		{name: "catalog payload write fails", fault: &storage.Fault{Op: storage.OpPutIfAbsent, Prefix: resourcePrefix + "policy/"}},
		{name: "before state CAS", failpoint: "cluster/before-state-cas"},
		{name: "state CAS fails", fault: &storage.Fault{Op: storage.OpPutIfMatch, Prefix: stateKey}},
		{name: "state CAS landed but response lost", fault: &storage.Fault{Op: storage.OpPutIfMatch, Prefix: stateKey, Stage: storage.After, Err: storage.ErrPrecondition}, published: true},
		{name: "after state CAS", failpoint: "cluster/after-state-cas", published: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			dir := writeCluster(t, nil)
			mustOK(t, Import(ctx, dir, Options{}).Report)
			before := readRaw(t, dir, stateKey)

			o := Options{OpenStore: func(ctx context.Context, root string) (storage.Store, error) {
				l, err := storage.NewLocal(root)
				if err != nil {
					return nil, err
				}
				f := storage.NewFaulty(l)
				if c.fault != nil {
					f.Inject(*c.fault)
				}
				return f, nil
			}}
			if c.failpoint != "" {
				defer failpoint.Enable(c.failpoint, failpoint.Error)()
			}
			a := Apply(ctx, dir, "op", o)
			if c.failpoint != "" {
				failpoint.Disable(c.failpoint)
			}
			after := readRaw(t, dir, stateKey)
			if c.published {
				if after == before {
					t.Fatal("the state CAS did not land")
				}
			} else {
				if a.OK && a.Converged {
					t.Fatalf("apply reported success through the fault: %+v", a)
				}
				if after != before {
					t.Fatalf("a failed apply changed state.json:\n%s", after)
				}
				if app := checkServable(t, dir); len(app.Graphs) != 0 {
					t.Fatalf("a failed apply published graphs: %+v", app.Graphs)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, lockKey)); !os.IsNotExist(err) {
				t.Fatal("the failed apply left the lock held")
			}

			// A clean re-run converges and leaves nothing pending.
			r := Apply(ctx, dir, "op", Options{})
			if !r.OK || !r.Converged {
				t.Fatalf("re-run: ok=%v converged=%v %v", r.OK, r.Converged, r.Diagnostics)
			}
			app := checkServable(t, dir)
			if len(app.Graphs) != 1 || len(app.Graphs[0].Queries) != 2 || app.Graphs[0].Policy == nil || app.Graphs[0].Quarantine != "" {
				t.Fatalf("applied after re-run: %+v", app.Graphs)
			}
			if rs, _ := listRecoveries(ctx, mustLocal(t, dir)); len(rs) != 0 {
				t.Fatalf("sidecars left after convergence: %d", len(rs))
			}
			if p := Plan(ctx, dir, Options{}); len(p.Changes) != 0 {
				t.Fatalf("plan after re-run: %s", changeSummary(p.Changes))
			}
		})
	}
}

func mustLocal(t *testing.T, dir string) storage.Store {
	t.Helper()
	st, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDeleteCrashAfterPublishFinishes: an approved delete whose process dies
// right after the state CAS leaves a sidecar; the next apply removes the
// root.
func TestDeleteCrashAfterPublishFinishes(t *testing.T) {
	ctx := t.Context()
	dir := approvedScratchDelete(t)
	disable := failpoint.Enable("cluster/after-state-cas", failpoint.Error)
	Apply(ctx, dir, "op", Options{})
	disable()
	if app := checkServable(t, dir); app.Graph("scratch") != nil {
		t.Fatal("deleted graph still applied")
	}
	if _, err := os.Stat(filepath.Join(dir, "graphs", "scratch.omni")); err != nil {
		t.Fatal("the simulated crash should have left the root")
	}
	r := Apply(ctx, dir, "op", Options{})
	mustOK(t, r.Report)
	if !strings.Contains(codes(r.Diagnostics), CodeRecoveryApplied) {
		t.Errorf("no recovery reported: %v", r.Diagnostics)
	}
	if _, err := os.Stat(filepath.Join(dir, "graphs", "scratch.omni")); !os.IsNotExist(err) {
		t.Fatal("the sweep did not remove the deleted root")
	}
}
