package exec

import (
	"context"
	"errors"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Maintenance defaults (docs/maintenance.md explains the choice).
const (
	// DefaultCompactFragments: a write that leaves a table with more than this
	// many small fragments compacts the table inline.
	DefaultCompactFragments = 3
	// DefaultCompactTargetRows: fragments with at least this many live rows
	// are "full" and left alone unless deletions hollow them out.
	DefaultCompactTargetRows = 1 << 16
	// DefaultCleanupGrace: cleanup never deletes an object younger than this,
	// nor the data of a commit that stopped being a branch head more recently.
	DefaultCleanupGrace = time.Hour
)

// MaintenanceActor is the actor recorded on maintenance commits.
const MaintenanceActor = "omnigraph:maintenance"

// Failpoints of optimize and cleanup, in order (docs/maintenance.md).
const (
	FPOptimizeAfterData     = "exec/optimize-after-data"     // one table's new fragments and index written
	FPOptimizeAfterState    = "exec/optimize-after-state"    // one table's compacted state written
	FPOptimizeBeforePublish = "exec/optimize-before-publish" // every compacted state written, commit not yet
	FPOptimizeAfterPublish  = "exec/optimize-after-publish"  // the maintenance commit is visible
	FPCleanupBeforeDelete   = "exec/cleanup-before-delete"   // plan made, nothing deleted
	FPCleanupAfterCommits   = "exec/cleanup-after-commits"   // unreachable commit objects deleted
	FPCleanupAfterStates    = "exec/cleanup-after-states"    // unretained table states deleted
	FPCleanupAfterData      = "exec/cleanup-after-data"      // fragments, vectors, indexes deleted
)

// maintConfig is a handle's maintenance policy, fixed at open.
type maintConfig struct {
	auto       bool  // compact inline after writes
	threshold  int   // small fragments a table may hold before auto-compaction
	targetRows int64 // a fragment with this many live rows is full
	budgetRows int64 // rows one inline compaction may rewrite (≥ one run)
	// onAutoErr (tests only) observes inline-compaction failures, which never
	// fail the write that triggered them.
	onAutoErr func(error)
	// testBeforePublish (tests only) runs before each maintenance publish
	// attempt: the deterministic seam for race tests.
	testBeforePublish func(attempt int)
}

func maintConfigOf(o Options) maintConfig {
	c := maintConfig{auto: !o.NoAutoCompact, threshold: o.CompactFragments, targetRows: o.CompactTargetRows}
	if c.threshold <= 0 {
		c.threshold = DefaultCompactFragments
	}
	if c.targetRows <= 0 {
		c.targetRows = DefaultCompactTargetRows
	}
	c.budgetRows = 4 * c.targetRows
	return c
}

// checkReadable verifies that every table state of c still exists, so a
// time-travel read of a commit whose data cleanup reclaimed fails up front
// with *CommitReclaimedError instead of part-way through a query (a
// reclaimed commit may still share some states with retained ones). The
// states go through the handle's cache, so the read that follows pays
// nothing more. Branch heads are always retained and are not checked.
func (g *Graph) checkReadable(ctx context.Context, c *commit.Commit) error {
	snap, err := g.snapshotOf(ctx, c, "")
	if err != nil {
		return err
	}
	inline := ""
	for _, tk := range sortedTableKeys(c.Tables) {
		st, err := snap.State(ctx, tk)
		if err != nil {
			return g.reclaimedErr(ctx, c, c.Tables[tk], err)
		}
		if !table.IsInlineState(c.Tables[tk]) {
			continue
		}
		// An inline state rides in the commit and cannot go missing: what
		// cleanup reclaims of such a commit is the data it names.
		inline = tk
		for _, f := range st.Fragments() {
			if err := g.objectExists(ctx, f.Key); err != nil {
				return g.reclaimedErr(ctx, c, f.Key, err)
			}
		}
	}
	// Its data may all be shared with retained commits; cleanup's marker
	// still says the commit is beyond the retention (graphs with markers).
	if inline != "" && g.repo.Strict() {
		if ok, err := g.repo.Reclaimed(ctx, c.ID); err != nil {
			return err
		} else if ok {
			return &CommitReclaimedError{Commit: c.ID.String(), Object: "the inline state of " + inline}
		}
	}
	return nil
}

// objectExists checks that an immutable object exists, remembering a
// positive answer in the handle's cache as it remembers the objects it read.
func (g *Graph) objectExists(ctx context.Context, key string) error {
	if _, ok := g.cache.Get("exec/exists/" + key); ok {
		return nil
	}
	if _, err := g.st.Stat(ctx, key); err != nil {
		return err
	}
	g.cache.Add("exec/exists/"+key, true, int64(len(key))+64)
	return nil
}

// reclaimedErr turns a missing object under commit c into
// *CommitReclaimedError when cleanup removed it (commit.Repo.Reclaimed: the
// commit carries cleanup's marker); otherwise the object was lost, which is
// damage, reported as a corruption error naming the commit and the object.
func (g *Graph) reclaimedErr(ctx context.Context, c *commit.Commit, key string, err error) error {
	if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if ok, rerr := g.repo.Reclaimed(ctx, c.ID); rerr != nil {
		return errors.Join(err, rerr)
	} else if ok {
		return &CommitReclaimedError{Commit: c.ID.String(), Object: key}
	}
	return commit.MissingObject(c, key, err)
}

// maxMaintenanceWalk bounds the first-parent walks below: they look only at
// commits published while one write was in flight.
const maxMaintenanceWalk = 256

// changedOnlyByMaintenance reports whether every commit on cur's first-parent
// chain down to old that changed table tk is a maintenance commit (which
// preserves content exactly). It is false when old is not found within the
// walk bound, e.g. when a merge brought the change in.
//
// INVARIANT: a strict writer never gets ReadSetChanged because of a
// maintenance commit (TestOptimizeStrictWriterRebases).
func (g *Graph) changedOnlyByMaintenance(ctx context.Context, old, cur *commit.Commit, tk string) (bool, error) {
	for range maxMaintenanceWalk {
		if cur.ID == old.ID {
			return true, nil
		}
		pid, ok := cur.Parent()
		if !ok || cur.Height <= old.Height {
			return false, nil
		}
		p, err := g.repo.Commit(ctx, pid)
		if err != nil {
			return false, err
		}
		if cur.Tables[tk] != p.Tables[tk] && (cur.Kind != commit.KindMaintenance || len(cur.Parents) != 1) {
			return false, nil
		}
		if cur.Schema != p.Schema {
			return false, nil
		}
		cur = p
	}
	return false, nil
}

// onlyMaintenanceSince reports whether cur is id or reaches it through
// maintenance commits only: the graph's content is then exactly id's, so a
// conditional write on id may proceed (auto-compaction after a write must
// not invalidate the receipt the write returned).
func (g *Graph) onlyMaintenanceSince(ctx context.Context, id string, cur *commit.Commit) (bool, error) {
	for range maxMaintenanceWalk {
		if cur.ID.String() == id {
			return true, nil
		}
		if cur.Kind != commit.KindMaintenance || len(cur.Parents) != 1 {
			return false, nil
		}
		p, err := g.repo.Commit(ctx, cur.Parents[0])
		if err != nil {
			return false, err
		}
		cur = p
	}
	return false, nil
}
