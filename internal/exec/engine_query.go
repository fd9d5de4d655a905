package exec

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// Query resolves the target once and runs a read plan against that one
// snapshot; the returned CommitInfo names exactly the commit read (usable as
// a conditional-write token).
func (g *Graph) Query(ctx context.Context, t Target, plan *query.Plan, params map[string]any) (*eval.Result, CommitInfo, error) {
	snap, err := g.Resolve(ctx, t)
	if err != nil {
		return nil, CommitInfo{}, err
	}
	res, err := g.QueryAt(ctx, snap, plan, params)
	if err != nil {
		return nil, CommitInfo{}, err
	}
	return res, commitInfo(snap.Commit(), snap.Branch()), nil
}

// QueryAt runs a read plan against a snapshot the caller already resolved
// (for example to compile the plan against that snapshot's catalog, so the
// plan and the data come from the same commit).
func (g *Graph) QueryAt(ctx context.Context, snap *snapshot.Snapshot, plan *query.Plan, params map[string]any) (*eval.Result, error) {
	opts := eval.Options{Now: g.now().UTC(), Embed: g.queryEmbed}
	// A cold bm25 ranking reads its full-text indexes and the rows it
	// returns (snapshot.RankedPartial).
	if sm, ok, err := snap.RankedPartial(ctx, plan, params); err != nil {
		return nil, err
	} else if ok {
		g.partialReads.Add(1)
		return eval.Run(ctx, sm, plan, params, opts)
	}
	// An anchored read on a cold handle runs on the rows it can touch,
	// gathered through the persisted indexes (snapshot.Partial).
	if ps, pplan, ok, err := snap.Partial(ctx, plan, params); err != nil {
		return nil, err
	} else if ok {
		g.partialReads.Add(1)
		return eval.Run(ctx, ps, pplan, params, opts)
	}
	return eval.Run(ctx, snap, plan, params, opts)
}
