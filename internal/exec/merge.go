package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// MergeOutcome is what a merge did to its target (spec/engine.md §3.2).
type MergeOutcome string

// The merge outcomes.
const (
	// MergeAlreadyUpToDate: the source head is the target head or one of
	// its ancestors. Nothing is written.
	MergeAlreadyUpToDate MergeOutcome = "already_up_to_date"
	// MergeFastForward: the target head is an ancestor of the source head;
	// the target ref moves to the source head. No commit is written.
	MergeFastForward MergeOutcome = "fast_forward"
	// MergeMerged: both sides moved; one merge commit with parents
	// [target head, source head] is published on the target.
	MergeMerged MergeOutcome = "merged"
)

// MergeResult is the receipt of a merge. Commit is the target's new head
// (the merge commit, or the source head after a fast-forward); nil when the
// target was already up to date.
type MergeResult struct {
	Source, Target string
	Outcome        MergeOutcome
	Commit         *CommitInfo
}

// Failpoints of the merge, at its durable steps (docs/branching.md).
const (
	FPMergeBeforeWrite       = "exec/merge-before-write"        // planned and validated, nothing written
	FPMergeAfterTableState   = "exec/merge-after-table-state"   // one merged table's state written
	FPMergeBeforePublish     = "exec/merge-before-publish"      // every state written, commit not yet
	FPMergeAfterPublish      = "exec/merge-after-publish"       // the merge commit is the target head
	FPMergeBeforeFastForward = "exec/merge-before-fast-forward" // about to CAS the target ref
	FPMergeAfterFastForward  = "exec/merge-after-fast-forward"  // the target ref names the source head
)

// Merge merges branch source into branch target ("" = main) as actor.
//
// The source head is captured once; the target head is captured per
// attempt. Source an ancestor of (or equal to) target: already up to date,
// nothing written. Target an ancestor of source: fast-forward, a merge
// commit carrying the source's content (fastForward). Otherwise a three-way, entity-level
// merge against their merge base (merge_plan.go) either publishes one merge
// commit or fails with *MergeConflictsError listing the conflicts, having
// changed nothing.
//
// The target ref is only ever moved by CAS from the head the attempt
// planned against. If another writer moves the target first, the attempt's
// objects are abandoned and the merge is planned again against the new
// head (a merge is a pure function of its two heads, so re-planning never
// loses either side's writes). After Options.MaxRetries lost races it fails
// with *ReadSetChangedError{Member: "graph_head:<target>"}.
//
// INVARIANT: a merge publishes all of its result or none of it, and never
// moves the target from a head it did not plan against
// (TestMergeCrashPoints, TestMergeRacesTargetWrites).
func (g *Graph) Merge(ctx context.Context, source, target, actor string) (*MergeResult, error) {
	source, target, err := mergePair(source, target)
	if err != nil {
		return nil, err
	}
	if err := authorize(ctx, Access{Actor: actor, Action: ActionBranchMerge, Branch: source, TargetBranch: target}); err != nil {
		return nil, err
	}
	_, sc, err := g.repo.Resolve(ctx, source)
	if err != nil {
		return nil, err
	}
	res := &MergeResult{Source: source, Target: target}
	var th commit.Head
	ctx, end := g.ownLedger(ctx)
	// The merge takes its turn among this handle's writes to the target
	// (runExclusive), so it races only other processes' writers.
	err = g.runExclusive(ctx, target, func(ctx context.Context) error {
		return g.retryPublish(ctx, func(attempt int, _ *commit.HeadMovedError) error {
			// Every attempt re-plans from the target's current head.
			var tc *commit.Commit
			var err error
			if th, tc, err = g.repo.Resolve(ctx, target); err != nil {
				return err
			}
			kind, err := g.mergeKind(ctx, tc, sc)
			if err != nil {
				return err
			}
			if kind == MergeAlreadyUpToDate {
				res.Outcome = kind
				return nil
			}
			ff := kind == MergeFastForward
			var published *commit.Commit
			if ff {
				published, err = g.fastForward(ctx, th, tc, sc, source, actor)
			} else {
				published, err = g.mergeThreeWay(ctx, th, tc, sc, source, actor, attempt)
			}
			if err != nil {
				return err
			}
			res.Outcome = MergeMerged
			if ff {
				res.Outcome = MergeFastForward
			}
			ci := commitInfo(published, target)
			res.Commit = &ci
			return nil
		}, func(_ int, err error) error {
			var moved *commit.HeadMovedError
			errors.As(err, &moved)
			return &ReadSetChangedError{Member: "graph_head:" + target, Change: ChangeChanged, Branch: target, Expected: th.Commit.String(), Actual: moved.Actual.Commit.String()}
		})
	})
	end(err)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// mergeKind classifies merging source head sc into target head tc:
// already up to date (sc is tc or one of its ancestors), fast-forward (tc
// is an ancestor of sc) or a three-way merge.
func (g *Graph) mergeKind(ctx context.Context, tc, sc *commit.Commit) (MergeOutcome, error) {
	if tc.ID == sc.ID {
		return MergeAlreadyUpToDate, nil
	}
	if up, err := g.repo.IsAncestor(ctx, sc.ID, tc.ID); err != nil || up {
		return MergeAlreadyUpToDate, err
	}
	ff, err := g.repo.IsAncestor(ctx, tc.ID, sc.ID)
	if err != nil {
		return "", err
	}
	if ff {
		return MergeFastForward, nil
	}
	return MergeMerged, nil
}

// mergePair defaults both branches of a merge (or its preview) to main
// and refuses internal refs and merging a branch into itself.
func mergePair(source, target string) (string, string, error) {
	source, target = branchOr(source), branchOr(target)
	for _, b := range []string{source, target} {
		if b == SchemaApplyLockRef {
			return "", "", &commit.BranchError{Branch: b, Err: ErrInternalRef, Reason: "branch_merge does not allow internal system refs"}
		}
	}
	if source == target {
		return "", "", fmt.Errorf("%w (both are '%s')", ErrMergeSameBranch, source)
	}
	return source, target, nil
}

// fastForward publishes, on the target, a merge commit whose content is
// exactly the source head's: parent = the target head th, merged parent = the
// source head. Like the reference system (spec/engine.md §3.2), a fast-forward
// is not a bare pointer move: the target's history records the merge (its
// actor and time), and merging again is already up to date because the
// source head is now an ancestor. It goes through the one publish primitive,
// so a lost race returns *commit.HeadMovedError and the caller re-plans.
//
// A fast-forward adopts the source's schema with its content (the documented
// rule for merging across a schema apply, docs/schema-evolution.md): tables
// the source's schema no longer has are removed from the target.
func (g *Graph) fastForward(ctx context.Context, th commit.Head, tc, sc *commit.Commit, source, actor string) (*commit.Commit, error) {
	if err := failpoint.Hit(FPMergeBeforeFastForward); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.testBeforePublish != nil {
		g.testBeforePublish(0)
	}
	tables := make(map[string]string, len(sc.Tables))
	for k, v := range sc.Tables {
		tables[k] = v
	}
	c, err := g.publishMerge(ctx, th, tc, sc, tables, sc.Schema, actor, fmt.Sprintf("merge %s into %s (fast-forward)", source, th.Branch))
	if err != nil {
		return nil, err
	}
	if err := failpoint.Hit(FPMergeAfterFastForward); err != nil {
		return nil, err
	}
	return c, nil
}

// publishMerge publishes, from the target head th (commit tc), the merge
// commit of the source head sc holding tables: the target's tables sc does
// not name are removed; schemaKey is the merged schema ("" keeps the
// target's).
func (g *Graph) publishMerge(ctx context.Context, th commit.Head, tc, sc *commit.Commit, tables map[string]string, schemaKey, actor, message string) (*commit.Commit, error) {
	var removed []string
	for k := range tc.Tables {
		if _, ok := sc.Tables[k]; !ok {
			removed = append(removed, k)
		}
	}
	slices.Sort(removed)
	mp := sc.ID
	_, c, err := g.repo.Publish(ctx, commit.PublishRequest{Branch: th.Branch, Base: th, Tables: tables, Removed: removed,
		MergeParent: &mp, Actor: actor, Kind: commit.KindMerge, SchemaKey: schemaKey, Message: message})
	return c, err
}

// mergeThreeWay plans the merge of sc into tc, writes the merged tables and
// publishes the merge commit from th.
func (g *Graph) mergeThreeWay(ctx context.Context, th commit.Head, tc, sc *commit.Commit, source, actor string, attempt int) (*commit.Commit, error) {
	if tc.Schema != sc.Schema {
		return nil, g.mergeSchemaError(ctx, tc, sc, source, th.Branch)
	}
	base, err := g.repo.MergeBase(ctx, sc.ID, tc.ID)
	if err != nil {
		return nil, err
	}
	plan, err := g.planMerge(ctx, base, sc, tc, th.Branch)
	if err != nil {
		return nil, err
	}
	if len(plan.conflicts) > 0 {
		return nil, &MergeConflictsError{Conflicts: plan.conflicts}
	}
	if err := failpoint.Hit(FPMergeBeforeWrite); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tables, err := g.writeMerge(ctx, plan)
	if err != nil {
		return nil, err
	}
	if g.testBeforePublish != nil {
		g.testBeforePublish(attempt)
	}
	if err := failpoint.Hit(FPMergeBeforePublish); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := g.publishMerge(ctx, th, tc, sc, tables, "", actor, fmt.Sprintf("merge %s into %s", source, th.Branch))
	if err != nil {
		return nil, err
	}
	if err := failpoint.Hit(FPMergeAfterPublish); err != nil {
		return nil, err
	}
	return c, nil
}

// Conflict kinds of a merge (spec/surfaces.md merge_conflicts[].kind).
const (
	ConflictDivergentInsert = "divergent_insert"
	ConflictDivergentUpdate = "divergent_update"
	ConflictDeleteVsUpdate  = "delete_vs_update"
	ConflictOrphanEdge      = "orphan_edge"
	ConflictUnique          = "unique_violation"
	ConflictCardinality     = "cardinality_violation"
	ConflictValue           = "value_constraint_violation"
)

// MergeConflict is one reason a merge cannot proceed.
type MergeConflict struct {
	Kind       string // one of the Conflict* kinds
	EntityKind string // "node" or "edge"
	TypeName   string
	// EntityID is the entity in conflict; empty for cardinality violations
	// (the bound is on a source node, named in Message).
	EntityID string
	Message  string
	// Src and Dst are the endpoints of an edge in a row conflict (of the
	// source's image, else the target's, else the base's).
	Src, Dst string
	// Properties lists, for a row conflict, every property the two sides
	// disagree on (a delete against an update: every property the update
	// changed), in schema order. Message repeats them for people.
	Properties []ConflictProperty
}

// ConflictProperty is one property of a row conflict with its value at the
// merge base and on each side, as canonical JSON (spec/languages.md §2.2);
// a nil value means that side has no row (the base of a divergent insert,
// the side that deleted the entity).
type ConflictProperty struct {
	Name                 string
	Base, Source, Target json.RawMessage
}

// maxConflictDetail bounds the properties a conflict message spells out;
// Properties always holds them all.
const maxConflictDetail = 4

// withDetail records the properties a row conflict is about (see
// MergeConflict.Properties) and appends them, with an edge's endpoints, to
// the message: "… (age: base 25, source 27, target 26)".
func (c *MergeConflict) withDetail(props []*schema.Property, s, t rowChange) {
	base := s.before
	for _, r := range []*Row{s.after, t.after, base} {
		if r != nil && c.EntityKind == "edge" && c.Src == "" {
			c.Src, c.Dst = r.Src, r.Dst
		}
	}
	enc := func(p *schema.Property, r *Row) json.RawMessage {
		if r == nil {
			return nil
		}
		raw, err := value.EncodeJSON(p.Type, r.Values[p.Name])
		if err != nil {
			return json.RawMessage(strconv.Quote(fmt.Sprint(r.Values[p.Name])))
		}
		return raw
	}
	for _, p := range props {
		cp := ConflictProperty{Name: p.Name, Base: enc(p, base), Source: enc(p, s.after), Target: enc(p, t.after)}
		var differs bool
		switch {
		case s.after != nil && t.after != nil:
			differs = !value.Equal(s.after.Values[p.Name], t.after.Values[p.Name])
		case s.after != nil: // target deleted what source updated
			differs = base == nil || !value.Equal(s.after.Values[p.Name], base.Values[p.Name])
		case t.after != nil:
			differs = base == nil || !value.Equal(t.after.Values[p.Name], base.Values[p.Name])
		}
		if differs {
			c.Properties = append(c.Properties, cp)
		}
	}
	var parts []string
	if c.EntityKind == "edge" {
		parts = append(parts, fmt.Sprintf("edge %s -> %s", c.Src, c.Dst))
	}
	show := func(v json.RawMessage, absent string) string {
		if v == nil {
			return absent
		}
		return string(v)
	}
	for i, cp := range c.Properties {
		if i == maxConflictDetail {
			parts = append(parts, fmt.Sprintf("+%d more properties", len(c.Properties)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s: base %s, source %s, target %s", cp.Name,
			show(cp.Base, "(none)"), show(cp.Source, "(deleted)"), show(cp.Target, "(deleted)")))
	}
	if len(parts) > 0 {
		c.Message += " (" + strings.Join(parts, "; ") + ")"
	}
}

// TypeKey is "node:T" or "edge:E".
func (c MergeConflict) TypeKey() string { return c.EntityKind + ":" + c.TypeName }
