package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func randomDocs(r *rand.Rand, n int) []any {
	words := []string{"graph", "graphs", "learning", "learn", "the", "vector", "search", "Time", "travel", "a", "zeta", "über", "x1"}
	docs := make([]any, n)
	for i := range docs {
		if r.IntN(7) == 0 {
			continue // null
		}
		var b strings.Builder
		for k := range r.IntN(9) {
			if k > 0 {
				b.WriteString([]string{" ", ", ", "-", "  "}[r.IntN(4)])
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		docs[i] = b.String()
	}
	return docs
}

func buildOf(docs []any) *TextIndex {
	return BuildText(len(docs), func(i int) (string, bool) { s, ok := docs[i].(string); return s, ok })
}

// TestTextIndexMatchesAnalysis: the index's statistics and postings are
// exactly the per-row analysis, and survive encoding.
func TestTextIndexMatchesAnalysis(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		docs := randomDocs(r, 1+r.IntN(200))
		built := buildOf(docs)
		dec, err := VerifyText("k", built.Encode())
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*TextIndex{built, dec} {
			docsN, total := 0, int64(0)
			want := map[string][]string{}
			for i, d := range docs {
				s, ok := d.(string)
				dl, has := x.DocLen(i)
				if has != ok {
					t.Fatalf("round %d row %d: null mismatch", round, i)
				}
				if !ok {
					continue
				}
				terms := Analyze(s)
				if int(dl) != len(terms) {
					t.Fatalf("row %d dl %d, want %d", i, dl, len(terms))
				}
				docsN++
				total += int64(len(terms))
				tf := map[string]int{}
				for _, tm := range terms {
					tf[tm]++
				}
				for tm, c := range tf {
					want[tm] = append(want[tm], fmt.Sprintf("%d:%d", i, c))
				}
			}
			if x.Docs() != docsN || x.TotalLen() != total || len(x.Terms()) != len(want) {
				t.Fatalf("stats %d/%d/%d, want %d/%d/%d", x.Docs(), x.TotalLen(), len(x.Terms()), docsN, total, len(want))
			}
			for i, tm := range x.Terms() {
				var got []string
				x.Postings(i, func(off, tf int32) { got = append(got, fmt.Sprintf("%d:%d", off, tf)) })
				if !slices.Equal(got, want[tm]) || x.DF(i) != len(got) {
					t.Fatalf("term %q postings %v, want %v", tm, got, want[tm])
				}
			}
		}
	}
}

// TestTextIndexCorrupt: every single-byte change and every truncation is
// a *table.CorruptError (or VersionError), never a panic or a silent
// success.
func TestTextIndexCorrupt(t *testing.T) {
	docs := randomDocs(rand.New(rand.NewPCG(5, 6)), 40)
	b := buildOf(docs).Encode()
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0x41
		_, err := VerifyText("k", c)
		if !typedCorrupt(err) {
			t.Fatalf("byte %d flipped: err = %v", i, err)
		}
	}
	for n := range len(b) {
		if _, err := DecodeText("k", b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: accepted", n)
		}
	}
}
