package exec

import (
	"context"
	"fmt"
)

// The engine's policy seam (spec/surfaces.md §3.3, defense in depth): every
// writer that acts for an actor — Mutate, Load, ApplySchema, CreateBranch,
// DeleteBranch, Merge — asks the Authorizer carried by its context (if any)
// at entry, before it writes anything, so a caller that forgot its
// own check still cannot write. The engine knows nothing of policies: the
// caller supplies the decision (the server, from its Cedar bundles).

// Action is the policy action of a write, spelled as the policy language
// spells it (spec/surfaces.md §3.1).
type Action string

// The actions the engine's writers ask about.
const (
	ActionChange       Action = "change"
	ActionSchemaApply  Action = "schema_apply"
	ActionBranchCreate Action = "branch_create"
	ActionBranchDelete Action = "branch_delete"
	ActionBranchMerge  Action = "branch_merge"
)

// Access is one question a writer asks. Branch and TargetBranch follow the
// scope mapping of spec/surfaces.md §3.3: a write on a branch (change) sets
// Branch; a write that targets one (branch_delete, schema_apply) sets
// TargetBranch; a transition (branch_create from → name, branch_merge
// source → target) sets both. "" means the request has no such dimension.
type Access struct {
	Actor        string
	Action       Action
	Branch       string
	TargetBranch string
}

// Decision is an Authorizer's answer. RuleID names what decided it; Reason,
// when set, explains a denial.
type Decision struct {
	Allowed bool
	RuleID  string
	Reason  string
}

// Authorizer decides whether a write may proceed. An error is a failure to
// evaluate, which refuses the write (wrapped as the cause), never a silent
// allow. Implementations must be safe for concurrent use.
type Authorizer interface {
	AuthorizeWrite(ctx context.Context, a Access) (Decision, error)
}

type authorizerKey struct{}

// WithAuthorizer returns ctx whose writes ask a (nil: none). The public
// graph handle installs its authorizer this way on every writer call.
func WithAuthorizer(ctx context.Context, a Authorizer) context.Context {
	return context.WithValue(ctx, authorizerKey{}, a)
}

// authorize asks ctx's authorizer about a; nil when there is none or it
// allows. Without an actor the write is refused before the authorizer is
// asked: under a policy, every write acts for someone (fail closed).
func authorize(ctx context.Context, a Access) error {
	az, _ := ctx.Value(authorizerKey{}).(Authorizer)
	if az == nil {
		return nil
	}
	if a.Actor == "" {
		return &ForbiddenError{Access: a, Reason: "no actor: a write under a policy must act for an actor"}
	}
	d, err := az.AuthorizeWrite(ctx, a)
	if err != nil {
		return fmt.Errorf("policy evaluation for %s: %w", a.Action, err)
	}
	if !d.Allowed {
		return &ForbiddenError{Access: a, RuleID: d.RuleID, Reason: d.Reason}
	}
	return nil
}
