package exec

import (
	"context"
	"errors"
)

// MergePreview is what Merge(source, target) would do against the two
// branches' current heads, computed without writing anything.
type MergePreview struct {
	Source, Target string
	// SourceHead, TargetHead and Base are the commits the preview planned
	// against (Base is the merge base; empty when already up to date).
	SourceHead, TargetHead, Base string
	// Outcome is what the merge would report; when Conflicts is non-empty
	// the merge would be refused instead.
	Outcome   MergeOutcome
	Conflicts []MergeConflict
	// Changes are the entity changes the source made since the merge base
	// (for a fast-forward: exactly what the target receives), in Diff order.
	Changes []Change
}

// PreviewMerge plans the merge of source into target ("" = main) the way
// Merge's first attempt would, and reports the outcome, every row conflict
// (or the first constraint violation) and the source's changes since the
// merge base. It publishes nothing and writes no object. A merge across
// different schemas fails with *MergeSchemaError, as Merge does.
//
// A preview is a snapshot of a moving pair of heads: a later Merge plans
// again and may see different heads.
func (g *Graph) PreviewMerge(ctx context.Context, source, target string) (*MergePreview, error) {
	source, target, err := mergePair(source, target)
	if err != nil {
		return nil, err
	}
	_, sc, err := g.repo.Resolve(ctx, source)
	if err != nil {
		return nil, err
	}
	_, tc, err := g.repo.Resolve(ctx, target)
	if err != nil {
		return nil, err
	}
	p := &MergePreview{Source: source, Target: target, SourceHead: sc.ID.String(), TargetHead: tc.ID.String()}
	if p.Outcome, err = g.mergeKind(ctx, tc, sc); err != nil {
		return nil, err
	}
	if p.Outcome == MergeAlreadyUpToDate {
		return p, nil
	}
	base := tc
	if p.Outcome == MergeMerged {
		if tc.Schema != sc.Schema {
			return nil, g.mergeSchemaError(ctx, tc, sc, source, target)
		}
		if base, err = g.repo.MergeBase(ctx, sc.ID, tc.ID); err != nil {
			return nil, err
		}
		plan, err := g.planMerge(ctx, base, sc, tc, target)
		if err != nil {
			return nil, err
		}
		p.Conflicts = plan.conflicts
	}
	p.Base = base.ID.String()
	p.Changes, err = g.Diff(ctx, Target{Snapshot: base.ID.String()}, Target{Snapshot: sc.ID.String()})
	if errors.Is(err, ErrChangeSchemaBoundary) {
		// A fast-forward across a schema apply adopts the source's schema
		// whole; its rows cannot be paired entity by entity.
		p.Changes, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}
