package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// The three-way merge plan (spec/engine.md §3.3), with cost that follows
// the changed data. Each table is classified by comparing its state key at
// the merge base B, the source head S and the target head T (state keys are
// content addresses, so equal keys mean equal content):
//
//	class   keys                 merged table             rows read
//	same    S == B (or S == T)   T's state, untouched      none
//	source  T == B, S != B       S's state key, adopted    none (unless validated, below)
//	both    S != B, T != B, S≠T  T's state + S's changes   the fragments that differ
//
// A "both" table is diffed B→S and B→T by fragment (diff_table.go) and each
// changed id is resolved by the entity rule; the ids S changed and T did not
// become a Delta applied to T's state with deletion vectors and one new
// fragment, so T's unchanged rows keep their fragments.
//
// Validation. Every side was valid on its own, so the merged graph can only
// break a constraint where the two sides meet. Constraints relate an edge
// table to its endpoint node tables and a table to itself, so the unit is
// the group {edge E, E.From, E.To}. A group needs checking when it holds a
// "both" table that received source changes, or a "source" table together
// with a table the target changed. For those, Validate runs over the target
// snapshot with a delta of exactly what the merge brings to the target:
// the merged changes of "both" tables and the B→S changes of the "source"
// tables involved (closed over groups, so that the validator never consults
// a target-side image of a table whose source side is being adopted). A
// "source" table in no such group is adopted without reading a row.

// Table classes of a merge.
const (
	classSame   = iota // merged table is the target's
	classSource        // merged table is the source's, adopted by key
	classBoth          // both changed: entity-level three-way merge
)

// mergePlan is one attempt's merge of S into T, ready to write.
type mergePlan struct {
	target *snapshot.Snapshot
	adopt  map[string]string // table key → source state key
	write  *Delta            // per "both" table: what S brings to T
	// hide, per "both" table, where the base image of each id in write
	// (updated or deleted by S, untouched by T) was live at the base: T
	// holds it there unless T moved it (writeMerge checks).
	hide      map[string]map[string]fragRow
	conflicts []MergeConflict
}

// planMerge computes the merged tables of S into T over base B and checks
// the result: row conflicts first (all of them), then, only if none, the
// constraints of the merged graph (the first violation).
func (g *Graph) planMerge(ctx context.Context, b, s, t *commit.Commit, target string) (*mergePlan, error) {
	tsnap, err := g.snapshotOf(ctx, t, target)
	if err != nil {
		return nil, err
	}
	ssnap, err := g.snapshotOf(ctx, s, "")
	if err != nil {
		return nil, err
	}
	bsnap, err := g.snapshotOf(ctx, b, "")
	if err != nil {
		return nil, err
	}
	cat := tsnap.Catalog()
	plan := &mergePlan{target: tsnap, adopt: map[string]string{}, write: NewDelta(), hide: map[string]map[string]fragRow{}}
	class := map[string]int{}
	targetChanged := map[string]bool{}
	for _, tk := range snapshot.TableKeys(cat) {
		kb, ks, kt := b.Tables[tk], s.Tables[tk], t.Tables[tk]
		targetChanged[tk] = kt != kb
		switch {
		case ks == kb || ks == kt:
			class[tk] = classSame
		case kt == kb:
			class[tk] = classSource
			plan.adopt[tk] = ks
		default:
			class[tk] = classBoth
			if err := g.mergeTable(ctx, plan, tk, bsnap, ssnap, tsnap); err != nil {
				return nil, err
			}
		}
	}
	if len(plan.conflicts) > 0 {
		return plan, nil
	}
	// A "both" table whose merge brought nothing is the target's table.
	brings := func(tk string) bool {
		kind, name := snapshot.SplitKey(tk)
		td := plan.write.Nodes[name]
		if kind == "edge" {
			td = plan.write.Edges[name]
		}
		return td != nil && (len(td.Upserts) > 0 || len(td.Deletes) > 0)
	}
	for tk, c := range class {
		if c == classBoth && !brings(tk) {
			class[tk] = classSame
		}
	}
	included := mergeValidationSet(cat, class, targetChanged)
	if len(included) == 0 && !slices.ContainsFunc(snapshot.TableKeys(cat), brings) {
		return plan, nil
	}
	vd := NewDelta()
	for name, td := range plan.write.Nodes {
		vd.Nodes[name] = td
	}
	for name, td := range plan.write.Edges {
		vd.Edges[name] = td
	}
	for _, tk := range included {
		kind, name := snapshot.SplitKey(tk)
		props, _ := tableProps(cat, tk)
		stB, err := bsnap.State(ctx, tk)
		if err != nil {
			return nil, err
		}
		stS, err := ssnap.State(ctx, tk)
		if err != nil {
			return nil, err
		}
		diff, _, err := g.tableDiff(ctx, ssnap, tk, props, kind == "edge", stB, stS)
		if err != nil {
			return nil, fmt.Errorf("exec: merge %s: %w", tk, err)
		}
		td := &TypeDelta{}
		for _, id := range sortedTableKeys(diff) {
			if rc := diff[id]; rc.after != nil {
				td.add(*rc.after)
			} else {
				td.Deletes = append(td.Deletes, id)
			}
		}
		if kind == "node" {
			vd.Nodes[name] = td
		} else {
			vd.Edges[name] = td
		}
	}
	if err := Validate(ctx, cat, tsnap, vd); err != nil {
		c, ok := constraintConflict(cat, err)
		if !ok {
			return nil, err
		}
		plan.conflicts = append(plan.conflicts, c)
	}
	return plan, nil
}

// mergeValidationSet returns, in catalog order, the "source" tables whose
// B→S delta must be validated (see the comment at the top of this file).
func mergeValidationSet(cat *schema.Catalog, class map[string]int, targetChanged map[string]bool) []string {
	type group []string
	var groups []group
	for _, et := range cat.Edges {
		groups = append(groups, group{snapshot.EdgeKey(et.Name), snapshot.NodeKey(et.From), snapshot.NodeKey(et.To)})
	}
	in := map[string]bool{}
	var work []string
	add := func(tk string) {
		if class[tk] == classSource && !in[tk] {
			in[tk] = true
			work = append(work, tk)
		}
	}
	for _, g := range groups {
		var both, src, tgt bool
		for _, tk := range g {
			switch {
			case class[tk] == classBoth:
				both = true
			case class[tk] == classSource:
				src = true
			case targetChanged[tk]:
				tgt = true
			}
		}
		if both || (src && tgt) {
			for _, tk := range g {
				add(tk)
			}
		}
	}
	// Close over groups: the validator reads every table grouped with a
	// table in the delta, and must see the source side of adopted ones.
	for len(work) > 0 {
		tk := work[len(work)-1]
		work = work[:len(work)-1]
		for _, g := range groups {
			if slices.Contains(g, tk) {
				for _, other := range g {
					add(other)
				}
			}
		}
	}
	var out []string
	for _, tk := range snapshot.TableKeys(cat) {
		if in[tk] {
			out = append(out, tk)
		}
	}
	return out
}

// mergeTable resolves one table changed on both sides: every id changed on
// either side since the base is kept (target only), taken (source only),
// agreed (both, equal images) or a conflict (both, different images).
func (g *Graph) mergeTable(ctx context.Context, plan *mergePlan, tk string, bsnap, ssnap, tsnap *snapshot.Snapshot) error {
	kind, name := snapshot.SplitKey(tk)
	props, _ := tableProps(tsnap.Catalog(), tk)
	edge := kind == "edge"
	stB, err := bsnap.State(ctx, tk)
	if err != nil {
		return err
	}
	stS, err := ssnap.State(ctx, tk)
	if err != nil {
		return err
	}
	stT, err := tsnap.State(ctx, tk)
	if err != nil {
		return err
	}
	if !sameColumns(stB.Schema(), stS.Schema()) || !sameColumns(stB.Schema(), stT.Schema()) {
		return fmt.Errorf("%w: table %s was rewritten by a schema change since the merge base", ErrMergeSchema, tk)
	}
	dS, _, err := g.tableDiff(ctx, ssnap, tk, props, edge, stB, stS)
	if err != nil {
		return fmt.Errorf("exec: merge %s: %w", tk, err)
	}
	dT, _, err := g.tableDiff(ctx, tsnap, tk, props, edge, stB, stT)
	if err != nil {
		return fmt.Errorf("exec: merge %s: %w", tk, err)
	}
	td := &TypeDelta{}
	hide := map[string]fragRow{}
	for _, id := range sortedTableKeys(dS) {
		s := dS[id]
		t, both := dT[id]
		if !both {
			if s.before != nil {
				hide[id] = s.at
			}
			if s.after != nil {
				td.add(*s.after)
			} else {
				td.Deletes = append(td.Deletes, id)
			}
			continue
		}
		switch {
		case s.after == nil && t.after == nil:
			continue // both deleted
		case s.after != nil && t.after != nil && rowsEqual(props, s.after, t.after):
			continue // identical inserts or updates
		}
		c := MergeConflict{EntityKind: kind, TypeName: name, EntityID: id}
		// "node type 'Person' id 'Bob'": the reference's wording, which
		// scripts grep for.
		what := fmt.Sprintf("%s type '%s' id '%s'", kind, name, id)
		switch {
		case s.before == nil:
			c.Kind = ConflictDivergentInsert
			c.Message = fmt.Sprintf("divergent insert of %s: source and target inserted different rows", what)
		case s.after == nil || t.after == nil:
			c.Kind = ConflictDeleteVsUpdate
			side := "source"
			if t.after == nil {
				side = "target"
			}
			c.Message = fmt.Sprintf("delete vs update of %s: %s deleted it, the other side updated it", what, side)
		default:
			c.Kind = ConflictDivergentUpdate
			c.Message = fmt.Sprintf("divergent update of %s: source and target changed it differently", what)
		}
		c.withDetail(props, s, t)
		plan.conflicts = append(plan.conflicts, c)
	}
	if len(td.Upserts) > 0 || len(td.Deletes) > 0 {
		plan.hide[tk] = hide
		if edge {
			plan.write.Edges[name] = td
		} else {
			plan.write.Nodes[name] = td
		}
	}
	return nil
}

// constraintConflict turns a validation failure of the merged graph into a
// conflict; ok is false for other errors (storage, cancellation).
func constraintConflict(cat *schema.Catalog, err error) (MergeConflict, bool) {
	var ce *ConstraintError
	if errors.As(err, &ce) {
		c := MergeConflict{TypeName: ce.Type, EntityID: ce.ID, Message: ce.Msg, EntityKind: "node"}
		if et, ok := cat.Edge(ce.Type); ok && et.Name == ce.Type {
			c.EntityKind = "edge"
		}
		switch ce.Kind {
		case ConstraintReference:
			c.Kind = ConflictOrphanEdge
		case ConstraintUnique:
			c.Kind = ConflictUnique
		case ConstraintCard:
			c.Kind, c.EntityID = ConflictCardinality, ""
		default:
			c.Kind = ConflictValue
		}
		return c, true
	}
	var kc *KeyConflictError
	if errors.As(err, &kc) {
		kind, name := snapshot.SplitKey(kc.TypeKey)
		return MergeConflict{Kind: ConflictDivergentInsert, EntityKind: kind, TypeName: name, EntityID: kc.EntityID, Message: kc.Error()}, true
	}
	return MergeConflict{}, false
}

// writeMerge writes the merged state of every "both" table (T's state with
// the replaced and deleted rows hidden by deletion vectors and S's images in
// one new fragment) and returns table key → state key for the publish,
// adopted source tables included. It reads no committed rows: which rows
// of T to hide is known from the diff (an id S changed and T did not is in
// T exactly when it was in the base, and at the same fragment and offset
// unless T moved it with an identical image, e.g. by compaction).
func (g *Graph) writeMerge(ctx context.Context, plan *mergePlan) (map[string]string, error) {
	out := make(map[string]string, len(plan.adopt)+len(plan.write.Nodes)+len(plan.write.Edges))
	for tk, key := range plan.adopt {
		out[tk] = key
	}
	snap := plan.target
	write := func(tk string, td *TypeDelta, props []*schema.Property, edge bool) error {
		st, err := snap.State(ctx, tk)
		if err != nil {
			return err
		}
		// Every upserted id that existed at the base is in T's state (T did
		// not change it), and so is every deleted one: hide them all.
		hide, err := g.mergeHideRows(ctx, snap, tk, st, plan.hide[tk])
		if err != nil {
			return fmt.Errorf("exec: merge %s: %w", tk, err)
		}
		key, err := g.writeTable(ctx, snap, tableWrite{tk: tk, hide: hide, rows: td.Upserts, props: props, edge: edge,
			stateFP: FPMergeAfterTableState})
		if err != nil {
			return fmt.Errorf("exec: merge: %w", err)
		}
		out[tk] = key
		return nil
	}
	for _, nt := range snap.Catalog().Nodes {
		if td := plan.write.Nodes[nt.Name]; td != nil {
			if err := write(snapshot.NodeKey(nt.Name), td, nt.Props, false); err != nil {
				return nil, err
			}
		}
	}
	for _, et := range snap.Catalog().Edges {
		if td := plan.write.Edges[et.Name]; td != nil {
			if err := write(snapshot.EdgeKey(et.Name), td, et.Props, true); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// mergeHideRows returns, as table.DeleteRows takes them, the rows of T's
// state st (table tk of snap) holding the ids in hide. An id is normally
// still live where the base held it, which the diff recorded; only an id T
// moved (its base row is gone from T, its image unchanged) is looked up,
// through the cached per-fragment id indexes (snapshot/layout.go).
func (g *Graph) mergeHideRows(ctx context.Context, snap *snapshot.Snapshot, tk string, st *table.State, hide map[string]fragRow) (map[string][]int64, error) {
	frags := map[string]table.Fragment{}
	for _, f := range st.Fragments() {
		frags[f.Key] = f
	}
	rows := map[string][]int64{}
	var moved []string
	for _, id := range sortedTableKeys(hide) {
		at := hide[id]
		f, ok := frags[at.frag]
		if ok {
			del, err := snap.DeletedOffsets(ctx, f)
			if err != nil {
				return nil, err
			}
			_, gone := slices.BinarySearch(del, at.off)
			ok = !gone
		}
		if !ok {
			moved = append(moved, id)
			continue
		}
		rows[at.frag] = append(rows[at.frag], at.off)
	}
	if len(moved) > 0 {
		more, err := snap.CommittedRows(ctx, tk, moved)
		if err != nil {
			return nil, err
		}
		for k, offs := range more {
			rows[k] = append(rows[k], offs...)
		}
	}
	return rows, nil
}
