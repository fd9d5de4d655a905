package exec

import (
	"context"
	"fmt"

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
	return g.snapshotOf(ctx, c, branch)
}

func (g *Graph) snapshotOf(ctx context.Context, c *commit.Commit, branch string) (*snapshot.Snapshot, error) {
	sc, err := g.compiledSchema(ctx, c.Schema)
	if err != nil {
		return nil, err
	}
	if err := commit.CheckTables(c, sc.prefixes); err != nil {
		return nil, err
	}
	return g.snaps.Snapshot(sc.cat, c, branch), nil
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
