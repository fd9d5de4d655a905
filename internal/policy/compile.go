package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/ast"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
)

// ServerResource is the resource id graph_list is checked against.
const ServerResource = "root"

// Bundle is a policy file compiled to Cedar for one resource: a graph id
// (graph-scoped bundles) or the server (server-scoped bundles). It is
// immutable and safe for concurrent use.
type Bundle struct {
	name      string
	resource  types.EntityUID
	kind      Kind
	file      *File
	policies  *cedar.PolicySet
	groupsOf  map[string][]string // actor → groups (sorted)
	protected map[string]bool
	cedarText []byte
}

func uid(typ, id string) types.EntityUID {
	return types.NewEntityUID(types.EntityType(Namespace+"::"+typ), types.String(id))
}

// CompileGraph compiles a graph-scoped (or empty) file for graph graphID.
func CompileGraph(name string, f *File, graphID string) (*Bundle, error) {
	if k := f.Kind(); k == KindServer {
		return nil, &FileError{Name: name, Problems: []Problem{{Message: "a server-scoped bundle (graph_list) cannot be bound to graph " + graphID}}}
	}
	return compile(name, f, uid("Graph", graphID), KindGraph)
}

// CompileServer compiles a server-scoped (or empty) file for Server::"root".
func CompileServer(name string, f *File) (*Bundle, error) {
	if k := f.Kind(); k == KindGraph {
		return nil, &FileError{Name: name, Problems: []Problem{{Message: "a graph-scoped bundle cannot be bound to the cluster (only graph_list rules may be)"}}}
	}
	return compile(name, f, uid("Server", ServerResource), KindServer)
}

func compile(name string, f *File, resource types.EntityUID, kind Kind) (*Bundle, error) {
	v, err := newValidator()
	if err != nil {
		return nil, err
	}
	b := &Bundle{
		name: name, resource: resource, kind: kind, file: f,
		policies:  cedar.NewPolicySet(),
		groupsOf:  map[string][]string{},
		protected: map[string]bool{},
	}
	for g, members := range f.Groups {
		for _, m := range members {
			b.groupsOf[m] = append(b.groupsOf[m], g)
		}
	}
	for _, gs := range b.groupsOf {
		sort.Strings(gs)
	}
	for _, p := range f.ProtectedBranches {
		b.protected[p] = true
	}
	var text strings.Builder
	var probs []Problem
	for _, r := range f.Rules {
		for _, act := range r.Allow.Actions {
			p := ast.Permit().
				PrincipalIn(uid("Group", r.Allow.Actors.Group)).
				ActionEq(uid("Action", string(act))).
				ResourceEq(resource)
			if cond, ok := scopeCondition(r.Allow); ok {
				p = p.When(cond)
			}
			id := cedar.PolicyID(r.ID + ":" + string(act))
			if err := v.Policy(string(id), (*xast.Policy)(p)); err != nil {
				probs = append(probs, Problem{Path: "rules." + r.ID, Message: fmt.Sprintf("Cedar strict validation of %s: %v", id, err)})
				continue
			}
			b.policies.Add(id, cedar.NewPolicyFromAST(p))
			fmt.Fprintf(&text, "// %s\n%s\n\n", id, p.MarshalCedar())
		}
	}
	if len(probs) > 0 {
		return nil, &FileError{Name: name, Problems: probs}
	}
	b.cedarText = []byte(text.String())
	return b, nil
}

// scopeCondition is the when clause of a rule's scope (spec/surfaces.md
// §3.2): any → true; protected → has && is_protected; unprotected → has &&
// is_protected == false. No scope means no clause.
func scopeCondition(a *Allow) (ast.Node, bool) {
	scope, prefix := a.BranchScope, ""
	if a.TargetBranchScope != "" {
		scope, prefix = a.TargetBranchScope, "target_"
	}
	ctx := ast.Context()
	has := ctx.Access(types.String("has_" + prefix + "branch"))
	prot := ctx.Access(types.String(prefix + "branch_is_protected"))
	switch scope {
	case ScopeAny:
		return ast.True(), true
	case ScopeProtected:
		return has.And(prot), true
	case ScopeUnprotected:
		return has.And(prot.Equal(ast.False())), true
	}
	return ast.Node{}, false
}

// Name returns the bundle name (the cluster.yaml policies key).
func (b *Bundle) Name() string { return b.name }

// Kind returns KindGraph or KindServer: what the bundle was compiled for.
func (b *Bundle) Kind() Kind { return b.kind }

// Resource returns the Cedar resource the bundle was compiled for, e.g.
// Omnigraph::Graph::"knowledge".
func (b *Bundle) Resource() string { return b.resource.String() }

// File returns the parsed policy file.
func (b *Bundle) File() *File { return b.file }

// Cedar returns the generated Cedar policies, one per (rule, action).
func (b *Bundle) Cedar() []byte { return b.cedarText }

// PolicyCount is the number of Cedar policies in the bundle.
func (b *Bundle) PolicyCount() int {
	n := 0
	for range b.policies.All() {
		n++
	}
	return n
}
