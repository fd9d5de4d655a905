package eval

import (
	"cmp"
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// expander walks one edge table for one Expand operator. Adjacency comes
// from EdgeTable.Out/In (built once per table image); endpoint ids are
// resolved to node rows with NodeTable.Row, only for edges actually walked.
type expander struct {
	et       *snapshot.EdgeTable
	src, dst *snapshot.NodeTable
	dir      query.Dir
	// stamp/gen mark visited destination rows per source without clearing
	// an array per source: a row is visited iff stamp[row] == gen.
	stamp []uint32
	gen   uint32
	// bySrc/byDst are the row-resolved adjacencies (adjacency.go, snapshot/adjacency.go) keyed by
	// source rows and by destination rows, built on first use. byID walks
	// the id-keyed maps instead (the reference path, pinned equal by
	// TestExpandRowsMatchByID).
	bySrc, byDst *rowAdj
	byID         bool
}

func newExpander(et *snapshot.EdgeTable, src, dst *snapshot.NodeTable, dir query.Dir, byID bool) *expander {
	return &expander{et: et, src: src, dst: dst, dir: dir, byID: byID}
}

// rowsFrom returns the row-resolved adjacency whose near ends are rows of
// src (the expander's source image) and far ends rows of its destination.
func (x *expander) rowsFrom() *rowAdj {
	if x.bySrc == nil {
		x.bySrc = newRowAdj(x.et, x.dir, x.src, x.dst)
	}
	return x.bySrc
}

// rowsWithin is the adjacency among destination rows, for multi-hop walks.
func (x *expander) rowsWithin() *rowAdj {
	if x.byDst == nil {
		x.byDst = newRowAdj(x.et, x.dir, x.dst, x.dst)
	}
	return x.byDst
}

// smallDegree is the neighbour count below which one-hop deduplication
// scans the result instead of touching the per-table stamp array.
const smallDegree = 32

func (x *expander) nextGen() {
	if x.stamp == nil {
		// Taken on first need (a one-hop expand from low-degree sources
		// never needs it) from the destination image's pool: allocating and
		// zeroing one per query would cost more than a short walk.
		x.stamp, x.gen = x.dst.TakeStamps()
	}
	x.gen++
	if x.gen == 0 { // wrapped: old stamps could alias the new generation
		clear(x.stamp)
		x.gen = 1
	}
}

// incident returns the edge rows leaving (DirOut), entering (DirIn) or
// touching (DirBoth, each edge once, a self-loop once) the node id, with
// the neighbour on the far side of each.
func (x *expander) incident(id string, visit func(edge int32, far string)) {
	switch x.dir {
	case query.DirOut:
		for _, e := range x.et.Out(id) {
			visit(e, x.et.Dst[e])
		}
	case query.DirIn:
		for _, e := range x.et.In(id) {
			visit(e, x.et.Src[e])
		}
	default:
		for _, e := range x.et.Out(id) {
			visit(e, x.et.Dst[e])
		}
		for _, e := range x.et.In(id) {
			if x.et.Src[e] == x.et.Dst[e] {
				continue // a self-loop was already seen as an out-edge
			}
			visit(e, x.et.Src[e])
		}
	}
}

// neighbours returns the distinct destination rows one hop from source row
// src, in adjacency order (set semantics per source row, §5.3).
func (x *expander) neighbours(src int32, out []int32) []int32 {
	if !x.byID {
		a := x.rowsFrom()
		small := a.degree(src) <= smallDegree
		if !small {
			x.nextGen()
		}
		a.incident(src, func(_ int32, d int32) {
			switch {
			case d < 0:
			case small:
				if !slices.Contains(out, d) {
					out = append(out, d)
				}
			case x.stamp[d] != x.gen:
				x.stamp[d] = x.gen
				out = append(out, d)
			}
		})
		return out
	}
	id := x.src.IDs[src]
	small := len(x.et.Out(id))+len(x.et.In(id)) <= smallDegree
	if !small {
		x.nextGen()
	}
	x.incident(id, func(_ int32, far string) {
		d, ok := x.dst.Row(far)
		switch {
		case !ok:
		case small:
			if !slices.Contains(out, int32(d)) {
				out = append(out, int32(d))
			}
		case x.stamp[d] != x.gen:
			x.stamp[d] = x.gen
			out = append(out, int32(d))
		}
	})
	return out
}

// reach runs a BFS from source row src over a same-type edge and returns
// every node whose shortest hop distance d satisfies lo <= d <= hi, each
// once, in BFS order. The source is never re-reported except through a
// self-loop edge on it, which reports it at hop 1 without re-expanding it.
func (x *expander) reach(src int32, lo, hi int64, out []int32) []int32 {
	if !x.byID && x.src == x.dst {
		return x.reachRows(src, lo, hi, out)
	}
	x.nextGen()
	x.stamp[src] = x.gen
	srcID := x.src.IDs[src]
	frontier := []int32{src}
	var next []int32
	for d := int64(1); d <= hi && len(frontier) > 0; d++ {
		next = next[:0]
		for _, n := range frontier {
			nid := x.dst.IDs[n]
			x.incident(nid, func(_ int32, far string) {
				if d == 1 && far == srcID {
					// Self-loop on the source: reported at hop 1, not expanded.
					if lo <= 1 && !slices.Contains(out, src) {
						out = append(out, src)
					}
					return
				}
				row, ok := x.dst.Row(far)
				if !ok || x.stamp[row] == x.gen {
					return
				}
				x.stamp[row] = x.gen
				next = append(next, int32(row))
				if d >= lo {
					out = append(out, int32(row))
				}
			})
		}
		frontier, next = next, frontier
	}
	return out
}

// reachRows is reach over the row-resolved adjacency; the source and
// destination images are the same (a same-type walk), so the source is the
// far row src exactly when the far id is the source's id.
func (x *expander) reachRows(src int32, lo, hi int64, out []int32) []int32 {
	a := x.rowsWithin()
	x.nextGen()
	x.stamp[src] = x.gen
	frontier := []int32{src}
	var next []int32
	for d := int64(1); d <= hi && len(frontier) > 0; d++ {
		next = next[:0]
		for _, n := range frontier {
			a.incident(n, func(_ int32, row int32) {
				if d == 1 && row == src {
					// Self-loop on the source: reported at hop 1, not expanded.
					if lo <= 1 && !slices.Contains(out, src) {
						out = append(out, src)
					}
					return
				}
				if row < 0 || x.stamp[row] == x.gen {
					return
				}
				x.stamp[row] = x.gen
				next = append(next, row)
				if d >= lo {
					out = append(out, row)
				}
			})
		}
		frontier, next = next, frontier
	}
	return out
}

// edgesTo returns the edges incident to source row src whose far end
// resolves to a destination row (all of them when want < 0, else only
// those reaching want), sorted by edge id: one row per edge, §5.3.
func (x *expander) edgesTo(src int32, want int32) (edges, fars []int32) {
	type hit struct{ e, far int32 }
	var hits []hit
	if !x.byID {
		x.rowsFrom().incident(src, func(e, d int32) {
			if d < 0 || (want >= 0 && d != want) {
				return
			}
			hits = append(hits, hit{e, d})
		})
	} else {
		x.incident(x.src.IDs[src], func(e int32, far string) {
			d, ok := x.dst.Row(far)
			if !ok || (want >= 0 && int32(d) != want) {
				return
			}
			hits = append(hits, hit{e, int32(d)})
		})
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(x.et.IDs[a.e], x.et.IDs[b.e]) })
	for _, h := range hits {
		edges = append(edges, h.e)
		fars = append(fars, h.far)
	}
	return edges, fars
}

// evalExpand extends every input row with the destinations reachable from
// its source (or, with DstBound, keeps it iff its bound destination is
// reachable). Output rows stay grouped by input row, which preserves rank
// order.
func (r *runner) evalExpand(ctx context.Context, o *query.Expand, l *layout) (*rowSet, error) {
	in, err := r.eval(ctx, o.Input, l)
	if err != nil {
		return nil, err
	}
	et, err := r.snap.Edges(ctx, o.Edge)
	if err != nil {
		return nil, err
	}
	ss, ds := l.idx(o.Src), l.idx(o.Dst)
	x := newExpander(et, l.slots[ss].nodes, l.slots[ds].nodes, o.Dir, r.opts.NoIndexes)
	defer x.release()
	out := newRowSet(r.mem, l.width(), in.n())
	ws := -1
	if o.EdgeVar != "" {
		ws = l.idx(o.EdgeVar)
	}
	multi := o.Min != 1 || o.Max != 1
	// BFS results are memoized per source: after a cross join many rows
	// share one source, and a BFS is the expensive step.
	var memo map[int32][]int32
	if multi {
		memo = map[int32][]int32{}
	}
	var scratch []int32
	limit, capped := r.limitCap(o)
	for i := 0; i < in.n(); i++ {
		if capped && out.n() >= limit {
			out.data = out.data[:limit*out.w]
			break
		}
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row := in.row(i)
		src := row[ss]
		switch {
		case ws >= 0:
			want := int32(-1)
			if o.DstBound {
				want = row[ds]
			}
			edges, fars := x.edgesTo(src, want)
			for k, e := range edges {
				nr := out.push(row)
				nr[ds], nr[ws] = fars[k], e
			}
		case multi:
			dsts, ok := memo[src]
			if !ok {
				dsts = x.reach(src, o.Min, o.Max, nil)
				charge(r.mem, int64(cap(dsts))*4+64)
				memo[src] = dsts
			}
			emit(out, row, ds, dsts, o.DstBound)
		default:
			scratch = x.neighbours(src, scratch[:0])
			emit(out, row, ds, scratch, o.DstBound)
		}
	}
	return out, nil
}

// emit appends row extended with each destination, or (bound) row once if
// its destination is among dsts.
func emit(out *rowSet, row []int32, ds int, dsts []int32, bound bool) {
	if bound {
		if slices.Contains(dsts, row[ds]) {
			out.push(row)
		}
		return
	}
	for _, d := range dsts {
		nr := out.push(row)
		nr[ds] = d
	}
}
