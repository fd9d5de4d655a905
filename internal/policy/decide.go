package policy

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// ErrEvaluation marks a Cedar evaluation error (HTTP 500). It cannot happen
// for bundles this package compiled, whose policies are strictly validated,
// but Decide reports it rather than deciding on a partial result.
var ErrEvaluation = errors.New("policy evaluation failed")

// Request is one authorization question. An empty Branch or TargetBranch
// means the action has no such branch (has_branch = false).
type Request struct {
	Actor        string
	Action       Action
	Branch       string
	TargetBranch string
}

// Decision is the answer, with the rule that determined it.
type Decision struct {
	Allowed bool
	// RuleID is the smallest rule id among the policies that permitted the
	// request; empty when denied.
	RuleID string
	// Reason explains a denial (naming action, branch, target branch and
	// actor); empty when allowed.
	Reason string
}

// Decide answers r against the bundle.
func (b *Bundle) Decide(r Request) (Decision, error) {
	if !r.Action.Valid() {
		return Decision{}, fmt.Errorf("%w: unknown action %q", ErrInvalid, r.Action)
	}
	groups, known := b.groupsOf[r.Actor]
	if !known {
		return Decision{Reason: "unknown actor: " + describe(r)}, nil
	}
	principal := uid("Actor", r.Actor)
	parents := make([]types.EntityUID, len(groups))
	ents := cedar.EntityMap{}
	for i, g := range groups {
		parents[i] = uid("Group", g)
		ents[parents[i]] = cedar.Entity{UID: parents[i]}
	}
	ents[principal] = cedar.Entity{UID: principal, Parents: cedar.NewEntityUIDSet(parents...)}
	ents[b.resource] = cedar.Entity{UID: b.resource}
	req := cedar.Request{
		Principal: principal,
		Action:    uid("Action", string(r.Action)),
		Resource:  b.resource,
		Context: cedar.NewRecord(cedar.RecordMap{
			"has_branch":                 cedar.Boolean(r.Branch != ""),
			"branch":                     cedar.String(r.Branch),
			"has_target_branch":          cedar.Boolean(r.TargetBranch != ""),
			"target_branch":              cedar.String(r.TargetBranch),
			"branch_is_protected":        cedar.Boolean(r.Branch != "" && b.protected[r.Branch]),
			"target_branch_is_protected": cedar.Boolean(r.TargetBranch != "" && b.protected[r.TargetBranch]),
		}),
	}
	dec, diag := b.policies.IsAuthorized(ents, req)
	if len(diag.Errors) > 0 {
		msgs := make([]string, len(diag.Errors))
		for i, e := range diag.Errors {
			msgs[i] = e.String()
		}
		return Decision{}, fmt.Errorf("%w: %s", ErrEvaluation, strings.Join(msgs, "; "))
	}
	if dec != cedar.Allow {
		return Decision{Reason: "denied: " + describe(r)}, nil
	}
	var rules []string
	for _, reason := range diag.Reasons {
		id := string(reason.PolicyID)
		if i := strings.LastIndexByte(id, ':'); i >= 0 {
			id = id[:i]
		}
		rules = append(rules, id)
	}
	sort.Strings(rules)
	d := Decision{Allowed: true}
	if len(rules) > 0 {
		d.RuleID = rules[0]
	}
	return d, nil
}

// describe names the action, branch, target branch and actor of a request.
func describe(r Request) string {
	branch, target := "none", "none"
	if r.Branch != "" {
		branch = "'" + r.Branch + "'"
	}
	if r.TargetBranch != "" {
		target = "'" + r.TargetBranch + "'"
	}
	return fmt.Sprintf("action '%s' on branch %s (target branch %s) is not permitted for actor '%s'", r.Action, branch, target, r.Actor)
}
