package snapshot

import (
	"context"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// The committed-row lookups a write validates against (exec's Committed
// interface). Their indexes (edge id → row, unique tuple → ids) are derived
// from immutable images, so they are cached on the handle under the
// image's key and shared by every later write on the same state.

// NodeExists answers exec.Committed through the fragments' id indexes
// (layout.go): no table image is assembled for a point write.
func (s *Snapshot) NodeExists(ctx context.Context, nodeType, id string) (bool, error) {
	nt, ok := s.cat.Node(nodeType)
	if !ok {
		return false, &UnknownTypeError{Kind: "node", Name: nodeType}
	}
	if locs, ok, err := s.indexLocate(ctx, NodeKey(nt.Name), []string{id}); ok || err != nil {
		return len(locs) > 0, err
	}
	fs, err := s.Layout(ctx, NodeKey(nt.Name))
	if err != nil {
		return false, err
	}
	_, _, ok = fs.Locate(id)
	return ok, nil
}

// LookupUnique answers exec.Committed with a hash index per (table, columns).
func (s *Snapshot) LookupUnique(ctx context.Context, typeKey string, cols []string, tuple []any) ([]string, error) {
	if ids, ok, err := s.lookupKey(ctx, typeKey, cols, tuple); ok || err != nil {
		return ids, err
	}
	idx, err := s.uniqueIndex(ctx, typeKey, cols)
	if err != nil {
		return nil, err
	}
	return idx[value.TupleKey(tuple)], nil
}

// lookupKey answers LookupUnique for a node type's single String/enum
// @key through the image's id index: the key value is the node id, so no
// per-image hash of every row (an O(n) build after every write) is needed.
// ok is false when the shortcut does not apply.
func (s *Snapshot) lookupKey(ctx context.Context, typeKey string, cols []string, tuple []any) ([]string, bool, error) {
	kind, name := SplitKey(typeKey)
	if kind != "node" || len(cols) != 1 || len(tuple) != 1 {
		return nil, false, nil
	}
	nt, ok := s.cat.Node(name)
	if !ok || len(nt.Key) != 1 || nt.Key[0] != cols[0] {
		return nil, false, nil
	}
	p, ok := nt.Prop(cols[0])
	v, isStr := tuple[0].(string)
	if !ok || !isStr || (p.Type.Kind != schema.KindString && p.Type.Kind != schema.KindEnum) {
		return nil, false, nil
	}
	if id, _, found, ok, err := s.KeyRow(ctx, nt, v, false); ok || err != nil {
		if !found {
			return nil, ok, err
		}
		return []string{id}, true, nil
	}
	fs, err := s.Layout(ctx, NodeKey(nt.Name))
	if err != nil {
		return nil, false, err
	}
	if !fs.KeyCanonical(nt) {
		return nil, false, nil
	}
	if _, _, found := fs.Locate(v); found {
		return []string{v}, true, nil
	}
	return nil, true, nil
}

func (s *Snapshot) uniqueIndex(ctx context.Context, typeKey string, cols []string) (map[string][]string, error) {
	key := s.ImageKey(typeKey) + "/unique/" + strings.Join(cols, "\x00")
	v, err := s.l.cache.GetOrLoad(ctx, key, func(ctx context.Context) (any, int64, error) {
		// The table's rows: ids, which are live, and row i's value of a
		// column (an edge's src and dst are columns too).
		var ids []string
		var alive func(i int) bool
		var get func(i int, col string) any
		if kind, name := SplitKey(typeKey); kind == "node" {
			t, err := s.Nodes(ctx, name)
			if err != nil {
				return nil, 0, err
			}
			ids, alive, get = t.IDs, t.Alive, t.Value
		} else {
			t, err := s.Edges(ctx, name)
			if err != nil {
				return nil, 0, err
			}
			ids, alive = t.IDs, t.Alive
			get = func(i int, col string) any {
				if _, isProp := t.Cols[col]; !isProp {
					switch col {
					case "src":
						return t.Src[i]
					case "dst":
						return t.Dst[i]
					}
				}
				return t.Value(i, col)
			}
		}
		idx := map[string][]string{}
		tuple := make([]any, len(cols))
		for i, id := range ids {
			if !alive(i) {
				continue
			}
			for j, col := range cols {
				tuple[j] = get(i, col)
			}
			if engHasNull(tuple) {
				continue
			}
			k := value.TupleKey(tuple)
			idx[k] = append(idx[k], id)
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

// EdgeIDs answers exec.Committed through the edge table's adjacency.
func (s *Snapshot) EdgeIDs(ctx context.Context, edgeType string, end Endpoint, nodeID string) ([]string, error) {
	t, err := s.Edges(ctx, edgeType)
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

// EdgeEnds answers exec.Committed through the fragments' id indexes.
func (s *Snapshot) EdgeEnds(ctx context.Context, edgeType, id string) (string, string, bool, error) {
	et, ok := s.cat.Edge(edgeType)
	if !ok {
		return "", "", false, &UnknownTypeError{Kind: "edge", Name: edgeType}
	}
	if src, dst, found, ok, err := s.indexEdgeEnds(ctx, EdgeKey(et.Name), id); ok || err != nil {
		return src, dst, found, err
	}
	fs, err := s.Layout(ctx, EdgeKey(et.Name))
	if err != nil {
		return "", "", false, err
	}
	part, off, ok := fs.Locate(id)
	if !ok {
		return "", "", false, nil
	}
	d := fs.parts[part]
	return d.Src[off], d.Dst[off], true, nil
}

func engHasNull(tuple []any) bool {
	for _, x := range tuple {
		if x == nil {
			return true
		}
	}
	return false
}
