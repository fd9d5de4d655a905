package server

import (
	"context"

	"github.com/omnigraph-go/omnigraph"
)

// Action is a Cedar action name of spec/surfaces.md §3.1, spelled exactly
// as the policy language spells it.
type Action string

// The actions the server checks. ActionAdmin is reserved (no route checks
// it); ActionGraphList is checked against the server, not a graph.
const (
	ActionRead         Action = "read"
	ActionExport       Action = "export"
	ActionChange       Action = "change"
	ActionSchemaApply  Action = "schema_apply"
	ActionBranchCreate Action = "branch_create"
	ActionBranchDelete Action = "branch_delete"
	ActionBranchMerge  Action = "branch_merge"
	ActionAdmin        Action = "admin"
	ActionInvokeQuery  Action = "invoke_query"
	ActionGraphList    Action = "graph_list"
)

// AuthzRequest is one authorization question. Branch and TargetBranch are
// "" when the action has no such dimension (has_branch / has_target_branch
// false in the Cedar context); whether a branch is protected is the
// authorizer's knowledge (its policy's protected_branches), not the
// server's.
type AuthzRequest struct {
	// Actor is the id bound to the bearer token; "" on an open server.
	Actor  string
	Action Action
	// Graph is the graph id; "" for ActionGraphList (resource Server::"root").
	Graph        string
	Branch       string
	TargetBranch string
	// Engine marks the engine layer's defense-in-depth question
	// (engine_authz.go), asked by a writer after the route's own checks;
	// an authorizer answers it exactly like the route's.
	Engine bool
}

// Decision is an authorization answer. RuleID names the rule that decided
// it (for the decision log); Reason, when set, is a human explanation of a
// denial. It is the engine's answer type too, so one decision serves the
// HTTP and the engine layer (engine_authz.go).
type Decision = omnigraph.Decision

// Authorizer decides whether an actor may perform an action. The server
// calls it on every protected route after bearer authentication and graph
// resolution and before admission, and, unless the server is open, again
// from every engine writer acting for an actor (AuthzRequest.Engine); it
// logs every decision. An error is a failure to evaluate (HTTP 500), never
// a denial.
//
// Implementations must be safe for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, req AuthzRequest) (Decision, error)
}

// AllowAll permits every action: the authorizer of an open
// (--unauthenticated, no tokens, no policy) server.
type AllowAll struct{}

// Authorize implements Authorizer.
func (AllowAll) Authorize(context.Context, AuthzRequest) (Decision, error) {
	return Decision{Allowed: true, RuleID: "open"}, nil
}

// ReadOnly permits ActionRead and denies everything else, graph_list
// included: the "default deny" state of a server with bearer tokens and no
// policy (spec/surfaces.md §2.1), and the default of a graph no policy
// bundle is bound to.
type ReadOnly struct{}

// Authorize implements Authorizer.
func (ReadOnly) Authorize(_ context.Context, req AuthzRequest) (Decision, error) {
	if req.Action == ActionRead {
		return Decision{Allowed: true, RuleID: "default-read"}, nil
	}
	return Decision{Allowed: false, RuleID: "default-deny", Reason: "no policy grants " + string(req.Action) + " (tokens without a policy permit only read)"}, nil
}

// Bundles composes the authorizer of a policy-enabled server from
// per-graph authorizers (one compiled bundle per graph) and an optional
// server-scoped one, with the defaults of spec/surfaces.md §2.1: a graph
// without a bundle is read-only, and graph_list is denied unless the server
// bundle grants it.
type Bundles struct {
	Graphs map[string]Authorizer
	Server Authorizer
}

// Authorize implements Authorizer.
func (b Bundles) Authorize(ctx context.Context, req AuthzRequest) (Decision, error) {
	if req.Action == ActionGraphList {
		if b.Server == nil {
			return Decision{Allowed: false, RuleID: "default-deny", Reason: "no cluster policy grants graph_list"}, nil
		}
		return b.Server.Authorize(ctx, req)
	}
	if a, ok := b.Graphs[req.Graph]; ok && a != nil {
		return a.Authorize(ctx, req)
	}
	return ReadOnly{}.Authorize(ctx, req)
}
