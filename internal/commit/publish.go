package commit

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Failpoints on the publish path, in order. Each has a test that fires it,
// reopens and checks the head is exactly the old or the new commit.
const (
	FPBeforeCommitObject = "commit/before-commit-object"
	FPAfterCommitObject  = "commit/after-commit-object"
	FPBeforeCAS          = "commit/before-cas"
	FPAfterCAS           = "commit/after-cas"
)

// PublishRequest is everything one atomic graph write needs once its data
// files and table states are durable.
type PublishRequest struct {
	// Branch to advance.
	Branch string
	// Base is the head the write was prepared against, as returned by Head,
	// Resolve or a previous Publish (it must carry the ETag).
	Base Head
	// Tables maps each changed table to its new table-state key. Tables not
	// named keep the base commit's state key.
	Tables map[string]string
	// Removed lists tables that no longer exist (schema drops).
	Removed []string
	// MergeParent, for Kind == KindMerge only, is the merged source head.
	MergeParent *ID
	Actor       string
	Message     string
	Kind        Kind
	// SchemaKey, if set, replaces the base commit's schema key.
	SchemaKey string
	// NewBranch publishes the first commit of a branch that does not exist
	// yet: Base names the commit to build on (its Branch and ETag are
	// ignored) and the ref is created, pointing at the new commit, with a
	// create-if-absent. Creating the branch and its first write are then one
	// atomic step: a crash leaves either no branch or the branch with the
	// write. If the branch appeared meanwhile, Publish returns a
	// *HeadMovedError carrying its head, so the caller rebases onto it.
	NewBranch bool
}

// Publish makes a prepared write visible with one compare-and-swap:
//
//  1. write the commit object under a fresh ULID name (invisible: nothing
//     refers to it yet);
//  2. PutIfMatch the branch ref from req.Base.ETag to the new commit.
//
// Nothing is visible before step 2; everything is after it. If the ref moved,
// Publish returns a *HeadMovedError carrying the current head and the commit
// object stays behind unreferenced (cleanup reclaims it). On a precondition
// failure Publish re-reads the ref first: a retried conditional PUT that
// actually won is reported as success, never as a conflict.
//
// Cost when the base commit is cached: 2 requests (1 Put + 1 PutIfMatch); a
// lost CAS adds 1 GET.
//
// INVARIANT: the ref CAS is the last durable step and the only one that makes
// anything visible (TestCrashInProcess, TestCrashSubprocess); concurrent
// publishers form one linear chain (TestConcurrentPublishLinear).
func (r *Repo) Publish(ctx context.Context, req PublishRequest) (Head, *Commit, error) {
	if r.readOnly {
		return Head{}, nil, ErrReadOnly
	}
	c, err := r.prepare(ctx, req)
	if err != nil {
		return Head{}, nil, err
	}
	h, err := r.PublishChain(ctx, req.Branch, req.Base, req.NewBranch, []*Commit{c})
	if err != nil {
		return Head{}, nil, err
	}
	return h, c, nil
}

// NextCommit builds, without writing anything, the commit req would publish
// on top of base: base may be a commit not yet published, the previous link
// of a chain (group commit, DESIGN §9). req.Base is ignored but for
// req.NewBranch, which NextCommit validates like Publish.
func (r *Repo) NextCommit(ctx context.Context, base *Commit, req PublishRequest) (*Commit, error) {
	if r.readOnly {
		return nil, ErrReadOnly
	}
	if err := r.check(ctx, req, false); err != nil {
		return nil, err
	}
	return r.build(ctx, base, req)
}

// PublishChain makes a chain of prepared commits visible with one
// compare-and-swap: chain[0]'s first parent must be head's commit and each
// later commit's first parent the one before it (NextCommit builds them so).
//
//  1. write every commit object under its fresh ULID name (invisible:
//     nothing refers to them yet; on a batching store concurrently);
//  2. PutIfMatch the branch ref from head.ETag to the last commit (with
//     newBranch, create the ref if absent instead).
//
// Nothing is visible before step 2; every commit of the chain is after it.
// If the ref moved, PublishChain returns a *HeadMovedError carrying the
// current head and the commit objects stay behind unreferenced (cleanup
// reclaims them). On a precondition failure it re-reads the ref first: a
// retried conditional PUT that actually won is reported as success.
// NotPublished tells the errors after which the chain is certainly not
// published; once the CAS was sent otherwise, ctx's storage.Ledger is
// kept (its objects may be referenced).
//
// Cost with the base cached: N Puts (one batch) + 1 PutIfMatch; a lost CAS
// adds 1 GET.
//
// INVARIANT: the ref CAS is the last durable step and the only one that
// makes anything visible (TestCrashInProcess, TestCrashSubprocess);
// concurrent publishers form one linear chain (TestConcurrentPublishLinear,
// TestPublishChain).
func (r *Repo) PublishChain(ctx context.Context, branch string, head Head, newBranch bool, chain []*Commit) (Head, error) {
	return r.PublishWrittenChain(ctx, branch, head, newBranch, chain, 0)
}

// WriteCommits writes the commit objects of chain (on a batching store:
// sends them into ctx's batch) ahead of PublishWrittenChain, so that they
// travel with the objects of the writes they record while the caller does
// more work before the CAS (a group commit's inline compaction): that work
// then costs no round trip of its own for them. Nothing is visible until
// the CAS.
func (r *Repo) WriteCommits(ctx context.Context, chain []*Commit) error {
	if r.readOnly {
		return ErrReadOnly
	}
	if err := beforeCommitObjects(ctx); err != nil {
		return err
	}
	for _, c := range chain {
		if err := r.putCommit(ctx, c); err != nil {
			return notPublished(err)
		}
	}
	return nil
}

// beforeCommitObjects is the step before a chain's commit objects are
// written: the failpoint, then cancellation.
func beforeCommitObjects(ctx context.Context) error {
	if err := failpoint.Hit(FPBeforeCommitObject); err != nil {
		return notPublished(err)
	}
	if err := ctx.Err(); err != nil {
		return notPublished(err)
	}
	return nil
}

// PublishWrittenChain is PublishChain for a chain whose first written
// commits were already written by WriteCommits in ctx's batch (the flush
// before the CAS waits for them).
func (r *Repo) PublishWrittenChain(ctx context.Context, branch string, head Head, newBranch bool, chain []*Commit, written int) (Head, error) {
	if written < 0 || written > len(chain) {
		return Head{}, notPublished(fmt.Errorf("%w: %d of %d commits written", ErrInvalidRequest, written, len(chain)))
	}
	h, sent, err := r.publishChain(ctx, branch, head, newBranch, chain, written)
	if sent {
		// The chain is, or may be, published: what the write recorded is
		// referenced, or may be, and must stay.
		storage.LedgerOf(ctx).Keep()
	} else if err != nil {
		err = notPublished(err)
	}
	return h, err
}

// publishChain is PublishChain; sent reports whether the ref CAS may have
// been applied (it was sent, and its refusal or failure was not proven).
func (r *Repo) publishChain(ctx context.Context, branch string, head Head, newBranch bool, chain []*Commit, written int) (_ Head, sent bool, _ error) {
	if r.readOnly {
		return Head{}, false, ErrReadOnly
	}
	if len(chain) == 0 {
		return Head{}, false, fmt.Errorf("%w: empty commit chain", ErrInvalidRequest)
	}
	prev := head.Commit
	for _, c := range chain {
		if p, ok := c.Parent(); !ok || p != prev {
			return Head{}, false, fmt.Errorf("%w: commit %s does not follow %s in the chain", ErrInvalidRequest, c.ID, prev)
		}
		prev = c.ID
	}
	last := chain[len(chain)-1]

	if written < len(chain) {
		if err := failpoint.Hit(FPBeforeCommitObject); err != nil {
			return Head{}, false, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Head{}, false, err
	}
	for _, c := range chain[written:] {
		if err := r.putCommit(ctx, c); err != nil {
			return Head{}, false, err
		}
	}
	// The write's objects may have been sent concurrently (storage.Batching):
	// all of them, the commits included, must be durable before the CAS,
	// which itself is never deferred. While they finish, the store prepares
	// the temp file of the ref's put (storage.PrepareTemps: on a local
	// directory a file creation fewer on the critical path).
	// Unused — the write failed first, or the CAS was refused before it
	// wrote — the spare is removed on the way out: it leaves nothing.
	prepared := make(chan struct{})
	go func() {
		defer close(prepared)
		storage.PrepareTemps(r.store, RefKey(branch))
	}()
	err := storage.Flush(ctx)
	<-prepared
	defer storage.DropTemps(r.store, RefKey(branch))
	if err != nil {
		return Head{}, false, err
	}
	ctx = storage.WithoutBatch(ctx)
	if err := failpoint.Hit(FPAfterCommitObject); err != nil {
		return Head{}, false, err
	}

	if err := failpoint.Hit(FPBeforeCAS); err != nil {
		return Head{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return Head{}, false, err
	}
	next := Head{Branch: branch, Commit: last.ID, Seq: head.Seq + 1}
	var info storage.Info
	var casErr error
	if newBranch {
		next.Seq = 1
		info, casErr = r.store.PutIfAbsent(ctx, RefKey(branch), encodeRefFor(last, next.Seq))
		if errors.Is(casErr, storage.ErrExists) {
			// Treated like a lost CAS below: the ref names another commit.
			casErr = fmt.Errorf("%w: %w", storage.ErrPrecondition, casErr)
		}
	} else {
		info, casErr = r.store.PutIfMatch(ctx, RefKey(branch), encodeRefFor(last, next.Seq), head.ETag)
	}
	if casErr == nil {
		next.ETag = info.ETag
		if err := failpoint.Hit(FPAfterCAS); err != nil {
			return Head{}, true, err
		}
		return next, true, nil
	}

	// The CAS failed or its outcome is unknown. The ref itself is the only
	// truth: if it names our last commit, an earlier attempt of the
	// conditional PUT won (S3 can report 412 for a retried request that
	// succeeded).
	refused := errors.Is(casErr, storage.ErrPrecondition) || errors.Is(casErr, storage.ErrNotFound)
	now, err := r.ref(ctx, branch)
	if err != nil {
		if refused {
			return Head{}, false, err // e.g. the branch was deleted
		}
		return Head{}, true, &OutcomeUnknownError{Branch: branch, Commit: last.ID, Err: errors.Join(casErr, err)}
	}
	if now.Commit == last.ID {
		return now, true, nil
	}
	if refused {
		return Head{}, false, &HeadMovedError{Branch: branch, Expected: head, Actual: now}
	}
	// A failed CAS and a ref naming another commit: on a settled store the
	// request is over and did not apply; elsewhere it may still land.
	return Head{}, !storage.IsSettled(r.store), fmt.Errorf("advance %s: %w", RefKey(branch), casErr)
}

// prepare validates req and builds the new commit without any store request
// when the base (and merge parent) commits are cached.
func (r *Repo) prepare(ctx context.Context, req PublishRequest) (*Commit, error) {
	if err := r.check(ctx, req, true); err != nil {
		return nil, err
	}
	base, err := r.Commit(ctx, req.Base.Commit)
	if err != nil {
		return nil, fmt.Errorf("base commit: %w", err)
	}
	return r.build(ctx, base, req)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))
}

// check validates the parts of req that do not depend on the base commit;
// withBase also checks req.Base.
func (r *Repo) check(ctx context.Context, req PublishRequest, withBase bool) error {
	if err := ValidateBranchName(req.Branch); err != nil {
		return err
	}
	switch {
	case req.NewBranch && req.Kind == KindMerge:
		return invalid("a new branch cannot start with a merge")
	case req.NewBranch:
		if err := r.checkNewBranch(ctx, req.Branch); err != nil {
			var be *BranchError
			if errors.As(err, &be) && be.Reason == "" {
				// Created meanwhile: rebase onto it like any moved head.
				if now, rerr := r.ref(ctx, req.Branch); rerr == nil {
					return &HeadMovedError{Branch: req.Branch, Expected: req.Base, Actual: now}
				}
			}
			return err
		}
	case !withBase:
	case req.Base.Branch != "" && req.Base.Branch != req.Branch:
		return invalid("base head is of branch %q, publishing to %q", req.Base.Branch, req.Branch)
	case req.Base.ETag == "" || req.Base.Seq == 0:
		return invalid("base head was not read from the store (no ETag)")
	}
	switch {
	case req.Kind == KindInit || !req.Kind.valid():
		return invalid("kind %q cannot be published", req.Kind)
	case (req.Kind == KindMerge) != (req.MergeParent != nil):
		return invalid("merge parent must be given exactly for kind %q", KindMerge)
	}
	return nil
}

// build makes the commit of req on top of base.
func (r *Repo) build(ctx context.Context, base *Commit, req PublishRequest) (*Commit, error) {
	bad := invalid
	parents := []ID{base.ID}
	height := base.Height + 1
	if req.MergeParent != nil {
		if *req.MergeParent == base.ID {
			return nil, bad("merge parent equals the base commit")
		}
		mp, err := r.Commit(ctx, *req.MergeParent)
		if err != nil {
			return nil, fmt.Errorf("merge parent: %w", err)
		}
		parents = append(parents, mp.ID)
		height = max(height, mp.Height+1)
	}

	// Unchanged tables reuse the base's state keys: copy-on-write by reference.
	tables := make(map[string]string, len(base.Tables)+len(req.Tables))
	for k, v := range base.Tables {
		tables[k] = v
	}
	for _, name := range req.Removed {
		if _, ok := tables[name]; !ok {
			return nil, bad("removed table %q is not in the base commit", name)
		}
		delete(tables, name)
	}
	for k, v := range req.Tables {
		tables[k] = v
	}
	if err := r.spillInline(ctx, tables, req.Tables); err != nil {
		return nil, err
	}
	schema := base.Schema
	if req.SchemaKey != "" {
		schema = req.SchemaKey
	}
	now := r.now()
	c := &Commit{
		ID:        newID(now),
		Parents:   parents,
		Height:    height,
		Actor:     req.Actor,
		Branch:    req.Branch,
		CreatedAt: now.UnixMicro(),
		Kind:      req.Kind,
		Message:   req.Message,
		Schema:    schema,
		Tables:    tables,
	}
	if err := c.validate(); err != nil {
		return nil, bad("%v", err)
	}
	return c, nil
}

// MaxInlineTableBytes bounds the inline table states one commit carries
// (the sum of their keys' lengths): a commit copies its parent's entries,
// so without a bound every table that was ever small would ride in every
// later commit. Room for two states of table.DefaultInlineStateBytes
// (base64 makes each a third larger; a spill is an object write on the
// commit's critical path).
const MaxInlineTableBytes = 32 << 10

// spillInline keeps tables' inline states within MaxInlineTableBytes by
// writing the largest of them as state objects (table.MaterializeState):
// first those inherited from the base, then, if still over, the commit's
// own (own: the request's entries).
func (r *Repo) spillInline(ctx context.Context, tables, own map[string]string) error {
	total := 0
	for _, k := range tables {
		if table.IsInlineState(k) {
			total += len(k)
		}
	}
	for total > MaxInlineTableBytes {
		// The next to spill: inherited before own, larger before smaller,
		// then by name (deterministic).
		pick := ""
		before := func(name string) bool {
			if pick == "" {
				return true
			}
			_, a := own[name]
			_, b := own[pick]
			if a != b {
				return !a
			}
			if la, lb := len(tables[name]), len(tables[pick]); la != lb {
				return la > lb
			}
			return name < pick
		}
		for name, k := range tables {
			if table.IsInlineState(k) && before(name) {
				pick = name
			}
		}
		key, err := table.MaterializeState(ctx, r.store, tables[pick])
		if err != nil {
			return fmt.Errorf("spill table %s: %w", pick, err)
		}
		total -= len(tables[pick])
		tables[pick] = key
	}
	return nil
}

// newID mints a commit id from crypto randomness, so independent processes
// (and goroutines) never share entropy state.
func newID(t time.Time) ID {
	return ulid.MustNew(ulid.Timestamp(t), rand.Reader)
}
