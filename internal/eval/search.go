package eval

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/index"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// defaultMaxEdits is fuzzy()'s Levenshtein bound when none is given.
const defaultMaxEdits = 2

// analyze and queryTerms are the full-text analyzer shared with the
// persisted index (index.Analyze).
func analyze(text string) []string { return index.Analyze(text) }
func queryTerms(q string) []string { return index.QueryTerms(q) }

type textKey struct {
	t     *snapshot.NodeTable
	field string
}

// textIndex is an in-memory inverted view of one String column: per-row
// term frequencies plus the corpus statistics BM25 needs. It is built once
// per run per (table, field); the corpus is the whole node table, as an
// FTS index would be, so prefilters do not change scores.
type textIndex struct {
	tf    []map[string]int32 // nil for null fields
	dl    []int
	df    map[string]int
	docs  int
	avgdl float64
}

func (r *runner) textIndex(t *snapshot.NodeTable, field string) *textIndex {
	k := textKey{t, field}
	if ix := r.texts[k]; ix != nil {
		return ix
	}
	ix := &textIndex{tf: make([]map[string]int32, t.Len()), dl: make([]int, t.Len()), df: map[string]int{}}
	col := t.Cols[field]
	total := 0
	for i := 0; i < t.Len(); i++ {
		if col == nil {
			break
		}
		if !t.Alive(i) {
			continue // hidden by a write: not part of the corpus
		}
		s, ok := col[i].(string)
		if !ok {
			continue // null field: not part of the corpus
		}
		terms := analyze(s)
		m := make(map[string]int32, len(terms))
		for _, term := range terms {
			if m[term] == 0 {
				ix.df[term]++
			}
			m[term]++
		}
		ix.tf[i], ix.dl[i] = m, len(terms)
		ix.docs++
		total += len(terms)
	}
	if ix.docs > 0 {
		ix.avgdl = float64(total) / float64(ix.docs)
	}
	put(&r.texts, k, ix)
	return ix
}

// matches reports whether row holds at least one of terms.
func (ix *textIndex) matches(row int32, terms []string) bool {
	m := ix.tf[row]
	for _, t := range terms {
		if m[t] > 0 {
			return true
		}
	}
	return false
}

// fuzzyMatches reports whether some term of row is within maxEdits
// Levenshtein edits of some query term.
func (ix *textIndex) fuzzyMatches(row int32, terms []string, maxEdits int) bool {
	for dt := range ix.tf[row] {
		for _, qt := range terms {
			if levenshteinWithin(dt, qt, maxEdits) {
				return true
			}
		}
	}
	return false
}

// bm25 scores row for terms; ok is false when no term occurs in it.
func (ix *textIndex) bm25(row int32, terms []string) (score float64, ok bool) {
	m := ix.tf[row]
	if m == nil {
		return 0, false
	}
	for _, t := range terms {
		tf := m[t]
		if tf == 0 {
			continue
		}
		idf := index.BM25IDF(ix.docs, ix.df[t])
		score += index.BM25Term(idf, tf, int32(ix.dl[row]), ix.avgdl)
		ok = true
	}
	return score, ok
}

// levenshteinWithin reports whether the edit distance of a and b (over
// runes) is at most k, stopping as soon as every path exceeds k.
func levenshteinWithin(a, b string, k int) bool {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > k || -d > k {
		return false
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > k {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)] <= k
}

// textPred compiles search / match_text / fuzzy over a node's String
// property. match_text is the same token-OR match as search (§5.7).
func (r *runner) textPred(ctx context.Context, p *query.Pred, l *layout) (func(row []int32) bool, error) {
	s := l.idx(p.Left.Var)
	if s < 0 || l.slots[s].edge {
		return nil, runErrorf("%s field must be a node property", p.Func)
	}
	tbl := l.slots[s].nodes
	fv, err := r.ftsView(ctx, tbl, p.Left.Prop)
	if err != nil {
		return nil, err
	}
	var ix *textIndex
	if fv == nil {
		ix = r.textIndex(tbl, p.Left.Prop)
	}
	qfn, konst, err := r.operand(ctx, p.Right, l)
	if err != nil {
		return nil, err
	}
	maxEdits := defaultMaxEdits
	if p.MaxEdits != nil {
		v, err := r.constant(*p.MaxEdits)
		if err != nil {
			return nil, err
		}
		n, ok := v.(int64)
		if !ok || n < 0 {
			return nil, runErrorf("fuzzy max_edits must be a non-negative integer")
		}
		maxEdits = int(n)
	}
	if fv != nil {
		// Through the index: the matching rows of each distinct query.
		rowsOf := func(q string) rowBits {
			terms := queryTerms(q)
			if p.Func == "fuzzy" {
				return fv.fuzzyRows(terms, maxEdits)
			}
			return fv.matchRows(terms)
		}
		return byQuery(qfn, konst, rowsOf, func(row []int32, bits rowBits) bool { return bits.has(row[s]) }), nil
	}
	match := func(row []int32, terms []string) bool {
		if p.Func == "fuzzy" {
			return ix.fuzzyMatches(row[s], terms, maxEdits)
		}
		return ix.matches(row[s], terms)
	}
	return byQuery(qfn, konst, queryTerms, match), nil
}

// byQuery is the row predicate of a text predicate whose query is qfn:
// derive turns a query string into what test needs, once for a constant
// query and once per distinct string otherwise (cached). A null query
// matches no row.
func byQuery[D any](qfn func([]int32) any, konst bool, derive func(string) D, test func(row []int32, d D) bool) func([]int32) bool {
	if konst {
		q, ok := qfn(nil).(string)
		if !ok {
			return func([]int32) bool { return false }
		}
		d := derive(q)
		return func(row []int32) bool { return test(row, d) }
	}
	cache := map[string]D{}
	return func(row []int32) bool {
		q, ok := qfn(row).(string)
		if !ok {
			return false
		}
		d, seen := cache[q]
		if !seen {
			d = derive(q)
			cache[q] = d
		}
		return test(row, d)
	}
}

// queryVector resolves nearest()'s query: a Vector param, a numeric list
// literal, or a String embedded with Options.Embed. nil means a null
// parameter, which ranks nothing.
func (r *runner) queryVector(ctx context.Context, rk *query.RankSpec, t *snapshot.NodeTable) ([]float32, error) {
	switch rk.Query.Kind {
	case query.OpdParam, query.OpdLit:
	default:
		return nil, runErrorf("nearest query must be a parameter or literal, got %s", rk.Query)
	}
	v, err := r.constant(rk.Query)
	if err != nil {
		return nil, err
	}
	switch q := v.(type) {
	case nil:
		return nil, nil
	case []float32:
		return q, nil
	case []any:
		vec := make([]float32, len(q))
		for i, e := range q {
			vec[i] = float32(toFloat(e))
		}
		return vec, nil
	case string:
		if r.opts.Embed == nil {
			return nil, runErrorf("nearest($%s.%s, <String>) needs an embedding provider; none is configured", rk.Var, rk.Field)
		}
		req := EmbedRequest{Type: t.Type.Name, Prop: rk.Field, Text: q}
		if prop, ok := t.Type.Prop(rk.Field); ok {
			req.Dim = prop.Type.Dim
			if prop.Embed != nil {
				req.Model = prop.Embed.Model
			}
		}
		vec, err := r.opts.Embed(ctx, req)
		if err != nil {
			return nil, &Error{Msg: "embedding nearest query: " + err.Error(), Err: err}
		}
		return vec, nil
	}
	return nil, runErrorf("nearest query has unsupported value %T", v)
}

// l2 is the Euclidean distance; ok is false for a null or mis-sized vector.
func l2(v any, q []float32) (float64, bool) {
	x, ok := v.([]float32)
	if !ok || len(x) != len(q) {
		return 0, false
	}
	var sum float64
	for i := range x {
		d := float64(x[i]) - float64(q[i])
		sum += d * d
	}
	return math.Sqrt(sum), true
}

type scored struct {
	row   int32
	score float64
}

// rankEntities orders candidate rows of t by rk and returns them in rank
// order: nearest by L2 distance ascending, cut to the top k (k > 0); bm25
// by score descending, rows without a matching term dropped; score ties by
// node id ascending (spec §10). It records rank positions and scores for
// regrouping and score projection. An rrf ranks by the arm selected for
// the current fusion pass.
//
// all means every row of t is a candidate (cands is then ignored).
func (r *runner) rankEntities(ctx context.Context, rk *query.RankSpec, k int64, t *snapshot.NodeTable, cands []int32, all bool) ([]int32, error) {
	listAll := func() {
		if all {
			cands = t.LiveRows()
			all = false
		}
	}
	if rk.Func == "rrf" {
		if r.arm < 0 {
			return nil, runErrorf("rrf evaluated outside rank fusion")
		}
		rk = rk.Arms[r.arm]
		if rk.Func == "bm25" {
			k = 0
		}
	}
	var list []scored
	desc := false
	switch rk.Func {
	case "nearest":
		q, err := r.queryVector(ctx, rk, t)
		if err != nil {
			return nil, err
		}
		if q != nil {
			col := t.Cols[rk.Field]
			rows, indexed, err := r.nearestIndexed(ctx, t, rk.Field, q, int(k), cands, all)
			if err != nil {
				return nil, err
			}
			if indexed {
				cands = rows
			} else {
				listAll()
			}
			for _, c := range cands {
				if col == nil {
					break
				}
				if d, ok := l2(col[c], q); ok {
					list = append(list, scored{c, d})
				}
			}
		}
	case "bm25":
		terms, fv, err := r.bm25Inputs(ctx, rk, t)
		if err != nil {
			return nil, err
		}
		if fv != nil {
			scores, hit, rows := fv.bm25(terms)
			if all {
				for _, row := range rows {
					list = append(list, scored{row, scores[row]})
				}
			} else if len(rows) < len(cands) {
				// Fewer matches than candidates: walk the matches.
				in := newRowBits(t.Len())
				for _, c := range cands {
					in.set(c)
				}
				for _, row := range rows {
					if in.has(row) {
						list = append(list, scored{row, scores[row]})
					}
				}
			} else {
				for _, c := range cands {
					if hit[c] {
						list = append(list, scored{c, scores[c]})
					}
				}
			}
		} else {
			listAll()
			ix := r.textIndex(t, rk.Field)
			for _, c := range cands {
				if sc, ok := ix.bm25(c, terms); ok {
					list = append(list, scored{c, sc})
				}
			}
		}
		desc = true
	default:
		return nil, runErrorf("unknown ranking function %s", rk.Func)
	}
	order := func(a, b scored) int {
		c := cmp.Compare(a.score, b.score)
		if desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return strings.Compare(t.IDs[a.row], t.IDs[b.row])
	}
	if k > 0 && int64(len(list)) > 2*k {
		list = firstK(list, int(k), order)
	} else {
		slices.SortFunc(list, order)
	}
	if k > 0 && int64(len(list)) > k {
		list = list[:k]
	}
	out := make([]int32, len(list))
	pos := make(map[int32]int, len(list))
	scores := make(map[int32]float64, len(list))
	for i, s := range list {
		out[i] = s.row
		pos[s.row] = i
		scores[s.row] = s.score
	}
	r.rankPos = pos
	put(&r.scores, rk.String(), scores)
	return out, nil
}

// rrfRanker is implemented by partial snapshots of a cold hybrid
// ranking: the rank of a row of t in arm arm of the whole table.
type rrfRanker interface {
	RRFRank(t *snapshot.NodeTable, arm int, row int32) (int, bool)
}

// fuseRRF runs the binding pipeline once per rrf arm and fuses the arms'
// ranked entity lists: score(e) = Σ 1/(k + rank + 1), sorted descending,
// stable with ties in first-appearance order (arm 1's entities first). The
// top K entities are kept and each contributes all its rows (§5.7).
func (r *runner) fuseRRF(ctx context.Context, op query.Op) (*rowSet, error) {
	kv, err := r.constant(r.rank.K)
	if err != nil {
		return nil, err
	}
	kRRF := toFloat(kv)
	if kv == nil || kRRF <= 0 {
		return nil, runErrorf("rrf k must be positive")
	}
	_, limit := rankOp(op)
	type armOut struct {
		rows  *rowSet
		byEnt map[int32][]int
		order []int32
	}
	var arms [2]armOut
	for a := range arms {
		r.arm = a
		r.rankPos = nil
		rs, err := r.eval(ctx, op, r.top)
		if err != nil {
			return nil, err
		}
		rs = r.regroup(rs)
		ao := armOut{rows: rs, byEnt: map[int32][]int{}}
		for i := 0; i < rs.n(); i++ {
			e := rs.row(i)[r.rankSlot]
			if _, ok := ao.byEnt[e]; !ok {
				ao.order = append(ao.order, e)
			}
			ao.byEnt[e] = append(ao.byEnt[e], i)
		}
		arms[a] = ao
	}
	r.arm = -1
	// A partial snapshot holding only the rows that can make the cut
	// knows their ranks in the whole table (snapshot.SearchMem).
	ranker, _ := r.snap.(rrfRanker)
	var rt *snapshot.NodeTable
	if ranker != nil && r.rankSlot >= 0 {
		rt = r.top.slots[r.rankSlot].nodes
	}
	score := map[int32]float64{}
	var ents []int32
	for a, ao := range arms {
		for rank, e := range ao.order {
			if rt != nil {
				if g, ok := ranker.RRFRank(rt, a, e); ok {
					rank = g
				}
			}
			if _, ok := score[e]; !ok {
				ents = append(ents, e)
			}
			score[e] += 1 / (kRRF + float64(rank) + 1)
		}
	}
	slices.SortStableFunc(ents, func(a, b int32) int { return cmp.Compare(score[b], score[a]) })
	if limit > 0 && int64(len(ents)) > limit {
		ents = ents[:limit]
	}
	out := newRowSet(r.mem, r.top.width(), 0)
	r.rankPos = make(map[int32]int, len(ents))
	for i, e := range ents {
		r.rankPos[e] = i
		for _, ao := range arms {
			if rows, ok := ao.byEnt[e]; ok {
				for _, ri := range rows {
					out.push(ao.rows.row(ri))
				}
				break
			}
		}
	}
	put(&r.scores, r.rank.String(), score)
	return out, nil
}

// bm25Inputs returns a bm25 ranking's query terms and the full-text view
// of its field (nil: rank through the in-memory text index).
func (r *runner) bm25Inputs(ctx context.Context, rk *query.RankSpec, t *snapshot.NodeTable) ([]string, *ftsView, error) {
	qv, err := r.constant(rk.Query)
	if err != nil {
		return nil, nil, err
	}
	qs, _ := qv.(string)
	fv, err := r.ftsView(ctx, t, rk.Field)
	if err != nil {
		return nil, nil, err
	}
	return queryTerms(qs), fv, nil
}

// scoreFn projects a ranking score (Go extension, §5.7): the nearest
// distance, the bm25 score, or the fused rrf score of the row's entity.
// Scores computed by the query's ordering are reused; otherwise nearest
// and bm25 are computed per entity over the whole table.
func (r *runner) scoreFn(ctx context.Context, rk *query.RankSpec, l *layout) (valueFn, error) {
	s := l.idx(rankVar(rk))
	if s < 0 || l.slots[s].edge {
		return nil, runErrorf("%s ranks an unbound variable", rk)
	}
	if m := r.scores[rk.String()]; m != nil {
		return func(row []int32) any {
			if v, ok := m[row[s]]; ok {
				return v
			}
			return nil
		}, nil
	}
	t := l.slots[s].nodes
	switch rk.Func {
	case "nearest":
		q, err := r.queryVector(ctx, rk, t)
		if err != nil {
			return nil, err
		}
		col := t.Cols[rk.Field]
		return func(row []int32) any {
			if q == nil || col == nil {
				return nil
			}
			if d, ok := l2(col[row[s]], q); ok {
				return d
			}
			return nil
		}, nil
	case "bm25":
		terms, fv, err := r.bm25Inputs(ctx, rk, t)
		if err != nil {
			return nil, err
		}
		if fv != nil {
			scores, _, _ := fv.bm25(terms)
			scores = slices.Clone(scores) // the view's scratch is reused
			return func(row []int32) any { return scores[row[s]] }, nil
		}
		ix := r.textIndex(t, rk.Field)
		return func(row []int32) any {
			sc, _ := ix.bm25(row[s], terms)
			return sc
		}, nil
	}
	return nil, runErrorf("an rrf score can only be projected when the query is ordered by that rrf")
}

// firstK returns the k first elements of list under the total order cmp,
// sorted: a bounded max-heap pass, O(n log k), instead of sorting every
// match of a ranking cut to a limit.
func firstK(list []scored, k int, cmp func(a, b scored) int) []scored {
	h := make([]scored, 0, k)
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && cmp(h[l], h[m]) > 0 {
				m = l
			}
			if r := l + 1; r < len(h) && cmp(h[r], h[m]) > 0 {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, e := range list {
		if len(h) < k {
			h = append(h, e)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if cmp(h[i], h[p]) <= 0 {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if cmp(e, h[0]) < 0 {
			h[0] = e
			down(0)
		}
	}
	slices.SortFunc(h, cmp)
	return h
}
