package commit

import (
	"errors"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Sentinel errors. Callers test with errors.Is; the structured errors below
// wrap them so a single errors.Is check covers every detail type.
var (
	// ErrCorrupt: an object's bytes do not decode or fail validation. It is
	// table.ErrCorrupt: one kind of corruption for every stored object.
	ErrCorrupt = table.ErrCorrupt
	// ErrNotInitialized: the location holds no (complete) graph.
	ErrNotInitialized = errors.New("graph not initialized")
	// ErrAlreadyInitialized: init found a graph already published at the location.
	ErrAlreadyInitialized = errors.New("graph already initialized")
	// ErrFormat: the format stamp names a version this build cannot serve.
	ErrFormat = errors.New("unsupported graph format")
	// ErrHeadMoved: a publish lost its compare-and-swap; the branch moved.
	ErrHeadMoved = errors.New("branch head moved")
	// ErrBranchNotFound: no ref exists for the branch.
	ErrBranchNotFound = errors.New("branch not found")
	// ErrBranchExists: branch create found the name (or a path-prefix
	// relative of it) already live.
	ErrBranchExists = errors.New("branch already exists")
	// ErrInvalidBranch: the branch name breaks the naming rules.
	ErrInvalidBranch = errors.New("invalid branch name")
	// ErrProtectedBranch: the operation is not allowed on main.
	ErrProtectedBranch = errors.New("protected branch")
	// ErrCommitNotFound: no commit object with that id exists.
	ErrCommitNotFound = errors.New("commit not found")
	// ErrInvalidRequest: the caller passed an impossible request (a bug in
	// the caller, reported instead of writing a bad commit).
	ErrInvalidRequest = errors.New("invalid commit request")
	// ErrReadOnly: a write was attempted on a read-only handle.
	ErrReadOnly = errors.New("read-only handle")
	// ErrOutcomeUnknown: the ref CAS failed ambiguously and the ref could not
	// be re-read, so the publish may or may not have landed. Callers must not
	// blindly retry a non-idempotent write; see *OutcomeUnknownError.
	ErrOutcomeUnknown = errors.New("publish outcome unknown")
)

// OutcomeUnknownError carries the commit a publish tried to make visible
// when neither the CAS nor the follow-up read could tell whether it did.
// IsAncestor(Commit, newHead) answers the question later.
type OutcomeUnknownError struct {
	Branch string
	Commit ID
	Err    error // the CAS failure
}

func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("publish of %s to branch %q: outcome unknown: %v", e.Commit, e.Branch, e.Err)
}

// Unwrap exposes ErrOutcomeUnknown and the CAS failure.
func (e *OutcomeUnknownError) Unwrap() []error { return []error{ErrOutcomeUnknown, e.Err} }

// CorruptError names the object that failed to decode (a commit, ref,
// schema or the stamp; Offset is -1). It is table.CorruptError, so one
// errors.As finds the broken object whichever layer read it.
type CorruptError = table.CorruptError

func corrupt(key string, format string, args ...any) error {
	return &CorruptError{Key: key, Offset: -1, Reason: fmt.Sprintf(format, args...)}
}

// FormatError reports a format stamp this build refuses, naming both versions.
type FormatError struct {
	Key       string // the stamp object
	Found     int    // version in the stamp
	Supported int    // the only version this build serves
}

func (e *FormatError) Error() string {
	switch {
	case e.Found < e.Supported:
		return fmt.Sprintf("graph format version %d (in %s) is older than version %d served by this build; export with the older release and import", e.Found, e.Key, e.Supported)
	case e.Found > e.Supported:
		return fmt.Sprintf("graph format version %d (in %s) is newer than version %d served by this build; upgrade omnigraph first", e.Found, e.Key, e.Supported)
	}
	return fmt.Sprintf("graph format version %d (in %s) is not supported", e.Found, e.Key)
}

// Is makes errors.Is(err, ErrFormat) true.
func (e *FormatError) Is(target error) bool { return target == ErrFormat }

// HeadMovedError reports a lost compare-and-swap on a branch ref. Actual is
// the head found after the loss, so the caller can rebase onto it or fail.
type HeadMovedError struct {
	Branch   string
	Expected Head // the base the publish was prepared against
	Actual   Head // the head now
}

func (e *HeadMovedError) Error() string {
	return fmt.Sprintf("branch %q moved: expected head %s, found %s", e.Branch, e.Expected.Commit, e.Actual.Commit)
}

// Is makes errors.Is(err, ErrHeadMoved) true.
func (e *HeadMovedError) Is(target error) bool { return target == ErrHeadMoved }

// BranchError attaches a branch name to ErrBranchNotFound, ErrBranchExists,
// ErrInvalidBranch or ErrProtectedBranch.
type BranchError struct {
	Branch string
	Reason string // extra detail, may be empty
	Err    error  // one of the branch sentinels
}

func (e *BranchError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("branch %q: %v: %s", e.Branch, e.Err, e.Reason)
	}
	return fmt.Sprintf("branch %q: %v", e.Branch, e.Err)
}

// Unwrap returns the sentinel.
func (e *BranchError) Unwrap() error { return e.Err }

// ErrMissingRef: a branch ref the graph's history shows existed is gone (the
// main ref of a location that holds commits). It is damage, not an
// uninitialized graph: `omnigraph verify` reports it and `omnigraph repair`
// restores the ref from the newest intact commit of the branch.
var ErrMissingRef = errors.New("branch ref missing")

// MissingRefError reports a lost branch ref, with the evidence that the
// location holds history. It matches ErrMissingRef and ErrCorrupt.
type MissingRefError struct {
	Branch   string
	Evidence string // e.g. "commit commits/01….json is not a genesis commit"
}

func (e *MissingRefError) Error() string {
	return fmt.Sprintf("%s is missing but the location holds a graph's history (%s): the ref was lost or damaged; "+
		"run `omnigraph verify` to inspect the graph and `omnigraph repair` to restore the ref from the newest intact commit of %q",
		RefKey(e.Branch), e.Evidence, e.Branch)
}

// Is makes errors.Is match ErrMissingRef and ErrCorrupt.
func (e *MissingRefError) Is(target error) bool {
	return target == ErrMissingRef || target == ErrCorrupt
}

// MissingObject reports that commit c names key, which is not in the store
// (err says so) and which cleanup did not remove: damage, as a *CorruptError
// naming the commit. An err that already is a *CorruptError is returned as is.
func MissingObject(c *Commit, key string, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return err
	}
	return &CorruptError{Key: CommitKey(c.ID), Offset: -1,
		Reason: fmt.Sprintf("names %s, which is missing and was not removed by cleanup (run `omnigraph verify`)", key), Err: err}
}

// notPublishedError marks a publish failure after which the ref certainly
// does not name the chain: the failure came before the CAS was sent, or the
// CAS was refused, or (on a storage.Settled store) it failed and the ref,
// read again, names another commit. It adds nothing to the message.
type notPublishedError struct{ err error }

func (e *notPublishedError) Error() string { return e.err.Error() }
func (e *notPublishedError) Unwrap() error { return e.err }

func notPublished(err error) error {
	if err == nil {
		return nil
	}
	return &notPublishedError{err: err}
}

// NotPublished reports whether err, returned by Publish or PublishChain,
// proves that the ref was not moved to the commits it tried to publish (a
// *HeadMovedError, a failure before the CAS, a refused CAS). Only then are
// the objects those commits name certainly unreferenced, so that their
// writer may delete them (storage.Ledger). Any other error — a CAS whose
// outcome is unknown, a failure after the CAS succeeded — may leave a
// published commit naming them.
func NotPublished(err error) bool {
	var np *notPublishedError
	var moved *HeadMovedError
	return errors.As(err, &np) || errors.As(err, &moved)
}
