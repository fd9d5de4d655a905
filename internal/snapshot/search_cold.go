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
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Cold full-text rankings. A process that has not decoded a table yet (a
// CLI query) and ranks it by bm25 needs only the ranking's inputs: the
// table state, each fragment's full-text index and deletion vector. From
// them RankedPartial scores every live row exactly as the executor would,
// takes the top rows (with the rows tied at the cut, whose ids break the
// tie), and reads only those rows, only the columns the query names,
// through table.Reader. The partial snapshot it returns serves them with
// the whole column's corpus statistics attached (CorpusStats), so the
// executor ranks and scores them exactly as over the whole table
// (exec TestColdSearchReadsIndexes).

// CorpusStats are the full-text statistics of a whole column, attached to
// the one TextPart of a SearchMem: BM25 over its few rows uses them, so a
// row scores as in the whole table.
type CorpusStats struct {
	Docs  int
	Total int64
	DF    map[string]int // live document frequency of each query term
}

// SearchMem is the partial snapshot of a cold full-text ranking.
type SearchMem struct {
	*Mem
	typ, field string
	part       TextPart
	// A hybrid ranking's nearest candidates and bm25 ranks (search_cold_rrf.go).
	vfield  string
	vpart   *VectorPart
	rrfArm  int
	rrfRank map[int32]int
}

// TextParts serves the ranked column with the whole table's statistics.
func (m *SearchMem) TextParts(_ context.Context, t *NodeTable, field string) ([]TextPart, bool, error) {
	if t.Type.Name != m.typ || field != m.field {
		return nil, false, nil
	}
	return []TextPart{m.part}, true, nil
}

// RankedPartial returns the partial snapshot of a plan that ranks one
// node scan by bm25 — limit N over a projection of that scan, no filters,
// every projected value a property of the ranked variable, a literal or
// that ranking — when the table's image is not decoded and every fragment
// has a persisted full-text index of the ranked property. ok is false
// otherwise (the caller reads the whole table). params are the caller's
// raw parameters.
func (s *Snapshot) RankedPartial(ctx context.Context, plan *query.Plan, params map[string]any, nprobe int) (*SearchMem, bool, error) {
	if s.l.noIndexPath || plan == nil || plan.Read == nil || s.l.partials.Load() >= partialBeforeImages {
		return nil, false, nil
	}
	lim, ok := plan.Read.(*query.Limit)
	if !ok || lim.N <= 0 || lim.N > maxPartialNodes {
		return nil, false, nil
	}
	proj, ok := lim.Input.(*query.Project)
	if !ok {
		return nil, false, nil
	}
	scan, ok := proj.Input.(*query.Scan)
	if !ok || scan.Rank == nil || len(scan.Filters) > 0 {
		return nil, false, nil
	}
	nn, bm, bmArm, hybrid := hybridArms(scan.Rank, scan.Var)
	if !hybrid && ((scan.Rank.Func != "bm25" && scan.Rank.Func != "nearest") || scan.Rank.Var != scan.Var) {
		return nil, false, nil
	}
	rk := scan.Rank
	want := map[string]bool{} // the ranked text and vectors come from the indexes
	for _, c := range proj.Cols {
		switch c.Value.Kind {
		case query.OpdProp:
			if c.Value.Var != scan.Var {
				return nil, false, nil
			}
			want[c.Value.Prop] = true
		case query.OpdID:
			if c.Value.Var != scan.Var {
				return nil, false, nil
			}
		case query.OpdLit, query.OpdParam:
		case query.OpdRank:
			if c.Value.Rank == nil || c.Value.Rank.String() != rk.String() {
				return nil, false, nil
			}
		default:
			return nil, false, nil
		}
	}
	nt, ok := s.cat.Node(scan.Type)
	if !ok {
		return nil, false, nil
	}
	tk := NodeKey(nt.Name)
	if _, hit := s.l.cache.Get(s.ImageKey(tk)); hit {
		return nil, false, nil // warm: the image path is faster
	}
	if hybrid {
		return s.hybridPartial(ctx, plan, params, nt, nn, bm, bmArm, int(lim.N), want, nprobe)
	}
	if rk.Func == "nearest" {
		return s.nearestPartial(ctx, plan, params, nt, rk, int(lim.N), want, nprobe)
	}
	q, ok := rankQuery(plan, rk, params)
	if !ok {
		return nil, false, nil
	}
	st, err := s.State(ctx, tk)
	if err != nil {
		return nil, false, err
	}
	refs := st.Indexes()
	frags := st.Fragments()
	parts, stats, hits, ok, err := s.bm25Hits(ctx, refs, frags, rk.Field, q)
	if err != nil || !ok {
		return nil, false, err
	}
	// The top N, and every row tied with the N-th: their ids break ties.
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	n := int(lim.N)
	if len(hits) > n {
		cut := hits[n-1].score
		end := n
		for end < len(hits) && hits[end].score == cut {
			end++
		}
		hits = hits[:end]
		if end > n {
			// Ties at the cut: the ids of those rows decide. Each
			// fragment's id index lists its rows in id order, so the
			// first tied rows it meets are the ones that can make the cut.
			need := n
			for _, h := range hits {
				if h.score != cut {
					need--
				}
			}
			var tied []int
			for k, h := range hits {
				if h.score == cut {
					tied = append(tied, k)
				}
			}
			if err := s.fillHitIDs(ctx, st, parts, hits, tied, need); err != nil {
				return nil, false, err
			}
			for _, k := range tied {
				if hits[k].id == "" {
					hits[k].score = -1 // beyond the cut in its fragment
				}
			}
			slices.SortFunc(hits, func(a, b hit) int {
				if c := cmp.Compare(b.score, a.score); c != 0 {
					return c
				}
				return strings.Compare(a.id, b.id)
			})
			hits = hits[:n]
		}
	}
	// Read the rows, by fragment and offset.
	slices.SortFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(a.part, b.part); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
	locs := make([]table.RowLoc, len(hits))
	for k, h := range hits {
		locs[k] = table.RowLoc{Fragment: parts[h.part].f.Key, Offset: int64(h.off)}
	}
	t, err := s.readRankedRows(ctx, st, nt, locs, want)
	if err != nil {
		return nil, false, err
	}
	frag := make([]int, len(hits))
	offs := make([]int32, len(hits))
	for k, h := range hits {
		frag[k], offs[k] = h.part, h.off
	}
	x := memText(parts, frag, offs)
	s.l.partials.Add(1)
	return &SearchMem{
		Mem:   &Mem{Cat: s.cat, NodeT: map[string]*NodeTable{nt.Name: t}, EdgeT: map[string]*EdgeTable{}},
		typ:   nt.Name,
		field: rk.Field,
		part:  TextPart{Index: x, Stats: stats},
	}, true, nil
}

// readRankedRows reads the rows at locs (sorted by fragment and
// offset), their ids and the properties in want, as a node table.
func (s *Snapshot) readRankedRows(ctx context.Context, st *table.State, nt *schema.NodeType, locs []table.RowLoc, want map[string]bool) (*NodeTable, error) {
	cols := append([]string{table.KeyColumn}, propsToRead(st, nt.Props, want)...)
	t := &NodeTable{Type: nt, Cols: map[string][]any{}}
	for _, p := range nt.Props {
		if want[p.Name] {
			t.Cols[p.Name] = make([]any, 0, len(locs))
		}
	}
	pp := &partialPlan{snap: s}
	err := pp.readByFragment(ctx, st, locs, cols, func(_ int, get func(col string) any) {
		id, _ := get(table.KeyColumn).(string)
		t.IDs = append(t.IDs, id)
		for _, p := range nt.Props {
			if want[p.Name] {
				t.Cols[p.Name] = append(t.Cols[p.Name], get(p.Name))
			}
		}
	})
	return t, err
}

// fragText is one fragment of a cold full-text ranking: its index
// (ranged), deleted offsets and the postings of the query terms.
type fragText struct {
	f    table.Fragment
	x    *index.TextSource
	dels []int64
	post map[string][]index.Posting
}

// memText is the full-text index of the rows of a partial snapshot,
// row j being offset offs[j] of fragment parts[frag[j]], built from the
// query terms' postings already read (no text is read): rows holding no
// term get length 0, which no score uses.
func memText(parts []fragText, frag []int, offs []int32) *index.TextIndex {
	dl := make([]int32, len(offs))
	post := map[string][]index.Posting{}
	for j, off := range offs {
		for t, ps := range parts[frag[j]].post {
			k, found := slices.BinarySearchFunc(ps, off, func(p index.Posting, off int32) int { return cmp.Compare(p.Off, off) })
			if found {
				post[t] = append(post[t], index.Posting{Off: int32(j), TF: ps[k].TF, DL: ps[k].DL})
				dl[j] = ps[k].DL
			}
		}
	}
	return index.TextFromPostings(dl, post)
}

// hit is one scored row of a cold ranking (id filled where ties need it).
type hit struct {
	part  int
	off   int32
	score float64
	id    string
}

// bm25Hits scores every live row of frags holding a term of q, exactly
// as eval's ftsView does, from the fragments' full-text indexes (ranged
// reads of the query terms' postings); ok is false when a fragment has
// no persisted index of field.
func (s *Snapshot) bm25Hits(ctx context.Context, refs []table.IndexRef, frags []table.Fragment, field, q string) (parts []fragText, stats *CorpusStats, hits []hit, ok bool, err error) {
	terms := index.QueryTerms(q)
	parts = make([]fragText, len(frags))
	for i, f := range frags {
		ref, ok := index.RefFor(refs, index.KindText, field, f.Key)
		if !ok {
			return nil, nil, nil, false, nil
		}
		// A decoded index (this handle read it whole) answers from
		// memory; otherwise ranged reads of the query terms only.
		var src *index.TextSource
		if v, hit := s.l.cache.Get("search/fts/" + ref.Key); hit {
			src = index.TextSourceOf(v.(*index.TextIndex))
		} else if src, err = index.OpenText(ctx, s.l.st, ref.Key); err != nil {
			return nil, nil, nil, false, err
		}
		p := fragText{f: f, x: src, post: map[string][]index.Posting{}}
		for _, t := range terms {
			if p.post[t], err = src.Postings(ctx, t); err != nil {
				return nil, nil, nil, false, err
			}
		}
		if f.DV != "" {
			dv, err := table.LoadDeletionVector(ctx, s.l.st, f)
			if err != nil {
				return nil, nil, nil, false, err
			}
			p.dels = dv.Offsets
		}
		parts[i] = p
	}
	live := func(p *fragText, off int32) bool {
		_, gone := slices.BinarySearch(p.dels, int64(off))
		return !gone
	}
	// Corpus statistics over the live rows, as eval's ftsView sums them.
	stats = &CorpusStats{DF: map[string]int{}}
	for i := range parts {
		p := &parts[i]
		stats.Docs += p.x.Docs()
		stats.Total += p.x.TotalLen()
		dls, err := p.x.DocLens(ctx, p.dels)
		if err != nil {
			return nil, nil, nil, false, err
		}
		for _, dl := range dls {
			if dl >= 0 {
				stats.Docs--
				stats.Total -= int64(dl)
			}
		}
	}
	for _, t := range terms {
		for i := range parts {
			p := &parts[i]
			for _, e := range p.post[t] {
				if live(p, e.Off) {
					stats.DF[t]++
				}
			}
		}
	}
	// Score every live row holding a term (the same arithmetic as eval).
	avgdl := 0.0
	if stats.Docs > 0 {
		avgdl = float64(stats.Total) / float64(stats.Docs)
	}
	for i := range parts {
		p := &parts[i]
		score := map[int32]float64{}
		var order []int32
		for _, t := range terms {
			df := stats.DF[t]
			if df == 0 {
				continue
			}
			idf := index.BM25IDF(stats.Docs, df)
			for _, e := range p.post[t] {
				if !live(p, e.Off) {
					continue
				}
				if _, seen := score[e.Off]; !seen {
					order = append(order, e.Off)
				}
				score[e.Off] += index.BM25Term(idf, e.TF, e.DL, avgdl)
			}
		}
		for _, off := range order {
			hits = append(hits, hit{part: i, off: off, score: score[off]})
		}
	}
	return parts, stats, hits, true, nil
}

// rankQuery resolves the String query of a ranking: a literal or a
// declared parameter.
func rankQuery(plan *query.Plan, rk *query.RankSpec, params map[string]any) (string, bool) {
	switch rk.Query.Kind {
	case query.OpdLit:
		if rk.Query.Lit == nil || rk.Query.Lit.Kind != query.LitString {
			return "", false
		}
		return rk.Query.Lit.Str, true
	case query.OpdParam:
		for _, ps := range plan.Params {
			if ps.Name == rk.Query.Param {
				raw, present := params[ps.Name]
				v, err := value.ConvertParam(ps.Name, ps.Type, raw, present)
				if err != nil {
					return "", false // Run reports it
				}
				s, ok := v.(string)
				return s, ok
			}
		}
	}
	return "", false
}
