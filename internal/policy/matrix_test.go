package policy

import (
	"fmt"
	"strings"
	"testing"
)

// TestPolicyMatrix checks every action × protected/unprotected branch ×
// allowed/denied actor. The bundle grants each scoped action to one group on
// protected branches only and to another on unprotected branches only, and
// unscoped actions to a third; an outsider is in a group with no rules. The
// expected decision is computed from that description, independently of
// Cedar.
func TestPolicyMatrix(t *testing.T) {
	var graph, server strings.Builder
	graph.WriteString("version: 1\ngroups:\n  prot: [act-prot]\n  unprot: [act-unprot]\n  plain: [act-plain]\n  outsiders: [act-out]\nprotected_branches: [main, release]\nrules:\n")
	server.WriteString("version: 1\ngroups:\n  plain: [act-plain]\n  outsiders: [act-out]\nrules:\n")
	for _, a := range Actions() {
		switch {
		case a.ServerScoped():
			fmt.Fprintf(&server, "  - {id: %s-plain, allow: {actors: {group: plain}, actions: [%s]}}\n", a, a)
		case a.BranchScoped():
			fmt.Fprintf(&graph, "  - {id: %s-prot, allow: {actors: {group: prot}, actions: [%s], branch_scope: protected}}\n", a, a)
			fmt.Fprintf(&graph, "  - {id: %s-unprot, allow: {actors: {group: unprot}, actions: [%s], branch_scope: unprotected}}\n", a, a)
		case a.TargetScoped():
			fmt.Fprintf(&graph, "  - {id: %s-prot, allow: {actors: {group: prot}, actions: [%s], target_branch_scope: protected}}\n", a, a)
			fmt.Fprintf(&graph, "  - {id: %s-unprot, allow: {actors: {group: unprot}, actions: [%s], target_branch_scope: unprotected}}\n", a, a)
		default:
			fmt.Fprintf(&graph, "  - {id: %s-plain, allow: {actors: {group: plain}, actions: [%s]}}\n", a, a)
		}
	}
	gb := graphBundle(t, "graph", graph.String(), "knowledge")
	sf, err := Parse("server", []byte(server.String()))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := CompileServer("server", sf)
	if err != nil {
		t.Fatal(err)
	}
	actors := []string{"act-prot", "act-unprot", "act-plain", "act-out", "act-unknown"}
	n := 0
	for _, a := range Actions() {
		for _, protected := range []bool{true, false} {
			branch := "feature"
			if protected {
				branch = "main"
			}
			for _, actor := range actors {
				req := Request{Actor: actor, Action: a}
				var want bool
				var wantRule string
				switch {
				case a.BranchScoped():
					req.Branch = branch
					want = (actor == "act-prot" && protected) || (actor == "act-unprot" && !protected)
				case a.TargetScoped():
					// The source branch is the other kind, so only the target decides.
					req.TargetBranch = branch
					req.Branch = map[bool]string{true: "feature", false: "main"}[protected]
					want = (actor == "act-prot" && protected) || (actor == "act-unprot" && !protected)
				default:
					// No branch dimension: the branch in the request is ignored.
					req.Branch = branch
					want = actor == "act-plain"
				}
				if want {
					wantRule = fmt.Sprintf("%s-%s", a, map[string]string{"act-prot": "prot", "act-unprot": "unprot", "act-plain": "plain"}[actor])
				}
				b := gb
				if a.ServerScoped() {
					b = sb
				}
				d, err := b.Decide(req)
				if err != nil {
					t.Fatalf("%+v: %v", req, err)
				}
				if d.Allowed != want || d.RuleID != wantRule {
					t.Errorf("%s protected=%v %s: allowed=%v rule=%q, want allowed=%v rule=%q (%s)",
						a, protected, actor, d.Allowed, d.RuleID, want, wantRule, d.Reason)
				}
				if !d.Allowed && !strings.Contains(d.Reason, string(a)) {
					t.Errorf("denial reason %q does not name the action", d.Reason)
				}
				n++
			}
		}
	}
	if n != len(Actions())*2*len(actors) {
		t.Fatalf("ran %d cells", n)
	}
	// A scoped rule never matches a request that has no branch at all.
	d, _ := gb.Decide(Request{Actor: "act-unprot", Action: Read})
	if d.Allowed {
		t.Error("unprotected scope matched a request without a branch")
	}
}
