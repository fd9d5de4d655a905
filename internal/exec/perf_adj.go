package exec

import (
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/query"
)

// Row-resolved adjacency (CSR). EdgeTable.Out/In answer "edges at node id"
// through a map keyed by id, and every walked edge then needs a second map
// lookup (NodeTable.Row) for its far end. A traversal instead uses, per
// (edge image, direction, key node image, far node image), a compressed
// sparse row layout: for key row k, positions off[k]..off[k+1] list the
// edges whose near end is k's id, in edge-row order (the order of Out/In),
// with the far end already resolved to a row of the far image (-1 when the
// far id is not in it). Walking a hop is then two slice reads per edge.
//
// Images are immutable and cached by state key, so a CSR depending on two
// node images is keyed by both (pointer identity) and kept with the edge
// image; only the last maxCSRs are kept so an edge image that outlives many
// node images (node-only writes) does not pin them all.

// maxCSRs bounds the row-resolved adjacencies kept per edge image.
const maxCSRs = 4

// csr is one row-resolved adjacency.
type csr struct {
	off  []int32 // len = key rows + 1
	edge []int32 // edge rows grouped by key row, in edge-row order
	far  []int32 // far-end row per position, -1 if unresolved
}

// at returns the edges at key row k and their far rows.
func (c *csr) at(k int32) (edges, fars []int32) {
	lo, hi := c.off[k], c.off[k+1]
	return c.edge[lo:hi], c.far[lo:hi]
}

type csrKey struct {
	in       bool // near end is dst (DirIn) instead of src
	key, far *NodeTable
}

type csrEntry struct {
	k    csrKey
	once sync.Once
	c    *csr
}

// csrCache is the set of row-resolved adjacencies of one edge image.
type csrCache struct {
	mu      sync.Mutex
	entries []*csrEntry // oldest first
}

// rowCSR returns the adjacency of t whose near end (src, or dst when in)
// is resolved in key and whose far end is resolved in far, building it
// once.
func (t *EdgeTable) rowCSR(in bool, key, far *NodeTable) *csr {
	k := csrKey{in: in, key: key, far: far}
	cc := &t.csrs
	cc.mu.Lock()
	var e *csrEntry
	for _, x := range cc.entries {
		if x.k == k {
			e = x
			break
		}
	}
	if e == nil {
		e = &csrEntry{k: k}
		if len(cc.entries) >= maxCSRs {
			cc.entries = append(cc.entries[:0], cc.entries[1:]...)
		}
		cc.entries = append(cc.entries, e)
	}
	cc.mu.Unlock()
	e.once.Do(func() {
		nearEnd, farEnd := t.Src, t.Dst
		if in {
			nearEnd, farEnd = t.Dst, t.Src
		}
		e.c = buildCSR(nearEnd, farEnd, key, far)
	})
	return e.c
}

func buildCSR(nearEnd, farEnd []string, key, far *NodeTable) *csr {
	n := key.Len()
	off := make([]int32, n+1)
	near := make([]int32, len(nearEnd))
	for e, id := range nearEnd {
		r, ok := key.Row(id)
		if !ok {
			near[e] = -1
			continue
		}
		near[e] = int32(r)
		off[r+1]++
	}
	for i := 1; i <= n; i++ {
		off[i] += off[i-1]
	}
	total := off[n]
	c := &csr{off: off, edge: make([]int32, total), far: make([]int32, total)}
	pos := make([]int32, n)
	copy(pos, off[:n])
	for e, k := range near {
		if k < 0 {
			continue
		}
		p := pos[k]
		pos[k]++
		c.edge[p] = int32(e)
		if r, ok := far.Row(farEnd[e]); ok {
			c.far[p] = int32(r)
		} else {
			c.far[p] = -1
		}
	}
	return c
}

// rowAdj is the row-resolved adjacency of one expander, for walks whose
// near ends are rows of key.
type rowAdj struct {
	dir     query.Dir
	et      *EdgeTable
	out, in *csr
}

func newRowAdj(et *EdgeTable, dir query.Dir, key, far *NodeTable) *rowAdj {
	a := &rowAdj{dir: dir, et: et}
	if dir != query.DirIn {
		a.out = et.rowCSR(false, key, far)
	}
	if dir != query.DirOut {
		a.in = et.rowCSR(true, key, far)
	}
	return a
}

// degree is the number of incident edges visit will see at key row k
// (self-loops counted twice for DirBoth).
func (a *rowAdj) degree(k int32) int {
	n := 0
	if a.out != nil {
		n += int(a.out.off[k+1] - a.out.off[k])
	}
	if a.in != nil {
		n += int(a.in.off[k+1] - a.in.off[k])
	}
	return n
}

// incident calls visit for the edges at key row k exactly as
// expander.incident does for the row's id: out-edges, then in-edges, and
// for DirBoth a self-loop once (as an out-edge). far is -1 when the far
// end is not a row of the far image.
func (a *rowAdj) incident(k int32, visit func(edge, far int32)) {
	if a.out != nil {
		edges, fars := a.out.at(k)
		for i, e := range edges {
			visit(e, fars[i])
		}
	}
	if a.in != nil {
		edges, fars := a.in.at(k)
		both := a.out != nil
		for i, e := range edges {
			if both && a.et.Src[e] == a.et.Dst[e] {
				continue // a self-loop was already seen as an out-edge
			}
			visit(e, fars[i])
		}
	}
}

// stampBuf is a visited array of one node image with its last generation:
// a row is visited iff stamp[row] == gen, so a reused array needs no
// clearing as long as generations keep increasing.
type stampBuf struct {
	stamp []uint32
	gen   uint32
}

// takeStamps returns a visited array over t's rows and the generation it
// was left at (pooled per image; the caller increments before use).
func (t *NodeTable) takeStamps() ([]uint32, uint32) {
	if b, ok := t.stamps.Get().(*stampBuf); ok {
		return b.stamp, b.gen
	}
	return make([]uint32, t.Len()), 0
}

// release returns the expander's visited array to its image's pool.
func (x *expander) release() {
	if x.stamp != nil {
		x.dst.stamps.Put(&stampBuf{stamp: x.stamp, gen: x.gen})
		x.stamp = nil
	}
}
