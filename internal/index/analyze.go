package index

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// MaxTokenBytes: longer tokens are dropped, like the FTS tokenizer's
// remove_long filter.
const MaxTokenBytes = 40

// stopWords is the English stop-word list of the FTS tokenizer (the
// Lucene/tantivy list), smaller than snowball's own.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "for": true, "if": true, "in": true, "into": true, "is": true, "it": true, "no": true,
	"not": true, "of": true, "on": true, "or": true, "such": true, "that": true, "the": true,
	"their": true, "then": true, "there": true, "these": true, "they": true, "this": true, "to": true,
	"was": true, "will": true, "with": true,
}

// Analyze turns text into index terms (spec/languages.md §5.7): lowercase,
// split on anything that is not a letter or digit, drop over-long tokens
// and stop words, then Porter2-stem ("Learning" and "learn" both give
// "learn"). The full-text index and the exact scorer share it.
func Analyze(text string) []string {
	var terms []string
	for _, tok := range strings.FieldsFunc(strings.ToLower(text), func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c)
	}) {
		if len(tok) > MaxTokenBytes || stopWords[tok] {
			continue
		}
		terms = append(terms, english.Stem(tok, true))
	}
	return terms
}

// QueryTerms analyzes a search query; repeated terms count once, sorted.
func QueryTerms(q string) []string {
	terms := Analyze(q)
	slices.Sort(terms)
	return slices.Compact(terms)
}

// BM25 parameters (Lance/tantivy defaults, spec/languages.md §5.7).
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// BM25IDF is the inverse document frequency of a term held by df of docs
// documents.
func BM25IDF(docs, df int) float64 {
	n, d := float64(docs), float64(df)
	return math.Log(1 + (n-d+0.5)/(d+0.5))
}

// BM25Term is one term's contribution to a document's score: term
// frequency tf in a document of dl terms, average length avgdl. Every
// scorer (the exact one, the indexed one, the cold ranking) computes
// through these two functions, so their scores agree bit for bit.
func BM25Term(idf float64, tf, dl int32, avgdl float64) float64 {
	norm := BM25K1 * (1 - BM25B + BM25B*float64(dl)/avgdl)
	f := float64(tf)
	return idf * f * (BM25K1 + 1) / (f + norm)
}
