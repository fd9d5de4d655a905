package eval

import (
	"container/heap"
	"context"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/query"
)

// Dense top-k. A projection under `order … limit k` of an unanchored
// traversal walks the dense views (dense_project.go) instead of decoding
// whole tables: every binding row is visited once, in the row executor's
// binding order, and a heap keeps the k best by the row path's order —
// the sort keys (compareKey), then the ids of the tie-break variables
// ascending, then the binding order, since the row path's sort is stable
// (sortRows). So the k rows and their order are exactly the row path's;
// memory is the views (charged to the budget) plus k rows.

// maxDenseTopK bounds the rows the heap holds; a larger limit is left to
// the row path.
const maxDenseTopK = 1 << 16

// denseTopK answers projection o of sort s under limit (> 0), or ok false
// when the shape is not dense.
func (r *runner) denseTopK(ctx context.Context, o *query.Project, s *query.Sort, limit int64) (*outRows, bool, error) {
	if limit <= 0 || limit > maxDenseTopK {
		return nil, false, nil
	}
	var ops []query.Operand
	for _, k := range s.Keys {
		ops = append(ops, k.Value)
	}
	for _, v := range s.TieBreak {
		ops = append(ops, query.Operand{Kind: query.OpdID, Var: v})
	}
	nk, nt := len(s.Keys), len(s.TieBreak)
	for _, c := range o.Cols {
		ops = append(ops, c.Value)
	}
	_, dr, total, ok, err := r.denseWalkOf(ctx, s.Input, ops)
	if err != nil || !ok {
		return nil, false, err
	}
	if total > maxDenseRows {
		return nil, false, nil // the row path reports it over the budget
	}
	we, err := dr.walker(ops)
	if err != nil {
		return nil, false, err
	}
	h := &denseHeap{keys: s.Keys, nk: nk, nt: nt}
	seq := 0
	err = we.each(ctx, int(total), func(row []any) error {
		e := topEntry{row: row, seq: seq}
		seq++
		if h.Len() < int(limit) {
			e.row = slices.Clone(row)
			heap.Push(h, e)
			return nil
		}
		if h.less(e, h.es[0]) {
			h.es[0] = topEntry{row: slices.Clone(row), seq: e.seq}
			heap.Fix(h, 0)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	es := h.es
	slices.SortFunc(es, func(a, b topEntry) int {
		if h.less(a, b) {
			return -1
		}
		return 1 // entries are never equal: seq differs
	})
	rows := make([][]any, len(es))
	for i, e := range es {
		rows[i] = e.row[nk+nt:]
	}
	return heldRows(rows), true, nil
}

// topEntry is one candidate row: the sort keys, the tie-break ids and the
// projected cells, and its place in the binding order.
type topEntry struct {
	row []any
	seq int
}

// denseHeap is a max-heap of candidates: the worst kept row on top.
type denseHeap struct {
	keys   []query.SortKey
	nk, nt int
	es     []topEntry
}

// less reports whether a comes before b in the row path's order.
func (h *denseHeap) less(a, b topEntry) bool {
	for k, sk := range h.keys {
		if c := compareKey(a.row[k], b.row[k], sk.Desc); c != 0 {
			return c < 0
		}
	}
	for i := h.nk; i < h.nk+h.nt; i++ {
		ai, _ := a.row[i].(string)
		bi, _ := b.row[i].(string)
		if c := strings.Compare(ai, bi); c != 0 {
			return c < 0
		}
	}
	return a.seq < b.seq
}

func (h *denseHeap) Len() int           { return len(h.es) }
func (h *denseHeap) Less(i, j int) bool { return h.less(h.es[j], h.es[i]) } // the worst first
func (h *denseHeap) Swap(i, j int)      { h.es[i], h.es[j] = h.es[j], h.es[i] }
func (h *denseHeap) Push(x any)         { h.es = append(h.es, x.(topEntry)) }
func (h *denseHeap) Pop() any {
	e := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	return e
}
