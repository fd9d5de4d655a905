package server

import (
	"context"
	"log/slog"

	"github.com/omnigraph-go/omnigraph"
)

// engineAuthorizer is the engine-layer check of spec/surfaces.md §3.3
// (defense in depth): the server installs it on every graph handle it
// serves unless the server is open, so every engine writer acting for an
// actor (mutate, load, schema apply, branch create/delete/merge) asks the
// server's Authorizer again at its entry, with the same graph and scope
// mapping as the route asked. A route that forgot its own check still
// cannot write: the engine refuses with *omnigraph.ForbiddenError (403).
type engineAuthorizer struct {
	s     *Server
	graph string
}

// callLogKey carries a request's logger (with its request id, actor and
// graph) to the engine-layer decision log.
type callLogKey struct{}

// AuthorizeWrite implements omnigraph.Authorizer and logs the decision like
// the HTTP layer does, marked layer=engine.
func (e engineAuthorizer) AuthorizeWrite(ctx context.Context, a omnigraph.WriteAccess) (omnigraph.Decision, error) {
	req := AuthzRequest{Actor: a.Actor, Action: Action(a.Action), Graph: e.graph, Branch: a.Branch, TargetBranch: a.TargetBranch, Engine: true}
	log, _ := ctx.Value(callLogKey{}).(*slog.Logger)
	if log == nil {
		log = e.s.log.With("graph", e.graph, "actor", a.Actor)
	}
	d, err := e.s.authz.Authorize(ctx, req)
	if err != nil {
		log.Error("authorization failed", "layer", "engine", "action", string(req.Action), "branch", req.Branch, "target_branch", req.TargetBranch, "error", err.Error())
		return omnigraph.Decision{}, err
	}
	log.Info("authorization", "layer", "engine", "action", string(req.Action), "branch", req.Branch,
		"target_branch", req.TargetBranch, "allowed", d.Allowed, "rule_id", d.RuleID)
	return d, nil
}
