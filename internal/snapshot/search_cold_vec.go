package snapshot

import (
	"cmp"
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Cold nearest() rankings. RankedPartial of a plan ranked by nearest
// over a table whose every fragment has a persisted vector index reads,
// per fragment, the index's front (centroids and list starts) and the
// lists the query probes (index.VectorSource: ranged reads, each list
// checked against its CRC), then only the candidate rows. The candidates
// are exactly those eval's indexed path keeps over the whole table (the
// float32 distances of the probed slots within a relative slackRel of
// the k-th best), so the executor, ranking the few rows it is given by
// their exact distance, answers as a warm handle does
// (exec TestColdVectorRankingsReadIndexes).

// nearestSlack is eval's slackRel: float32 candidates within this
// relative distance of the k-th best go to the float64 re-rank.
const nearestSlack = 1e-4

func (s *Snapshot) nearestPartial(ctx context.Context, plan *query.Plan, params map[string]any, nt *schema.NodeType, rk *query.RankSpec, k int, want map[string]bool, nprobe int) (*SearchMem, bool, error) {
	q, ok := rankVector(plan, rk, params)
	if !ok || nprobe <= 0 {
		return nil, false, nil
	}
	st, err := s.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return nil, false, err
	}
	frags := st.Fragments()
	cands, ok, err := s.nearestCands(ctx, st.Indexes(), frags, rk.Field, q, k, nprobe)
	if err != nil || !ok {
		return nil, false, err
	}
	locs := make([]table.RowLoc, len(cands))
	for j, c := range cands {
		locs[j] = table.RowLoc{Fragment: frags[c.part].Key, Offset: int64(c.off)}
	}
	// The ranked vectors come from the index (the stored vectors, bit for
	// bit): the fragments are read for the other properties only.
	delete(want, rk.Field)
	t, err := s.readRankedRows(ctx, st, nt, locs, want)
	if err != nil {
		return nil, false, err
	}
	vc := make([]any, len(cands))
	for j, c := range cands {
		vc[j] = slices.Clone(c.v)
	}
	t.Cols[rk.Field] = vc
	s.l.partials.Add(1)
	return &SearchMem{Mem: &Mem{Cat: s.cat, NodeT: map[string]*NodeTable{nt.Name: t}, EdgeT: map[string]*EdgeTable{}}}, true, nil
}

// vcand is a nearest() candidate: fragment (index into frags), offset,
// float32 squared distance and the vector (from the index).
type vcand struct {
	d    float32
	part int
	off  int32
	v    []float32
}

// nearestCands returns eval's indexed candidates for the k nearest live
// rows of frags to q, sorted by fragment and offset; ok is false when a
// fragment has no persisted vector index of field, or when the probed
// lists hold fewer than k rows (eval then scans every list).
func (s *Snapshot) nearestCands(ctx context.Context, refs []table.IndexRef, frags []table.Fragment, field string, q []float32, k, nprobe int) ([]vcand, bool, error) {
	srcs := make([]*index.VectorSource, len(frags))
	var err error
	for i, f := range frags {
		ref, ok := index.RefFor(refs, index.KindVector, field, f.Key)
		if !ok {
			return nil, false, nil
		}
		if v, hit := s.l.cache.Get("search/ivf/" + ref.Key); hit {
			srcs[i] = index.VectorSourceOf(v.(*index.VectorIndex))
		} else if srcs[i], err = index.OpenVector(ctx, s.l.st, ref.Key); err != nil {
			return nil, false, err
		}
	}
	var cands []vcand
	partial := false // some fragment had lists left unprobed
	for i, src := range srcs {
		if src.Dim() != len(q) {
			continue
		}
		var dels []int64
		if frags[i].DV != "" {
			dv, err := table.LoadDeletionVector(ctx, s.l.st, frags[i])
			if err != nil {
				return nil, false, err
			}
			dels = dv.Offsets
		}
		if src.NLists() > 0 && nprobe < src.NLists() {
			partial = true
		}
		err := src.Lists(ctx, src.Probe(q, nprobe), func(off int32, v []float32) {
			if _, gone := slices.BinarySearch(dels, int64(off)); gone {
				return
			}
			cands = append(cands, vcand{index.SquaredL2Within(q, v, maxF32), i, off, v})
		})
		if err != nil {
			return nil, false, err
		}
	}
	if len(cands) < k && partial {
		return nil, false, nil
	}
	slices.SortFunc(cands, func(a, b vcand) int { return cmp.Compare(a.d, b.d) })
	if len(cands) > k {
		bound := cands[k-1].d*(1+nearestSlack) + 1e-30
		end := k
		for end < len(cands) && cands[end].d <= bound {
			end++
		}
		cands = cands[:end]
	}
	slices.SortFunc(cands, func(a, b vcand) int {
		if c := cmp.Compare(a.part, b.part); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
	return cands, true, nil
}

const maxF32 = float32(3.4e38)

// rankVector resolves the query of a nearest() ranking: a Vector
// parameter or a numeric list literal (a String query needs the
// embedder: the whole-table path).
func rankVector(plan *query.Plan, rk *query.RankSpec, params map[string]any) ([]float32, bool) {
	if rk.Query.Kind != query.OpdParam {
		return nil, false
	}
	for _, ps := range plan.Params {
		if ps.Name == rk.Query.Param {
			if ps.Type.Kind != schema.KindVector {
				return nil, false
			}
			raw, present := params[ps.Name]
			v, err := value.ConvertParam(ps.Name, ps.Type, raw, present)
			if err != nil {
				return nil, false // Run reports it
			}
			q, ok := v.([]float32)
			return q, ok && len(q) > 0
		}
	}
	return nil, false
}
