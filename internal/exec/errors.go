package exec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Branch errors. The commit package's sentinels are re-exported so callers
// need not import it; errors.Is works whichever layer reported.
var (
	ErrBranchExists    = commit.ErrBranchExists
	ErrInvalidBranch   = commit.ErrInvalidBranch
	ErrProtectedBranch = commit.ErrProtectedBranch
	// ErrInternalRef: a public branch operation named an internal system ref.
	ErrInternalRef = errors.New("internal system ref")
)

// ErrCleanupPolicy: Cleanup was called without a retention policy.
var ErrCleanupPolicy = errors.New("cleanup needs a retention policy: keep (--keep N) or older_than (--older-than DUR)")

// Errors of the change APIs.
var (
	// ErrCommitHasNoParent: changes of a parentless (genesis) commit were asked for.
	ErrCommitHasNoParent = errors.New("commit has no parent")
	// ErrChangeSchemaBoundary: the two snapshots store a populated table
	// under different columns, so their rows cannot be compared.
	ErrChangeSchemaBoundary = errors.New("change crosses a schema boundary")
)

// CommitHasNoParentError reports CommitChanges of the genesis commit.
type CommitHasNoParentError struct{ Commit string }

func (e *CommitHasNoParentError) Error() string {
	return fmt.Sprintf("commit %s has no parent to diff against", e.Commit)
}

// Is makes errors.Is(err, ErrCommitHasNoParent) true.
func (e *CommitHasNoParentError) Is(target error) bool { return target == ErrCommitHasNoParent }

// ChangeSchemaBoundaryError reports a diff across a schema change that
// rewrote (or dropped) a table still holding rows.
type ChangeSchemaBoundaryError struct{ Commit, TypeName string }

func (e *ChangeSchemaBoundaryError) Error() string {
	return fmt.Sprintf("changes of commit %s cross a schema boundary on type '%s'", e.Commit, e.TypeName)
}

// Is makes errors.Is(err, ErrChangeSchemaBoundary) true.
func (e *ChangeSchemaBoundaryError) Is(target error) bool { return target == ErrChangeSchemaBoundary }

// Errors of the engine. ErrCommitNotFound and ErrBranchNotFound are the
// commit package's sentinels, so errors.Is works whichever layer reported.
var (
	ErrCommitNotFound = commit.ErrCommitNotFound
	ErrBranchNotFound = commit.ErrBranchNotFound
	// ErrPreconditionFailed: a conditional write found another branch head.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrReadSetChanged: a strict write lost its CAS and something it read
	// changed under it.
	ErrReadSetChanged = errors.New("read set changed")
	// ErrUnsupportedValue: a value the store cannot hold (an external blob URI).
	ErrUnsupportedValue = value.ErrUnsupportedValue
)

// PreconditionFailedError reports a conditional write (IfCommit) whose
// branch head was not the expected commit. It is never retried.
type PreconditionFailedError struct {
	Branch, Expected, Actual string
}

func (e *PreconditionFailedError) Error() string {
	return fmt.Sprintf("precondition failed on branch '%s': expected head %s, found %s", e.Branch, e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrPreconditionFailed) true.
func (e *PreconditionFailedError) Is(target error) bool { return target == ErrPreconditionFailed }

// ReadSetChangedError reports a strict write (update, delete, overwrite
// load) that lost the publish race to a commit changing something it read,
// or a merge whose target kept moving. The write had no effect; running it
// again evaluates it on the new head.
//
// Member names what changed: a table ("node:User", "edge:Knows"), "schema",
// or "graph_head:<branch>" (merge). For a row-level conflict EntityID is the
// row's id (for a keyed node type, its key value) and Change says what
// happened to it (ChangeUpdated, ChangeDeleted, ChangeInserted); for a
// table-level member Change is ChangeChanged and EntityID is empty.
// Expected is the commit the write read, Actual the head it lost to (commit
// ids, never object paths).
type ReadSetChangedError struct {
	Member   string
	EntityID string
	Change   string
	Branch   string
	Expected string
	Actual   string
}

func (e *ReadSetChangedError) Error() string {
	const tail = "; the write had no effect and can be retried"
	on := ""
	if e.Branch != "" {
		on = fmt.Sprintf(" on branch '%s'", e.Branch)
	}
	since := ""
	if e.Actual != "" {
		since = fmt.Sprintf(" (read at %s, head now %s)", e.Expected, e.Actual)
	}
	kind, name, _ := strings.Cut(e.Member, ":")
	switch {
	case e.Member == "schema":
		return fmt.Sprintf("write conflict%s: the schema changed after this write read it%s%s", on, since, tail)
	case kind == "graph_head":
		return fmt.Sprintf("write conflict: branch '%s' kept moving while this merge was planned%s; the merge had no effect and can be retried", name, since)
	case e.EntityID != "":
		return fmt.Sprintf("write conflict%s: %s %s '%s' was %s by another commit after this write read it%s%s", on, kind, name, e.EntityID, e.Change, since, tail)
	}
	return fmt.Sprintf("write conflict%s: %s table %s was changed by another commit after this write read it%s%s", on, kind, name, since, tail)
}

// Is makes errors.Is(err, ErrReadSetChanged) true.
func (e *ReadSetChangedError) Is(target error) bool { return target == ErrReadSetChanged }

// ErrContention: a write kept losing the publish race until its retry
// budget ran out (*ContentionError).
var ErrContention = errors.New("too much write contention")

// ContentionError reports a write that lost the publish compare-and-swap
// Attempts times within Elapsed and gave up (Options.MaxRetries,
// Options.RetryBudget). It had no effect and can be retried later.
type ContentionError struct {
	Branch   string
	Attempts int
	Elapsed  time.Duration
}

func (e *ContentionError) Error() string {
	return fmt.Sprintf("too much contention on branch '%s': the write lost the publish race %d times in %s; it had no effect and can be retried later",
		e.Branch, e.Attempts, e.Elapsed.Round(time.Millisecond))
}

// Is makes errors.Is(err, ErrContention) true.
func (e *ContentionError) Is(target error) bool { return target == ErrContention }

// InputError is a rejected JSONL line. Field names the offending jsonMember
// ("type", "from", "data.age", ...) or is empty for whole-line problems such
// as malformed JSON. Err, when set, is the underlying typed error (a
// *value.Error, *ConstraintError or *schema.KeyValueError).
type InputError struct {
	Line  int
	Field string
	Msg   string
	Err   error
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d, field '%s': %s", e.Line, e.Field, e.Msg)
}

// Unwrap returns the underlying typed error, if any.
func (e *InputError) Unwrap() error { return e.Err }

// jsonSyntaxError is a malformed line; Offset is the 0-based byte offset.
type jsonSyntaxError struct {
	Offset int
	Msg    string
}

func (e *jsonSyntaxError) Error() string { return e.Msg }

// jsonDepthError is nesting beyond maxJSONDepth; Path names the field.
type jsonDepthError struct{ Path string }

func (e *jsonDepthError) Error() string {
	return fmt.Sprintf("JSON nesting exceeds %d levels", maxJSONDepth)
}

// jsonDuplicateError is a repeated object jsonMember; Path is its dotted path.
type jsonDuplicateError struct{ Path string }

func (e *jsonDuplicateError) Error() string { return fmt.Sprintf("duplicate field '%s'", e.Path) }

// ErrInvalidLoadMode: a load was asked for a mode other than the three.
var ErrInvalidLoadMode = errors.New("invalid load mode")

// ErrCommitReclaimed: a time-travel read named a commit whose data cleanup
// removed. The commit object itself stays (history, merge bases and logs
// keep working); its table states do not.
var ErrCommitReclaimed = errors.New("commit reclaimed by cleanup")

// CommitReclaimedError reports a read of a commit cleanup reclaimed. It
// matches both ErrCommitReclaimed and ErrCommitNotFound, so callers that
// only know "not found" still classify it.
type CommitReclaimedError struct {
	Commit string
	Object string // the first missing object
}

func (e *CommitReclaimedError) Error() string {
	return fmt.Sprintf("commit %s is no longer readable: its data was removed by cleanup (missing %s)", e.Commit, e.Object)
}

// Is makes errors.Is match ErrCommitReclaimed and ErrCommitNotFound.
func (e *CommitReclaimedError) Is(target error) bool {
	return target == ErrCommitReclaimed || target == ErrCommitNotFound
}

// Merge errors.
var (
	// ErrMergeSameBranch: source and target name the same branch.
	ErrMergeSameBranch = errors.New("branch_merge requires distinct source and target branches")
	// ErrMergeSchema: source and target heads have different schemas.
	ErrMergeSchema = errors.New("branch_merge requires source and target to have the same schema")
)

// ErrMergeConflicts is matched by every *MergeConflictsError.
var ErrMergeConflicts = errors.New("merge conflicts")

// MergeConflictsError reports a merge that found conflicts and changed
// nothing. Row conflicts (divergent insert/update, delete vs update) are all
// listed, in (kind, type, id) order of the table diff; when there are none,
// the first constraint violation of the merged result is listed.
type MergeConflictsError struct {
	Conflicts []MergeConflict
}

func (e *MergeConflictsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "merge conflicts (%d): ", len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == 3 {
			fmt.Fprintf(&b, "; +%d more", len(e.Conflicts)-3)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrMergeConflicts) true.
func (e *MergeConflictsError) Is(target error) bool { return target == ErrMergeConflicts }

// ErrNotMutation: Mutate was given a read query.
var ErrNotMutation = errors.New("query is not a mutation")

// ConstraintError is an integrity violation found by CheckNodeRow,
// CheckEdgeRow or Validate. Msg is the canonical text of §4.4 of the
// language spec; the write paths surface it as a BadRequest, branch merge as
// a conflict.
type ConstraintError struct {
	Kind ConstraintKind
	Type string // node or edge type name
	// Prop is the property (or "(a, b)" column tuple for composite
	// uniques, "src"/"dst" for references); empty for @card.
	Prop string
	// ID is the offending entity id when known (the later holder for
	// uniques, the edge for references, the source node for @card).
	ID  string
	Msg string
}

func (e *ConstraintError) Error() string { return e.Msg }

// KeyConflictError is a strict insert (load append, or a duplicate explicit
// id in one append/overwrite batch) of an id that already exists.
type KeyConflictError struct {
	TypeKey  string // "node:Person" / "edge:Knows"
	EntityID string
}

func (e *KeyConflictError) Error() string {
	// The reference CLI's wording ("node type 'Person' already has this
	// id"), which scripts grep for, with the id named.
	kind, name, _ := strings.Cut(e.TypeKey, ":")
	return fmt.Sprintf("key conflict: %s type '%s' already has this id: '%s'", kind, name, e.EntityID)
}

// ErrInvalidText: an input string is not valid Unicode text (invalid UTF-8,
// or a \u escape of a lone surrogate). It is refused, never repaired, so
// distinct keys cannot collapse into one. The *InputError carrying it names
// the line and the field.
var ErrInvalidText = value.ErrInvalidText

// ErrForbidden: the authorizer installed on the write's handle refused it;
// nothing was read or written (*ForbiddenError).
var ErrForbidden = errors.New("forbidden")

// ForbiddenError is a write refused by the engine's policy check
// (authz.go), naming the action, the branches and the actor.
type ForbiddenError struct {
	Access
	RuleID string
	Reason string
}

func (e *ForbiddenError) Error() string {
	actor := e.Actor
	if actor == "" {
		actor = "(none)"
	}
	msg := fmt.Sprintf("actor '%s' may not %s", actor, e.Action)
	if e.Branch != "" {
		msg += fmt.Sprintf(" on branch '%s'", e.Branch)
	}
	if e.TargetBranch != "" {
		msg += fmt.Sprintf(" targeting branch '%s'", e.TargetBranch)
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Is makes errors.Is(err, ErrForbidden) true.
func (e *ForbiddenError) Is(target error) bool { return target == ErrForbidden }
