package eval

import (
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// evalScan emits one row per node of the scanned type that passes every
// pushed-down filter. With a ranking the filtered candidates are ranked
// (pre-filtering, §5.7) and emitted in rank order.
func (r *runner) evalScan(ctx context.Context, o *query.Scan, l *layout) (*rowSet, error) {
	s := l.idx(o.Var)
	tbl := l.slots[s].nodes
	preds, err := r.appendPreds(ctx, make([]func([]int32) bool, 0, len(o.Filters)), o.Filters, l)
	if err != nil {
		return nil, err
	}
	buf := make([]int32, l.width())
	for i := range buf {
		buf[i] = -1
	}
	// An index narrows the rows to visit (index.go); filters it
	// already decided are skipped, every other one is still evaluated.
	rows, preds, n, indexed := r.indexedScan(o, tbl, preds, true)
	var cands []int32
	if o.Rank != nil && !indexed && len(preds) == 0 {
		// Every row is a candidate: rank them without listing them.
		return r.pushRanked(ctx, o, l, tbl, s, buf, nil, true)
	}
	capRows := 0
	if indexed && o.Rank == nil {
		capRows = min(n, 64) // a key lookup's one row, not a 64-row block
	}
	out := newRowSet(r.mem, l.width(), capRows)
	dead := tbl.HasDead()
	var within map[string]bool // one chunk of root rows (chunk_project.go)
	if o == r.chunkScan {
		within = r.chunkIDs
	}
	for k := 0; k < n; k++ {
		if k&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		i := k
		if indexed {
			i = int(rows[k])
		} else if dead && !tbl.Alive(i) {
			continue
		}
		if within != nil && !within[tbl.IDs[i]] {
			continue
		}
		buf[s] = int32(i)
		keep := true
		for _, p := range preds {
			if !p(buf) {
				keep = false
				break
			}
		}
		if !keep {
			continue
		}
		if o.Rank != nil {
			cands = append(cands, int32(i))
		} else {
			out.push(buf)
		}
	}
	if o.Rank == nil {
		return out, nil
	}
	return r.pushRanked(ctx, o, l, tbl, s, buf, cands, false)
}

// pushRanked ranks a scan's candidates (every row when all) and returns
// one binding row per ranked entity, in rank order.
func (r *runner) pushRanked(ctx context.Context, o *query.Scan, l *layout, tbl *snapshot.NodeTable, s int, buf []int32, cands []int32, all bool) (*rowSet, error) {
	k := o.K
	if k == 0 && o.Rank.Func == "bm25" && r.projLimit > 0 && l == r.top && r.bindingRoot == query.Op(o) {
		k = r.projLimit // the scan is the whole binding tree: one row per entity
	}
	ranked, err := r.rankEntities(ctx, o.Rank, k, tbl, cands, all)
	if err != nil {
		return nil, err
	}
	out := newRowSet(r.mem, l.width(), len(ranked))
	for _, e := range ranked {
		buf[s] = e
		out.push(buf)
	}
	return out, nil
}

// evalRankRows ranks a variable that a traversal introduced: its distinct
// entities are ranked like a scan's candidates and rows of entities that
// do not rank (outside the top K, or no bm25 match) are dropped. The final
// order is applied by regroup.
func (r *runner) evalRankRows(ctx context.Context, o *query.RankRows, l *layout) (*rowSet, error) {
	in, err := r.eval(ctx, o.Input, l)
	if err != nil {
		return nil, err
	}
	s := l.idx(rankVar(o.Rank))
	seen := map[int32]bool{}
	var cands []int32
	for i := 0; i < in.n(); i++ {
		if e := in.row(i)[s]; !seen[e] {
			seen[e] = true
			cands = append(cands, e)
		}
	}
	ranked, err := r.rankEntities(ctx, o.Rank, o.K, l.slots[s].nodes, cands, false)
	if err != nil {
		return nil, err
	}
	keep := make(map[int32]bool, len(ranked))
	for _, e := range ranked {
		keep[e] = true
	}
	return in.filter(func(row []int32) bool { return keep[row[s]] }), nil
}

// regroup orders rows by the rank position of their ranked entity,
// stably, so fan-out rows stay grouped under their entity in the order the
// pipeline produced them.
func (r *runner) regroup(rs *rowSet) *rowSet {
	s := r.rankSlot
	perm := make([]int, rs.n())
	for i := range perm {
		perm[i] = i
	}
	pos := func(i int) int {
		if p, ok := r.rankPos[rs.row(i)[s]]; ok {
			return p
		}
		return len(r.rankPos)
	}
	slices.SortStableFunc(perm, func(a, b int) int { return pos(a) - pos(b) })
	out := newRowSet(r.mem, rs.w, rs.n())
	for _, i := range perm {
		out.push(rs.row(i))
	}
	return out
}

// countOnly answers an aggregate of only count($v) columns, no keys, over
// a plain scan by counting the rows the scan would emit, without emitting
// them: an index interval the remaining filters do not narrow is counted
// by its length. ok is false for any other shape.
func (r *runner) countOnly(ctx context.Context, o *query.Aggregate) (n int64, ok bool, err error) {
	sc, isScan := o.Input.(*query.Scan)
	if !isScan || sc.Rank != nil || len(o.Keys) > 0 || len(o.Aggs) == 0 {
		return 0, false, nil
	}
	for _, a := range o.Aggs {
		if a.Func != "count" || a.Arg.Kind != query.OpdID || a.Arg.Var != sc.Var {
			return 0, false, nil
		}
	}
	r.top = r.newTop()
	if err := r.declare(ctx, sc, r.top); err != nil {
		return 0, false, err
	}
	l := r.top
	s := l.idx(sc.Var)
	tbl := l.slots[s].nodes
	preds, err := r.appendPreds(ctx, make([]func([]int32) bool, 0, len(sc.Filters)), sc.Filters, l)
	if err != nil {
		return 0, false, err
	}
	rows, preds, total, indexed, skip := r.indexedScanSkip(sc, tbl, preds, false)
	if len(preds) == 0 {
		if !indexed {
			return int64(tbl.Live()), true, nil
		}
		return int64(total), true, nil
	}
	// Many rows to visit: compare on the image's typed columns.
	if n, ok, err := r.countTyped(ctx, o, tbl, rows, total, indexed, skip); err != nil || ok {
		return n, ok, err
	}
	dead := tbl.HasDead()
	buf := make([]int32, l.width())
	for i := range buf {
		buf[i] = -1
	}
	for k := 0; k < total; k++ {
		if k&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, false, err
			}
		}
		i := int32(k)
		if indexed {
			i = rows[k]
		} else if dead && !tbl.Alive(k) {
			continue
		}
		buf[s] = i
		keep := true
		for _, p := range preds {
			if !p(buf) {
				keep = false
				break
			}
		}
		if keep {
			n++
		}
	}
	return n, true, nil
}
