package exec

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/embed"
	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// TestCookbookHybridSearch runs industry-intel's hybrid.gq (string
// nearest and rrf(nearest, bm25)) on the seed plus Chunk rows whose
// Vector(3072) @embed vectors the load computes with the mock provider:
// every query answers exactly what the exact scorer answers, and a chunk's
// own text finds that chunk first.
func TestCookbookHybridSearch(t *testing.T) {
	dir := filepath.Join(fixture.Dir(t, "cookbooks"), "industry-intel")
	src, err := os.ReadFile(filepath.Join(dir, "schema.pg"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := localStore(t, t.TempDir())
	g := mustInit(t, st, "schema.pg", string(src), "", Options{Embedding: &embed.Config{Provider: embed.ProviderMock}})
	seed, err := os.Open(filepath.Join(dir, "seed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer seed.Close()
	var artifacts []string
	var lines strings.Builder
	sc := bufio.NewScanner(seed)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		lines.Write(sc.Bytes())
		lines.WriteByte('\n')
		var rec struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Type == "InformationArtifact" {
			artifacts = append(artifacts, rec.Data["slug"].(string)+"\x00"+rec.Data["name"].(string))
		}
	}
	if len(artifacts) == 0 {
		t.Fatal("seed has no artifacts")
	}
	var texts []string
	for i, a := range artifacts {
		slug, name, _ := strings.Cut(a, "\x00")
		for j := range 3 {
			text := fmt.Sprintf("Chunk %d of %s: notes on %s, part %d", j, name, strings.ToLower(name), i+j)
			texts = append(texts, text)
			fmt.Fprintf(&lines, `{"type":"Chunk","data":{"id":"ch-%d-%d","text":%q,"chunk_index":%d,"createdAt":"2026-02-01T00:00:00Z"}}`+"\n", i, j, text, j)
			fmt.Fprintf(&lines, `{"edge":"PartOfArtifact","from":"ch-%d-%d","to":%q}`+"\n", i, j, slug)
		}
	}
	res, err := g.Load(ctx, strings.NewReader(lines.String()), LoadRequest{Mode: LoadOverwrite})
	if err != nil {
		t.Fatal(err)
	}
	if res.Embedded != int64(len(texts)) {
		t.Fatalf("load embedded %d vectors, want %d", res.Embedded, len(texts))
	}
	if _, err := g.Optimize(ctx, ""); err != nil {
		t.Fatal(err)
	}
	hybrid, err := os.ReadFile(filepath.Join(dir, "queries", "hybrid.gq"))
	if err != nil {
		t.Fatal(err)
	}
	snap := resolve(t, g, Target{})
	f := compileAt(t, snap, "hybrid.gq", string(hybrid))
	for i, q := range []string{texts[0], texts[len(texts)/2], "survey repatriating AI", "release notes"} {
		for _, name := range []string{"related_chunks", "hybrid_chunks"} {
			p, err := f.Query(name)
			if err != nil {
				t.Fatal(err)
			}
			params := map[string]any{"q": q}
			got := queryAt(t, g, Target{}, p, params)
			want, err := eval.Run(ctx, snap, p, params, eval.Options{NoIndexes: true, Embed: g.queryEmbed})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Rows) != 10 || !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Fatalf("%s(%q): indexed %v\nexact %v", name, q, got.Rows, want.Rows)
			}
			if i < 2 && name == "related_chunks" && got.Rows[0][0] != q {
				t.Errorf("%s(%q) ranks %v first, want the chunk with that text", name, q, got.Rows[0][0])
			}
		}
	}
}
