package snapshot

import (
	"sync"
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

// CSR is one row-resolved adjacency.
type CSR struct {
	off  []int32 // len = key rows + 1
	edge []int32 // edge rows grouped by key row, in edge-row order
	far  []int32 // far-end row per position, -1 if unresolved
}

// at returns the edges at key row k and their far rows.
func (c *CSR) At(k int32) (edges, fars []int32) {
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
	c    *CSR
}

// csrCache is the set of row-resolved adjacencies of one edge image.
type csrCache struct {
	mu      sync.Mutex
	entries []*csrEntry // oldest first
}

// RowCSR returns the adjacency of t whose near end (src, or dst when in)
// is resolved in key and whose far end is resolved in far, building it
// once.
func (t *EdgeTable) RowCSR(in bool, key, far *NodeTable) *CSR {
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
		e.c = buildCSR(nearEnd, farEnd, &t.rowSpace, key, far)
	})
	return e.c
}

// buildCSR resolves the live edges of an edge image (row space ers).
func buildCSR(nearEnd, farEnd []string, ers *rowSpace, key, far *NodeTable) *CSR {
	n := key.Len()
	off := make([]int32, n+1)
	near := make([]int32, len(nearEnd))
	for e, id := range nearEnd {
		if !ers.Alive(e) {
			near[e] = -1
			continue
		}
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
	c := &CSR{off: off, edge: make([]int32, total), far: make([]int32, total)}
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

// stampBuf is a visited array of one node image with its last generation:
// a row is visited iff stamp[row] == gen, so a reused array needs no
// clearing as long as generations keep increasing.
type stampBuf struct {
	stamp []uint32
	gen   uint32
}

// TakeStamps returns a visited array over t's rows and the generation it
// was left at (pooled per image; the caller increments before use).
func (t *NodeTable) TakeStamps() ([]uint32, uint32) {
	if b, ok := t.stamps.Get().(*stampBuf); ok {
		return b.stamp, b.gen
	}
	return make([]uint32, t.Len()), 0
}

// Degree returns the number of edges at key row k.
func (c *CSR) Degree(k int32) int { return int(c.off[k+1] - c.off[k]) }

// PutStamps returns a visited array taken with TakeStamps, with the
// generation it was left at, to t's pool.
func (t *NodeTable) PutStamps(stamp []uint32, gen uint32) {
	t.stamps.Put(&stampBuf{stamp: stamp, gen: gen})
}
