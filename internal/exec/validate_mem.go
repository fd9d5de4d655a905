package exec

import (
	"context"
	"maps"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// MemState is an in-memory committed graph implementing Committed. It is
// the reference semantics for real table-backed implementations and a
// fixture for tests of the write paths; it is not safe for concurrent use.
type MemState struct {
	nodes map[string]map[string]Row // node type -> id -> row
	edges map[string]map[string]Row // edge type -> id -> row
}

// NewMemState returns an empty MemState.
func NewMemState() *MemState {
	return &MemState{nodes: map[string]map[string]Row{}, edges: map[string]map[string]Row{}}
}

// PutNode stores a committed node row, replacing any row with its id.
func (m *MemState) PutNode(nodeType string, row Row) { memPut(m.nodes, nodeType, row) }

// PutEdge stores a committed edge row, replacing any row with its id.
func (m *MemState) PutEdge(edgeType string, row Row) { memPut(m.edges, edgeType, row) }

func memPut(tables map[string]map[string]Row, typ string, row Row) {
	t, ok := tables[typ]
	if !ok {
		t = map[string]Row{}
		tables[typ] = t
	}
	t[row.ID] = row
}

// Apply commits a delta: replaced types are emptied first, then deletes,
// then upserts. It does not validate; call Validate first.
func (m *MemState) Apply(d *Delta) {
	apply := func(tables map[string]map[string]Row, deltas map[string]*TypeDelta) {
		for _, typ := range slices.Sorted(maps.Keys(deltas)) {
			td := deltas[typ]
			if td.Replace {
				delete(tables, typ)
			}
			for _, id := range td.Deletes {
				delete(tables[typ], id)
			}
			for _, r := range td.Upserts {
				memPut(tables, typ, r)
			}
		}
	}
	apply(m.nodes, d.Nodes)
	apply(m.edges, d.Edges)
}

// Node returns a committed node row.
func (m *MemState) Node(nodeType, id string) (Row, bool) {
	r, ok := m.nodes[nodeType][id]
	return r, ok
}

// Edge returns a committed edge row.
func (m *MemState) Edge(edgeType, id string) (Row, bool) {
	r, ok := m.edges[edgeType][id]
	return r, ok
}

// Len returns the number of committed rows of a type key.
func (m *MemState) Len(typeKey string) int {
	if name, ok := cutTypeKey(typeKey, "node:"); ok {
		return len(m.nodes[name])
	}
	if name, ok := cutTypeKey(typeKey, "edge:"); ok {
		return len(m.edges[name])
	}
	return 0
}

func cutTypeKey(typeKey, prefix string) (string, bool) {
	if len(typeKey) > len(prefix) && typeKey[:len(prefix)] == prefix {
		return typeKey[len(prefix):], true
	}
	return "", false
}

// NodeExists implements Committed.
func (m *MemState) NodeExists(_ context.Context, nodeType, id string) (bool, error) {
	_, ok := m.nodes[nodeType][id]
	return ok, nil
}

// LookupUnique implements Committed by a scan, returning ids sorted.
func (m *MemState) LookupUnique(_ context.Context, typeKey string, cols []string, tuple []any) ([]string, error) {
	var table map[string]Row
	if name, ok := cutTypeKey(typeKey, "node:"); ok {
		table = m.nodes[name]
	} else if name, ok := cutTypeKey(typeKey, "edge:"); ok {
		table = m.edges[name]
	}
	want := value.TupleKey(tuple)
	var ids []string
	for id, r := range table {
		if got := rowTuple(cols, r); !tupleHasNull(got) && value.TupleKey(got) == want {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// EdgeIDs implements Committed, returning ids sorted.
func (m *MemState) EdgeIDs(_ context.Context, edgeType string, end snapshot.Endpoint, nodeID string) ([]string, error) {
	var ids []string
	for id, r := range m.edges[edgeType] {
		if (end == snapshot.Src && r.Src == nodeID) || (end == snapshot.Dst && r.Dst == nodeID) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// EdgeEnds implements Committed.
func (m *MemState) EdgeEnds(_ context.Context, edgeType, id string) (string, string, bool, error) {
	r, ok := m.edges[edgeType][id]
	return r.Src, r.Dst, ok, nil
}
