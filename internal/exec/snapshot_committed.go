package exec

import (
	"context"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// snapshotCommitted implements Committed (validate.go) over a snapshot's
// materialized tables. Its lookup indexes (edge id → row, unique tuple →
// ids) are derived from immutable images, so they are cached on the handle
// under the image's key and shared by every later write on the same state.
type snapshotCommitted struct {
	s *GraphSnapshot
}

var _ Committed = snapshotCommitted{}

// NodeExists implements Committed through the fragments' id indexes
// (write_lookup.go): no table image is assembled for a point write.
func (c snapshotCommitted) NodeExists(ctx context.Context, nodeType, id string) (bool, error) {
	nt, ok := c.s.cat.Node(nodeType)
	if !ok {
		return false, &UnknownTypeError{Kind: "node", Name: nodeType}
	}
	fs, err := c.s.fragSet(ctx, NodeKey(nt.Name))
	if err != nil {
		return false, err
	}
	_, _, ok = fs.locate(id)
	return ok, nil
}

// LookupUnique implements Committed with a hash index per (table, columns).
func (c snapshotCommitted) LookupUnique(ctx context.Context, typeKey string, cols []string, tuple []any) ([]string, error) {
	if ids, ok, err := c.lookupKey(ctx, typeKey, cols, tuple); ok || err != nil {
		return ids, err
	}
	idx, err := c.uniqueIndex(ctx, typeKey, cols)
	if err != nil {
		return nil, err
	}
	return idx[value.TupleKey(tuple)], nil
}

// lookupKey answers LookupUnique for a node type's single String/enum
// @key through the image's id index: the key value is the node id, so no
// per-image hash of every row (an O(n) build after every write) is needed.
// ok is false when the shortcut does not apply.
func (c snapshotCommitted) lookupKey(ctx context.Context, typeKey string, cols []string, tuple []any) ([]string, bool, error) {
	kind, name := splitTableKey(typeKey)
	if kind != "node" || len(cols) != 1 || len(tuple) != 1 {
		return nil, false, nil
	}
	nt, ok := c.s.cat.Node(name)
	if !ok || len(nt.Key) != 1 || nt.Key[0] != cols[0] {
		return nil, false, nil
	}
	p, ok := nt.Prop(cols[0])
	v, isStr := tuple[0].(string)
	if !ok || !isStr || (p.Type.Kind != schema.KindString && p.Type.Kind != schema.KindEnum) {
		return nil, false, nil
	}
	fs, err := c.s.fragSet(ctx, NodeKey(nt.Name))
	if err != nil {
		return nil, false, err
	}
	if !fs.keyCanonical(nt) {
		return nil, false, nil
	}
	if _, _, found := fs.locate(v); found {
		return []string{v}, true, nil
	}
	return nil, true, nil
}

func (c snapshotCommitted) uniqueIndex(ctx context.Context, typeKey string, cols []string) (map[string][]string, error) {
	key := c.s.imageKey(typeKey) + "/unique/" + strings.Join(cols, "\x00")
	v, err := c.s.g.cache.GetOrLoad(ctx, key, func(ctx context.Context) (any, int64, error) {
		idx := map[string][]string{}
		kind, name := splitTableKey(typeKey)
		tuple := make([]any, len(cols))
		add := func(id string, get func(col string) any) {
			for i, col := range cols {
				tuple[i] = get(col)
			}
			if engHasNull(tuple) {
				return
			}
			k := value.TupleKey(tuple)
			idx[k] = append(idx[k], id)
		}
		if kind == "node" {
			t, err := c.s.Nodes(ctx, name)
			if err != nil {
				return nil, 0, err
			}
			for i, id := range t.IDs {
				add(id, func(col string) any { return t.Value(i, col) })
			}
		} else {
			t, err := c.s.Edges(ctx, name)
			if err != nil {
				return nil, 0, err
			}
			for i, id := range t.IDs {
				add(id, func(col string) any {
					if _, isProp := t.Cols[col]; !isProp {
						switch col {
						case "src":
							return t.Src[i]
						case "dst":
							return t.Dst[i]
						}
					}
					return t.Value(i, col)
				})
			}
		}
		for _, ids := range idx {
			slices.Sort(ids)
		}
		return idx, int64(len(idx))*96 + 256, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(map[string][]string), nil
}

// EdgeIDs implements Committed through the edge table's adjacency.
func (c snapshotCommitted) EdgeIDs(ctx context.Context, edgeType string, end Endpoint, nodeID string) ([]string, error) {
	t, err := c.s.Edges(ctx, edgeType)
	if err != nil {
		return nil, err
	}
	rows := t.Out(nodeID)
	if end == Dst {
		rows = t.In(nodeID)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = t.IDs[r]
	}
	return ids, nil
}

// EdgeEnds implements Committed through the fragments' id indexes.
func (c snapshotCommitted) EdgeEnds(ctx context.Context, edgeType, id string) (string, string, bool, error) {
	et, ok := c.s.cat.Edge(edgeType)
	if !ok {
		return "", "", false, &UnknownTypeError{Kind: "edge", Name: edgeType}
	}
	fs, err := c.s.fragSet(ctx, EdgeKey(et.Name))
	if err != nil {
		return "", "", false, err
	}
	part, off, ok := fs.locate(id)
	if !ok {
		return "", "", false, nil
	}
	d := fs.parts[part]
	return d.src[off], d.dst[off], true, nil
}

func engHasNull(tuple []any) bool {
	for _, x := range tuple {
		if x == nil {
			return true
		}
	}
	return false
}
