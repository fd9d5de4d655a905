package snapshot

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Traversals read root chunk by root chunk. A projection of the rows of a
// traversal from an unanchored scan under `limit k` (no `order`) needs
// only the first k rows of the row executor's order, and that order is
// grouped by root row, root rows in storage order (docs/query-execution.md,
// Traversal). So the first k rows are the first k rows of the first root
// rows' partial snapshots, taken in turn: RootChunks streams the root
// table's ids (its pushed-down filters applied by the table scan) and,
// for each chunk of consecutive passing root rows, gathers the partial
// snapshot of exactly those roots (partial.go: their edges through the
// adjacency indexes, the nodes they reach by id, the properties the plan
// names, page by page), hands it to the caller, and stops when the caller
// has its rows. Chunks grow (from the caller's guess, at most
// firstChunkRoots, ×4 each) so a limit that a
// few roots fill reads a few pages, and a sparse one does not pay an
// index probe round per handful of roots; past maxChunkRoots roots in all
// or a sixteenth of the root table (the per-root index probes would cost
// more than the dense views' whole-table scans) or a chunk whose traversal gathers more than a
// partial snapshot's bound, RootChunks gives up and the caller takes
// another path.

const (
	firstChunkRoots = 64
	maxChunkRoots   = maxPartialNodes
)

// errChunksDone stops the root scan when the caller has its rows;
// errChunksGiveUp when the chunks cost too much. Neither leaves the
// package.
var (
	errChunksDone   = errors.New("snapshot: root chunks done")
	errChunksGiveUp = errors.New("snapshot: root chunks give up")
)

// ErrChunksGiveUp, returned by a RootChunks callback, ends the chunks
// without an error: RootChunks reports ok false and the caller takes
// another path (the callback expects its rows to need more roots than
// are left).
var ErrChunksGiveUp = errors.New("snapshot: root chunks given up")

// RootChunks calls fn with the partial snapshot of each chunk of the
// root rows of read plan (root is its only scan, unanchored; params are
// converted values), chunks in storage order (the first of first roots,
// at most firstChunkRoots; each next one four times larger), and the ids of the chunk's
// root rows: the rows of the chunk's snapshot that root binds (the
// snapshot holds other rows of root's type that the traversal reaches, and
// every root row a chunk holds passes the filters the table scan applies,
// not necessarily the others: the executor re-applies them). fn returns
// false to stop; left is how many more roots the chunks may read after
// this one (the callback may give up early with ErrChunksGiveUp). ok is false, with no call of fn or with calls whose rows
// the caller must drop, when the plan has another shape (more than one
// scan, no traversal, a ranking, an anchored root), when the handle reads
// images (as Partial decides), or when the chunks cost too much (above).
func (s *Snapshot) RootChunks(ctx context.Context, plan *query.Plan, params map[string]any, root *query.Scan, first int,
	fn func(ms *Mem, roots map[string]bool, left int) (bool, error)) (bool, error) {
	if s.l.noIndexPath || plan == nil || plan.Read == nil {
		return false, nil
	}
	oversized, err := s.oversized(ctx, plan.Reads)
	if err != nil {
		return false, err
	}
	if !oversized && s.l.partials.Load() >= partialBeforeImages {
		return false, nil
	}
	probe := s.chunkPlan(plan, params, root)
	if !probe.shape(plan.Read) || probe.scans != 1 || !probe.traversal || probe.vars[root.Var] == nil ||
		!oversized && !probe.cold() {
		return false, nil
	}
	if _, anchored, err := probe.anchor(ctx, root); err != nil || anchored {
		return false, err
	}
	nt, found := s.cat.Node(root.Type)
	if !found {
		return false, nil
	}
	st, err := s.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return false, err
	}
	filters, _ := probe.tableFilters(st.Schema(), root)
	var chunk []table.RowLoc
	target, taken := min(max(first, 1), firstChunkRoots), 0
	// A chunk's traversal gathers up to partialBound rows of a type, the
	// roots among them: leave room for what they reach.
	most := max(firstChunkRoots, partialBound(st.Rows())/8)
	// In all, maxChunkRoots and a sixteenth of the table at most: past
	// it, probing indexes root by root and reading the reached rows'
	// pages costs more than reading the tables whole.
	budget := min(maxChunkRoots, max(4*firstChunkRoots, int(st.Rows()/16)))
	flush := func() error {
		pp := s.chunkPlan(plan, params, root)
		pp.shape(plan.Read)
		pp.known = map[string]map[string]table.RowLoc{nt.Name: {}}
		ids := pp.vars[root.Var].ids
		for _, l := range chunk {
			ids[l.ID] = true
			pp.known[nt.Name][l.ID] = l
		}
		ok, err := pp.gather(ctx, plan.Read)
		if err != nil {
			return err
		}
		if !ok {
			return errChunksGiveUp
		}
		ms, err := pp.build(ctx)
		if err != nil {
			return err
		}
		roots := make(map[string]bool, len(ids))
		for id := range ids {
			roots[id] = true
		}
		taken += len(chunk)
		more, err := fn(ms, roots, budget-taken)
		if errors.Is(err, ErrChunksGiveUp) {
			return errChunksGiveUp
		}
		if err != nil {
			return err
		}
		if !more {
			return errChunksDone
		}
		chunk = chunk[:0]
		target = min(4*target, most, budget-taken)
		return nil
	}
	err = s.filteredScan(ctx, st, []string{table.KeyColumn}, filters, true, func(rec arrow.RecordBatch, frag string, offs []int64) error {
		arr := rec.Column(0)
		for i := range int(rec.NumRows()) {
			if target <= 0 {
				return errChunksGiveUp
			}
			id := table.Value(arr, i).(string)
			chunk = append(chunk, table.RowLoc{ID: id, Fragment: frag, Offset: offs[i]})
			if len(chunk) >= target {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	}, func(int) {})
	if err == nil && len(chunk) > 0 {
		err = flush()
	}
	switch {
	case errors.Is(err, errChunksDone) || err == nil:
		s.l.partials.Add(1)
		s.l.chunkReads.Add(1)
		return true, nil
	case errors.Is(err, errChunksGiveUp):
		return false, nil
	}
	return false, err
}

// chunkPlan returns an empty partial plan of one chunk: gather binds root
// to the chunk's rows (set by the caller) instead of reading its table.
func (s *Snapshot) chunkPlan(plan *query.Plan, params map[string]any, root *query.Scan) *partialPlan {
	return &partialPlan{snap: s, params: params, vars: map[string]*partialVar{},
		edges: map[string]map[table.RowLoc][2]string{}, edgeRows: map[string]bool{}, idRead: map[string]bool{},
		root: plan.Read, chunkRoot: root}
}

// ChunkReads returns how many reads RootChunks answered.
func (l *Loader) ChunkReads() int64 { return l.chunkReads.Load() }
