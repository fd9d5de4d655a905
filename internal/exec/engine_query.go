package exec

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/query"
)

// Query resolves the target once and runs a read plan against that one
// snapshot; the returned CommitInfo names exactly the commit read (usable as
// a conditional-write token).
func (g *Graph) Query(ctx context.Context, t Target, plan *query.Plan, params map[string]any) (*Result, CommitInfo, error) {
	snap, err := g.Resolve(ctx, t)
	if err != nil {
		return nil, CommitInfo{}, err
	}
	res, err := RunRead(ctx, snap, plan, params, RunOptions{Now: g.now().UTC()})
	if err != nil {
		return nil, CommitInfo{}, err
	}
	return res, snap.Commit(), nil
}
