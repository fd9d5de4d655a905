package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Schema apply: evolution of a branch's schema with its data
// (spec/engine.md §5, docs/schema-evolution.md). An apply is one write
// through runWrite like every other: it prepares new table states against
// the branch head and publishes one commit naming the new schema, with the
// ref CAS. A crash anywhere before the CAS leaves the old schema and its
// data; after it, the new schema and its data. Each branch carries its own
// schema in its head commit, so applying on one branch leaves the others
// as they are.
//
// Cost: metadata-only changes (nullable property added, property or type
// renamed, property or type dropped softly, index definitions, enum
// widening, metadata) write new table-state objects only — the fragments
// keep their files and are read through the new schema (table.State.Evolve).
// A hard drop rewrites the tables that lose a column, so the current state
// no longer references files holding it. Added @unique/@range/@check are
// checked against the rows of the tables they constrain.

// Failpoints of schema apply, in order.
const (
	FPApplyBeforeStates = "exec/apply-before-states" // plan validated, nothing written
	FPApplyAfterState   = "exec/apply-after-state"   // one table's new state written
	FPApplyBeforeSchema = "exec/apply-before-schema" // every state written, schema object not yet
)

// SchemaApplyOptions tune PlanSchema and ApplySchema.
type SchemaApplyOptions struct {
	Branch string // "" = main
	// AllowDataLoss makes drops hard (spec: --allow-data-loss).
	AllowDataLoss bool
	Actor         string
}

// SchemaApplyResult is the outcome of ApplySchema.
type SchemaApplyResult struct {
	Plan *schema.Plan
	// Applied is false for a no-op (the desired schema is the accepted one).
	Applied bool
	// Commit is the published commit (nil when not applied).
	Commit *CommitInfo
}

// ErrSchemaChange marks an apply refused because of what it would change.
var ErrSchemaChange = errors.New("schema apply refused")

// UnsupportedSchemaChangeError: the plan holds an unsupported step.
type UnsupportedSchemaChangeError struct{ Step schema.Step }

func (e *UnsupportedSchemaChangeError) Error() string {
	msg := e.Step.Reason
	if e.Step.Code != "" {
		msg = "[" + e.Step.Code + "] " + msg
	}
	return msg
}

// Is makes errors.Is(err, ErrSchemaChange) hold.
func (e *UnsupportedSchemaChangeError) Is(target error) bool { return target == ErrSchemaChange }

// ConstraintAdditionError: an added constraint does not hold for the data
// already stored. IDs lists offending entities (at most maxOffenders).
type ConstraintAdditionError struct {
	TypeKey    string
	Constraint string
	IDs        []string
	More       int // offenders beyond IDs
}

const maxOffenders = 20

func (e *ConstraintAdditionError) Error() string {
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(" (+%d more)", e.More)
	}
	return fmt.Sprintf("cannot add %s to %s: existing data violates it: %s%s", e.Constraint, e.TypeKey, strings.Join(e.IDs, ", "), more)
}

// Is makes errors.Is(err, ErrSchemaChange) hold.
func (e *ConstraintAdditionError) Is(target error) bool { return target == ErrSchemaChange }

// PlanSchema plans the change from the schema at the head of o.Branch to
// desired without applying it.
func (g *Graph) PlanSchema(ctx context.Context, desired string, o SchemaApplyOptions) (*schema.Plan, error) {
	snap, err := g.Resolve(ctx, Target{Branch: o.Branch})
	if err != nil {
		return nil, err
	}
	_, plan, err := g.planAgainst(ctx, snap, desired, o)
	return plan, err
}

func (g *Graph) planAgainst(ctx context.Context, snap *snapshot.Snapshot, desired string, o SchemaApplyOptions) (*schema.Catalog, *schema.Plan, error) {
	if _, id, err := schema.SplitIdentity(desired); err == nil && !id.IsZero() {
		return nil, nil, &RequestError{Msg: "the desired schema must not carry an omnigraph:identity trailer; pass the .pg as written"}
	}
	cat, err := schema.Compile("schema.pg", desired)
	if err != nil {
		return nil, nil, err
	}
	sc, err := g.compiledSchema(ctx, snap.Commit().Schema)
	if err != nil {
		return nil, nil, err
	}
	plan, err := schema.PlanChange(sc.cat, sc.id, cat, schema.PlanOptions{AllowDataLoss: o.AllowDataLoss})
	if err != nil {
		return nil, nil, err
	}
	return cat, plan, nil
}

// ApplySchema evolves the schema of o.Branch to desired with one commit.
// An unsupported plan fails with *UnsupportedSchemaChangeError and an added
// constraint the data breaks with *ConstraintAdditionError, both before
// anything is written. A concurrent write to the branch makes the apply
// re-plan against the new head.
func (g *Graph) ApplySchema(ctx context.Context, desired string, o SchemaApplyOptions) (*SchemaApplyResult, error) {
	branch := branchOr(o.Branch)
	if branch == SchemaApplyLockRef {
		return nil, fmt.Errorf("%w: %s", ErrInternalRef, branch)
	}
	if err := authorize(ctx, Access{Actor: o.Actor, Action: ActionSchemaApply, TargetBranch: branch}); err != nil {
		return nil, err
	}
	var plan *schema.Plan
	c, _, err := g.runWrite(ctx, writeRequest{
		branch: branch, kind: commit.KindSchema, actor: o.Actor, message: "schema apply",
		prepare: func(ctx context.Context, snap *snapshot.Snapshot) (*prepared, error) {
			cat, p, err := g.planAgainst(ctx, snap, desired, o)
			if err != nil {
				return nil, err
			}
			plan = p
			if s, bad := p.Unsupported(); bad {
				return nil, &UnsupportedSchemaChangeError{Step: s}
			}
			if p.Empty() {
				return &prepared{noop: true}, nil
			}
			// Everything is computed before anything is written: a refused
			// apply (an added constraint the data breaks) writes nothing.
			states, err := g.evolveStates(ctx, snap, cat, p)
			if err != nil {
				return nil, err
			}
			src := schema.JoinIdentity(desired, p.Identity)
			if err := g.checkAddedConstraints(ctx, snap, cat, src, states, p); err != nil {
				return nil, err
			}
			// Every accepted table the new schema does not name goes: dropped
			// types and the old names of renamed ones.
			var removed []string
			for _, tk := range snapshot.TableKeys(snap.Catalog()) {
				if _, kept := p.Tables[tk]; !kept {
					removed = append(removed, tk)
				}
			}
			pp := &prepared{delta: NewDelta(), removed: removed}
			pp.write = func(ctx context.Context, snap *snapshot.Snapshot) (map[string]string, error) {
				if err := failpoint.Hit(FPApplyBeforeStates); err != nil {
					return nil, err
				}
				tables, err := g.writeEvolved(ctx, states, p)
				if err != nil {
					return nil, err
				}
				if err := failpoint.Hit(FPApplyBeforeSchema); err != nil {
					return nil, err
				}
				key, err := g.repo.PutSchema(ctx, []byte(src))
				if err != nil {
					return nil, err
				}
				pp.schemaKey = key
				return tables, nil
			}
			return pp, nil
		},
	})
	if err != nil {
		return nil, err
	}
	res := &SchemaApplyResult{Plan: plan, Applied: c != nil}
	if c != nil {
		ci := commitInfo(c, branch)
		res.Commit = &ci
	}
	return res, nil
}

// evolved is the new state of one table of an apply, before it is written.
type evolved struct {
	tk      string
	state   *table.State
	rewrite bool // hard drop: rewrite the fragments under the new schema
}

// evolveStates computes the new state of every table of the desired
// schema that differs from its accepted state (no store writes).
func (g *Graph) evolveStates(ctx context.Context, snap *snapshot.Snapshot, cat *schema.Catalog, p *schema.Plan) ([]evolved, error) {
	var out []evolved
	for _, tk := range snapshot.TableKeys(cat) {
		next, err := snapshot.TableSchema(cat, tk)
		if err != nil {
			return nil, err
		}
		from := p.Tables[tk]
		if from == "" {
			st, err := table.NewState(next)
			if err != nil {
				return nil, err
			}
			out = append(out, evolved{tk: tk, state: st})
			continue
		}
		old, err := snap.State(ctx, from)
		if err != nil {
			return nil, err
		}
		os := old.Schema()
		idx := make([]int, len(next.Columns))
		for i, c := range next.Columns {
			switch c.Name {
			case table.KeyColumn, "src", "dst":
				if j := os.Index(c.Name); j >= 0 && (c.Name == table.KeyColumn || strings.HasPrefix(tk, "edge:")) {
					idx[i] = j
					continue
				}
			}
			acc, ok := p.Props[tk][c.Name]
			switch {
			case !ok:
				return nil, fmt.Errorf("exec: apply: column %s.%s has no plan mapping", tk, c.Name)
			case acc == "":
				idx[i] = -1
			default:
				idx[i] = os.Index(acc)
				if idx[i] < 0 {
					return nil, fmt.Errorf("exec: apply: accepted column %s.%s missing from its table state", from, acc)
				}
			}
		}
		hard := slices.Contains(p.HardDrops, tk)
		if from == tk && !hard && sameColumns(os, next) && identityMap(idx) {
			continue // unchanged table: keeps its state object
		}
		st, err := old.Evolve(next, idx)
		if err != nil {
			return nil, fmt.Errorf("exec: apply %s: %w", tk, err)
		}
		out = append(out, evolved{tk: tk, state: st, rewrite: hard && st.NumFragments() > 0})
	}
	return out, nil
}

func identityMap(idx []int) bool {
	for i, j := range idx {
		if i != j {
			return false
		}
	}
	return true
}

// writeEvolved writes the new table states (and, for hard drops, the
// rewritten fragments) and returns table key → state key.
func (g *Graph) writeEvolved(ctx context.Context, states []evolved, p *schema.Plan) (map[string]string, error) {
	tables := map[string]string{}
	for _, e := range states {
		prefix := snapshot.TablePrefix(e.tk)
		st := e.state
		if e.rewrite {
			frags, _, err := g.rewriteRun(ctx, prefix, st, st.Fragments())
			if err != nil {
				return nil, fmt.Errorf("exec: apply: rewrite %s: %w", e.tk, err)
			}
			fresh, err := table.NewState(st.Schema())
			if err != nil {
				return nil, err
			}
			if fresh, err = fresh.Append(frags...); err != nil {
				return nil, err
			}
			if fresh.Rows() != st.Rows() {
				return nil, fmt.Errorf("exec: apply: rewrite of %s changed the row count from %d to %d", e.tk, st.Rows(), fresh.Rows())
			}
			st = fresh
		}
		key, err := table.WriteState(ctx, g.st, prefix, st)
		if err != nil {
			return nil, err
		}
		if err := failpoint.Hit(FPApplyAfterState); err != nil {
			return nil, err
		}
		tables[e.tk] = key
	}
	return tables, nil
}

// checkAddedConstraints validates the rows of every table that gains a
// data-checked constraint, read through the new schema from the evolved
// (not yet written) states' fragments, which are the old ones.
func (g *Graph) checkAddedConstraints(ctx context.Context, snap *snapshot.Snapshot, cat *schema.Catalog, src string, states []evolved, p *schema.Plan) error {
	if len(p.Constrained) == 0 {
		return nil
	}
	byTK := map[string]*table.State{}
	for _, e := range states {
		byTK[e.tk] = e.state
	}
	for _, tk := range p.Constrained {
		st := byTK[tk]
		if st == nil {
			var err error
			if st, err = snap.State(ctx, tk); err != nil {
				return err
			}
		}
		if st.Rows() == 0 {
			continue
		}
		kind, name := snapshot.SplitKey(tk)
		rows, err := g.scanRows(ctx, st, cat, tk)
		if err != nil {
			return err
		}
		var (
			uniques [][]string
			check   func(map[string]any) error
		)
		if kind == "node" {
			nt, _ := cat.Node(name)
			uniques = nt.Uniques
			check = func(v map[string]any) error { return CheckNodeRow(nt, v) }
		} else {
			et, _ := cat.Edge(name)
			uniques = et.Uniques
			check = func(v map[string]any) error { return CheckEdgeRow(et, v) }
		}
		var bad []string
		for _, r := range rows {
			if err := check(r.Values); err != nil {
				bad = append(bad, r.ID)
			}
		}
		if len(bad) > 0 {
			return offenders(tk, constraintsOf(p, tk, "@range", "@check"), bad)
		}
		for _, cols := range uniques {
			seen := map[string]string{}
			for _, r := range rows {
				tuple := make([]any, len(cols))
				null := false
				for i, c := range cols {
					switch c {
					case "src":
						tuple[i] = r.Src
					case "dst":
						tuple[i] = r.Dst
					default:
						tuple[i] = r.Values[c]
					}
					null = null || tuple[i] == nil
				}
				if null {
					continue // SQL semantics: nulls never collide
				}
				k, _ := json.Marshal(tuple)
				if other, dup := seen[string(k)]; dup {
					bad = append(bad, other, r.ID)
				} else {
					seen[string(k)] = r.ID
				}
			}
			if len(bad) > 0 {
				slices.Sort(bad)
				return offenders(tk, "@unique("+strings.Join(cols, ", ")+")", slices.Compact(bad))
			}
		}
	}
	return nil
}

func constraintsOf(p *schema.Plan, tk string, kinds ...string) string {
	_, name := snapshot.SplitKey(tk)
	var out []string
	for _, s := range p.Steps {
		if s.Kind == schema.StepAddConstraint && s.TypeName == name {
			for _, k := range kinds {
				if strings.HasPrefix(s.Constraint, k) {
					out = append(out, s.Constraint)
				}
			}
		}
	}
	if len(out) == 0 {
		return "the new constraints"
	}
	return strings.Join(out, ", ")
}

func offenders(tk, constraint string, ids []string) error {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	e := &ConstraintAdditionError{TypeKey: tk, Constraint: constraint, IDs: ids}
	if len(ids) > maxOffenders {
		e.IDs, e.More = ids[:maxOffenders], len(ids)-maxOffenders
	}
	return e
}

// scanRows decodes every live row of a table state under the new catalog.
func (g *Graph) scanRows(ctx context.Context, st *table.State, cat *schema.Catalog, tk string) ([]Row, error) {
	sc, err := table.Scan(ctx, g.st, st, table.ScanOptions{})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	kind, name := snapshot.SplitKey(tk)
	var props []*schema.Property
	if kind == "node" {
		nt, _ := cat.Node(name)
		props = nt.Props
	} else {
		et, _ := cat.Edge(name)
		props = et.Props
	}
	ts := st.Schema()
	var out []Row
	for sc.Next() {
		rec := sc.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			r := Row{Values: map[string]any{}}
			for c, col := range ts.Columns {
				v := table.Value(rec.Column(c), i)
				switch col.Name {
				case table.KeyColumn:
					r.ID, _ = v.(string)
				case "src":
					if kind == "edge" {
						r.Src, _ = v.(string)
						continue
					}
					fallthrough
				case "dst":
					if kind == "edge" && col.Name == "dst" {
						r.Dst, _ = v.(string)
						continue
					}
					fallthrough
				default:
					p := snapshot.PropByName(props, col.Name)
					if p == nil {
						continue
					}
					r.Values[col.Name] = value.FromColumn(p.Type, v)
				}
			}
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// MergeSchemaError refuses a three-way merge of branches whose heads have
// different schemas. Change names the first step that separates them (what
// applying the source's schema to the target would do). A fast-forward is
// not refused: the target adopts the source's schema with its content.
type MergeSchemaError struct {
	Source, Target string
	Change         string
}

func (e *MergeSchemaError) Error() string {
	return fmt.Sprintf("%v: '%s' and '%s' have different schemas (%s); apply the same schema to '%s' first, then merge",
		ErrMergeSchema, e.Source, e.Target, e.Change, e.Target)
}

// Is makes errors.Is(err, ErrMergeSchema) hold.
func (e *MergeSchemaError) Is(target error) bool { return target == ErrMergeSchema }

func (g *Graph) mergeSchemaError(ctx context.Context, tc, sc *commit.Commit, source, target string) error {
	e := &MergeSchemaError{Source: source, Target: target, Change: "the schema sources differ"}
	tsc, err1 := g.compiledSchema(ctx, tc.Schema)
	ssc, err2 := g.compiledSchema(ctx, sc.Schema)
	if err1 == nil && err2 == nil {
		if p, err := schema.PlanChange(tsc.cat, tsc.id, ssc.cat, schema.PlanOptions{}); err == nil && len(p.Steps) > 0 {
			e.Change = "source differs by: " + p.Steps[0].String()
			if len(p.Steps) > 1 {
				e.Change += fmt.Sprintf(" (+%d more steps)", len(p.Steps)-1)
			}
		} else if err == nil {
			e.Change = "same types, different identity or text"
		}
	}
	return e
}
