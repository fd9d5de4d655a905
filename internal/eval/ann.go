package eval

import (
	"container/heap"
	"context"
	"runtime"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// nearest() through per-fragment vector indexes (snapshot.VectorParts):
// persisted IVF-flat indexes where optimize built them, flat in-memory
// ones elsewhere. Every candidate distance is first computed in float32
// over contiguous vectors (index.SquaredL2Within: a vector is abandoned
// once its partial distance exceeds the running k-th best), in parallel; the final order
// is always by the reference distance (l2, float64) of the candidates,
// with node id ties, so where every list is visited the answer is exactly
// the full scan's (TestSearchIndexesMatchExact). A float32 pass keeps
// every candidate within a relative 1e-4 of the k-th best, far above its
// rounding error, so no true top-k row is lost to rounding.
//
// Filters on the ranked variable come first (cands); when they keep few
// rows the candidates are scanned directly (exact), otherwise the IVF
// probes more lists the more selective the filter is, and a search that
// finds fewer than k candidates falls back to the exact scan: filtered
// nearest never starves.

// vectorIndexer is implemented by snapshots whose images carry fragment
// layouts (*snapshot.Snapshot).
type vectorIndexer interface {
	VectorParts(ctx context.Context, t *snapshot.NodeTable, field string) ([]snapshot.VectorPart, bool, error)
}

const (
	// DefaultNProbe is how many inverted lists of each fragment an
	// unfiltered nearest() visits.
	DefaultNProbe = 12
	// exactCandidates: a filter keeping at most this many rows, or under a
	// fifth of the table, is answered by scanning its rows directly (exact,
	// and cheaper than probing the proportionally many more lists a
	// selective filter needs).
	exactCandidates = 4096
	// slackRel keeps float32 candidates within this relative distance of
	// the k-th best for the float64 re-rank.
	slackRel = 1e-4
)

type cand struct {
	d   float32
	row int32
}

// maxHeap of the best k candidates (largest distance on top).
type maxHeap []cand

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i].d > h[j].d }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *maxHeap) Pop() any          { x := (*h)[len(*h)-1]; *h = (*h)[:len(*h)-1]; return x }

// topK collects the k smallest float32 distances plus every candidate
// within slackRel of the running k-th best (near).
type topK struct {
	k    int
	h    maxHeap
	near []cand
}

func (t *topK) bound() float32 {
	if len(t.h) < t.k {
		return float32(3.4e38)
	}
	return t.h[0].d
}

func (t *topK) add(c cand) {
	if len(t.h) < t.k {
		heap.Push(&t.h, c)
		return
	}
	top := t.h[0].d
	if c.d < top {
		ev := t.h[0]
		t.h[0] = c
		heap.Fix(&t.h, 0)
		if ev.d <= top*(1+slackRel) {
			t.near = append(t.near, ev)
		}
	} else if c.d <= top*(1+slackRel)+1e-30 {
		t.near = append(t.near, c)
	}
}

func (t *topK) merge(o *topK) {
	for _, c := range o.h {
		t.add(c)
	}
	for _, c := range o.near {
		t.add(c)
	}
}

// result returns the heap's rows plus the near ones still within the
// slack of the final k-th best.
func (t *topK) result() []int32 {
	out := make([]int32, 0, len(t.h)+len(t.near))
	for _, c := range t.h {
		out = append(out, c.row)
	}
	b := t.bound()*(1+slackRel) + 1e-30
	for _, c := range t.near {
		if c.d <= b {
			out = append(out, c.row)
		}
	}
	return out
}

// work is one unit of a vector search: a slot range of one part.
type work struct {
	part   int
	lo, hi int
}

// nearestIndexed returns the candidate rows for the top k of cands by L2
// distance to q (a superset; rankEntities computes l2, sorts and cuts),
// or ok false when the snapshot has no vector view of (t, field).
func (r *runner) nearestIndexed(ctx context.Context, t *snapshot.NodeTable, field string, q []float32, k int, cands []int32, all bool) ([]int32, bool, error) {
	if r.opts.NoIndexes || k <= 0 {
		return nil, false, nil
	}
	vi, ok := r.snap.(vectorIndexer)
	if !ok {
		return nil, false, nil
	}
	parts, ok, err := vi.VectorParts(ctx, t, field)
	if err != nil || !ok {
		return nil, false, err
	}
	n := t.Len()
	if all {
		cands = nil
	}
	ncand := n
	if !all {
		ncand = len(cands)
	}
	var filter rowBits
	if ncand < n {
		if len(cands) <= exactCandidates || len(cands)*5 < n {
			return r.nearestCands(t, field, q, k, cands), true, nil
		}
		filter = newRowBits(n)
		for _, c := range cands {
			filter.set(c)
		}
	}
	nprobe := r.opts.NProbe
	if nprobe <= 0 {
		nprobe = DefaultNProbe
	}
	if filter != nil {
		// Fewer rows qualify per list: visit proportionally more lists.
		nprobe = int(float64(nprobe)*float64(n)/float64(ncand)) + 1
	}
	var units []work
	anyIVF := false
	for pi := range parts {
		x := parts[pi].Index
		if x.Dim() != len(q) {
			continue // no vector of this fragment has q's dimension
		}
		if x.Lists() > 0 && nprobe < x.Lists() {
			anyIVF = true
		}
		for _, l := range x.Probe(q, nprobe) {
			lo, hi := x.ListSlots(l)
			for s := lo; s < hi; s += 8192 {
				units = append(units, work{pi, s, min(s+8192, hi)})
			}
		}
	}
	res := r.scanUnits(parts, units, q, k, filter)
	if anyIVF && len(res.h) < k && ncand > len(res.h) {
		// The probed lists held too few qualifying rows: scan them all.
		units = units[:0]
		for pi := range parts {
			x := parts[pi].Index
			if x.Dim() != len(q) {
				continue
			}
			for s := 0; s < x.Slots(); s += 8192 {
				units = append(units, work{pi, s, min(s+8192, x.Slots())})
			}
		}
		res = r.scanUnits(parts, units, q, k, filter)
	}
	return res.result(), true, nil
}

// scanUnits computes float32 distances over units in parallel and merges
// the per-worker top-k.
func (r *runner) scanUnits(parts []snapshot.VectorPart, units []work, q []float32, k int, filter rowBits) *topK {
	workers := min(runtime.GOMAXPROCS(0), len(units))
	out := &topK{k: k}
	if workers <= 1 {
		for _, u := range units {
			scanUnit(&parts[u.part], u, q, filter, out)
		}
		return out
	}
	res := make([]*topK, workers)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		res[w] = &topK{k: k}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(units) {
					return
				}
				u := units[i]
				scanUnit(&parts[u.part], u, q, filter, res[w])
			}
		}()
	}
	wg.Wait()
	for _, t := range res {
		out.merge(t)
	}
	return out
}

func scanUnit(p *snapshot.VectorPart, u work, q []float32, filter rowBits, t *topK) {
	x := p.Index
	dels := len(p.Deleted()) > 0
	for s := u.lo; s < u.hi; s++ {
		off, v := x.Slot(s)
		limit := t.bound()*(1+slackRel) + 1e-30
		d := index.SquaredL2Within(q, v, limit)
		if d > limit {
			continue
		}
		row := int32(0)
		if dels || filter != nil {
			var live bool
			if row, live = p.ImageRow(off); !live || (filter != nil && !filter.has(row)) {
				continue
			}
		} else {
			row, _ = p.ImageRow(off)
		}
		t.add(cand{d, row})
	}
}

// nearestCands scans the candidate rows' vectors in the image directly.
func (r *runner) nearestCands(t *snapshot.NodeTable, field string, q []float32, k int, cands []int32) []int32 {
	col := t.Cols[field]
	tk := &topK{k: k}
	if col == nil {
		return nil
	}
	for _, c := range cands {
		v, ok := col[c].([]float32)
		if !ok || len(v) != len(q) {
			continue
		}
		tk.add(cand{index.SquaredL2(q, v), c})
	}
	return tk.result()
}
