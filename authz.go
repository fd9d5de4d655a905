package omnigraph

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/exec"
)

// Policy seam (spec/surfaces.md §3.3, defense in depth). A handle with an
// Authorizer asks it at the entry of every writer that acts for an actor —
// Mutate, Load, ApplySchema, CreateBranch, DeleteBranch, Merge — and a
// refusal is a *ForbiddenError (errors.Is ErrForbidden) with nothing
// written. A write without an actor is refused outright: under a policy,
// every write acts for someone. Reads are not checked here; the server
// checks them (and every write, first) at its HTTP layer.
type (
	// Authorizer decides whether a write may proceed; an error refuses it
	// as a failure to evaluate. Implementations must be safe for concurrent use.
	Authorizer = exec.Authorizer
	// WriteAccess is one question: actor, action, and the branch and/or
	// target branch of the scope mapping of spec/surfaces.md §3.3.
	WriteAccess = exec.Access
	// WriteAction is a writer's policy action ("change", "branch_create",
	// "branch_delete", "branch_merge", "schema_apply").
	WriteAction = exec.Action
	// Decision is an Authorizer's answer (allowed, the deciding rule, a reason).
	Decision = exec.Decision
	// ForbiddenError is a write the handle's Authorizer refused.
	ForbiddenError = exec.ForbiddenError
)

// The write actions a handle's Authorizer is asked about.
const (
	ActionChange       = exec.ActionChange
	ActionSchemaApply  = exec.ActionSchemaApply
	ActionBranchCreate = exec.ActionBranchCreate
	ActionBranchDelete = exec.ActionBranchDelete
	ActionBranchMerge  = exec.ActionBranchMerge
)

// ErrForbidden: the handle's Authorizer refused a write (*ForbiddenError).
var ErrForbidden = exec.ErrForbidden

// WithAuthorizer returns a handle on the same graph, sharing g's engine
// (caches, group-commit queues), whose writers ask a first; nil returns a
// handle without a check. g itself is unchanged, so an embedder's handle
// keeps working as before when a server serves a policy-checked view of it.
func (g *Graph) WithAuthorizer(a Authorizer) *Graph {
	return &Graph{uri: g.uri, eng: g.eng, authz: a}
}

// Authorizer returns the handle's authorizer (nil: writes are not checked).
func (g *Graph) Authorizer() Authorizer { return g.authz }

// writeCtx carries the handle's authorizer to the engine's writers. Every
// writer method calls it first (TestAuthorizerEveryWriter).
func (g *Graph) writeCtx(ctx context.Context) context.Context {
	return exec.WithAuthorizer(ctx, g.authz)
}
