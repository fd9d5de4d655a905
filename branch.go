package omnigraph

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/exec"
)

// Branch and merge result types.
type (
	// MergeOutcome is already_up_to_date, fast_forward or merged.
	MergeOutcome = exec.MergeOutcome
	// MergeResult reports what a merge did.
	MergeResult = exec.MergeResult
	// MergeConflict is one reason a merge was refused.
	MergeConflict = exec.MergeConflict
	// MergeConflictsError carries every conflict of a refused merge;
	// nothing was written.
	MergeConflictsError = exec.MergeConflictsError
	// Change is one entity inserted, updated or deleted between two commits.
	Change = exec.Change
	// ChangeSet is a diff of two targets: the commits they resolved to,
	// the changes and their counts.
	ChangeSet = exec.ChangeSet
	// ChangeStats counts a diff's changes by operation.
	ChangeStats = exec.ChangeStats
	// ConflictProperty is one property of a merge row conflict with its
	// base, source and target values.
	ConflictProperty = exec.ConflictProperty
	// RequestError is a request the engine refuses before any work (an
	// unknown type in a diff's scope, an invalid change kind or op).
	RequestError = exec.RequestError
	// MergePreview is what a merge would do, computed without writing.
	MergePreview = exec.MergePreview
)

// Branches lists the graph's branches sorted ascending (main among them).
func (g *Graph) Branches(ctx context.Context) ([]string, error) { return g.eng.Branches(ctx) }

// CreateBranch creates branch name at from (a branch name or commit id;
// "" means main). It copies no data.
func (g *Graph) CreateBranch(ctx context.Context, name, from, actor string) error {
	return g.eng.CreateBranch(g.writeCtx(ctx), name, from, actor)
}

// DeleteBranch deletes a branch; main cannot be deleted. Branches created
// from it keep their history.
func (g *Graph) DeleteBranch(ctx context.Context, name, actor string) error {
	return g.eng.DeleteBranch(g.writeCtx(ctx), name, actor)
}

// Merge merges source into target ("" = main).
func (g *Graph) Merge(ctx context.Context, source, target, actor string) (*MergeResult, error) {
	return g.eng.Merge(g.writeCtx(ctx), source, target, actor)
}

// PreviewMerge reports what Merge(source, target) would do against the
// current heads (outcome, conflicts, the source's changes since the merge
// base) without writing anything.
func (g *Graph) PreviewMerge(ctx context.Context, source, target string) (*MergePreview, error) {
	return g.eng.PreviewMerge(ctx, source, target)
}

// Diff lists the entities that differ between two targets.
func (g *Graph) Diff(ctx context.Context, from, to Target) ([]Change, error) {
	return g.eng.Diff(ctx, from, to)
}

// DiffBetween is Diff with the commits both targets resolved to, counts,
// and a scope: its kinds and types pick the tables to diff (others are not
// read), its ops the changes kept. A target's Snapshot takes any revision
// (a commit id or unique prefix, a branch name, main~2, main^). Only
// tables whose state differs are read, and of those only the fragments
// that differ, so the cost follows what changed between the two.
func (g *Graph) DiffBetween(ctx context.Context, from, to Target, scope ChangeScope) (*ChangeSet, error) {
	return g.eng.DiffBetween(ctx, from, to, scope)
}

// CommitChanges lists what one commit changed relative to its first parent.
func (g *Graph) CommitChanges(ctx context.Context, id string) ([]Change, error) {
	return g.eng.CommitChanges(ctx, id)
}
