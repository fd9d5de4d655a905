package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/commit"
)

// A branch is a ref naming a commit (docs/branching.md). Creating one writes
// one small object and copies no data; deleting one removes the ref and
// nothing else, so branches created from it keep working: they share
// immutable objects with it, not dependencies.

// SchemaApplyLockRef is the internal system ref of the reference system.
// Public branch operations refuse it and Branches hides it, so scripts that
// relied on that behaviour keep working.
const SchemaApplyLockRef = "__schema_apply_lock__"

// Branches lists the live branches sorted ascending, "main" in its sorted
// place (the reference CLI's order: alpha, main, zeta). Internal system
// refs are not listed.
func (g *Graph) Branches(ctx context.Context) ([]string, error) {
	all, err := g.repo.Branches(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	for _, b := range all {
		if b != SchemaApplyLockRef {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out, nil
}

// CreateBranch creates branch name at from, which is a branch name ("" =
// main) or a commit id. It writes exactly one ref and no commit, whatever
// the size of the graph. From a branch it is commit.ForkBranch: the new
// ref is a copy of the source's (its head as of the request, its seq), one
// round trip on a store that copies server-side. Refusals (all before any write): "main" and
// internal refs (*commit.BranchError wrapping ErrProtectedBranch or
// ErrInternalRef), invalid names (ErrInvalidBranch), an existing name or
// one path-prefix-related to a live branch (ErrBranchExists), an unknown
// from (ErrBranchNotFound or ErrCommitNotFound).
//
// actor is what a policy installed on the context is asked about
// (branch_create, from → name; authz.go); a ref records no actor.
//
// INVARIANT: branch creation costs one ref write and no data copy,
// independent of graph size (BenchmarkBranchCreate, TestBranchCreateWritesOneRef).
func (g *Graph) CreateBranch(ctx context.Context, name, from string, actor string) error {
	if err := authorize(ctx, Access{Actor: actor, Action: ActionBranchCreate, Branch: branchOr(from), TargetBranch: name}); err != nil {
		return err
	}
	if err := checkPublicBranch("create", name); err != nil {
		return err
	}
	// A live branch is forked by copying its ref (one round trip on a store
	// that copies server-side); anything else, or a name that is no live
	// branch, resolves as a revision. A full commit id goes straight to
	// resolveFrom, which still prefers a branch of that name: creating a
	// branch at a commit costs what it did.
	if src := branchOr(from); src != SchemaApplyLockRef && commit.ValidateBranchName(src) == nil && !isCommitID(src) {
		err := g.repo.ForkBranch(ctx, name, src)
		var be *commit.BranchError
		if !errors.As(err, &be) || be.Branch != src || !errors.Is(err, ErrBranchNotFound) {
			return err
		}
	}
	_, err := g.repo.CreateBranchAt(ctx, name, func(ctx context.Context) (commit.ID, error) { return g.resolveFrom(ctx, from) })
	return err
}

// isCommitID reports whether s is a full commit id.
func isCommitID(s string) bool {
	_, err := commit.ParseID(s)
	return err == nil
}

// resolveFrom resolves a fork point: a live branch first, else any
// revision (a commit id or unique prefix, with ~N / ^ steps).
func (g *Graph) resolveFrom(ctx context.Context, from string) (commit.ID, error) {
	from = branchOr(from)
	if from == SchemaApplyLockRef {
		return commit.ID{}, &commit.BranchError{Branch: from, Err: ErrInternalRef, Reason: "branch operations do not allow internal system refs"}
	}
	if commit.ValidateBranchName(from) == nil {
		h, err := g.repo.Head(ctx, from)
		if err == nil {
			return h.Commit, nil
		}
		if !errors.Is(err, ErrBranchNotFound) {
			return commit.ID{}, err
		}
	}
	id, err := g.repo.ResolveRevision(ctx, from)
	if err != nil {
		// A plain name that is neither a branch nor a commit prefix is
		// reported as the missing branch it most likely was meant to be.
		var re *commit.RevisionError
		if errors.As(err, &re) && !strings.ContainsAny(from, "~^") {
			return commit.ID{}, &commit.BranchError{Branch: from, Err: ErrBranchNotFound}
		}
		return commit.ID{}, err
	}
	c, err := g.repo.Commit(ctx, id)
	if err != nil {
		return commit.ID{}, err
	}
	// A commit whose data cleanup removed cannot start a branch.
	if err := g.checkReadable(ctx, c); err != nil {
		return commit.ID{}, err
	}
	return id, nil
}

// DeleteBranch removes a branch's ref. It refuses "main" and internal refs;
// a missing branch is ErrBranchNotFound. Unlike the reference system it
// does not refuse a branch that others were created from: they share
// immutable objects, not forks, and keep their history. The deleted
// branch's own commits stay readable by id until cleanup reclaims them.
func (g *Graph) DeleteBranch(ctx context.Context, name string, actor string) error {
	if err := authorize(ctx, Access{Actor: actor, Action: ActionBranchDelete, TargetBranch: name}); err != nil {
		return err
	}
	if err := checkPublicBranch("delete", name); err != nil {
		return err
	}
	// After the writes to name queued before it, never in the middle of one.
	return g.runExclusive(ctx, name, func(ctx context.Context) error { return g.repo.DeleteBranch(ctx, name) })
}

// checkPublicBranch applies the refusals shared by public create and delete.
func checkPublicBranch(op, name string) error {
	switch name {
	case commit.MainBranch:
		if op == "create" {
			// main exists in every graph: creating it is the "already
			// exists" case, not a permission question.
			return &commit.BranchError{Branch: name, Err: ErrBranchExists, Reason: "main exists in every graph and cannot be created"}
		}
		return &commit.BranchError{Branch: name, Err: ErrProtectedBranch, Reason: fmt.Sprintf("cannot %s branch 'main'", op)}
	case SchemaApplyLockRef:
		return &commit.BranchError{Branch: name, Err: ErrInternalRef, Reason: "branch operations do not allow internal system refs"}
	}
	return commit.ValidateBranchName(name)
}

// forkPointForLoad returns the commit a load should start a missing branch
// from (LoadRequest.From), or nil when there is nothing to create: no From,
// or the branch exists. The branch is not created here: the load's own
// publish creates the ref pointing at its commit (commit.PublishRequest.
// NewBranch), so a crash can never leave the branch without the load.
func (g *Graph) forkPointForLoad(ctx context.Context, branch, from string) (*commit.ID, error) {
	if from == "" {
		return nil, nil
	}
	if _, err := g.repo.Head(ctx, branch); err == nil {
		return nil, nil
	} else if !errors.Is(err, ErrBranchNotFound) {
		return nil, err
	}
	if err := checkPublicBranch("create", branch); err != nil {
		return nil, err
	}
	at, err := g.resolveFrom(ctx, from)
	if err != nil {
		return nil, err
	}
	return &at, nil
}
