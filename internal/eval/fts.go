package eval

import (
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// Full-text search through per-fragment inverted indexes. A snapshot over
// a commit (textIndexer) gives every fragment of a node image an
// index.TextIndex, persisted or built from the decoded fragment and cached
// with it (snapshot.TextParts); an ftsView sums their corpus statistics
// over the live rows, so search/match_text/fuzzy select exactly the rows,
// and bm25 computes exactly the scores, of the per-run analysis in
// search.go (textIndex), which stays the reference (Options.NoIndexes)
// and the path of in-memory snapshots. TestTextIndexMatchesExact compares
// the two on random corpora with deletions and several fragments.

// textIndexer is implemented by snapshots whose images carry fragment
// layouts (*snapshot.Snapshot).
type textIndexer interface {
	TextParts(ctx context.Context, t *snapshot.NodeTable, field string) ([]snapshot.TextPart, bool, error)
}

// ftsView is the full-text index of one String column of one image.
type ftsView struct {
	n       int // image rows
	parts   []snapshot.TextPart
	docs    int // live non-null rows
	total   int64
	avgdl   float64
	dense   []float64 // scratch of bm25, one per image row
	hit     []bool
	touched []int32        // rows the last bm25 call set
	dfOver  map[string]int // document frequencies given by a partial snapshot
}

// ftsView returns the indexed view of (t, field), or nil when the
// snapshot has none for t (the caller falls back to textIndex).
func (r *runner) ftsView(ctx context.Context, t *snapshot.NodeTable, field string) (*ftsView, error) {
	if r.opts.NoIndexes {
		return nil, nil
	}
	k := textKey{t, field}
	if v, ok := r.fts[k]; ok {
		return v, nil
	}
	ti, ok := r.snap.(textIndexer)
	if !ok {
		put(&r.fts, k, nil)
		return nil, nil
	}
	parts, ok, err := ti.TextParts(ctx, t, field)
	if err != nil {
		return nil, err
	}
	if !ok {
		put(&r.fts, k, nil)
		return nil, nil
	}
	v := &ftsView{n: t.Len(), parts: parts}
	for _, p := range parts {
		if p.Stats != nil {
			// A partial snapshot's rows, with the whole column's statistics.
			v.docs, v.total, v.dfOver = p.Stats.Docs, p.Stats.Total, p.Stats.DF
			break
		}
		v.docs += p.Index.Docs()
		v.total += p.Index.TotalLen()
		for _, d := range p.Deleted() {
			if dl, ok := p.Index.DocLen(int(d)); ok {
				v.docs--
				v.total -= int64(dl)
			}
		}
	}
	if v.docs > 0 {
		v.avgdl = float64(v.total) / float64(v.docs)
	}
	put(&r.fts, k, v)
	return v, nil
}

// bitset of image rows.
type rowBits []uint64

func newRowBits(n int) rowBits     { return make(rowBits, (n+63)/64) }
func (b rowBits) set(i int32)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b rowBits) has(i int32) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// matchRows returns the live rows holding at least one of terms.
func (v *ftsView) matchRows(terms []string) rowBits {
	return v.termRows(func(p *snapshot.TextPart, yield func(int)) {
		for _, t := range terms {
			if i, ok := p.Index.Lookup(t); ok {
				yield(i)
			}
		}
	})
}

// fuzzyRows returns the live rows holding a term within maxEdits
// Levenshtein edits of some query term: the dictionary of each fragment is
// matched once, then the postings of the matching terms are taken.
func (v *ftsView) fuzzyRows(terms []string, maxEdits int) rowBits {
	return v.termRows(func(p *snapshot.TextPart, yield func(int)) {
		for i, dt := range p.Index.Terms() {
			if slices.ContainsFunc(terms, func(qt string) bool { return levenshteinWithin(dt, qt, maxEdits) }) {
				yield(i)
			}
		}
	})
}

// termRows returns the live rows of the postings of the dictionary terms
// each part's terms yields.
func (v *ftsView) termRows(terms func(p *snapshot.TextPart, yield func(i int))) rowBits {
	out := newRowBits(v.n)
	for pi := range v.parts {
		p := &v.parts[pi]
		terms(p, func(i int) {
			p.Index.Postings(i, func(off, _ int32) {
				if row, live := p.ImageRow(off); live {
					out.set(row)
				}
			})
		})
	}
	return out
}

// bm25 returns the BM25 score of every live row holding a query term
// (terms sorted and distinct, as queryTerms gives them), as the exact
// scorer computes it: document frequencies and the average length are
// those of the live rows of all fragments, and each row's score adds the
// terms' contributions in term order.
func (v *ftsView) bm25(terms []string) (scores []float64, hit []bool, rows []int32) {
	if v.dense == nil {
		v.dense, v.hit = make([]float64, v.n), make([]bool, v.n)
	} else {
		for _, row := range v.touched { // reset only what the last call set
			v.dense[row], v.hit[row] = 0, false
		}
	}
	defer func() { v.touched = rows }()
	for _, t := range terms {
		df := 0
		if v.dfOver != nil {
			df = v.dfOver[t]
		}
		for pi := range v.parts {
			if v.dfOver != nil {
				break // the whole table's frequencies are given
			}
			p := &v.parts[pi]
			i, ok := p.Index.Lookup(t)
			if !ok {
				continue
			}
			if len(p.Deleted()) == 0 {
				df += p.Index.DF(i)
				continue
			}
			p.Index.Postings(i, func(off, _ int32) {
				if _, live := p.ImageRow(off); live {
					df++
				}
			})
		}
		if df == 0 {
			continue
		}
		idf := index.BM25IDF(v.docs, df)
		for pi := range v.parts {
			p := &v.parts[pi]
			i, ok := p.Index.Lookup(t)
			if !ok {
				continue
			}
			p.Index.Postings(i, func(off, tfi int32) {
				row, live := p.ImageRow(off)
				if !live {
					return
				}
				dl, _ := p.Index.DocLen(int(off))
				if !v.hit[row] {
					v.hit[row] = true
					rows = append(rows, row)
				}
				v.dense[row] += index.BM25Term(idf, tfi, dl, v.avgdl)
			})
		}
	}
	return v.dense, v.hit, rows
}
