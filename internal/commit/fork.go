package commit

import (
	"context"
	"errors"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// ForkBranch creates branch at the head the live branch source has at the
// time of the request. It writes one ref and no commit. The new ref is a
// byte copy of the source's: the same commit, seq and hint (a branch
// continues its source's write counter, as the reference system's branches
// continue their source's manifest version; docs/format/commit.md §2).
//
// On a store with a storage.Copier the ref is created by one server-side
// copy with "create only if absent", sent side by side with the listing
// that checks path-prefix clashes: one round trip, and the head is the
// source's as of the copy, never a stale head this handle remembers. When
// the listing shows a clash after the copy landed, the new ref is deleted
// again and the clash is returned; it was visible for about one round trip
// (until the delete). On other stores (Local, S3 servers that do not honour
// the copy condition) the source ref is read side by side with the listing
// and the new ref created by PutIfAbsent: two round trips.
//
// Errors: source missing (*BranchError for source, ErrBranchNotFound);
// branch existing or path-prefix-related to a live branch (*BranchError,
// ErrBranchExists); invalid names (ErrInvalidBranch); a read-only handle
// (ErrReadOnly). None of them leaves a ref behind.
//
// INVARIANT: on a store with a Copier, a fork is one copy request and one
// listing, side by side, whatever the history depth (TestForkBranchOneRoundTrip).
func (r *Repo) ForkBranch(ctx context.Context, branch, source string) error {
	if r.readOnly {
		return ErrReadOnly
	}
	if err := ValidateBranchName(branch); err != nil {
		return err
	}
	if err := ValidateBranchName(source); err != nil {
		return err
	}
	cp, ok := storage.CopierOf(r.store)
	if !ok {
		return r.forkByRead(ctx, branch, source)
	}
	checked := make(chan error, 1)
	// The listing may see the new ref itself (the copy may land first);
	// whether the exact name was free is the copy's condition to decide.
	go func() { checked <- r.checkNewBranchIgnoring(ctx, branch, branch) }()
	_, err := cp.CopyIfAbsent(ctx, RefKey(source), RefKey(branch))
	checkErr := <-checked
	switch {
	case errors.Is(err, storage.ErrUnsupported):
		return r.forkByRead(ctx, branch, source)
	case errors.Is(err, storage.ErrNotFound):
		return &BranchError{Branch: source, Err: ErrBranchNotFound}
	case errors.Is(err, storage.ErrExists):
		return &BranchError{Branch: branch, Err: ErrBranchExists}
	case err != nil:
		return fmt.Errorf("create ref %s from %s: %w", RefKey(branch), RefKey(source), err)
	}
	if checkErr != nil {
		return r.undoFork(ctx, branch, checkErr)
	}
	// The source's last known hint is the new branch's best prediction (a
	// prediction only: the first read of the branch reads its ref).
	if v, ok := r.hints.Load(source); ok {
		r.hints.Store(branch, v)
	}
	return nil
}

// undoFork deletes the ref a fork created when the clash check failed (a
// clash, or a listing that could not be made), so the failure leaves
// nothing behind. The delete runs even if ctx is cancelled.
func (r *Repo) undoFork(ctx context.Context, branch string, cause error) error {
	if err := r.store.Delete(context.WithoutCancel(ctx), RefKey(branch)); err != nil {
		return errors.Join(cause, fmt.Errorf("remove ref %s created before the clash was seen: %w", RefKey(branch), err))
	}
	return cause
}

// forkByRead is ForkBranch on a store without a Copier: the source's head
// is read side by side with the clash listing, then the new ref is created
// with PutIfAbsent carrying the source's seq.
func (r *Repo) forkByRead(ctx context.Context, branch, source string) error {
	_, err := r.createBranchAt(ctx, branch, func(ctx context.Context) (ID, uint64, error) {
		h, err := r.Head(ctx, source)
		return h.Commit, h.Seq, err
	})
	return err
}
