package exec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestMissingStateIsDamageNotCleanup: time travel to a commit whose table
// state cleanup removed reports ErrCommitReclaimed (cleanup marked the
// commit first); a state deleted by anything else is a corruption error
// naming the commit and the object, never "removed by cleanup".
func TestMissingStateIsDamageNotCleanup(t *testing.T) {
	ctx := context.Background()
	// States as objects: an inline one cannot be deleted.
	g, st, _, old := cleanupGraph(t, Options{InlineStateBytes: -1})
	reclaimedID, lostID := old[0], old[1]

	// A manually deleted state of a commit cleanup never touched.
	lost, err := g.repo.Commit(ctx, mustID(t, lostID))
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, tk := range sortedTableKeys(lost.Tables) {
		victim = lost.Tables[tk]
		if !strings.Contains(victim, "node-Company") {
			break
		}
	}
	data, _, err := st.Get(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, victim); err != nil {
		t.Fatal(err)
	}
	fresh := mustOpen(t, st, Options{})
	_, err = fresh.Resolve(ctx, Target{Snapshot: lostID})
	var ce *commit.CorruptError
	if !errors.As(err, &ce) || errors.Is(err, ErrCommitReclaimed) || !strings.Contains(err.Error(), victim) ||
		!strings.Contains(err.Error(), "not removed by cleanup") {
		t.Fatalf("read of a commit with a deleted state: %v; want a corruption error naming %s", err, victim)
	}
	st.Put(ctx, victim, data)

	// Cleanup's own removals: marked, then reported as reclaimed.
	res, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	markers := 0
	st.List(ctx, "reclaimed/", "", func(storage.Info) error { markers++; return nil })
	if markers != res.CommitsReclaimed {
		t.Fatalf("%d reclaimed markers, cleanup reclaimed %d commits", markers, res.CommitsReclaimed)
	}
	if res.CommitsReclaimed == 0 {
		t.Fatal("cleanup reclaimed nothing")
	}
	if ok, err := g.repo.Reclaimed(ctx, mustID(t, reclaimedID)); err != nil || !ok {
		t.Fatalf("reclaimed commit %s has no marker: %v", reclaimedID, err)
	}
	fresh = mustOpen(t, st, Options{})
	if _, err := fresh.Resolve(ctx, Target{Snapshot: reclaimedID}); !errors.Is(err, ErrCommitReclaimed) {
		t.Fatalf("read of a reclaimed commit: %v, want ErrCommitReclaimed", err)
	}
}
