package index

import (
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
