package cluster

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Change actions.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionDelete = "delete"
)

// Dispositions: what apply will do with a change.
const (
	// DispositionApplied: apply executes it.
	DispositionApplied = "applied"
	// DispositionDerived: follows from other changes, nothing to execute.
	DispositionDerived = "derived"
	// DispositionDeferred: a change this build cannot execute (an existing
	// graph's schema migration); apply leaves it and reports converged=false.
	DispositionDeferred = "deferred"
	// DispositionBlocked: gated by a missing approval or dependency (Reason).
	DispositionBlocked = "blocked"
)

// Change is one difference between desired and applied state.
type Change struct {
	Resource      string `json:"resource"`
	Action        string `json:"action"`
	Disposition   string `json:"disposition"`
	Reason        string `json:"reason,omitempty"`
	BindingChange bool   `json:"binding_change,omitempty"`
	FromDigest    string `json:"from_digest,omitempty"`
	ToDigest      string `json:"to_digest,omitempty"`
	// Adopt marks a graph create whose root already holds a graph with the
	// desired schema (e.g. a create whose state write was lost): apply
	// records it instead of initializing it again.
	Adopt bool `json:"adopt,omitempty"`
}

// resourceGraph returns the graph id a graph-subtree address belongs to.
func resourceGraph(addr string) (string, bool) {
	switch {
	case strings.HasPrefix(addr, "graph."):
		return strings.TrimPrefix(addr, "graph."), true
	case strings.HasPrefix(addr, "schema."):
		return strings.TrimPrefix(addr, "schema."), true
	case strings.HasPrefix(addr, "query."):
		rest := strings.TrimPrefix(addr, "query.")
		if i := strings.IndexByte(rest, '.'); i > 0 {
			return rest[:i], true
		}
	}
	return "", false
}

// kindOrder sorts changes: providers, graphs, schemas, queries, policies.
func kindOrder(addr string) int {
	for i, p := range []string{"provider.", "graph.", "schema.", "query.", "policy."} {
		if strings.HasPrefix(addr, p) {
			return i
		}
	}
	return 9
}

// liveGraph is what the plan sees at a graph root.
type liveGraph struct {
	exists       bool
	schemaDigest string
	commitID     string
	err          error
}

// errStopList ends a listing early.
var errStopList = errors.New("stop")

// observeGraph looks at graph id's root under the cluster store: no object
// at all is an absent graph (on object storage there is no directory to
// stat); objects that do not open as a graph are a partial root.
func observeGraph(ctx context.Context, st storage.Store, id, uri string, o omnigraph.Options) liveGraph {
	any := false
	err := st.List(ctx, graphPrefix(id), "", func(storage.Info) error { any = true; return errStopList })
	if err != nil && !errors.Is(err, errStopList) {
		return liveGraph{exists: true, err: err}
	}
	if !any {
		return liveGraph{}
	}
	g, err := omnigraph.Open(ctx, uri, o)
	if err != nil {
		return liveGraph{exists: true, err: err}
	}
	src, err := g.SchemaSource(ctx, omnigraph.Target{Branch: "main"})
	if err != nil {
		return liveGraph{exists: true, err: err}
	}
	lg := liveGraph{exists: true, schemaDigest: digest([]byte(src))}
	if log, err := g.Log(ctx, "main", 1); err == nil && len(log) > 0 {
		lg.commitID = log[0].ID
	}
	return lg
}

// computePlan diffs desired against the ledger and decides dispositions.
func computePlan(ctx context.Context, d *Desired, l *ledger, st storage.Store, o Options) ([]Change, []string, []Diagnostic) {
	applied := l.state.AppliedRevision.Resources
	var changes []Change
	for addr, want := range d.Resources {
		have, ok := applied[addr]
		switch {
		case !ok:
			changes = append(changes, Change{Resource: addr, Action: ActionCreate, ToDigest: want.Digest})
		case !have.equal(want):
			c := Change{Resource: addr, Action: ActionUpdate, FromDigest: have.Digest, ToDigest: want.Digest}
			c.BindingChange = have.Digest == want.Digest
			changes = append(changes, c)
		}
	}
	for addr, have := range applied {
		if _, ok := d.Resources[addr]; !ok {
			changes = append(changes, Change{Resource: addr, Action: ActionDelete, FromDigest: have.Digest})
		}
	}
	sort.Slice(changes, func(i, j int) bool {
		a, b := changes[i], changes[j]
		if kindOrder(a.Resource) != kindOrder(b.Resource) {
			return kindOrder(a.Resource) < kindOrder(b.Resource)
		}
		return a.Resource < b.Resource
	})

	var diags []Diagnostic
	var approvals []string
	approvalsByRes := validApprovals(ctx, st, d, l, &diags)
	pending := pendingRecoveries(ctx, st)
	// graphOK: the graph will exist with its desired schema after apply.
	graphOK := map[string]bool{}
	for id := range d.Graphs {
		_, inState := applied[graphAddr(id)]
		_, schemaInState := applied[schemaAddr(id)]
		graphOK[id] = inState && schemaInState
	}
	live := map[string]liveGraph{}
	observe := func(id string) liveGraph {
		if lg, ok := live[id]; ok {
			return lg
		}
		lg := observeGraph(ctx, st, id, d.Graphs[id].URI, o.GraphOptions)
		live[id] = lg
		return lg
	}
	deleting := map[string]string{} // graph id → disposition of its delete
	for i := range changes {
		c := &changes[i]
		id, _ := resourceGraph(c.Resource)
		switch {
		case strings.HasPrefix(c.Resource, "graph.") && c.Action == ActionCreate:
			if pending[id] {
				c.Disposition, c.Reason = DispositionBlocked, CodeRecoveryPending
				break
			}
			lg := observe(id)
			want := d.Resources[schemaAddr(id)].Digest
			switch {
			case !lg.exists:
				c.Disposition = DispositionApplied
				graphOK[id] = true
			case lg.err != nil:
				c.Disposition, c.Reason = DispositionBlocked, CodeGraphIncomplete
				diags = append(diags, errorf(CodeGraphIncomplete, c.Resource, "%s exists but does not open (%v): remove it and re-run apply", d.Graphs[id].URI, lg.err))
			case lg.schemaDigest == want:
				c.Disposition, c.Adopt = DispositionApplied, true
				graphOK[id] = true
			default:
				c.Disposition, c.Reason = DispositionBlocked, CodeSchemaDrift
				diags = append(diags, errorf(CodeSchemaDrift, c.Resource, "%s already holds a graph with a different schema; point the config at its schema or remove the root", d.Graphs[id].URI))
			}
		case strings.HasPrefix(c.Resource, "graph.") && c.Action == ActionUpdate:
			c.Disposition = DispositionApplied
		case strings.HasPrefix(c.Resource, "graph.") && c.Action == ActionDelete:
			if a, ok := approvalsByRes[c.Resource]; ok {
				c.Disposition, c.Reason = DispositionApplied, "approved by "+a.Actor
			} else {
				c.Disposition, c.Reason = DispositionBlocked, CodeApprovalRequired
				approvals = append(approvals, c.Resource)
			}
			deleting[id] = c.Disposition
		case strings.HasPrefix(c.Resource, "schema.") && c.Action != ActionDelete:
			if _, creating := d.Graphs[id]; creating && graphOK[id] && !graphInState(applied, id) {
				c.Disposition = DispositionApplied // created with the graph
				break
			}
			lg := observe(id)
			switch {
			case lg.exists && lg.err == nil && lg.schemaDigest == c.ToDigest:
				c.Disposition = DispositionApplied // the live graph already has it: record only
				graphOK[id] = true
			case !lg.exists:
				c.Disposition, c.Reason = DispositionBlocked, CodeGraphMissing
			default:
				c.Disposition, c.Reason = DispositionDeferred, "schema migration of an existing graph is not supported by this build; the graph keeps its current schema"
				diags = append(diags, warnf(CodeUnsupportedChange, c.Resource, "%s", c.Reason))
				graphOK[id] = false
			}
		}
	}
	// Second pass: dependents of graphs, and subtree deletes.
	for i := range changes {
		c := &changes[i]
		if c.Disposition != "" {
			continue
		}
		id, inGraph := resourceGraph(c.Resource)
		switch {
		case inGraph && c.Action == ActionDelete && deleting[id] != "":
			c.Disposition = deleting[id]
			if c.Disposition == DispositionBlocked {
				c.Reason = CodeApprovalRequired
			}
		case strings.HasPrefix(c.Resource, "query.") && c.Action != ActionDelete:
			if graphOK[id] {
				c.Disposition = DispositionApplied
			} else {
				c.Disposition, c.Reason = DispositionBlocked, CodeDependencyBlocked+": graph."+id+" or its schema is not applied"
			}
		case strings.HasPrefix(c.Resource, "policy.") && c.Action != ActionDelete:
			c.Disposition = DispositionApplied
			for _, scope := range d.Resources[c.Resource].AppliesTo {
				if gid, ok := strings.CutPrefix(scope, "graph."); ok && !graphOK[gid] {
					c.Disposition, c.Reason = DispositionBlocked, CodeDependencyBlocked+": "+scope+" is not applied"
				}
			}
		default:
			c.Disposition = DispositionApplied
		}
	}
	for _, c := range changes {
		if c.Disposition == DispositionBlocked && strings.HasPrefix(c.Reason, CodeDependencyBlocked) {
			diags = append(diags, warnf(CodeDependencyBlocked, c.Resource, "%s", c.Reason))
		}
	}
	return changes, approvals, diags
}

func graphInState(applied map[string]ResourceState, id string) bool {
	_, ok := applied[graphAddr(id)]
	return ok
}

// converged reports whether executing the applied changes reaches the
// desired state.
func converged(changes []Change) bool {
	for _, c := range changes {
		if c.Disposition != DispositionApplied && c.Disposition != DispositionDerived {
			return false
		}
	}
	return true
}
