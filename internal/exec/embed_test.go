package exec

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/embed"
	"github.com/omnigraph-go/omnigraph/internal/eval"
)

// fakeEmbedServer is a local OpenAI-compatible endpoint answering every
// input with embed.MockVector(input), so the vectors a graph stores are
// known to the test; it counts requests and inputs.
func fakeEmbedServer(t *testing.T) (*httptest.Server, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	var reqs, inputs atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		var req struct {
			Model      string   `json:"model"`
			Input      []string `json:"input"`
			Dimensions int      `json:"dimensions"`
		}
		if r.URL.Path != "/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		inputs.Add(int64(len(req.Input)))
		var data []map[string]any
		for i, in := range req.Input {
			data = append(data, map[string]any{"index": i, "embedding": embed.MockVector(in, req.Dimensions)})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs, &inputs
}

func embedGraph(t *testing.T, schemaSrc string, cfg *embed.Config) *Graph {
	t.Helper()
	st := localStore(t, t.TempDir())
	g := mustInit(t, st, "e.pg", schemaSrc, "test", Options{Embedding: cfg})
	return g
}

func embedQuery(t *testing.T, g *Graph, src, name string, params map[string]any) (*eval.Result, error) {
	t.Helper()
	p := headPlan(t, g, src, name)
	if p.IsMutation() {
		_, err := g.Mutate(context.Background(), "main", p, params, MutateOptions{})
		return nil, err
	}
	res, _, err := g.Query(context.Background(), Target{}, p, params)
	return res, err
}

const embedSchema = `node Doc { slug: String @key  body: String?  emb: Vector(4) @embed("body") }`

const embedQueries = `
query near($q: String) { match { $d: Doc } return { $d.slug } order { nearest($d.emb, $q) } limit 1 }
query add($s: String, $b: String) { insert Doc { slug: $s, body: $b } }
query vec($s: String) { match { $d: Doc { slug: $s } } return { $d.emb } }
`

func TestEmbedOnLoadMutateAndQuery(t *testing.T) {
	srv, reqs, inputs := fakeEmbedServer(t)
	g := embedGraph(t, embedSchema, &embed.Config{Provider: embed.ProviderOpenAICompatible, BaseURL: srv.URL, APIKey: "k", Model: "m1"})
	ctx := context.Background()
	data := `{"type":"Doc","data":{"slug":"a","body":"graph databases"}}
{"type":"Doc","data":{"slug":"b","body":"vector search"}}
{"type":"Doc","data":{"slug":"c","body":"given","emb":[1,0,0,0]}}
`
	res, err := g.Load(ctx, strings.NewReader(data), LoadRequest{Mode: LoadAppend})
	if err != nil {
		t.Fatal(err)
	}
	if res.Embedded != 2 || reqs.Load() != 1 || inputs.Load() != 2 {
		t.Fatalf("embedded %d vectors in %d requests (%d inputs), want 2 in 1", res.Embedded, reqs.Load(), inputs.Load())
	}
	// The stored vector is the provider's, unit-normalised.
	out, err := embedQuery(t, g, embedQueries, "vec", map[string]any{"s": "b"})
	if err != nil {
		t.Fatal(err)
	}
	want := embed.MockVector("vector search", 4)
	if got, _ := out.Rows[0][0].([]float32); len(got) != 4 || got[0] != want[0] || got[3] != want[3] {
		t.Fatalf("stored %v, want %v", out.Rows[0][0], want)
	}
	// The given vector is kept as given.
	if out, _ = embedQuery(t, g, embedQueries, "vec", map[string]any{"s": "c"}); out.Rows[0][0].([]float32)[0] != 1 {
		t.Fatalf("given vector changed: %v", out.Rows)
	}
	// String nearest embeds the query with the same client.
	for q, slug := range map[string]string{"vector search": "b", "graph databases": "a"} {
		out, err := embedQuery(t, g, embedQueries, "near", map[string]any{"q": q})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Rows) != 1 || out.Rows[0][0] != slug {
			t.Errorf("nearest %q = %v, want %s", q, out.Rows, slug)
		}
	}
	// A mutation insert computes the omitted non-nullable vector.
	if _, err := embedQuery(t, g, embedQueries, "add", map[string]any{"s": "d", "b": "time travel"}); err != nil {
		t.Fatal(err)
	}
	out, err = embedQuery(t, g, embedQueries, "near", map[string]any{"q": "time travel"})
	if err != nil || out.Rows[0][0] != "d" {
		t.Fatalf("after insert: %v %v", out, err)
	}
}

func TestEmbedModelMismatch(t *testing.T) {
	g := embedGraph(t, `node Doc { slug: String @key  body: String?  emb: Vector(4) @embed("body", model="other") }`,
		&embed.Config{Provider: embed.ProviderMock, Model: "m1"})
	ctx := context.Background()
	_, err := g.Load(ctx, strings.NewReader(`{"type":"Doc","data":{"slug":"a","body":"x"}}`+"\n"), LoadRequest{Mode: LoadAppend})
	var me *embed.ModelMismatchError
	if !errors.As(err, &me) || me.Recorded != "other" || me.Got != "m1" {
		t.Fatalf("load err = %v, want ModelMismatchError", err)
	}
	appendJSONL(t, g, `{"type":"Doc","data":{"slug":"a","body":"x","emb":[1,0,0,0]}}`+"\n")
	_, err = embedQuery(t, g, embedQueries, "near", map[string]any{"q": "x"})
	var ee *eval.Error
	if !errors.As(err, &ee) || !errors.As(err, &me) {
		t.Fatalf("query err = %v, want an execution error wrapping ModelMismatchError", err)
	}
}

func TestEmbedWithoutProvider(t *testing.T) {
	none := &embed.Config{Provider: embed.ProviderOpenAICompatible} // no key
	ctx := context.Background()
	row := `{"type":"Doc","data":{"slug":"a","body":"x"}}` + "\n"

	g := embedGraph(t, embedSchema, none)
	_, err := g.Load(ctx, strings.NewReader(row), LoadRequest{Mode: LoadAppend})
	var ce *ConstraintError
	if !errors.As(err, &ce) || ce.Kind != ConstraintRequired || !errors.Is(err, err) || !strings.Contains(err.Error(), "no embedding provider") {
		t.Fatalf("non-nullable target: err = %v, want a required ConstraintError naming the provider", err)
	}
	_, err = embedQuery(t, g, embedQueries, "add", map[string]any{"s": "d", "b": "y"})
	if !errors.As(err, &ce) || ce.Kind != ConstraintRequired {
		t.Fatalf("mutation: err = %v", err)
	}
	// A null source needs no vector: still required.
	_, err = g.Load(ctx, strings.NewReader(`{"type":"Doc","data":{"slug":"a"}}`+"\n"), LoadRequest{Mode: LoadAppend})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "non-nullable property 'emb'") {
		t.Fatalf("null source: err = %v", err)
	}

	g = embedGraph(t, `node Doc { slug: String @key  body: String?  emb: Vector(4)? @embed("body") }`, none)
	if _, err := g.Load(ctx, strings.NewReader(row), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatalf("nullable target without provider: %v", err)
	}
	out, err := embedQuery(t, g, embedQueries, "vec", map[string]any{"s": "a"})
	if err != nil || out.Rows[0][0] != nil {
		t.Fatalf("nullable target: %v %v", out, err)
	}
	_, err = embedQuery(t, g, embedQueries, "near", map[string]any{"q": "x"})
	if !errors.Is(err, embed.ErrNotConfigured) {
		t.Fatalf("string nearest without provider: %v", err)
	}
}
