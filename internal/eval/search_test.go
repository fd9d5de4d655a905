package eval

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

const searchPG = `node Doc { slug: String @key  title: String @index  body: String @index  embedding: Vector(4) }`

// searchGraph is the search fixture of §9 example 58, written inline so
// the search tests always run.
func searchGraph(t testing.TB) *runGraph {
	g := newRunGraph(t, searchPG)
	doc := func(slug, title, body string, v ...float32) {
		g.node("Doc", slug, "slug", slug, "title", title, "body", body, "embedding", v)
	}
	doc("ml-intro", "Introduction to Machine Learning", "Machine learning is a subset of artificial intelligence that focuses on algorithms", 0.1, 0.2, 0.3, 0.4)
	doc("dl-basics", "Deep Learning Basics", "Deep learning uses neural networks with many layers to learn representations", 0.5, 0.6, 0.7, 0.8)
	doc("nlp-guide", "Natural Language Processing Guide", "NLP applies machine learning to understand and generate human language", 0.2, 0.3, 0.4, 0.5)
	doc("cv-overview", "Computer Vision Overview", "Computer vision enables machines to interpret visual information from images", 0.8, 0.7, 0.6, 0.5)
	doc("rl-intro", "Reinforcement Learning Introduction", "Reinforcement learning trains agents through reward and punishment signals", 0.3, 0.4, 0.5, 0.6)
	return g
}

// searchGQ holds the queries of the upstream search.gq, renamed "q" per
// case by searchQuery.
var searchGQ = map[string]string{
	"text_search":     `query q($q: String) { match { $d: Doc  search($d.title, $q) } return { $d.slug } }`,
	"fuzzy_search":    `query q($q: String) { match { $d: Doc  fuzzy($d.title, $q, 2) } return { $d.slug } }`,
	"phrase_search":   `query q($q: String) { match { $d: Doc  match_text($d.body, $q) } return { $d.slug } }`,
	"vector_search":   `query q($q: Vector(4)) { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, $q) } limit 3 }`,
	"bm25_search":     `query q($q: String) { match { $d: Doc } return { $d.slug } order { bm25($d.title, $q) } limit 3 }`,
	"hybrid_search":   `query q($vq: Vector(4), $tq: String) { match { $d: Doc } return { $d.slug } order { rrf(nearest($d.embedding, $vq), bm25($d.title, $tq)) } limit 3 }`,
	"rrf_two_fts":     `query q($q: String) { match { $d: Doc } return { $d.slug } order { rrf(bm25($d.title, $q), bm25($d.body, $q)) } limit 3 }`,
	"rrf_two_vectors": `query q($q1: Vector(4), $q2: Vector(4)) { match { $d: Doc } return { $d.slug } order { rrf(nearest($d.embedding, $q1), nearest($d.embedding, $q2)) } limit 3 }`,
}

// searchCases is §9 example 58; BM25 ties use the Go rule (id ascending,
// §10), not upstream's incidental order.
var searchCases = []runCase{
	{name: "vector_search", src: searchGQ["vector_search"], params: `{"q":[0.1,0.2,0.3,0.4]}`,
		want: []string{`"ml-intro"`, `"nlp-guide"`, `"rl-intro"`}, ordered: true},
	{name: "rrf_two_vectors", src: searchGQ["rrf_two_vectors"], params: `{"q1":[0.1,0.2,0.3,0.4],"q2":[0.5,0.6,0.7,0.8]}`,
		want: []string{`"rl-intro"`, `"ml-intro"`, `"dl-basics"`}, ordered: true},
	{name: "phrase neural", src: searchGQ["phrase_search"], params: `{"q":"neural"}`, want: []string{`"dl-basics"`}},
	{name: "phrase neural networks", src: searchGQ["phrase_search"], params: `{"q":"neural networks"}`, want: []string{`"dl-basics"`}},
	{name: "text no match", src: searchGQ["text_search"], params: `{"q":"xyznonexistent"}`, want: nil},
	{name: "text Learning stems", src: searchGQ["text_search"], params: `{"q":"Learning"}`,
		want: []string{`"ml-intro"`, `"dl-basics"`, `"rl-intro"`}},
	{name: "text stop words only", src: searchGQ["text_search"], params: `{"q":"the to"}`, want: nil},
	{name: "bm25 ties by id", src: searchGQ["bm25_search"], params: `{"q":"Learning"}`,
		want: []string{`"dl-basics"`, `"ml-intro"`, `"rl-intro"`}, ordered: true},
	{name: "rrf_two_fts", src: searchGQ["rrf_two_fts"], params: `{"q":"learning"}`,
		want: []string{`"dl-basics"`, `"ml-intro"`, `"rl-intro"`}, ordered: true},
	{name: "fuzzy Introductio", src: searchGQ["fuzzy_search"], params: `{"q":"Introductio"}`,
		want: []string{`"ml-intro"`, `"rl-intro"`}},
	{name: "hybrid", src: searchGQ["hybrid_search"], params: `{"vq":[0.5,0.6,0.7,0.8],"tq":"vision"}`,
		want: []string{`"cv-overview"`, `"dl-basics"`, `"rl-intro"`}, ordered: true},
}

func TestRunSearchInline(t *testing.T) {
	g := searchGraph(t)
	checkRunCases(t, g, searchCases)
	checkRunCases(t, g, []runCase{
		{name: "bm25 prefers rarer term", src: searchGQ["bm25_search"], params: `{"q":"learning guide"}`,
			want: []string{`"nlp-guide"`, `"dl-basics"`, `"ml-intro"`}, ordered: true},
		{name: "bm25 without limit drops non-matching", src: `query q($q: String) { match { $d: Doc } return { $d.slug } order { bm25($d.body, $q) } }`,
			params: `{"q":"vision"}`, want: []string{`"cv-overview"`}, ordered: true},
		{name: "nearest list literal", src: `query q() { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, [0.8, 0.7, 0.6, 0.5]) } limit 1 }`,
			want: []string{`"cv-overview"`}, ordered: true},
		{name: "nearest prefiltered", src: `query q($q: Vector(4)) { match { $d: Doc  search($d.title, "learning") } return { $d.slug } order { nearest($d.embedding, $q) } limit 2 }`,
			params: `{"q":[0.8,0.7,0.6,0.5]}`, want: []string{`"dl-basics"`, `"rl-intro"`}, ordered: true},
		{name: "nearest string without embedder", src: `query q() { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, "deep") } limit 1 }`,
			err: "embedding provider"},
		{name: "fuzzy zero edits", src: `query q() { match { $d: Doc  fuzzy($d.title, "learn", 0) } return { $d.slug } }`,
			want: []string{`"ml-intro"`, `"dl-basics"`, `"rl-intro"`}},
	})
}

// TestRunSearchScores projects scores (a Go extension of §5.7).
func TestRunSearchScores(t *testing.T) {
	g := searchGraph(t)
	res, err := g.run(`query q($q: Vector(4)) { match { $d: Doc } return { $d.slug, nearest($d.embedding, $q) as dist } order { nearest($d.embedding, $q) } limit 2 }`,
		`{"q":[0.1,0.2,0.3,0.4]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0][1].(float64) != 0 || math.Abs(res.Rows[1][1].(float64)-0.2) > 1e-6 {
		t.Fatalf("rows %v", res.Rows)
	}
	res, err = g.run(`query q($q: String) { match { $d: Doc } return { $d.slug, bm25($d.title, $q) as s } order { bm25($d.title, $q) } }`, `{"q":"guide"}`)
	if err != nil {
		t.Fatal(err)
	}
	// One matching doc of five, title of 4 terms against an average of 16/5
	// (stop words are not terms).
	idf := math.Log(1 + (5-1+0.5)/(1+0.5))
	want := idf * 2.2 / (1 + 1.2*(1-0.75+0.75*4/3.2))
	if len(res.Rows) != 1 || math.Abs(res.Rows[0][1].(float64)-want) > 1e-9 {
		t.Fatalf("rows %v, want score %v", res.Rows, want)
	}
	res, err = g.run(`query q($a: Vector(4), $b: Vector(4)) { match { $d: Doc } return { $d.slug, rrf(nearest($d.embedding, $a), nearest($d.embedding, $b), 10) as s } order { rrf(nearest($d.embedding, $a), nearest($d.embedding, $b), 10) } limit 1 }`,
		`{"a":[0.1,0.2,0.3,0.4],"b":[0.1,0.2,0.3,0.4]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || math.Abs(res.Rows[0][1].(float64)-2.0/11) > 1e-12 {
		t.Fatalf("rows %v", res.Rows)
	}
}

func TestRunSearchEmbedder(t *testing.T) {
	g := searchGraph(t)
	plan := g.plan(t, `query q() { match { $d: Doc } return { $d.slug } order { nearest($d.embedding, "images") } limit 1 }`)
	embed := func(_ context.Context, req EmbedRequest) ([]float32, error) {
		if req.Text != "images" || req.Model != "" || req.Dim != 4 || req.Type != "Doc" || req.Prop != "embedding" {
			t.Errorf("embed(%+v)", req)
		}
		return []float32{0.8, 0.7, 0.6, 0.5}, nil
	}
	res, err := Run(context.Background(), g.ms, plan, nil, Options{Embed: embed})
	if err != nil {
		t.Fatal(err)
	}
	if got := rowStrings(t, res); len(got) != 1 || got[0] != `"cv-overview"` {
		t.Fatalf("rows %v", got)
	}
}

// TestRunFilteredNearest is §9 example 59: filters on the ranked variable
// apply before the top-k cut.
func TestRunFilteredNearest(t *testing.T) {
	g := newRunGraph(t, `node Doc { slug: String @key  status: String  embedding: Vector(4) }`)
	for _, d := range []struct {
		slug, status string
		v            []float32
	}{
		{"miss-1", "miss", []float32{1, 0.01, 0, 0}}, {"miss-2", "miss", []float32{1, 0, 0.02, 0}}, {"miss-3", "miss", []float32{1, 0, 0, 0.03}},
		{"hit-1", "hit", []float32{-1, 0.01, 0, 0}}, {"hit-2", "hit", []float32{-1, 0, 0.02, 0}}, {"hit-3", "hit", []float32{-1, 0, 0, 0.03}},
	} {
		g.node("Doc", d.slug, "slug", d.slug, "status", d.status, "embedding", d.v)
	}
	want := []string{`"hit-1"`, `"hit-2"`, `"hit-3"`}
	q := func(match string) string {
		return `query q($q: Vector(4)) { match { ` + match + ` } return { $d.slug } order { nearest($d.embedding, $q) } limit 3 }`
	}
	checkRunCases(t, g, []runCase{
		{name: "inline", src: q(`$d: Doc { status: "hit" }`), params: `{"q":[1,0,0,0]}`, want: want, ordered: true},
		{name: "filter =", src: q(`$d: Doc  $d.status = "hit"`), params: `{"q":[1,0,0,0]}`, want: want, ordered: true},
		{name: "filter <=", src: q(`$d: Doc  $d.status <= "hit"`), params: `{"q":[1,0,0,0]}`, want: want, ordered: true},
	})
}

// rankedGraph is the ranked-edge fixture of §9 example 60.
func rankedGraph(t testing.TB) *runGraph {
	g := newRunGraph(t, `node RankedDoc { slug: String @key  embedding: Vector(4) }  edge RankedLink: RankedDoc -> RankedDoc { label: String }`)
	for i, s := range []string{"rank-1", "rank-2", "rank-3"} {
		g.node("RankedDoc", s, "slug", s, "embedding", []float32{float32(i), 0, 0, 0})
	}
	g.node("RankedDoc", "sink", "slug", "sink", "embedding", []float32{9, 0, 0, 0})
	g.edge("RankedLink", "edge-c", "rank-3", "sink", "label", "C").
		edge("RankedLink", "edge-b", "rank-2", "sink", "label", "B").
		edge("RankedLink", "edge-a2", "rank-1", "sink", "label", "A2").
		edge("RankedLink", "edge-a1", "rank-1", "sink", "label", "A1")
	return g
}

// TestRunRankedEdges is §9 example 60: rank order survives edge fan-out.
func TestRunRankedEdges(t *testing.T) {
	g := rankedGraph(t)
	want := []string{`"rank-1","A1"`, `"rank-1","A2"`, `"rank-2","B"`, `"rank-3","C"`}
	checkRunCases(t, g, []runCase{
		{name: "nearest", src: `query q($q: Vector(4)) { match { $d: RankedDoc  $d $w:rankedLink $target } return { $d.slug, $w.label } order { nearest($d.embedding, $q) } limit 4 }`,
			params: `{"q":[0,0,0,0]}`, want: want, ordered: true},
		{name: "rrf", src: `query q($q: Vector(4)) { match { $d: RankedDoc  $d $w:rankedLink $target } return { $d.slug, $w.label } order { rrf(nearest($d.embedding, $q), nearest($d.embedding, $q)) } limit 4 }`,
			params: `{"q":[0,0,0,0]}`, want: want, ordered: true},
		{name: "rank a traversal variable", src: `query q($q: Vector(4)) { match { $s: RankedDoc { slug: "sink" }  $d rankedLink $s } return { $d.slug } order { nearest($d.embedding, $q) } limit 2 }`,
			params: `{"q":[0,0,0,0]}`, want: []string{`"rank-1"`, `"rank-2"`}, ordered: true},
		{name: "rank behind a cross join", src: `query q($q: Vector(4)) { match { $s: RankedDoc { slug: "sink" }  $d: RankedDoc } return { $d.slug } order { nearest($d.embedding, $q) } limit 2 }`,
			params: `{"q":[2,0,0,0]}`, want: []string{`"rank-3"`, `"rank-2"`}, ordered: true},
	})
}

// TestRunSearchUpstreamFixture runs the upstream search.gq queries on the
// upstream search fixture loaded through the JSONL reader.
func TestRunSearchUpstreamFixture(t *testing.T) {
	dir := fixture.Dir(t, "upstream")
	g := loadJSONL(t, filepath.Join(dir, "search.pg"), filepath.Join(dir, "search.jsonl"))
	checkRunCases(t, g, searchCases)
	g = loadJSONL(t, filepath.Join(dir, "ranked_edge.pg"), filepath.Join(dir, "ranked_edge.jsonl"))
	checkRunCases(t, g, []runCase{{name: "ranked edges", src: `query q($q: Vector(4)) { match { $d: RankedDoc  $d $w:rankedLink $target } return { $d.slug, $w.label } order { nearest($d.embedding, $q) } limit 4 }`,
		params: `{"q":[0,0,0,0]}`, want: []string{`"rank-1","A1"`, `"rank-1","A2"`, `"rank-2","B"`, `"rank-3","C"`}, ordered: true}})
}

func TestRunAnalyze(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Introduction to Machine Learning", "introduct machin learn"},
		{"Deep-Learning, NLP & the basics!", "deep learn nlp basic"},
		{"", ""},
		{"The AND of", ""},
		{"naïve café 42", "naïv café 42"},
	}
	for _, tc := range cases {
		if got := strings.Join(analyze(tc.in), " "); got != tc.want {
			t.Errorf("analyze(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		k    int
		want bool
	}{{"introductio", "introduct", 2, true}, {"kitten", "sitting", 2, false}, {"kitten", "sitting", 3, true}, {"", "ab", 2, true}, {"abc", "abc", 0, true}} {
		if got := levenshteinWithin(tc.a, tc.b, tc.k); got != tc.want {
			t.Errorf("levenshteinWithin(%q, %q, %d) = %v", tc.a, tc.b, tc.k, got)
		}
	}
}
