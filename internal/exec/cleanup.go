package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// CleanupOptions is a retention policy. At least one of Keep and OlderThan
// is required; with both, a commit is kept if either keeps it.
type CleanupOptions struct {
	// Keep retains the newest Keep commits of every branch's first-parent
	// chain (a branch head is always retained, so 1 and 0-with-OlderThan
	// keep at least the heads). 0 = not given.
	Keep int
	// OlderThan retains every commit on a branch's first-parent chain
	// created less than this long ago. 0 = not given.
	OlderThan time.Duration
	// Confirm deletes; without it Cleanup only reports what it would delete.
	Confirm bool
	// Grace protects in-flight work: no object younger than Grace is deleted,
	// and a commit stays readable for Grace after it stopped being a branch
	// head. 0 = DefaultCleanupGrace; negative = no grace (only safe when no
	// other process uses the graph).
	Grace time.Duration
}

// CleanupResult reports what Cleanup deleted (or, in a preview, would delete).
type CleanupResult struct {
	Preview bool
	// CommitsRemoved counts commit objects no branch reaches (lost publish
	// races, deleted branches), which are deleted.
	CommitsRemoved int
	// CommitsReclaimed counts commits still in some branch's history whose
	// data is gone after this cleanup: their objects stay in the log, but reading them fails
	// with ErrCommitReclaimed.
	CommitsReclaimed int
	// FilesRemoved and BytesFreed count every deleted object, commit objects
	// and local temporary files included.
	FilesRemoved int
	BytesFreed   int64
	// Kept lists the retained (readable) commits, sorted.
	Kept []string
}

// Cleanup deletes what no retained commit needs. It walks every branch:
// the retained commits are, per branch, the head, the newest Keep commits
// of its first-parent chain, those younger than OlderThan, those replaced
// as head less than Grace ago, and the merge base of every pair of
// branches (so merges keep working). Every other object is garbage once it
// is older than Grace: table states, fragments, deletion vectors and
// indexes no retained commit names, commit objects and schemas no branch
// reaches, and (local directories) leftover ".tmp-" files.
//
// Commit objects that some branch reaches are never deleted — history,
// logs and merge-base walks stay whole and head resolution stays one read;
// only their data goes, and a time-travel read of such a commit fails with
// *CommitReclaimedError. Deletion runs top-down (commit objects, then table
// states, then the objects states name), so a crash leaves only garbage
// that the next cleanup finishes, never a retained commit with a hole.
//
// INVARIANT: cleanup never deletes an object a branch head or a retained
// commit needs, nor any object younger than the grace period
// (TestCleanupKeepsBranches, TestCleanupRacingWriters).
func (g *Graph) Cleanup(ctx context.Context, o CleanupOptions) (*CleanupResult, error) {
	if o.Keep <= 0 && o.OlderThan <= 0 {
		return nil, ErrCleanupPolicy
	}
	grace := o.Grace
	switch {
	case grace == 0:
		grace = DefaultCleanupGrace
	case grace < 0:
		grace = 0
	}
	now := g.now()
	graceCut := now.Add(-grace)
	pl, err := g.cleanupPlan(ctx, o, now, graceCut)
	if err != nil {
		return nil, err
	}
	res := &CleanupResult{Preview: !o.Confirm, CommitsRemoved: len(pl.commits), CommitsReclaimed: pl.reclaimed, Kept: pl.kept}
	for _, group := range [][]storage.Info{pl.commits, pl.states, pl.data} {
		for _, in := range group {
			res.FilesRemoved++
			res.BytesFreed += in.Size
		}
	}
	if !o.Confirm {
		return g.sweepTemp(ctx, res, graceCut, true)
	}
	if err := failpoint.Hit(FPCleanupBeforeDelete); err != nil {
		return nil, err
	}
	// Record the commits whose data goes before any of it goes, so a reader
	// can tell cleanup's removals from damage (commit.Repo.Reclaimed).
	for _, id := range pl.reclaimedIDs {
		if err := g.repo.MarkReclaimed(ctx, id); err != nil {
			return nil, fmt.Errorf("cleanup: %w", err)
		}
	}
	steps := []struct {
		objs []storage.Info
		fp   string
	}{{pl.commits, FPCleanupAfterCommits}, {pl.states, FPCleanupAfterStates}, {pl.data, FPCleanupAfterData}}
	for _, s := range steps {
		for _, in := range s.objs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := g.st.Delete(ctx, in.Key); err != nil {
				return nil, fmt.Errorf("cleanup: %w", err)
			}
		}
		if err := failpoint.Hit(s.fp); err != nil {
			return nil, err
		}
	}
	return g.sweepTemp(ctx, res, graceCut, false)
}

// sweepTemp adds to res the temporary leftovers of killed writers older
// than graceCut, and removes them unless dryRun (a preview). It goes
// through the store's own capability (storage.TempSweeper), so the sweep
// is counted and fault-injectable like every other store operation.
func (g *Graph) sweepTemp(ctx context.Context, res *CleanupResult, graceCut time.Time, dryRun bool) (*CleanupResult, error) {
	sw, err := storage.SweepTemp(ctx, g.st, graceCut, dryRun)
	if err != nil {
		return nil, fmt.Errorf("cleanup: %w", err)
	}
	res.FilesRemoved += sw.Files
	res.BytesFreed += sw.Bytes
	return res, nil
}

// cleanupPlan is what one cleanup deletes, grouped in deletion order.
type cleanupPlan struct {
	commits, states, data []storage.Info
	reclaimed             int
	reclaimedIDs          []commit.ID // reachable commits whose data this cleanup removes
	kept                  []string
}

func (g *Graph) cleanupPlan(ctx context.Context, o CleanupOptions, now, graceCut time.Time) (*cleanupPlan, error) {
	branches, err := g.repo.Branches(ctx)
	if err != nil {
		return nil, err
	}
	var heads []*commit.Commit
	for _, b := range branches {
		_, c, err := g.repo.Resolve(ctx, b)
		if errors.Is(err, ErrBranchNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		heads = append(heads, c)
	}
	// Every commit some branch reaches (the whole DAG; commit objects are
	// small and cached).
	reach := map[commit.ID]*commit.Commit{}
	stack := slices.Clone(heads)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reach[c.ID] != nil {
			continue
		}
		reach[c.ID] = c
		for _, p := range c.Parents {
			if reach[p] != nil {
				continue
			}
			pc, err := g.repo.Commit(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("cleanup: history of %s: %w", c.ID, err)
			}
			stack = append(stack, pc)
		}
	}
	// Retained commits.
	keep := map[commit.ID]bool{}
	ageCut := now.Add(-o.OlderThan)
	for _, h := range heads {
		var newer *commit.Commit // the commit that replaced c as head
		for i, c := 0, h; c != nil; i++ {
			created := time.UnixMicro(c.CreatedAt)
			switch {
			case i == 0, i < o.Keep,
				o.OlderThan > 0 && created.After(ageCut),
				newer != nil && time.UnixMicro(newer.CreatedAt).After(graceCut):
				keep[c.ID] = true
			}
			newer = c
			pid, ok := c.Parent()
			if !ok {
				break
			}
			c = reach[pid]
		}
	}
	for i := range heads {
		for j := i + 1; j < len(heads); j++ {
			mb, err := g.repo.MergeBase(ctx, heads[i].ID, heads[j].ID)
			if err != nil {
				return nil, fmt.Errorf("cleanup: merge base of %s and %s: %w", heads[i].ID, heads[j].ID, err)
			}
			keep[mb.ID] = true
		}
	}
	// Objects retained commits need: their states and what those name.
	pl := &cleanupPlan{}
	live := map[string]bool{}
	schemas := map[string]bool{}
	isHead := map[commit.ID]bool{}
	for _, h := range heads {
		isHead[h.ID] = true
	}
	for id, c := range reach {
		schemas[c.Schema] = true
		if !keep[id] {
			continue
		}
		var need []string
		for _, key := range c.Tables {
			s, err := g.readState(ctx, key)
			if errors.Is(err, storage.ErrNotFound) && !isHead[id] {
				// Reclaimed by an earlier cleanup with a stricter policy: it
				// cannot be retained again.
				keep[id], need = false, nil
				break
			}
			if err != nil {
				return nil, fmt.Errorf("cleanup: retained commit %s: %w", id, err)
			}
			need = append(need, key)
			for _, f := range s.Fragments() {
				need = append(need, f.Key)
				if f.DV != "" && !table.IsInlineDV(f.DV) {
					need = append(need, f.DV)
				}
				if f.Index != "" && !table.IsInlineIndex(f.Index) {
					need = append(need, f.Index)
				}
			}
			for _, r := range s.Indexes() {
				need = append(need, r.Key)
			}
		}
		for _, k := range need {
			live[k] = true
		}
		if keep[id] {
			pl.kept = append(pl.kept, id.String())
		}
	}
	slices.Sort(pl.kept)
	for id, c := range reach {
		if keep[id] {
			continue
		}
		for _, key := range c.Tables {
			if !live[key] {
				pl.reclaimed++
				pl.reclaimedIDs = append(pl.reclaimedIDs, id)
				break
			}
		}
	}
	old := func(in storage.Info) bool { return in.ModTime.Before(graceCut) }
	err = g.st.List(ctx, "commits/", "", func(in storage.Info) error {
		id, err := commit.ParseID(strings.TrimSuffix(strings.TrimPrefix(in.Key, "commits/"), ".json"))
		if err == nil && reach[id] == nil && old(in) {
			pl.commits = append(pl.commits, in)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = g.st.List(ctx, "tables/", "", func(in storage.Info) error {
		if live[in.Key] || !old(in) {
			return nil
		}
		if strings.Contains(in.Key, "/state/") {
			pl.states = append(pl.states, in)
		} else {
			pl.data = append(pl.data, in)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = g.st.List(ctx, "schemas/", "", func(in storage.Info) error {
		if !schemas[in.Key] && old(in) {
			pl.data = append(pl.data, in)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Reclaimed markers of commits no branch reaches any more go with them.
	err = g.st.List(ctx, "reclaimed/", "", func(in storage.Info) error {
		id, err := commit.ParseID(strings.TrimPrefix(in.Key, "reclaimed/"))
		if err == nil && reach[id] == nil && old(in) {
			pl.data = append(pl.data, in)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pl, nil
}
