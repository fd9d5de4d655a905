package eval

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// Traversal projections under `limit k`, root chunk by root chunk. The
// row executor's rows of a binding tree from one scan are grouped by root
// row, root rows in storage order (every operator above the scan keeps
// its input's order: expand.go emits a row's far rows together, filters
// and anti-joins drop rows in place). So the first k rows of the whole
// tree are the first k rows of the trees of its first root rows, taken
// in turn. A snapshot that can read the rows one chunk of root rows
// reaches (snapshot.RootChunks: their edges through the adjacency
// indexes, the nodes reached by id, only the properties the plan names)
// hands each chunk's partial snapshot to chunkProject, which runs the
// binding tree on it with the scan bound to the chunk's roots and keeps
// the rows until it has k; the projection then reads them (Stream). Cost
// and memory follow the chunks read, not the tables: `limit 5` over
// every `knows` of a 1M-person graph reads the first root rows, their
// edges and neighbours, never the whole tables. TestRootChunksMatchRows
// (exec) compares the rows with the whole-image row executor's, in order.

// ChunkSource is a snapshot that reads traversals root chunk by root
// chunk (*snapshot.Snapshot).
type ChunkSource interface {
	RootChunks(ctx context.Context, plan *query.Plan, params map[string]any, root *query.Scan, first int,
		fn func(ms *snapshot.Mem, roots map[string]bool, left int) (bool, error)) (bool, error)
}

// maxChunkLimit is the largest limit taken chunk by chunk: past it the
// chunks would likely pass the snapshot's own bound on roots
// (snapshot.RootChunks) after reading them for nothing.
const maxChunkLimit = 16384

// chunkOut is the binding rows of one chunk and its projection.
type chunkOut struct {
	rs  *rowSet
	fns []valueFn
	n   int // rows of rs taken
}

// chunkProject answers projection o under `limit` limit (> 0) chunk by
// chunk; ok is false when the snapshot reads no chunks, o's input is not
// a traversal from one unranked scan (a sort, a cross join, a ranking:
// their first rows are not their first roots'), or the chunks cost too
// much.
func (r *runner) chunkProject(ctx context.Context, o *query.Project, limit int64) (*outRows, bool, error) {
	cs, ok := r.snap.(ChunkSource)
	if !ok || limit <= 0 || limit > maxChunkLimit || r.opts.NoIndexes || r.plan == nil {
		return nil, false, nil
	}
	root := chunkRoot(o.Input)
	if root == nil || !hasExpand(o.Input) {
		return nil, false, nil
	}
	var chunks []chunkOut
	got, taken := 0, 0
	// The first chunk: a root row for each row wanted (a root yields a
	// row or more when the traversal is not selective), at least 8.
	first := int(max(limit, 8))
	ok, err := cs.RootChunks(ctx, r.plan, r.params, root, first, func(ms *snapshot.Mem, roots map[string]bool, left int) (bool, error) {
		taken += len(roots)
		sub := &runner{mem: r.mem, snap: ms, plan: r.plan, opts: r.opts, params: r.params, now: r.now,
			chunkScan: root, chunkIDs: roots}
		sub.capOp, sub.capN = o.Input, limit-int64(got)
		rs, l, err := sub.bindingRows(ctx, o.Input)
		if err != nil {
			return false, err
		}
		n := min(rs.n(), int(limit)-got)
		if n == 0 {
			return true, giveUp(int(limit), got, taken, left)
		}
		fns, err := sub.project(ctx, o, l)
		if err != nil {
			return false, err
		}
		chunks = append(chunks, chunkOut{rs: rs, fns: fns, n: n})
		got += n
		return int64(got) < limit, giveUp(int(limit), got, taken, left)
	})
	if err != nil || !ok {
		return nil, false, err
	}
	gen := func(ctx context.Context, n int, fn func(row []any) error) error {
		row := make([]any, len(o.Cols))
		for _, c := range chunks {
			if err := ctx.Err(); err != nil {
				return err
			}
			for i := range c.n {
				if n == 0 {
					return nil
				}
				n--
				b := c.rs.row(i)
				for j, f := range c.fns {
					row[j] = f(b)
				}
				if err := fn(row); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return &outRows{n: got, gen: gen}, true, nil
}

// giveUp returns snapshot.ErrChunksGiveUp when no chunk has given a row
// yet, or when, at the rate of got rows from taken roots, the rows still
// missing to limit need more than a quarter of the roots left: a rate
// measured on few rows is rough, and a give-up late in the budget pays the
// chunks and the other path both. Without a row there is no rate at all:
// a query that matches nothing read ~680 roots' chunks before giving up
// (+0.4 s and +110 MB over the other path alone at 1M/5M), so it gives up
// after the first chunk.
func giveUp(limit, got, taken, left int) error {
	if got >= limit {
		return nil
	}
	if got == 0 {
		return snapshot.ErrChunksGiveUp
	}
	if need := int64(limit-got) * int64(taken) / int64(max(got, 1)); need > int64(left)/4 {
		return snapshot.ErrChunksGiveUp
	}
	return nil
}

// chunkRoot returns the only scan of binding tree op when every other
// operator is an expansion, a filter or an anti-join (whose sub-plans
// start from the outer rows, with no scan of their own), and nothing
// ranks; nil otherwise.
func chunkRoot(op query.Op) *query.Scan {
	var root *query.Scan
	ok := true
	var walk func(op query.Op)
	walk = func(op query.Op) {
		switch o := op.(type) {
		case *query.Scan:
			if root != nil || o.Rank != nil {
				ok = false
			}
			root = o
			return
		case *query.Expand, *query.Filter, *query.AntiJoin, *query.Argument:
		default:
			ok = false
			return
		}
		for _, c := range op.Children() {
			walk(c)
		}
	}
	walk(op)
	if !ok {
		return nil
	}
	return root
}
