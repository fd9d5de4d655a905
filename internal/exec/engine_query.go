package exec

import (
	"context"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/limits"
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
	return res, g.CommitOf(snap), nil
}

// QueryAt runs a read plan against a snapshot the caller already resolved
// (for example to compile the plan against that snapshot's catalog, so the
// plan and the data come from the same commit).
//
// The query runs under the handle's query limits, or those WithQueryLimits
// put on ctx; over them it fails with *limits.Error.
func (g *Graph) QueryAt(ctx context.Context, snap *snapshot.Snapshot, plan *query.Plan, params map[string]any) (res *eval.Result, err error) {
	err = g.runQuery(ctx, snap, plan, params, func(ctx context.Context, s eval.Snapshot, p *query.Plan, opts eval.Options) error {
		res, err = eval.Run(ctx, s, p, params, opts)
		return err
	})
	return res, err
}

// QueryStreamAt is QueryAt for a result read as a stream: fn receives the
// stream (every evaluation error is returned before fn is called) and the
// context to read it with, which carries the query's deadline and is
// ended when QueryStreamAt returns. fn's error is returned as is; a
// deadline passed while fn reads is *limits.Error.
func (g *Graph) QueryStreamAt(ctx context.Context, snap *snapshot.Snapshot, plan *query.Plan, params map[string]any, fn func(ctx context.Context, st *eval.Stream) error) error {
	return g.runQuery(ctx, snap, plan, params, func(ctx context.Context, s eval.Snapshot, p *query.Plan, opts eval.Options) error {
		st, err := eval.RunStream(ctx, s, p, params, opts)
		if err != nil {
			return err
		}
		return fn(ctx, st)
	})
}

// runQuery picks what a read plan runs on — a cold ranking's or an
// anchored read's partial snapshot, else snap — and calls run there under
// the query limits.
func (g *Graph) runQuery(ctx context.Context, snap *snapshot.Snapshot, plan *query.Plan, params map[string]any,
	run func(ctx context.Context, s eval.Snapshot, p *query.Plan, opts eval.Options) error) (err error) {
	ql := g.queryLimits(ctx)
	ctx, cancel := limits.WithTimeout(ctx, eval.ResourceTime, ql.Timeout,
		"the query ran out of time; narrow it or raise the query timeout (--timeout)")
	defer cancel()
	defer func() { err = limits.FromContext(ctx, err) }()
	opts := eval.Options{Now: g.now().UTC(), MemoryBytes: ql.MemoryBytes, Embed: g.queryEmbed}
	// A cold bm25 ranking reads its full-text indexes and the rows it
	// returns (snapshot.RankedPartial).
	if sm, ok, err := snap.RankedPartial(ctx, plan, params, eval.DefaultNProbe); err != nil {
		return err
	} else if ok {
		g.partialReads.Add(1)
		return run(ctx, sm, plan, opts)
	}
	// An anchored read on a cold handle runs on the rows it can touch,
	// gathered through the persisted indexes (snapshot.Partial).
	if ps, pplan, ok, err := snap.Partial(ctx, plan, params); err != nil {
		return err
	} else if ok {
		g.partialReads.Add(1)
		if err := run(ctx, ps, pplan, opts); err != nil {
			return err
		}
		if ps.ColumnsOnly() {
			g.columnReads.Add(1)
		}
		return nil
	}
	return run(ctx, snap, plan, opts)
}

// QueryLimits bound one read query. Zero fields take the handle's
// defaults (Options.QueryMemoryBytes, Options.QueryTimeout).
type QueryLimits struct {
	// MemoryBytes bounds the query's working memory (0 = default,
	// eval.DefaultMemoryBytes unless the handle sets another; < 0 =
	// unlimited).
	MemoryBytes int64
	// Timeout bounds its wall time (0 = the handle's, which is none by
	// default; < 0 = none).
	Timeout time.Duration
}

type queryLimitsKey struct{}

// WithQueryLimits returns ctx carrying limits for the queries run with it.
func WithQueryLimits(ctx context.Context, l QueryLimits) context.Context {
	return context.WithValue(ctx, queryLimitsKey{}, l)
}

func (g *Graph) queryLimits(ctx context.Context) QueryLimits {
	l := g.qlimits
	if v, ok := ctx.Value(queryLimitsKey{}).(QueryLimits); ok {
		if v.MemoryBytes != 0 {
			l.MemoryBytes = v.MemoryBytes
		}
		if v.Timeout != 0 {
			l.Timeout = v.Timeout
		}
	}
	return l
}
