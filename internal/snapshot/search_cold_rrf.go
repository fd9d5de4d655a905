package snapshot

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Cold hybrid rankings: rrf(nearest, bm25) (either order) over one node
// scan. Eval fuses the nearest arm's top K (K = the limit) with the
// whole bm25 ranking; an entity's fused score is Σ 1/(k + rank + 1), so
// an entity only in the bm25 arm past its K-th row scores below each of
// the bm25 top K and can neither make the cut nor tie at it. The rows
// that matter are therefore the nearest candidates (eval's indexed set,
// nearestCands) and the bm25 top K; RankedPartial reads those rows only,
// from the vector indexes' probed lists, the full-text indexes' query
// terms and the fragments, and serves them with:
//   - a flat vector index over the nearest candidates only (VectorParts),
//     so the nearest arm ranks exactly the warm path's candidates;
//   - the whole table's full-text statistics (TextParts);
//   - each row's rank in the whole bm25 ranking (RRFRank), ties at a
//     score ordered by id through the fragments' id indexes, which eval's
//     fusion uses in place of the row's position among the few rows.
// exec TestColdVectorRankingsReadIndexes compares it with a warm handle.

// VectorParts serves the nearest arm of a cold hybrid ranking.
func (m *SearchMem) VectorParts(_ context.Context, t *NodeTable, field string) ([]VectorPart, bool, error) {
	if m.vpart == nil || t.Type.Name != m.typ || field != m.vfield {
		return nil, false, nil
	}
	return []VectorPart{*m.vpart}, true, nil
}

// RRFRank returns the whole-table rank of row (of t) in arm arm of the
// fused ranking, when the partial snapshot knows it.
func (m *SearchMem) RRFRank(t *NodeTable, arm int, row int32) (int, bool) {
	if m.rrfRank == nil || arm != m.rrfArm || t.Type.Name != m.typ {
		return 0, false
	}
	r, ok := m.rrfRank[row]
	return r, ok
}

// hybridArms returns the nearest and bm25 arms of rk and the bm25 arm's
// index, or ok false.
func hybridArms(rk *query.RankSpec, v string) (nn, bm *query.RankSpec, bmArm int, ok bool) {
	if rk.Func != "rrf" || len(rk.Arms) != 2 {
		return nil, nil, 0, false
	}
	for i, a := range rk.Arms {
		if a.Var != v {
			return nil, nil, 0, false
		}
		switch a.Func {
		case "nearest":
			nn = a
		case "bm25":
			bm, bmArm = a, i
		}
	}
	return nn, bm, bmArm, nn != nil && bm != nil
}

func (s *Snapshot) hybridPartial(ctx context.Context, plan *query.Plan, params map[string]any, nt *schema.NodeType, nn, bm *query.RankSpec, bmArm, k int, want map[string]bool, nprobe int) (*SearchMem, bool, error) {
	qv, ok := rankVector(plan, nn, params)
	if !ok || nprobe <= 0 {
		return nil, false, nil
	}
	qs, ok := rankQuery(plan, bm, params)
	if !ok {
		return nil, false, nil
	}
	st, err := s.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return nil, false, err
	}
	refs := st.Indexes()
	frags := st.Fragments()
	cands, ok, err := s.nearestCands(ctx, refs, frags, nn.Field, qv, k, nprobe)
	if err != nil || !ok {
		return nil, false, err
	}
	parts, stats, hits, ok, err := s.bm25Hits(ctx, refs, frags, bm.Field, qs)
	if err != nil || !ok {
		return nil, false, err
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	type loc struct {
		part int
		off  int32
	}
	byLoc := make(map[loc]int, len(hits))
	for i, h := range hits {
		byLoc[loc{h.part, h.off}] = i
	}
	// Scores whose ties need ids: those of the bm25 top K (the K-th
	// included), and of every nearest candidate holding a query term.
	tieScores := map[float64]bool{}
	for _, h := range hits[:min(k, len(hits))] {
		tieScores[h.score] = true
	}
	for _, c := range cands {
		if i, ok := byLoc[loc{c.part, c.off}]; ok {
			tieScores[hits[i].score] = true
		}
	}
	var need []int
	for i, h := range hits {
		if tieScores[h.score] {
			need = append(need, i)
		}
	}
	if err := s.fillHitIDs(ctx, st, parts, hits, need, len(need)); err != nil {
		return nil, false, err
	}
	// The whole bm25 ranking order: score descending, ids ascending
	// (rows without an id have a score no tie needs).
	slices.SortStableFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	for i, h := range hits {
		byLoc[loc{h.part, h.off}] = i // rank in the whole bm25 ranking
	}
	rows := map[loc]bool{}
	for _, c := range cands {
		rows[loc{c.part, c.off}] = true
	}
	for _, h := range hits[:min(k, len(hits))] {
		rows[loc{h.part, h.off}] = true
	}
	ls := make([]loc, 0, len(rows))
	for l := range rows {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b loc) int {
		if c := cmp.Compare(a.part, b.part); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
	locs := make([]table.RowLoc, len(ls))
	for j, l := range ls {
		locs[j] = table.RowLoc{Fragment: frags[l.part].Key, Offset: int64(l.off)}
	}
	readVec := want[nn.Field] // projected: read from the fragments
	if !readVec {
		delete(want, nn.Field)
	}
	t, err := s.readRankedRows(ctx, st, nt, locs, want)
	if err != nil {
		return nil, false, err
	}
	// The nearest arm's candidates, by their index vectors.
	vecs := make([][]float32, len(ls))
	ci := 0
	for j, l := range ls {
		for ci < len(cands) && (cands[ci].part < l.part || (cands[ci].part == l.part && cands[ci].off < l.off)) {
			ci++
		}
		if ci < len(cands) && cands[ci].part == l.part && cands[ci].off == l.off {
			vecs[j] = cands[ci].v
		}
	}
	if !readVec {
		col := make([]any, len(ls))
		for j, v := range vecs {
			if v != nil {
				col[j] = slices.Clone(v)
			}
		}
		t.Cols[nn.Field] = col
	}
	ranks := map[int32]int{}
	for j, l := range ls {
		if r, ok := byLoc[l]; ok {
			ranks[int32(j)] = r
		}
	}
	frag := make([]int, len(ls))
	offs := make([]int32, len(ls))
	for j, l := range ls {
		frag[j], offs[j] = l.part, l.off
	}
	x := memText(parts, frag, offs)
	vx := index.BuildVector(vecs, len(qv), 1)
	s.l.partials.Add(1)
	return &SearchMem{
		Mem:     &Mem{Cat: s.cat, NodeT: map[string]*NodeTable{nt.Name: t}, EdgeT: map[string]*EdgeTable{}},
		typ:     nt.Name,
		field:   bm.Field,
		part:    TextPart{Index: x, Stats: stats},
		vfield:  nn.Field,
		vpart:   &VectorPart{Index: vx},
		rrfArm:  bmArm,
		rrfRank: ranks,
	}, true, nil
}

// fillHitIDs sets the ids of hits[need] through each fragment's id index,
// walked in id order until limit of the fragment's needed rows are met
// (the others, later in id order, keep an empty id), or through its id
// column when it has no id index (every needed row then gets its id).
func (s *Snapshot) fillHitIDs(ctx context.Context, st *table.State, parts []fragText, hits []hit, need []int, limit int) error {
	byPart := map[int]map[int32]int{}
	for _, k := range need {
		h := hits[k]
		if byPart[h.part] == nil {
			byPart[h.part] = map[int32]int{}
		}
		byPart[h.part][h.off] = k
	}
	for pi, m := range byPart {
		found := 0
		ok, err := s.l.tr.IDOrder(ctx, parts[pi].f, func(id string, off int64) bool {
			if k, in := m[int32(off)]; in {
				hits[k].id = id
				found++
			}
			return found < limit && found < len(m)
		})
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		offs := make([]int64, 0, len(m))
		for off := range m {
			offs = append(offs, int64(off))
		}
		slices.Sort(offs)
		rec, err := s.l.tr.ReadRows(ctx, st, parts[pi].f.Key, offs, []string{table.KeyColumn}, nil)
		if err != nil {
			return err
		}
		for j, off := range offs {
			hits[m[int32(off)]].id = table.Value(rec.Column(0), j).(string)
		}
		rec.Release()
	}
	return nil
}
