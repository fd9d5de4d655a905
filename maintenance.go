package omnigraph

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/exec"
)

// Maintenance types.
type (
	// OptimizeResult reports what Optimize compacted and the maintenance
	// commit it published (nil when there was nothing to do).
	OptimizeResult = exec.OptimizeResult
	// OptimizeDataset is one table's part of an OptimizeResult.
	OptimizeDataset = exec.OptimizeDataset
	// CleanupOptions select what Cleanup keeps. At least one of Keep and
	// OlderThan is required; without Confirm nothing is deleted.
	CleanupOptions = exec.CleanupOptions
	// CleanupResult reports what Cleanup removed (or would remove).
	CleanupResult = exec.CleanupResult
)

// ErrCommitReclaimed reports a read of a commit whose data cleanup removed.
var ErrCommitReclaimed = exec.ErrCommitReclaimed

// Optimize compacts small fragments and applies deletions on a branch
// ("" = main) as one content-preserving maintenance commit. Concurrent
// writers never see a conflict because of it.
func (g *Graph) Optimize(ctx context.Context, branch string) (*OptimizeResult, error) {
	return g.eng.Optimize(ctx, branch)
}

// Cleanup deletes commits and files that no retained history needs, after a
// grace period that protects in-flight writers.
func (g *Graph) Cleanup(ctx context.Context, o CleanupOptions) (*CleanupResult, error) {
	return g.eng.Cleanup(ctx, o)
}
