package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// OptimizeResult is the receipt of Optimize: one entry per table of the
// branch's schema (catalog order) and the maintenance commit, if any.
type OptimizeResult struct {
	Branch   string
	Datasets []OptimizeDataset
	// Commit is the published maintenance commit; nil when nothing changed.
	Commit *CommitInfo
}

// OptimizeDataset reports one table.
type OptimizeDataset struct {
	TypeKey          string // "node:Person" / "edge:Knows"
	FragmentsRemoved int
	FragmentsAdded   int
	// Indexed counts fragments newly covered by a key index.
	Indexed int
	// SearchIndexed counts full-text and vector index objects built for
	// @index properties (one per fragment and property).
	SearchIndexed int
	// ScalarIndexed counts scalar (btree) index objects built for
	// @index enums and orderable scalars (scalar_index.go).
	ScalarIndexed int
	// Committed: the table's new state is part of the published commit.
	Committed bool
}

// compacted is the outcome of compacting one table state: from is the
// state key it started from; to is the new state key ("" = nothing to do).
type compacted struct {
	from, to       string
	removed, added int
	indexed        int
	searchIndexed  int // full-text and vector index objects built
	scalarIndexed  int // scalar (btree) index objects built
}

// Optimize compacts every table of branch ("" = main) and publishes the
// result as one maintenance commit, or nothing when every table is already
// compact. Per table, contiguous runs of small fragments (fewer live rows
// than Options.CompactTargetRows) and fragments with at least a quarter of
// their rows deleted are rewritten into fragments of up to the target size,
// applying deletion vectors; row order and content are preserved exactly.
// Every fragment of the result is covered by a key index (internal/index).
//
// Optimize works on one branch: other branches share unchanged objects and
// are compacted by their own writes (automatic compaction) or by Optimize
// on them.
//
// It never conflicts with logical writes: a lost CAS re-reads the head,
// keeps the work for tables whose state did not change and redoes the
// others (within Options.MaxRetries); logical writers in turn rebase over
// maintenance commits. A second Optimize publishes nothing.
//
// INVARIANT: optimize preserves every table's rows in order and value
// (TestOptimizePreservesContent) and is idempotent (TestOptimizeIdempotent).
func (g *Graph) Optimize(ctx context.Context, branch string) (*OptimizeResult, error) {
	return g.optimize(ctx, branchOr(branch), nil, false)
}

func (g *Graph) autoErr(err error) {
	if g.maint.onAutoErr != nil {
		g.maint.onAutoErr(err)
	}
}

// readState reads a table state through the handle's cache (the same entry
// snapshots use).
func (g *Graph) readState(ctx context.Context, key string) (*table.State, error) {
	return g.snaps.State(ctx, key)
}

// needsAuto: the table holds more small fragments than the threshold.
func (c maintConfig) needsAuto(s *table.State) bool { return c.tooManySmall(s.Fragments()) }

// tooManySmall: more of frags are small to automatic compaction than the
// threshold.
func (c maintConfig) tooManySmall(frags []table.Fragment) bool {
	small := 0
	for _, f := range frags {
		if c.autoSmall(f) {
			small++
		}
	}
	return small > c.threshold
}

// autoSmall: automatic compaction counts and merges fragments written
// with fewer than half the target's rows. A fragment written full that
// lost some rows is not small to it — merging it gains no fragment, and
// its deletions are the hollow rule's — where counting it (by live rows)
// made every update of a row of a full fragment trigger a compaction of
// the table's newest fragments: one rewrite of the growing tail per write.
// Nor is one of at least half the target (a load's last fragment, say):
// it is a read unit as good as a full one, and counted it held the table
// at the threshold, so that every write or two paid a compaction.
func (c maintConfig) autoSmall(f table.Fragment) bool { return f.Rows < max(c.targetRows/2, 1) }

func (g *Graph) optimize(ctx context.Context, branch string, only map[string]bool, auto bool) (*OptimizeResult, error) {
	// On a batching store (S3) the compaction's new objects go out
	// concurrently; Publish flushes them before its CAS.
	ctx = storage.WithBatch(ctx)
	defer storage.Flush(ctx)
	ctx, end := g.ownLedger(ctx)
	head, base, err := g.repo.Resolve(ctx, branch)
	if err != nil {
		return nil, err
	}
	done := map[string]compacted{}
	var res *OptimizeResult
	err = g.retryPublish(ctx, func(attempt int, moved *commit.HeadMovedError) error {
		if moved != nil {
			newHead := moved.Actual
			if newHead.ETag == "" || newHead.Seq == 0 {
				if newHead, err = g.repo.Head(ctx, branch); err != nil {
					return err
				}
			}
			newBase, err := g.repo.Commit(ctx, newHead.Commit)
			if err != nil {
				return err
			}
			head, base = newHead, newBase
		}
		snap, err := g.snapshotOf(ctx, base, branch)
		if err != nil {
			return err
		}
		res = &OptimizeResult{Branch: branch}
		tables := map[string]string{}
		var summary []string
		for _, tk := range snapshot.TableKeys(snap.Catalog()) {
			if only != nil && !only[tk] {
				continue
			}
			from := base.Tables[tk]
			c, ok := done[tk]
			if !ok || c.from != from {
				// New, or changed by a logical write since we compacted it: redo.
				if c, err = g.compactTable(ctx, snap, tk, auto); err != nil {
					return fmt.Errorf("optimize %s: %w", tk, err)
				}
				done[tk] = c
			}
			ds := OptimizeDataset{TypeKey: tk}
			if c.to != "" {
				tables[tk] = c.to
				ds.FragmentsRemoved, ds.FragmentsAdded, ds.Indexed, ds.Committed = c.removed, c.added, c.indexed, true
				ds.SearchIndexed, ds.ScalarIndexed = c.searchIndexed, c.scalarIndexed
				summary = append(summary, fmt.Sprintf("%s %d→%d", tk, c.removed, c.added))
			}
			res.Datasets = append(res.Datasets, ds)
		}
		if len(tables) == 0 {
			return nil
		}
		if g.maint.testBeforePublish != nil {
			g.maint.testBeforePublish(attempt)
		}
		if err := failpoint.Hit(FPOptimizeBeforePublish); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		msg := "optimize: " + strings.Join(summary, ", ")
		if auto {
			msg = "auto-compact: " + strings.Join(summary, ", ")
		}
		_, cm, err := g.repo.Publish(ctx, commit.PublishRequest{Branch: branch, Base: head, Tables: tables,
			Actor: MaintenanceActor, Message: msg, Kind: commit.KindMaintenance})
		if err != nil {
			return err // a *commit.HeadMovedError is retried
		}
		if err := failpoint.Hit(FPOptimizeAfterPublish); err != nil {
			return err
		}
		ci := commitInfo(cm, branch)
		res.Commit = &ci
		return nil
	}, func(attempt int, err error) error {
		return fmt.Errorf("optimize: gave up after %d rebases: %w", attempt, err)
	})
	end(err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// segment is a stretch of a table's fragment list: either one fragment kept
// as is, or a run rewritten into new fragments.
type segment struct {
	frags   []table.Fragment
	rewrite bool
}

// planCompaction splits frags into kept fragments and runs to rewrite. A
// fragment is eligible when it is small or at least a quarter deleted;
// maximal contiguous runs of eligible fragments are rewritten when they
// hold two or more fragments, or one hollowed-out fragment. Only contiguous
// runs are merged so the table's row order is unchanged. auto limits the
// rows rewritten to the inline budget, newest runs first.
func (c maintConfig) planCompaction(frags []table.Fragment, auto bool) []segment {
	eligible := func(f table.Fragment) bool { return f.Live() < c.targetRows || hollow(f) }
	if auto {
		eligible = func(f table.Fragment) bool { return c.autoSmall(f) || hollow(f) }
	}
	var segs []segment
	for i := 0; i < len(frags); {
		j := i
		for j < len(frags) && eligible(frags[j]) {
			j++
		}
		switch {
		case j-i >= 2 || (j-i == 1 && hollow(frags[i])):
			segs = append(segs, segment{frags: frags[i:j], rewrite: true})
		case j == i:
			j = i + 1
			segs = append(segs, segment{frags: frags[i:j]})
		default:
			segs = append(segs, segment{frags: frags[i:j]})
		}
		i = j
	}
	if auto {
		segs = tierRuns(segs)
		var spent int64
		for k := len(segs) - 1; k >= 0; k-- {
			if !segs[k].rewrite {
				continue
			}
			rows := int64(0)
			for _, f := range segs[k].frags {
				rows += f.Live()
			}
			if spent > 0 && spent+rows > c.budgetRows {
				segs[k].rewrite = false
				continue
			}
			spent += rows
		}
	}
	return segs
}

// tierRatio bounds how much larger an older fragment may be than the newer
// ones an automatic compaction merges it with.
const tierRatio = 4

// tierRuns trims each run an automatic compaction would rewrite to its
// newest tier: starting from the two newest fragments, it takes the next
// older one only while that fragment holds at most tierRatio times the rows
// taken so far. Without this, a table loaded as one large and one medium
// fragment would re-encode the medium one on every few single-row writes;
// with it a row is rewritten O(log rows) times, as in a size-tiered LSM.
// Fragments left out stay as they are (a manual optimize still merges the
// whole run). The rewritten part stays contiguous, so row order is kept.
func tierRuns(segs []segment) []segment {
	out := make([]segment, 0, len(segs))
	for _, sg := range segs {
		n := len(sg.frags)
		if !sg.rewrite || n < 3 {
			out = append(out, sg)
			continue
		}
		acc := sg.frags[n-1].Live() + sg.frags[n-2].Live()
		k := n - 2
		for k > 0 && sg.frags[k-1].Live() <= tierRatio*max(acc, 1) {
			k--
			acc += sg.frags[k].Live()
		}
		for _, f := range sg.frags[:k] {
			out = append(out, segment{frags: []table.Fragment{f}})
		}
		out = append(out, segment{frags: sg.frags[k:], rewrite: true})
	}
	return out
}

// hollow: at least a quarter of the fragment's rows are deleted.
func hollow(f table.Fragment) bool { return f.Deleted > 0 && f.Deleted*4 >= f.Rows }

// compactTable rewrites one table's eligible runs and (for a manual
// optimize) indexes every fragment no key index covers yet, then writes
// the new state. It reads and writes only immutable objects under fresh
// names: nothing is visible until the maintenance commit is published.
func (g *Graph) compactTable(ctx context.Context, snap *snapshot.Snapshot, tk string, auto bool) (compacted, error) {
	out := compacted{from: snap.StateKey(tk)}
	s, err := snap.State(ctx, tk)
	if err != nil {
		return out, err
	}
	segs := g.maint.planCompaction(s.Fragments(), auto)
	prefix := snapshot.TablePrefix(tk)
	var frags []table.Fragment
	var idx []index.FragmentIDs
	removed := map[string]bool{}
	for _, sg := range segs {
		if !sg.rewrite {
			frags = append(frags, sg.frags...)
			continue
		}
		nf, ids, ok, err := g.rewriteRunImages(ctx, snap, tk, prefix, s, sg.frags)
		if err == nil && !ok {
			nf, ids, err = g.rewriteRun(ctx, prefix, s, sg.frags)
		}
		if err != nil {
			return out, err
		}
		for _, f := range sg.frags {
			removed[f.Key] = true
		}
		out.removed += len(sg.frags)
		out.added += len(nf)
		frags = append(frags, nf...)
		// A fragment written with its own index (every fragment this
		// build writes) needs no key index: lookups read the fragment
		// index, and a key index over it was one more object per
		// compaction that no read consulted.
		for _, f := range ids {
			if !ownIndex(nf, f.Key) {
				idx = append(idx, f)
			}
		}
	}
	// Keep index references for the fragments that survive.
	var refs []table.IndexRef
	covered := map[string]bool{}
	for _, r := range s.Indexes() {
		kept := r.Fragments[:0]
		for _, fk := range r.Fragments {
			if !removed[fk] {
				kept = append(kept, fk)
				if r.Kind == index.KindKey {
					covered[fk] = true
				}
			}
		}
		if len(kept) == 0 {
			continue // covers nothing the new state holds
		}
		r.Fragments = kept
		refs = append(refs, r)
	}
	if !auto {
		var bare []table.Fragment
		for _, f := range frags {
			if !covered[f.Key] && f.Index == "" && !isNew(idx, f.Key) {
				bare = append(bare, f)
			}
		}
		ids, err := index.FragmentIDsOf(ctx, g.st, s, bare)
		if err != nil {
			return out, err
		}
		idx = append(idx, ids...)
		// Search indexes (full-text, vector) the schema declares and the
		// fragments lack: the ensure_indices of the reference.
		built, err := buildSearchIndexes(ctx, g.st, snap.Catalog(), tk, s, frags, refs)
		if err != nil {
			return out, err
		}
		refs = append(refs, built...)
		out.searchIndexed = len(built)
		// Scalar indexes of @index enums and orderable scalars
		// (scalar_index.go), over the same fragments.
		if built, err = buildScalarIndexes(ctx, g.st, snap.Catalog(), tk, s, frags, refs); err != nil {
			return out, err
		}
		refs = append(refs, built...)
		out.scalarIndexed = len(built)
	}
	if out.removed == 0 && len(idx) == 0 && out.searchIndexed == 0 && out.scalarIndexed == 0 {
		return out, nil // already compact and indexed
	}
	if len(idx) > 0 {
		ref, err := index.WriteKey(ctx, g.st, prefix, idx)
		if err != nil {
			return out, err
		}
		refs = append(refs, ref)
		out.indexed = len(idx)
	}
	// The compacted state: the same rows in fewer fragments, through the
	// one table writer.
	if out.to, err = g.writeTable(ctx, snap, tableWrite{tk: tk, replace: true, frags: frags, indexes: refs, keepRows: true,
		dataFP: FPOptimizeAfterData, stateFP: FPOptimizeAfterState}); err != nil {
		return out, err
	}
	return out, ctx.Err()
}

// ownIndex reports whether the fragment key of frags has an index of its own.
func ownIndex(frags []table.Fragment, key string) bool {
	for _, f := range frags {
		if f.Key == key {
			return f.Index != ""
		}
	}
	return false
}

func isNew(idx []index.FragmentIDs, key string) bool {
	for _, f := range idx {
		if f.Key == key {
			return true
		}
	}
	return false
}

// rewriteRun scans the live rows of run (deletion vectors applied) in order
// and writes them as new fragments of about the target size, returning the
// fragments and their ids for the key index.
func (g *Graph) rewriteRun(ctx context.Context, prefix string, s *table.State, run []table.Fragment) ([]table.Fragment, []index.FragmentIDs, error) {
	sub, err := table.NewState(s.Schema())
	if err != nil {
		return nil, nil, err
	}
	if sub, err = sub.Append(run...); err != nil {
		return nil, nil, err
	}
	sc, err := table.Scan(ctx, g.st, sub, table.ScanOptions{})
	if err != nil {
		return nil, nil, err
	}
	defer sc.Close()
	ts := s.Schema()
	idCol := ts.Index(table.KeyColumn)
	var (
		out  []table.Fragment
		ids  []index.FragmentIDs
		buf  []arrow.RecordBatch
		rows int64
	)
	release := func() {
		for _, r := range buf {
			r.Release()
		}
		buf, rows = buf[:0], 0
	}
	defer release()
	flush := func() error {
		if rows == 0 {
			return nil
		}
		rec, err := concatRecords(buf, rows)
		if err != nil {
			return err
		}
		defer rec.Release()
		f, err := table.WriteFragment(ctx, g.st, prefix, ts, rec, g.fragmentOptions())
		if err != nil {
			return err
		}
		fi := index.FragmentIDs{Key: f.Key, IDs: make([]string, rec.NumRows())}
		for i := range fi.IDs {
			fi.IDs[i] = table.Value(rec.Column(idCol), i).(string)
		}
		out, ids = append(out, f), append(ids, fi)
		release()
		return nil
	}
	for sc.Next() {
		rec := sc.Record()
		rec.Retain()
		buf = append(buf, rec)
		rows += rec.NumRows()
		if rows >= g.maint.targetRows {
			if err := flush(); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	return out, ids, nil
}

// concatRecords joins records of one schema into one (the caller releases).
func concatRecords(recs []arrow.RecordBatch, rows int64) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, recs[0].NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(recs[0].Schema(), cols, rows), nil
}
