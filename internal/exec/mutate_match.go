package exec

import (
	"context"
	"maps"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// matchingNodes calls fn for every live row of the overlay whose property
// p matches m, in liveNodes order (committed rows, then pending ones).
//
// `where key = v` on a single String/enum @key whose committed rows are
// key-canonical (id = key value, snapshot/layout.go) has at most one committed
// match, the row with id v: it is found through the fragments' id indexes
// instead of walking every row. Pending rows are few and always walked.
// TestMatchingNodesKeyPath compares both paths on random overlays.
func (x *mutExec) matchingNodes(ctx context.Context, nt *schema.NodeType, p *schema.Property, m matcher, fn func(id string, committed bool, row func() Row)) error {
	done, err := x.committedByKey(ctx, nt, p, m, fn)
	if err != nil {
		return err
	}
	if !done {
		return x.liveNodes(ctx, nt, func(id string, committed bool, get func(string) any, row func() Row) {
			if m.match(get(p.Name)) {
				fn(id, committed, row)
			}
		})
	}
	t := x.table(x.nodes, nt.Name)
	for _, id := range t.order {
		r, ok := t.pending[id]
		if !ok || t.deleted[id] || !m.match(r.Values[p.Name]) {
			continue
		}
		fn(id, false, func() Row { return r })
	}
	return nil
}

// committedByKey is the committed half of matchingNodes for a key
// equality; done is false when the shortcut does not apply.
func (x *mutExec) committedByKey(ctx context.Context, nt *schema.NodeType, p *schema.Property, m matcher, fn func(id string, committed bool, row func() Row)) (done bool, err error) {
	v, isStr := m.right.(string)
	if x.noKeyPath || m.op != query.OpEq || !isStr || len(nt.Key) != 1 || nt.Key[0] != p.Name ||
		(p.Type.Kind != schema.KindString && p.Type.Kind != schema.KindEnum) {
		return false, nil
	}
	if id, vals, found, ok, err := x.snap.KeyRow(ctx, nt, v, true); ok || err != nil {
		if err != nil || !found {
			return ok, err
		}
		t := x.table(x.nodes, nt.Name)
		if _, shadowed := t.pending[id]; shadowed || t.deleted[id] || !m.match(vals[p.Name]) {
			return true, nil
		}
		fn(id, true, func() Row { return Row{ID: id, Values: maps.Clone(vals)} })
		return true, nil
	}
	fs, err := x.snap.Layout(ctx, snapshot.NodeKey(nt.Name))
	if err != nil {
		return false, err
	}
	if !fs.KeyCanonical(nt) {
		return false, nil
	}
	part, off, found := fs.Locate(v)
	if !found {
		return true, nil
	}
	d := fs.Part(part)
	t := x.table(x.nodes, nt.Name)
	id := d.IDs[off]
	if _, shadowed := t.pending[id]; shadowed || t.deleted[id] || !m.match(d.Cols[p.Name][off]) {
		return true, nil
	}
	fn(id, true, func() Row {
		vals := make(map[string]any, len(nt.Props))
		for _, q := range nt.Props {
			vals[q.Name] = d.Cols[q.Name][off]
		}
		return Row{ID: id, Values: vals}
	})
	return true, nil
}
