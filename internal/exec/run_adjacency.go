package exec

import (
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// rowAdj is the row-resolved adjacency of one expander, for walks whose
// near ends are rows of key.
type rowAdj struct {
	dir     query.Dir
	et      *snapshot.EdgeTable
	out, in *snapshot.CSR
}

func newRowAdj(et *snapshot.EdgeTable, dir query.Dir, key, far *snapshot.NodeTable) *rowAdj {
	a := &rowAdj{dir: dir, et: et}
	if dir != query.DirIn {
		a.out = et.RowCSR(false, key, far)
	}
	if dir != query.DirOut {
		a.in = et.RowCSR(true, key, far)
	}
	return a
}

// degree is the number of incident edges visit will see at key row k
// (self-loops counted twice for DirBoth).
func (a *rowAdj) degree(k int32) int {
	n := 0
	if a.out != nil {
		n += a.out.Degree(k)
	}
	if a.in != nil {
		n += a.in.Degree(k)
	}
	return n
}

// incident calls visit for the edges at key row k exactly as
// expander.incident does for the row's id: out-edges, then in-edges, and
// for DirBoth a self-loop once (as an out-edge). far is -1 when the far
// end is not a row of the far image.
func (a *rowAdj) incident(k int32, visit func(edge, far int32)) {
	if a.out != nil {
		edges, fars := a.out.At(k)
		for i, e := range edges {
			visit(e, fars[i])
		}
	}
	if a.in != nil {
		edges, fars := a.in.At(k)
		both := a.out != nil
		for i, e := range edges {
			if both && a.et.Src[e] == a.et.Dst[e] {
				continue // a self-loop was already seen as an out-edge
			}
			visit(e, fars[i])
		}
	}
}

// release returns the expander's visited array to its image's pool.
func (x *expander) release() {
	if x.stamp != nil {
		x.dst.PutStamps(x.stamp, x.gen)
		x.stamp = nil
	}
}
