package exec

import (
	"context"
	"fmt"
	"maps"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// MutateOptions configure one mutation.
type MutateOptions struct {
	Actor string
	// IfCommit, if set, makes the write conditional: it fails with
	// *PreconditionFailedError unless the branch head is this commit id,
	// both before any effect and at the publish CAS. Never retried.
	IfCommit string
	// Source, if set, is the .gq source the plan was compiled from (the
	// plan is its query named plan.Name). It lets the write be handed to
	// another process of this machine that holds the branch's turn, which
	// compiles and runs it with its own writes (forward.go); without it the
	// write always runs here.
	Source string
}

// MutationResult is the receipt of a mutation.
type MutationResult struct {
	AffectedNodes, AffectedEdges int64
	Commit                       *CommitInfo // nil when nothing changed
	// Warnings report what failed beside the mutation, which itself
	// succeeded (an automatic compaction); nil when nothing did.
	Warnings []string
}

// Mutate runs a mutation plan on a branch as one atomic commit. Statements
// execute in order over a staging overlay of the head (later statements see
// earlier ones' rows), the complete change is validated like a load, and
// only then written and published. A mutation that affects nothing publishes
// nothing.
//
// Insert-only mutations that lose the publish race re-run against the new
// head. Mutations with an update or delete (strict) re-run too, and rebase
// if every statement matched exactly the same committed rows with the same
// images; otherwise they fail with *ReadSetChangedError naming the first
// row that changed (row-level read sets, readset.go). Writes queued in one
// handle are group-committed (publish.go): each runs on top of the ones
// ahead of it, so it sees them and never conflicts with them.
func (g *Graph) Mutate(ctx context.Context, branch string, plan *query.Plan, params map[string]any, o MutateOptions) (*MutationResult, error) {
	if plan == nil || !plan.IsMutation() {
		return nil, ErrNotMutation
	}
	branch = branchOr(branch)
	if err := authorize(ctx, Access{Actor: o.Actor, Action: ActionChange, Branch: branch}); err != nil {
		return nil, err
	}
	var res MutationResult
	req := g.mutationRequest(branch, o.IfCommit, o.Actor, plan.Name, func(*schema.Catalog) (*query.Plan, error) { return plan, nil }, params, &res)
	if o.Source != "" && o.IfCommit == "" {
		req.forward = forwardSpecOf(plan, o.Source, params, o.Actor)
	}
	c, out, err := g.runWrite(ctx, req)
	if err != nil {
		return nil, err
	}
	if out.remote != nil {
		// Another process ran it (forward.go): its counts came back.
		res.AffectedNodes, res.AffectedEdges = out.remote.AffectedNodes, out.remote.AffectedEdges
	}
	if c != nil {
		ci := commitInfo(c, branch)
		res.Commit = &ci
	}
	res.Warnings = out.warnings
	return &res, nil
}

// mutationRequest is the write of the mutation named name: planOf gives
// its plan for the catalog of the snapshot it is staged on (the caller's
// compiled plan; for a write handed over by another process, its source
// compiled there), and each staging leaves its counts in res.
func (g *Graph) mutationRequest(branch, ifCommit, actor, name string, planOf func(*schema.Catalog) (*query.Plan, error), params map[string]any, res *MutationResult) writeRequest {
	return writeRequest{
		branch: branch, ifCommit: ifCommit, kind: commit.KindMutate, actor: actor, message: "mutate " + name,
		prepare: func(ctx context.Context, snap *snapshot.Snapshot) (*prepared, error) {
			plan, err := planOf(snap.Catalog())
			if err != nil {
				return nil, err
			}
			strict := false
			for _, m := range plan.Mutations {
				if m.Kind != query.MutInsertNode && m.Kind != query.MutInsertEdge {
					strict = true
				}
			}
			x := &mutExec{snap: snap, cat: snap.Catalog(), vals: newMutValues(plan, params, g.now().UTC()),
				nodes: map[string]*mutTable{}, edges: map[string]*mutTable{}}
			if err := x.run(ctx, plan); err != nil {
				return nil, err
			}
			*res = MutationResult{AffectedNodes: x.affectedNodes, AffectedEdges: x.affectedEdges}
			if x.affectedNodes == 0 && x.affectedEdges == 0 {
				// Still carries its reads: a rerun after a lost race that
				// now matches nothing is a conflict, not a silent no-op.
				return &prepared{noop: true, strict: strict, rows: x.reads}, nil
			}
			d, err := x.delta(ctx)
			if err != nil {
				return nil, err
			}
			if err := g.fillDeltaEmbeddings(ctx, snap.Catalog(), d); err != nil {
				return nil, err
			}
			if err := Validate(ctx, snap.Catalog(), snap, d); err != nil {
				return nil, err
			}
			return &prepared{delta: d, strict: strict, rows: x.reads}, nil
		},
	}
}

// mutTable is the staging overlay of one type: pending row images shadow
// committed rows with the same id; deleted hides committed or pending rows.
type mutTable struct {
	pending map[string]Row
	order   []string // pending ids, first-staged order
	deleted map[string]bool
}

func (t *mutTable) put(r Row) {
	if _, ok := t.pending[r.ID]; !ok {
		t.order = append(t.order, r.ID)
	}
	t.pending[r.ID] = r
	delete(t.deleted, r.ID)
}

type mutExec struct {
	// noKeyPath turns off the key lookup of matchingNodes (tests compare
	// it with the full walk).
	noKeyPath bool

	snap  *snapshot.Snapshot
	cat   *schema.Catalog
	vals  *mutValues
	nodes map[string]*mutTable
	edges map[string]*mutTable

	affectedNodes, affectedEdges int64
	// reads records, per reading statement, the committed rows it matched
	// (the row-level read set, readset.go).
	reads []*rowRead
}

func (x *mutExec) table(m map[string]*mutTable, name string) *mutTable {
	t := m[name]
	if t == nil {
		t = &mutTable{pending: map[string]Row{}, deleted: map[string]bool{}}
		m[name] = t
	}
	return t
}

func (x *mutExec) run(ctx context.Context, plan *query.Plan) error {
	for _, op := range plan.Mutations {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		switch op.Kind {
		case query.MutInsertNode:
			err = x.insertNode(op)
		case query.MutInsertEdge:
			err = x.insertEdge(op)
		case query.MutUpdateNode:
			err = x.updateNode(ctx, op)
		case query.MutDeleteNode:
			err = x.deleteNode(ctx, op)
		case query.MutDeleteEdge:
			err = x.deleteEdge(ctx, op)
		default:
			err = fmt.Errorf("exec: unknown mutation kind %v", op.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// nullRow is an insert's row before its assignments: every property null.
func nullRow(props []*schema.Property) map[string]any {
	values := make(map[string]any, len(props))
	for _, p := range props {
		values[p.Name] = nil
	}
	return values
}

// assign evaluates assigns into values (props are the type's, lookup its
// property lookup) and refuses an external blob among them (blobsAllowed).
func (x *mutExec) assign(props []*schema.Property, lookup func(string) (*schema.Property, bool), values map[string]any, assigns []query.Assignment) error {
	for _, a := range assigns {
		p, ok := lookup(a.Prop)
		if !ok {
			return &snapshot.UnknownPropertyError{Prop: a.Prop}
		}
		v, err := x.vals.eval(a.Value, a.Prop, p.Type)
		if err != nil {
			return err
		}
		values[a.Prop] = v
	}
	return blobsAllowed(props, values)
}

func (x *mutExec) insertNode(op *query.MutationOp) error {
	nt, ok := x.cat.Node(op.Type)
	if !ok {
		return &snapshot.UnknownTypeError{Kind: "node", Name: op.Type}
	}
	values := nullRow(nt.Props)
	if err := x.assign(nt.Props, nt.Prop, values, op.Assigns); err != nil {
		return err
	}
	id := ulid.Make().String()
	if len(nt.Key) > 0 {
		for _, k := range nt.Key {
			if values[k] == nil {
				return &ConstraintError{Kind: ConstraintRequired, Type: nt.Name, Prop: k,
					Msg: fmt.Sprintf("insert @key property '%s' cannot contain null", k)}
			}
		}
		var err error
		if id, err = nt.NodeID(values); err != nil {
			return err
		}
	}
	// A keyed insert is an upsert by id: the whole row is replaced.
	x.table(x.nodes, nt.Name).put(Row{ID: id, Values: values})
	x.affectedNodes++
	return nil
}

func (x *mutExec) insertEdge(op *query.MutationOp) error {
	et, ok := x.cat.Edge(op.Type)
	if !ok {
		return &snapshot.UnknownTypeError{Kind: "edge", Name: op.Type}
	}
	str := schema.Type{Kind: schema.KindString}
	var ends [2]string
	for i, o := range []*query.Operand{op.From, op.To} {
		name := [2]string{"from", "to"}[i]
		if o == nil {
			return fmt.Errorf("exec: edge insert missing '%s'", name)
		}
		v, err := x.vals.eval(*o, name, str)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return &ConstraintError{Kind: ConstraintRequired, Type: et.Name, Prop: name,
				Msg: fmt.Sprintf("edge %s '%s' must be a non-null string", et.Name, name)}
		}
		ends[i] = s
	}
	values := nullRow(et.Props)
	if err := x.assign(et.Props, et.Prop, values, op.Assigns); err != nil {
		return err
	}
	x.table(x.edges, et.Name).put(Row{ID: ulid.Make().String(), Src: ends[0], Dst: ends[1], Values: values})
	x.affectedEdges++
	return nil
}

func blobsAllowed(props []*schema.Property, values map[string]any) error {
	for _, p := range props {
		if b, ok := values[p.Name].(value.Blob); ok && b.IsExternal() {
			return &value.Error{Name: p.Name, Reason: "external blob ingest is denied", Msg: fmt.Sprintf("external blob URI '%s' for property '%s' is not allowed (external blob ingest is denied)", b.URI, p.Name)}
		}
	}
	return nil
}

// matcher evaluates a where predicate against one row's column value.
type matcher struct {
	op    query.CmpOp
	right any
}

func (x *mutExec) matcher(w *query.Pred, t schema.Type) (matcher, error) {
	v, err := x.vals.eval(w.Right, w.Left.Prop, t)
	if err != nil {
		return matcher{}, err
	}
	return matcher{op: w.Op, right: v}, nil
}

// match applies SQL-like semantics: a null on either side never matches.
func (m matcher) match(v any) bool {
	if v == nil || m.right == nil {
		return false
	}
	return m.op.Holds(value.Compare(v, m.right))
}

// liveNodes calls fn for each live row of a node type in the overlay:
// committed rows not shadowed or deleted, then pending rows.
func (x *mutExec) liveNodes(ctx context.Context, nt *schema.NodeType, fn func(id string, committed bool, get func(string) any, row func() Row)) error {
	ct, err := x.snap.Nodes(ctx, nt.Name)
	if err != nil {
		return err
	}
	x.table(x.nodes, nt.Name).live(ct.IDs, ct.Alive, func(i int, id string) {
		fn(id, true, func(p string) any { return ct.Value(i, p) }, func() Row {
			vals := make(map[string]any, len(nt.Props))
			for _, p := range nt.Props {
				vals[p.Name] = ct.Value(i, p.Name)
			}
			return Row{ID: id, Values: vals}
		})
	}, func(id string, r Row) {
		fn(id, false, func(p string) any { return r.Values[p] }, func() Row { return r })
	})
	return nil
}

// liveEdges is liveNodes for an edge type.
func (x *mutExec) liveEdges(ctx context.Context, et *schema.EdgeType, fn func(id, src, dst string, committed bool, get func(string) any)) error {
	ct, err := x.snap.Edges(ctx, et.Name)
	if err != nil {
		return err
	}
	x.table(x.edges, et.Name).live(ct.IDs, ct.Alive, func(i int, id string) {
		fn(id, ct.Src[i], ct.Dst[i], true, func(p string) any { return ct.Value(i, p) })
	}, func(id string, r Row) {
		fn(id, r.Src, r.Dst, false, func(p string) any { return r.Values[p] })
	})
	return nil
}

// live calls committed for each row i (id ids[i]) of the committed image
// that is alive and neither shadowed nor deleted by the overlay, then
// pending for each pending row not deleted, in staging order.
func (t *mutTable) live(ids []string, alive func(int) bool, committed func(i int, id string), pending func(id string, r Row)) {
	for i, id := range ids {
		if _, shadowed := t.pending[id]; shadowed || t.deleted[id] || !alive(i) {
			continue
		}
		committed(i, id)
	}
	for _, id := range t.order {
		r, ok := t.pending[id]
		if !ok || t.deleted[id] {
			continue
		}
		pending(id, r)
	}
}

// nodeWhere resolves a node mutation's type, the property its where
// predicate reads and the predicate's matcher.
func (x *mutExec) nodeWhere(op *query.MutationOp) (*schema.NodeType, *schema.Property, matcher, error) {
	nt, ok := x.cat.Node(op.Type)
	if !ok {
		return nil, nil, matcher{}, &snapshot.UnknownTypeError{Kind: "node", Name: op.Type}
	}
	p, ok := nt.Prop(op.Where.Left.Prop)
	if !ok {
		return nil, nil, matcher{}, &snapshot.UnknownPropertyError{Type: nt.Name, Prop: op.Where.Left.Prop}
	}
	m, err := x.matcher(op.Where, p.Type)
	return nt, p, m, err
}

func (x *mutExec) updateNode(ctx context.Context, op *query.MutationOp) error {
	nt, p, m, err := x.nodeWhere(op)
	if err != nil {
		return err
	}
	for _, a := range op.Assigns {
		for _, k := range nt.Key {
			if a.Prop == k {
				return &ConstraintError{Kind: ConstraintRequired, Type: nt.Name, Prop: k,
					Msg: fmt.Sprintf("cannot update @key property '%s' — delete and re-insert instead", k)}
			}
		}
	}
	// Evaluate assignments once: they do not depend on the row.
	set := map[string]any{}
	if err := x.assign(nt.Props, nt.Prop, set, op.Assigns); err != nil {
		return err
	}
	var updated []Row
	rd := x.read(snapshot.NodeKey(nt.Name))
	err = x.matchingNodes(ctx, nt, p, m, func(id string, committed bool, row func() Row) {
		r := row()
		if committed {
			rd.add(id, nodeImage(nt, r))
		}
		vals := maps.Clone(r.Values)
		maps.Copy(vals, set)
		updated = append(updated, Row{ID: id, Values: vals})
	})
	if err != nil {
		return err
	}
	t := x.table(x.nodes, nt.Name)
	for _, r := range updated {
		t.put(r)
	}
	x.affectedNodes += int64(len(updated))
	return nil
}

func (x *mutExec) deleteNode(ctx context.Context, op *query.MutationOp) error {
	nt, p, m, err := x.nodeWhere(op)
	if err != nil {
		return err
	}
	gone := map[string]bool{}
	rd := x.read(snapshot.NodeKey(nt.Name))
	err = x.matchingNodes(ctx, nt, p, m, func(id string, committed bool, row func() Row) {
		gone[id] = true
		if committed {
			rd.add(id, nodeImage(nt, row()))
		}
	})
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return nil
	}
	t := x.table(x.nodes, nt.Name)
	for id := range gone {
		t.deleted[id] = true
	}
	x.affectedNodes += int64(len(gone))
	// Cascade to every edge incident to a deleted node.
	for _, name := range op.Cascade {
		et, ok := x.cat.Edge(name)
		if !ok {
			continue
		}
		err := x.deleteEdgesWhere(ctx, et, func(src, dst string, _ func(string) any) bool {
			return (et.From == nt.Name && gone[src]) || (et.To == nt.Name && gone[dst])
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *mutExec) deleteEdge(ctx context.Context, op *query.MutationOp) error {
	et, ok := x.cat.Edge(op.Type)
	if !ok {
		return &snapshot.UnknownTypeError{Kind: "edge", Name: op.Type}
	}
	col := op.Where.Left.Prop
	t := schema.Type{Kind: schema.KindString}
	if col != "from" && col != "to" {
		p, ok := et.Prop(col)
		if !ok {
			return &snapshot.UnknownPropertyError{Type: et.Name, Prop: col}
		}
		t = p.Type
	}
	m, err := x.matcher(op.Where, t)
	if err != nil {
		return err
	}
	return x.deleteEdgesWhere(ctx, et, func(src, dst string, get func(string) any) bool {
		switch col {
		case "from":
			return m.match(src)
		case "to":
			return m.match(dst)
		}
		return m.match(get(col))
	})
}

// deleteEdgesWhere deletes the live edges of et that del selects, keeping
// the read image of each committed one (its conflict check at publish).
func (x *mutExec) deleteEdgesWhere(ctx context.Context, et *schema.EdgeType, del func(src, dst string, get func(string) any) bool) error {
	var hit []string
	rd := x.read(snapshot.EdgeKey(et.Name))
	err := x.liveEdges(ctx, et, func(id, src, dst string, committed bool, get func(string) any) {
		if del(src, dst, get) {
			hit = append(hit, id)
			if committed {
				rd.add(id, edgeImage(et, src, dst, get))
			}
		}
	})
	if err != nil {
		return err
	}
	x.deleteEdges(et.Name, hit)
	return nil
}

// deleteEdges marks live edges of one type deleted in the overlay and
// counts them (callers pass only edges liveEdges still reported, so an edge
// hit by a cascade and an explicit delete is counted once).
func (x *mutExec) deleteEdges(typ string, ids []string) {
	t := x.table(x.edges, typ)
	for _, id := range ids {
		t.deleted[id] = true
	}
	x.affectedEdges += int64(len(ids))
}

// delta turns the overlay into a validated-ready change set: pending rows
// become upserts, deleted committed rows become deletes.
func (x *mutExec) delta(ctx context.Context) (*Delta, error) {
	d := NewDelta()
	committed := x.snap
	build := func(t *mutTable, exists func(id string) (bool, error)) (*TypeDelta, error) {
		td := &TypeDelta{}
		for _, id := range t.order {
			if r, ok := t.pending[id]; ok && !t.deleted[id] {
				td.Upserts = append(td.Upserts, r)
			}
		}
		for _, id := range sortedTableKeys(t.deleted) {
			ok, err := exists(id)
			if err != nil {
				return nil, err
			}
			if ok {
				td.Deletes = append(td.Deletes, id)
			}
		}
		return td, nil
	}
	for name, t := range x.nodes {
		td, err := build(t, func(id string) (bool, error) { return committed.NodeExists(ctx, name, id) })
		if err != nil {
			return nil, err
		}
		if len(td.Upserts)+len(td.Deletes) > 0 {
			d.Nodes[name] = td
		}
	}
	for name, t := range x.edges {
		td, err := build(t, func(id string) (bool, error) {
			_, _, ok, err := committed.EdgeEnds(ctx, name, id)
			return ok, err
		})
		if err != nil {
			return nil, err
		}
		if len(td.Upserts)+len(td.Deletes) > 0 {
			d.Edges[name] = td
		}
	}
	return d, nil
}
