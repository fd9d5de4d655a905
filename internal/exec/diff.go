package exec

import (
	"cmp"
	"context"
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
	ID   string
	Op   string // OpInsert, OpUpdate or OpDelete
	// Src and Dst are an edge's endpoints (of the after image, or of the
	// before image for a delete); empty for nodes.
	Src, Dst string
	// Before and After are the user properties (no id, src, dst) of the old
	// and new image: Before is nil for an insert, After nil for a delete.
	// Values are JSON-encoded per spec/languages.md §2.2 (json.RawMessage),
	// so an image marshals as-is; a null property is present as null.
	Before, After map[string]any
}

// Diff returns the entity-level changes that turn from into to, sorted by
// (kind, type, id) with kind in byte order — edges before nodes, as
// spec/engine.md §4.2 groups them. The two targets may be on any branches.
// Only tables whose state key differs are read, and of those only the
// fragments that differ (diff_table.go), so the cost follows the delta.
func (g *Graph) Diff(ctx context.Context, from, to Target) ([]Change, error) {
	a, _, err := g.resolveCommit(ctx, from)
	if err != nil {
		return nil, err
	}
	b, _, err := g.resolveCommit(ctx, to)
	if err != nil {
		return nil, err
	}
	changes, err := g.commitDiff(ctx, a, b, false)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(changes, func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Type, y.Type), cmp.Compare(x.ID, y.ID))
	})
	return changes, nil
}

// CommitChanges returns the changes a commit made relative to its first
// parent (a merge commit: what the merge brought to its target), in the
// frozen order of spec/engine.md §4.3: nodes before edges, then type, then
// id. A parentless commit fails with *CommitHasNoParentError.
func (g *Graph) CommitChanges(ctx context.Context, commitID string) ([]Change, error) {
	id, err := g.repo.ResolveRevision(ctx, commitID)
	if err != nil {
		return nil, err
	}
	c, err := g.repo.Commit(ctx, id)
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
	rank := func(k string) int {
		if k == "node" {
			return 0
		}
		return 1
	}
	slices.SortFunc(changes, func(x, y Change) int {
		return cmp.Or(cmp.Compare(rank(x.Kind), rank(y.Kind)), cmp.Compare(x.Type, y.Type), cmp.Compare(x.ID, y.ID))
	})
	return changes, nil
}

// commitDiff diffs every table of two commits. Tables are paired by table
// key. A table present on one side only contributes all its rows as inserts
// or deletes, except that strict (per-commit changes) treats a populated
// dropped table as a schema boundary; a table whose columns differ between
// the sides is always a boundary unless one side is empty.
func (g *Graph) commitDiff(ctx context.Context, a, b *commit.Commit, strict bool) ([]Change, error) {
	sa, err := g.snapshotOf(ctx, a, "")
	if err != nil {
		return nil, err
	}
	sb, err := g.snapshotOf(ctx, b, "")
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, tk := range snapshot.TableKeys(sa.Catalog()) {
		keys[tk] = true
	}
	for _, tk := range snapshot.TableKeys(sb.Catalog()) {
		keys[tk] = true
	}
	var out []Change
	for _, tk := range sortedTableKeys(keys) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if a.Tables[tk] == b.Tables[tk] {
			continue // the same immutable state: nothing to read
		}
		kind, name := snapshot.SplitKey(tk)
		propsA, inA := tableProps(sa.Catalog(), tk)
		propsB, inB := tableProps(sb.Catalog(), tk)
		var stA, stB *table.State
		if inA {
			if stA, err = sa.State(ctx, tk); err != nil {
				return nil, err
			}
		}
		if inB {
			if stB, err = sb.State(ctx, tk); err != nil {
				return nil, err
			}
		}
		props, snap := propsB, sb
		switch {
		case inA && inB:
			if !sameColumns(stA.Schema(), stB.Schema()) {
				if stA.Rows() == 0 {
					stA = nil
				} else if stB.Rows() > 0 || strict {
					return nil, &ChangeSchemaBoundaryError{Commit: b.ID.String(), TypeName: name}
				} else {
					props, snap, stB = propsA, sa, nil
				}
			}
		case inA:
			if strict && stA.Rows() > 0 {
				return nil, &ChangeSchemaBoundaryError{Commit: b.ID.String(), TypeName: name}
			}
			props, snap = propsA, sa
		}
		if stA == nil && stB == nil {
			continue
		}
		diff, _, err := g.tableDiff(ctx, snap, tk, props, kind == "edge", stA, stB)
		if err != nil {
			return nil, fmt.Errorf("exec: diff %s: %w", tk, err)
		}
		for _, id := range sortedTableKeys(diff) {
			ch, err := toChange(kind, name, props, diff[id])
			if err != nil {
				return nil, err
			}
			out = append(out, ch)
		}
	}
	return out, nil
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
