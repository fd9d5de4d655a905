package snapshot

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// NodeTable is the decoded image of one node table: row i is the node
// IDs[i] with property values Cols[p][i] (the value model of value.go; nil
// is null). Rows are physical (rowspace.go): a row may be dead (Alive is
// false), hidden by a write after the image's rows were laid out; the live
// rows, in row order, are the state's rows in storage order.
//
// INVARIANT: every column has len(IDs) entries and the ids of live rows
// are unique (TestNodeTableIndex).
type NodeTable struct {
	Type *schema.NodeType
	IDs  []string
	Cols map[string][]any

	idxOnce sync.Once
	byID    map[string]int32

	// rowSpace.layout, if set, is the fragment view the image was built from:
	// Row answers through the fragments' own id indexes until the image
	// has served rowLookupsBeforeIndex(n) lookups, so a read right after
	// a write does not hash the whole table for a few point lookups.
	rowSpace
	lookups atomic.Int64

	// ix holds the scan indexes of this image (index.go).
	ix     tableIndexes
	stamps sync.Pool // *stampBuf visited arrays for traversals into this image
}

// Len returns the number of rows, dead ones included: rows are numbered
// 0..Len()-1 (size per-row arrays by it; count nodes with Live).
func (t *NodeTable) Len() int { return len(t.IDs) }

// Row returns the row of node id (never a dead row).
func (t *NodeTable) Row(id string) (int, bool) {
	if fs := t.layout; fs != nil && (len(fs.parts) == 1 && fs.dels[0] == nil ||
		t.lookups.Load() < rowLookupsBeforeIndex(len(t.IDs))) {
		// A single clean fragment's own index is exactly the image's.
		t.lookups.Add(1)
		part, off, ok := fs.Locate(id)
		if !ok {
			return 0, false
		}
		return t.place.row(part, off)
	}
	t.idxOnce.Do(func() {
		t.byID = make(map[string]int32, t.Live())
		for i, id := range t.IDs {
			if t.Alive(i) {
				t.byID[id] = int32(i)
			}
		}
	})
	r, ok := t.byID[id]
	return int(r), ok
}

// rowLookupsBeforeIndex is how many Row calls an image of n rows answers
// through its fragments before building its own id map: a fraction of n,
// so the map's O(n) build is paid only by images that are read a lot.
func rowLookupsBeforeIndex(n int) int64 { return int64(64 + n/16) }

// Value returns property prop of row (nil if null or not a column).
func (t *NodeTable) Value(row int, prop string) any { return colValue(t.Cols, row, prop) }

// colValue is row's value in column prop of cols (nil if null or not a
// column).
func colValue(cols map[string][]any, row int, prop string) any {
	c := cols[prop]
	if c == nil {
		return nil
	}
	return c[row]
}

// EdgeTable is the decoded image of one edge table: row i is edge IDs[i]
// from node Src[i] to node Dst[i] with property values Cols[p][i]. Rows
// are physical, as NodeTable's (Alive, Live).
//
// The adjacency lists are built once per table (so once per table state,
// since images are cached by state) on first traversal, not per hop.
type EdgeTable struct {
	Type *schema.EdgeType
	IDs  []string
	Src  []string
	Dst  []string
	Cols map[string][]any

	adjOnce sync.Once
	out     map[string][]int32 // src id → edge rows, in row order
	in      map[string][]int32 // dst id → edge rows, in row order

	rowSpace // layout, placement, dead rows, grow token (rowspace.go)

	csrs  csrCache // row-resolved adjacencies for traversal (adjacency.go)
	noCSR bool     // walk the id-keyed maps instead (tests compare the two)
}

// Len returns the number of rows, dead ones included (count edges with
// Live).
func (t *EdgeTable) Len() int { return len(t.IDs) }

func (t *EdgeTable) buildAdjacency() {
	t.adjOnce.Do(func() {
		t.out = make(map[string][]int32)
		t.in = make(map[string][]int32)
		for i := range t.IDs {
			if !t.Alive(i) {
				continue
			}
			t.out[t.Src[i]] = append(t.out[t.Src[i]], int32(i))
			t.in[t.Dst[i]] = append(t.in[t.Dst[i]], int32(i))
		}
	})
}

// Out returns the rows of edges whose source is src. The slice must not be modified.
func (t *EdgeTable) Out(src string) []int32 {
	t.buildAdjacency()
	return t.out[src]
}

// In returns the rows of edges whose destination is dst. The slice must not be modified.
func (t *EdgeTable) In(dst string) []int32 {
	t.buildAdjacency()
	return t.in[dst]
}

// Value returns property prop of edge row (nil if null or not a column).
func (t *EdgeTable) Value(row int, prop string) any { return colValue(t.Cols, row, prop) }

// Mem is a Snapshot held entirely in memory; tests and the staging
// area of writes build one directly.
type Mem struct {
	Cat   *schema.Catalog
	NodeT map[string]*NodeTable
	EdgeT map[string]*EdgeTable

	// lazy, if set, is a node table a partial snapshot reads only when
	// asked for it (scan_columns.go): a typed column scan may answer the
	// read without it.
	lazy *lazyScan
}

// Catalog returns the catalog of the tables.
func (m *Mem) Catalog() *schema.Catalog { return m.Cat }

// Nodes returns the table of node type typ; a declared type with no table is empty.
func (m *Mem) Nodes(ctx context.Context, typ string) (*NodeTable, error) {
	if t, ok := m.NodeT[typ]; ok {
		return t, nil
	}
	if m.lazy != nil && m.lazy.nt.Name == typ {
		return m.lazy.table(ctx)
	}
	nt, ok := m.Cat.Node(typ)
	if !ok {
		return nil, &UnknownTypeError{Kind: "node", Name: typ}
	}
	return &NodeTable{Type: nt, Cols: map[string][]any{}}, nil
}

// Edges returns the table of edge type typ; a declared type with no table is empty.
func (m *Mem) Edges(_ context.Context, typ string) (*EdgeTable, error) {
	if t, ok := m.EdgeT[typ]; ok {
		return t, nil
	}
	et, ok := m.Cat.Edge(typ)
	if !ok {
		return nil, &UnknownTypeError{Kind: "edge", Name: typ}
	}
	if t, ok := m.EdgeT[et.Name]; ok {
		return t, nil
	}
	return &EdgeTable{Type: et, Cols: map[string][]any{}}, nil
}

// Endpoint selects an edge column: the source or the destination node id.
type Endpoint uint8

// The two edge endpoints.
const (
	Src Endpoint = iota + 1
	Dst
)

func (e Endpoint) String() string {
	if e == Dst {
		return "dst"
	}
	return "src"
}
