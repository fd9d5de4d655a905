package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/exec"
	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// ErrorOutput is the body of every error response (spec/surfaces.md
// §2.5). Code is a closed enum; conditions newer than it are signalled by
// their structured field alone, with Code omitted.
type ErrorOutput struct {
	Error               string                     `json:"error" openapi:"required"`
	Code                string                     `json:"code,omitempty" openapi:"enum=unauthorized|forbidden|bad_request|not_found|method_not_allowed|conflict|too_many_requests|internal"`
	MergeConflicts      []MergeConflictOutput      `json:"merge_conflicts,omitempty"`
	ReadSetConflict     *ReadSetConflictOutput     `json:"read_set_conflict,omitempty"`
	KeyConflict         *KeyConflictOutput         `json:"key_conflict,omitempty"`
	ResourceLimit       *ResourceLimitOutput       `json:"resource_limit,omitempty"`
	PreconditionFailure *PreconditionFailureOutput `json:"precondition_failure,omitempty"`
	ChangeFeedGap       *ChangeFeedGapOutput       `json:"change_feed_gap,omitempty"`
	ChangeDiffRefusal   *ChangeDiffRefusalOutput   `json:"change_diff_refusal,omitempty"`
	BlobRange           *BlobRangeOutput           `json:"blob_range,omitempty"`
}

// MergeConflictOutput is one reason a merge was refused.
type MergeConflictOutput struct {
	EntityKind string  `json:"entity_kind" openapi:"required,enum=node|edge"`
	TypeName   string  `json:"type_name" openapi:"required"`
	EntityID   *string `json:"entity_id,omitempty"`
	Kind       string  `json:"kind" openapi:"required,enum=divergent_insert|divergent_update|delete_vs_update|orphan_edge|unique_violation|cardinality_violation|value_constraint_violation"`
	Message    string  `json:"message" openapi:"required"`
}

// ReadSetConflictOutput: something a strict write read changed before it
// could publish; the write had no effect. Member is "node:T", "edge:T",
// "schema" or "graph_head:<branch>"; Expected and Actual are the commit the
// write read and the head it lost to. For a row-level conflict the entity
// fields name the row and Change says what happened to it.
type ReadSetConflictOutput struct {
	Member     string  `json:"member" openapi:"required"`
	Expected   *string `json:"expected,omitempty"`
	Actual     *string `json:"actual,omitempty"`
	EntityKind *string `json:"entity_kind,omitempty" openapi:"enum=node|edge"`
	TypeName   *string `json:"type_name,omitempty"`
	EntityID   *string `json:"entity_id,omitempty"`
	Change     *string `json:"change,omitempty" openapi:"enum=updated|deleted|inserted|changed"`
}

// ReadSetConflict renders a *exec.ReadSetChangedError as its wire shape
// (the server's 409 body and the CLI's --json error body).
func ReadSetConflict(rs *exec.ReadSetChangedError) *ReadSetConflictOutput {
	o := &ReadSetConflictOutput{Member: rs.Member, Expected: strPtr(rs.Expected), Actual: strPtr(rs.Actual), Change: strPtr(rs.Change)}
	if kind, name, ok := strings.Cut(rs.Member, ":"); ok && (kind == "node" || kind == "edge") {
		o.EntityKind, o.TypeName = &kind, &name
		o.EntityID = strPtr(rs.EntityID)
	}
	return o
}

// KeyConflict renders a *exec.KeyConflictError as its wire shape.
func KeyConflict(key *exec.KeyConflictError) *KeyConflictOutput {
	kind, name, _ := strings.Cut(key.TypeKey, ":")
	return &KeyConflictOutput{EntityKind: kind, TypeName: name, EntityID: strPtr(key.EntityID)}
}

// KeyConflictOutput: a strict insert of an id that exists.
type KeyConflictOutput struct {
	EntityKind string  `json:"entity_kind" openapi:"required,enum=node|edge"`
	TypeName   string  `json:"type_name" openapi:"required"`
	EntityID   *string `json:"entity_id,omitempty"`
}

// ResourceLimitOutput: a request over a size limit, refused before any effect.
type ResourceLimitOutput struct {
	Resource string `json:"resource" openapi:"required"`
	Limit    int64  `json:"limit" openapi:"required"`
	Actual   int64  `json:"actual" openapi:"required"`
}

// PreconditionFailureOutput: a conditional write whose branch head moved.
type PreconditionFailureOutput struct {
	Expected string  `json:"expected" openapi:"required"`
	Actual   *string `json:"actual,omitempty"`
}

// ChangeFeedGapOutput: history the request needs was reclaimed.
type ChangeFeedGapOutput struct {
	Cursor                  *string `json:"cursor,omitempty"`
	FirstUnreadableCommitID string  `json:"first_unreadable_commit_id" openapi:"required"`
}

// ChangeDiffRefusalOutput: a commit whose changes cannot be computed.
type ChangeDiffRefusalOutput struct {
	Reason        string  `json:"reason" openapi:"required,enum=parentless_commit|schema_boundary|unknown"`
	GraphCommitID string  `json:"graph_commit_id" openapi:"required"`
	TypeName      *string `json:"type_name,omitempty"`
}

// BlobRangeOutput: an unsatisfiable byte range (half-open start..end of a
// blob of length bytes).
type BlobRangeOutput struct {
	Start  int64 `json:"start" openapi:"required"`
	End    int64 `json:"end" openapi:"required"`
	Length int64 `json:"length" openapi:"required"`
}

// The error codes.
const (
	codeUnauthorized     = "unauthorized"
	codeForbidden        = "forbidden"
	codeBadRequest       = "bad_request"
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeConflict         = "conflict"
	codeTooManyRequests  = "too_many_requests"
	codeInternal         = "internal"
)

// apiError is an error the server itself raises (a bad request shape, an
// unknown graph, a denial), with its response already decided.
type apiError struct {
	status int
	out    ErrorOutput
	// header is extra response headers (Retry-After).
	header http.Header
}

func (e *apiError) Error() string { return e.out.Error }

func newAPIError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, out: ErrorOutput{Error: fmt.Sprintf(format, args...), Code: code}}
}

func badRequest(format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, codeBadRequest, format, args...)
}

func notFound(format string, args ...any) *apiError {
	return newAPIError(http.StatusNotFound, codeNotFound, format, args...)
}

// changeFeedGap marks a change-route read of reclaimed history (410);
// elsewhere a reclaimed commit is an internal error, as in the reference.
type changeFeedGap struct{ err *exec.CommitReclaimedError }

func (e *changeFeedGap) Error() string { return e.err.Error() }
func (e *changeFeedGap) Unwrap() error { return e.err }

// asChangeFeedGap marks a reclaimed-history error of a change route.
func asChangeFeedGap(err error) error {
	var rec *exec.CommitReclaimedError
	if errors.As(err, &rec) {
		return &changeFeedGap{err: rec}
	}
	return err
}

// mergeConflictsOutput renders merge conflicts (never nil, so the JSON
// field is an array).
func mergeConflictsOutput(cs []exec.MergeConflict) []MergeConflictOutput {
	out := make([]MergeConflictOutput, 0, len(cs))
	for _, c := range cs {
		out = append(out, MergeConflictOutput{EntityKind: c.EntityKind, TypeName: c.TypeName, EntityID: strPtr(c.EntityID), Kind: c.Kind, Message: c.Message})
	}
	return out
}

// errorResponse maps an error to its HTTP status and body. It is the one
// place that decides error statuses: engine errors by type (errors.As /
// errors.Is, never by text), server errors by the status they carry.
// Anything unrecognized is a 500.
// ErrorBody is the HTTP status and error body the server answers err with
// (spec/surfaces.md §2.5). The CLI prints the same body under --json, so a
// script sees one error shape whether the graph is embedded or served.
func ErrorBody(err error) (int, ErrorOutput) { return errorResponse(err) }

func errorResponse(err error) (int, ErrorOutput) {
	var (
		api    *apiError
		tooBig *http.MaxBytesError
		pre    *exec.PreconditionFailedError
		merge  *exec.MergeConflictsError
		key    *exec.KeyConflictError
		rs     *exec.ReadSetChangedError
		orphan *exec.CommitHasNoParentError
		bound  *exec.ChangeSchemaBoundaryError
		gap    *changeFeedGap
		fgap   *exec.ChangeFeedGapError
		limit  *limits.Error
	)
	msg := err.Error()
	out := func(status int, code string) (int, ErrorOutput) {
		return status, ErrorOutput{Error: msg, Code: code}
	}
	switch {
	case errors.As(err, &api):
		return api.status, api.out
	case errors.Is(err, omnigraph.ErrForbidden):
		// The engine layer refused a write the route let through.
		return out(http.StatusForbidden, codeForbidden)
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, ErrorOutput{
			Error:         fmt.Sprintf("request body exceeds the limit of %d bytes", tooBig.Limit),
			ResourceLimit: &ResourceLimitOutput{Resource: "request_body_bytes", Limit: tooBig.Limit, Actual: tooBig.Limit + 1},
		}
	case errors.As(err, &limit):
		return http.StatusRequestEntityTooLarge, ErrorOutput{Error: msg,
			ResourceLimit: &ResourceLimitOutput{Resource: limit.Resource, Limit: limit.Limit, Actual: limit.Actual}}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, ErrorOutput{Error: "request cancelled: " + msg}
	case errors.As(err, &pre):
		return http.StatusPreconditionFailed, ErrorOutput{Error: msg,
			PreconditionFailure: &PreconditionFailureOutput{Expected: pre.Expected, Actual: strPtr(pre.Actual)}}
	case errors.As(err, &merge):
		return http.StatusConflict, ErrorOutput{Error: msg, Code: codeConflict, MergeConflicts: mergeConflictsOutput(merge.Conflicts)}
	case errors.As(err, &key):
		return http.StatusConflict, ErrorOutput{Error: msg, Code: codeConflict, KeyConflict: KeyConflict(key)}
	case errors.As(err, &rs):
		return http.StatusConflict, ErrorOutput{Error: msg, Code: codeConflict, ReadSetConflict: ReadSetConflict(rs)}
	case errors.Is(err, exec.ErrContention):
		return out(http.StatusConflict, codeConflict)
	case errors.As(err, &orphan):
		return http.StatusConflict, ErrorOutput{Error: msg, Code: codeConflict,
			ChangeDiffRefusal: &ChangeDiffRefusalOutput{Reason: "parentless_commit", GraphCommitID: orphan.Commit}}
	case errors.As(err, &bound):
		return http.StatusConflict, ErrorOutput{Error: msg, Code: codeConflict,
			ChangeDiffRefusal: &ChangeDiffRefusalOutput{Reason: "schema_boundary", GraphCommitID: bound.Commit, TypeName: strPtr(bound.TypeName)}}
	case errors.As(err, &fgap):
		return http.StatusGone, ErrorOutput{Error: msg, ChangeFeedGap: &ChangeFeedGapOutput{Cursor: strPtr(fgap.Cursor), FirstUnreadableCommitID: fgap.FirstUnreadable}}
	case errors.As(err, &gap):
		return http.StatusGone, ErrorOutput{Error: msg, ChangeFeedGap: &ChangeFeedGapOutput{FirstUnreadableCommitID: gap.err.Commit}}
	case errors.Is(err, exec.ErrCommitReclaimed):
		return out(http.StatusInternalServerError, codeInternal)
	case errors.Is(err, commit.ErrBranchNotFound), errors.Is(err, commit.ErrCommitNotFound), errors.Is(err, omnigraph.ErrBlobNotFound):
		return out(http.StatusNotFound, codeNotFound)
	case errors.Is(err, commit.ErrBranchExists), errors.Is(err, commit.ErrProtectedBranch),
		errors.Is(err, commit.ErrHeadMoved), errors.Is(err, commit.ErrNoMergeBase),
		errors.Is(err, commit.ErrAlreadyInitialized), errors.Is(err, exec.ErrMergeSchema):
		return out(http.StatusConflict, codeConflict)
	case isBadRequest(err):
		return out(http.StatusBadRequest, codeBadRequest)
	}
	return out(http.StatusInternalServerError, codeInternal)
}

// isBadRequest reports the engine's typed refusals of bad input: parse,
// type and value errors, constraint violations, malformed load lines,
// impossible branch operations.
func isBadRequest(err error) bool {
	var (
		qe   *query.Error
		ql   query.ErrorList
		qnf  *query.NotFoundError
		se   *schema.Error
		sl   schema.ErrorList
		skv  *schema.KeyValueError
		in   *exec.InputError
		val  *value.Error
		con  *exec.ConstraintError
		run  *eval.Error
		unk  *snapshot.UnknownTypeError
		unp  *snapshot.UnknownPropertyError
		src  *omnigraph.QuerySourceError
		berr *commit.BranchError
		req  *exec.RequestError
	)
	switch {
	case errors.As(err, &qe), errors.As(err, &ql), errors.As(err, &qnf),
		errors.As(err, &se), errors.As(err, &sl), errors.As(err, &skv),
		errors.As(err, &in), errors.As(err, &val), errors.As(err, &con),
		errors.As(err, &run), errors.As(err, &unk), errors.As(err, &unp), errors.As(err, &src), errors.As(err, &req):
		return true
	case errors.As(err, &berr) && errors.Is(err, commit.ErrInvalidBranch):
		return true
	}
	for _, s := range []error{commit.ErrInvalidBranch, exec.ErrInvalidLoadMode, exec.ErrNotMutation,
		exec.ErrMergeSameBranch, exec.ErrInternalRef, exec.ErrUnsupportedValue, schema.ErrNoKey,
		exec.ErrChangeCursorRejected, exec.ErrSchemaChange, schema.ErrPlan,
		query.ErrQueryNotFound, omnigraph.ErrQuerySource, omnigraph.ErrBlobSelector, commit.ErrAmbiguousRevision} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
