package exec

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// The operations a Change reports.
const (
	OpInsert = "insert"
	OpUpdate = "update"
	OpDelete = "delete"
)

// Change is one entity whose user-visible image differs between two
// snapshots (spec/engine.md §4.2–§4.3).
type Change struct {
	Kind string // "node" or "edge"
	Type string // type name
	// TypeID is the type's stable, opaque id: kept across renames, new for
	// a type dropped and declared again (schema.Identity).
	TypeID string
	ID     string
	Op     string // OpInsert, OpUpdate or OpDelete
	// Src and Dst are an edge's endpoints (of the after image, or of the
	// before image for a delete); empty for nodes.
	Src, Dst string
	// BeforeSrc and BeforeDst are the endpoints of an edge's before image
	// (updates and deletes): an update may move an edge.
	BeforeSrc, BeforeDst string
	// Before and After are the user properties (no id, src, dst) of the old
	// and new image: Before is nil for an insert, After nil for a delete.
	// Values are JSON-encoded per spec/languages.md §2.2 (json.RawMessage),
	// so an image marshals as-is; a null property is present as null.
	Before, After map[string]any
}

// TypeKey is the change's entity type id as the CLI and the server print
// it: TypeID, or "kind:type" when the change carries none.
func (c Change) TypeKey() string {
	if c.TypeID != "" {
		return c.TypeID
	}
	return c.Kind + ":" + c.Type
}

// Diff returns the entity-level changes that turn from into to, sorted by
// (kind, type, id) with kind in byte order — edges before nodes, as
// spec/engine.md §4.2 groups them. The two targets may be on any branches.
// Only tables whose state key differs are read, and of those only the
// fragments that differ (diff_table.go), so the cost follows the delta.
func (g *Graph) Diff(ctx context.Context, from, to Target) ([]Change, error) {
	cs, err := g.DiffBetween(ctx, from, to, ChangeScope{})
	if err != nil {
		return nil, err
	}
	return cs.Changes, nil
}

// ChangeSet is the diff of two targets (spec/engine.md §4.2): the commits
// each side resolved to, the changes in Diff's order, and their counts.
type ChangeSet struct {
	From, To CommitInfo
	Changes  []Change
	Stats    ChangeStats
}

// ChangeStats counts changes by operation.
type ChangeStats struct {
	Inserts, Updates, Deletes int
}

// Add counts one change.
func (s *ChangeStats) Add(c Change) {
	switch c.Op {
	case OpInsert:
		s.Inserts++
	case OpUpdate:
		s.Updates++
	case OpDelete:
		s.Deletes++
	}
}

// DiffBetween is Diff with the resolved commits, counts and a scope. A
// scope's kinds and types select whole tables before any table state is
// read, so a filtered diff costs only the selected tables that changed;
// its ops filter the changes. A type the scope names that neither side's
// schema declares is refused (*RequestError): a misspelt type would
// otherwise read as "no changes".
func (g *Graph) DiffBetween(ctx context.Context, from, to Target, scope ChangeScope) (*ChangeSet, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	a, branchA, err := g.resolveCommit(ctx, from)
	if err != nil {
		return nil, err
	}
	b, branchB, err := g.resolveCommit(ctx, to)
	if err != nil {
		return nil, err
	}
	sa, sb, pairs, err := g.tablePairs(ctx, a, b)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, pr := range pairs {
		for _, tk := range []string{pr.tkA, pr.tkB} {
			if tk != "" {
				_, n := snapshot.SplitKey(tk)
				names[n] = true
			}
		}
	}
	for _, t := range scope.Types {
		if !names[t] {
			return nil, &RequestError{Msg: fmt.Sprintf("unknown type %q: neither side of the diff declares a node or edge type of that name", t)}
		}
	}
	out := &ChangeSet{From: commitInfo(a, branchA), To: commitInfo(b, branchB)}
	for _, pr := range pairs {
		if !scope.selectsPair(pr) {
			continue
		}
		chs, err := g.pairChanges(ctx, sa, sb, pr, false)
		if err != nil {
			return nil, err
		}
		for _, ch := range chs {
			if len(scope.Ops) == 0 || slices.Contains(scope.Ops, ch.Op) {
				out.Changes = append(out.Changes, ch)
				out.Stats.Add(ch)
			}
		}
	}
	slices.SortFunc(out.Changes, func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Type, y.Type), cmp.Compare(x.ID, y.ID))
	})
	return out, nil
}

// selectsPair reports whether the scope's kinds and types admit a table
// pair (by either side's name: a renamed type answers to both).
func (s ChangeScope) selectsPair(pr tablePair) bool {
	if len(s.Kinds) > 0 && !slices.Contains(s.Kinds, pr.kind) {
		return false
	}
	if len(s.Types) == 0 {
		return true
	}
	for _, tk := range []string{pr.tkA, pr.tkB} {
		if _, n := snapshot.SplitKey(tk); tk != "" && slices.Contains(s.Types, n) {
			return true
		}
	}
	return false
}

// ChangedProperties returns the properties an update changed (present in
// both images with different encodings, or in one image only), sorted; nil
// for inserts and deletes. Images hold canonical JSON encodings, so equal
// values have equal bytes.
func (c Change) ChangedProperties() []string {
	if c.Op != OpUpdate {
		return nil
	}
	var out []string
	for k, v := range c.Before {
		w, ok := c.After[k]
		if !ok || !sameJSON(v, w) {
			out = append(out, k)
		}
	}
	for k := range c.After {
		if _, ok := c.Before[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// EndpointsChanged reports whether an edge update moved its endpoints.
func (c Change) EndpointsChanged() bool {
	return c.Op == OpUpdate && c.Kind == "edge" && (c.BeforeSrc != c.Src || c.BeforeDst != c.Dst)
}

// BeforeEndpoints returns the endpoints of an edge's before image (those of
// the after image when the change does not record them separately).
func (c Change) BeforeEndpoints() (src, dst string) {
	if c.BeforeSrc == "" && c.BeforeDst == "" {
		return c.Src, c.Dst
	}
	return c.BeforeSrc, c.BeforeDst
}

func sameJSON(a, b any) bool {
	ra, okA := a.(json.RawMessage)
	rb, okB := b.(json.RawMessage)
	if okA && okB {
		return bytes.Equal(ra, rb)
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// CommitChanges returns the changes a commit made relative to its first
// parent (a merge commit: what the merge brought to its target), in the
// frozen order of spec/engine.md §4.3: nodes before edges, then type, then
// id. A parentless commit fails with *CommitHasNoParentError.
func (g *Graph) CommitChanges(ctx context.Context, commitID string) ([]Change, error) {
	c, err := g.repo.RevisionCommit(ctx, commitID)
	if err != nil {
		return nil, err
	}
	pid, ok := c.Parent()
	if !ok {
		return nil, &CommitHasNoParentError{Commit: commitID}
	}
	p, err := g.repo.Commit(ctx, pid)
	if err != nil {
		return nil, err
	}
	changes, err := g.commitDiff(ctx, p, c, true)
	if err != nil {
		return nil, err
	}
	// commitDiff already emits the frozen order: pairs by (kind, type id),
	// changes by id within a pair.
	return changes, nil
}

// commitDiff diffs every table of two commits (see pairChanges).
func (g *Graph) commitDiff(ctx context.Context, a, b *commit.Commit, strict bool) ([]Change, error) {
	sa, sb, pairs, err := g.tablePairs(ctx, a, b)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, pr := range pairs {
		chs, err := g.pairChanges(ctx, sa, sb, pr, strict)
		if err != nil {
			return nil, err
		}
		out = append(out, chs...)
	}
	return out, nil
}

// tablePair is one table of a diff, paired across the two commits by its
// stable type id (schema.Identity): a renamed type is the same table under
// two keys; a type dropped and declared again is two tables.
type tablePair struct {
	id       string // stable type id
	kind     string // "node" or "edge"
	tkA, tkB string // "" when absent on that side
}

// tablePairs resolves both snapshots and pairs their tables, sorted in the
// frozen order of spec/engine.md §4.3: nodes before edges, then type id.
func (g *Graph) tablePairs(ctx context.Context, a, b *commit.Commit) (*snapshot.Snapshot, *snapshot.Snapshot, []tablePair, error) {
	sa, err := g.snapshotOf(ctx, a, "")
	if err != nil {
		return nil, nil, nil, err
	}
	sb, err := g.snapshotOf(ctx, b, "")
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := g.compiledSchema(ctx, a.Schema)
	if err != nil {
		return nil, nil, nil, err
	}
	cb, err := g.compiledSchema(ctx, b.Schema)
	if err != nil {
		return nil, nil, nil, err
	}
	byID := map[string]*tablePair{}
	get := func(id, tk string) *tablePair {
		p := byID[id]
		if p == nil {
			kind, _ := snapshot.SplitKey(tk)
			p = &tablePair{id: id, kind: kind}
			byID[id] = p
		}
		return p
	}
	for _, tk := range snapshot.TableKeys(sa.Catalog()) {
		get(ca.id.TypeID(tk), tk).tkA = tk
	}
	for _, tk := range snapshot.TableKeys(sb.Catalog()) {
		get(cb.id.TypeID(tk), tk).tkB = tk
	}
	out := make([]tablePair, 0, len(byID))
	for _, p := range byID {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(x, y tablePair) int {
		return cmp.Or(cmp.Compare(kindRank(x.kind), kindRank(y.kind)), cmp.Compare(x.id, y.id))
	})
	return sa, sb, out, nil
}

func kindRank(k string) int {
	if k == "node" {
		return 0
	}
	return 1
}

// pairChanges diffs one table pair, its changes sorted by id. A table
// present on one side only contributes all its rows as inserts or deletes,
// except that strict (per-commit changes) treats a populated dropped table
// as a schema boundary. A table whose columns differ between the sides is
// a boundary when the sides hold different fragments and both hold rows;
// a metadata-only evolution (every fragment shared, read through the new
// schema) changes no entity and yields nothing.
func (g *Graph) pairChanges(ctx context.Context, sa, sb *snapshot.Snapshot, pr tablePair, strict bool) ([]Change, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, b := sa.Commit(), sb.Commit()
	if pr.tkA != "" && pr.tkA == pr.tkB && a.Tables[pr.tkA] == b.Tables[pr.tkB] {
		return nil, nil // the same immutable state: nothing to read
	}
	kind := pr.kind
	_, name := snapshot.SplitKey(pr.tkB)
	if pr.tkB == "" {
		_, name = snapshot.SplitKey(pr.tkA)
	}
	propsA, inA := tableProps(sa.Catalog(), pr.tkA)
	propsB, inB := tableProps(sb.Catalog(), pr.tkB)
	var stA, stB *table.State
	var err error
	if inA {
		if stA, err = sa.State(ctx, pr.tkA); err != nil {
			return nil, err
		}
	}
	if inB {
		if stB, err = sb.State(ctx, pr.tkB); err != nil {
			return nil, err
		}
	}
	props, snap, tk := propsB, sb, pr.tkB
	switch {
	case inA && inB:
		if !sameColumns(stA.Schema(), stB.Schema()) {
			switch {
			case sameFragments(stA, stB):
				return nil, nil
			case stA.Rows() == 0:
				stA = nil
			case stB.Rows() > 0 || strict:
				return nil, &ChangeSchemaBoundaryError{Commit: b.ID.String(), TypeName: name}
			default:
				props, snap, tk, stB = propsA, sa, pr.tkA, nil
			}
		}
	case inA:
		if strict && stA.Rows() > 0 {
			return nil, &ChangeSchemaBoundaryError{Commit: b.ID.String(), TypeName: name}
		}
		props, snap, tk = propsA, sa, pr.tkA
	}
	if stA == nil && stB == nil {
		return nil, nil
	}
	diff, _, err := g.tableDiff(ctx, snap, tk, props, kind == "edge", stA, stB)
	if err != nil {
		return nil, fmt.Errorf("exec: diff %s: %w", tk, err)
	}
	out := make([]Change, 0, len(diff))
	for _, id := range sortedTableKeys(diff) {
		ch, err := toChange(kind, name, props, diff[id])
		if err != nil {
			return nil, err
		}
		ch.TypeID = pr.id
		out = append(out, ch)
	}
	return out, nil
}

// sameFragments reports whether two states hold the same fragments with
// the same deletion vectors (so the same rows, whatever their schemas).
func sameFragments(a, b *table.State) bool {
	fa, fb := a.Fragments(), b.Fragments()
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i].Key != fb[i].Key || fa[i].DV != fb[i].DV {
			return false
		}
	}
	return true
}

// tableProps returns the declared properties of a table key in cat.
func tableProps(cat *schema.Catalog, tk string) ([]*schema.Property, bool) {
	kind, name := snapshot.SplitKey(tk)
	if kind == "node" {
		nt, ok := cat.Node(name)
		if !ok || nt.Name != name {
			return nil, false
		}
		return nt.Props, true
	}
	et, ok := cat.Edge(name)
	if !ok || et.Name != name {
		return nil, false
	}
	return et.Props, true
}

func toChange(kind, name string, props []*schema.Property, rc rowChange) (Change, error) {
	ch := Change{Kind: kind, Type: name}
	img := func(r *Row) (map[string]any, error) {
		m := make(map[string]any, len(props))
		for _, p := range props {
			raw, err := value.EncodeJSON(p.Type, r.Values[p.Name])
			if err != nil {
				return nil, fmt.Errorf("exec: %s '%s'.%s: %w", name, r.ID, p.Name, err)
			}
			m[p.Name] = raw
		}
		return m, nil
	}
	var err error
	switch {
	case rc.before == nil:
		ch.Op, ch.ID, ch.Src, ch.Dst = OpInsert, rc.after.ID, rc.after.Src, rc.after.Dst
	case rc.after == nil:
		ch.Op, ch.ID, ch.Src, ch.Dst = OpDelete, rc.before.ID, rc.before.Src, rc.before.Dst
	default:
		ch.Op, ch.ID, ch.Src, ch.Dst = OpUpdate, rc.after.ID, rc.after.Src, rc.after.Dst
	}
	if rc.before != nil {
		ch.BeforeSrc, ch.BeforeDst = rc.before.Src, rc.before.Dst
	}
	if rc.before != nil {
		if ch.Before, err = img(rc.before); err != nil {
			return Change{}, err
		}
	}
	if rc.after != nil {
		if ch.After, err = img(rc.after); err != nil {
			return Change{}, err
		}
	}
	return ch, nil
}
