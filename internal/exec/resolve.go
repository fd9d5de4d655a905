package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// DefaultCacheBytes is the cache budget of a handle opened without one.
// The cache holds decoded table images, and a read needs the whole image of
// every table it touches: an image that does not fit is re-decoded by every
// query (the 500k-edge peer graph's Knows image is ~80 MB; docs/performance.md,
// Engine). 512 MiB keeps graphs of a few million entities warm; the budget is
// a bound, not a reservation, and Options.CacheBytes changes it.
const DefaultCacheBytes = 512 << 20

// Resolve pins a target to one commit and returns its snapshot. For a branch
// target this reads the ref (one request on a warm handle).
func (g *Graph) Resolve(ctx context.Context, t Target) (*snapshot.Snapshot, error) {
	c, branch, err := g.resolveCommit(ctx, t)
	if err != nil {
		return nil, err
	}
	if t.Snapshot != "" {
		return g.snapshotOf(ctx, c, branch)
	}
	return g.headSnapshot(ctx, c, branch)
}

// ResolveReading is Resolve for a read that will touch the node and edge
// types named in types (as the query text names them), with the reads a
// cold handle needs sent side by side instead of one after another:
//
//   - On a branch target whose ref, when this handle last read it, carried
//     a hint (commit.Repo.HintOf), the schema and the table states the hint
//     names for those types are fetched together with the ref and the head
//     commit.
//   - Otherwise the states the head commit names for those types are
//     fetched together with its schema, as soon as the commit is known.
//
// Schemas and states are content-addressed (verified when read) and the
// snapshot uses exactly what the resolved commit names: a stale hint
// costs wasted GETs, never a wrong answer. What is already cached is not
// fetched again.
func (g *Graph) ResolveReading(ctx context.Context, t Target, types []string) (*snapshot.Snapshot, error) {
	if t.Snapshot != "" || len(types) == 0 {
		return g.Resolve(ctx, t)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// Errors are the real reads' to report, if they read these objects.
	prefetch := func(schemaKey string, tables map[string]string) {
		if _, cached := g.cache.Get("exec/catalog/" + schemaKey); schemaKey != "" && !cached {
			wg.Go(func() { _, _ = g.compiledSchema(ctx, schemaKey) })
		}
		for _, k := range statesOf(tables, types) {
			if _, cached := g.cache.Get("exec/state/" + k); !cached {
				wg.Go(func() { _, _ = g.snaps.State(ctx, k) })
			}
		}
	}
	if hint, ok := g.repo.HintOf(branchOr(t.Branch)); ok && hint.Schema != "" {
		prefetch(hint.Schema, hint.Tables)
	}
	c, branch, err := g.resolveCommit(ctx, t)
	if err != nil {
		return nil, err
	}
	prefetch("", c.Tables)
	return g.headSnapshot(ctx, c, branch)
}

// statesOf returns the state keys tables holds for the node and edge
// types named in types (matched as the catalog resolves a query's names:
// an edge may be spelt in another case than its declaration).
func statesOf(tables map[string]string, types []string) []string {
	var keys []string
	for _, typ := range types {
		for tk, k := range tables {
			if (strings.EqualFold(tk, snapshot.NodeKey(typ)) || strings.EqualFold(tk, snapshot.EdgeKey(typ))) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// headSnapshot is snapshotOf for the head commit a read resolved branch
// to, reusing what the last read of an unmoved head derived
// (resolve_memo.go).
func (g *Graph) headSnapshot(ctx context.Context, c *commit.Commit, branch string) (*snapshot.Snapshot, error) {
	if m, ok := g.resolvedFor(branch, c); ok {
		return g.snaps.Snapshot(m.sc.cat, c, branch), nil
	}
	sc, err := g.checkedSchema(ctx, c)
	if err != nil {
		return nil, err
	}
	g.remember(branch, c, sc)
	return g.snaps.Snapshot(sc.cat, c, branch), nil
}

func (g *Graph) snapshotOf(ctx context.Context, c *commit.Commit, branch string) (*snapshot.Snapshot, error) {
	sc, err := g.checkedSchema(ctx, c)
	if err != nil {
		return nil, err
	}
	return g.snaps.Snapshot(sc.cat, c, branch), nil
}

// checkedSchema is c's compiled schema, with c's tables checked against it.
func (g *Graph) checkedSchema(ctx context.Context, c *commit.Commit) (*compiledSchema, error) {
	sc, err := g.compiledSchema(ctx, c.Schema)
	if err != nil {
		return nil, err
	}
	if err := commit.CheckTables(c, sc.prefixes); err != nil {
		return nil, err
	}
	return sc, nil
}

// CommitOf is the package's CommitOf, rendered once per head: a snapshot
// of the branch head this handle last resolved reuses its CommitInfo.
func (g *Graph) CommitOf(s *snapshot.Snapshot) CommitInfo {
	if m, same := g.resolvedFor(s.Branch(), s.Commit()); same && s.Branch() != "" {
		return m.info
	}
	return CommitOf(s)
}

// CommitOf describes the commit a snapshot reads, labelled with the branch
// it was resolved through.
func CommitOf(s *snapshot.Snapshot) CommitInfo { return commitInfo(s.Commit(), s.Branch()) }

// compiledSchema is a stored schema compiled once per handle: its catalog
// and the state-key prefix of each of its tables (what every commit of the
// schema must hold, checked on each resolve).
type compiledSchema struct {
	cat      *schema.Catalog
	prefixes map[string]string
	// id is the stable type identity the accepted source's trailer records
	// (schema.SplitIdentity; zero for a schema never evolved).
	id schema.Identity
}

func (g *Graph) compiledSchema(ctx context.Context, key string) (*compiledSchema, error) {
	v, err := g.cache.GetOrLoad(ctx, "exec/catalog/"+key, func(ctx context.Context) (any, int64, error) {
		src, err := g.repo.Schema(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		cat, err := schema.Compile("schema.pg", string(src))
		if err != nil {
			return nil, 0, fmt.Errorf("exec: stored schema %s: %w", key, err)
		}
		_, id, err := schema.SplitIdentity(string(src))
		if err != nil {
			return nil, 0, fmt.Errorf("exec: stored schema %s: %w", key, err)
		}
		return &compiledSchema{cat: cat, prefixes: TableStatePrefixes(cat), id: id}, int64(len(src))*8 + 1024, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*compiledSchema), nil
}
