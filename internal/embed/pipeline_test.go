package embed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pipelineSeed = `{"type":"Doc","data":{"slug":"a","title":"Alpha","tags":["x","y"]}}
{"type":"Doc","data":{"slug":"b","title":"Beta","emb":[1,0,0]}}
{"edge":"Cites","from":"a","to":"b"}
{"type":"Person","data":{"name":"p"}}
{"type":"Doc","data":{"slug":"c","title":"Gamma","emb":[]}}
`

func runPipeline(t *testing.T, mode Mode, sels []Selector, types []string) (*Report, []map[string]any) {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "seed.jsonl"), filepath.Join(dir, "build", "out.jsonl")
	if err := os.WriteFile(in, []byte(pipelineSeed), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Provider: ProviderMock, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), c, Job{Input: in, Output: out, Mode: mode, Selectors: sels, Types: types,
		Spec: Spec{Dimension: 3, Types: map[string]TypeSpec{"Doc": {Target: "emb", Fields: []string{"title", "tags"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 5 {
		t.Fatalf("%d output records, want 5 (order and pass-through kept)", len(recs))
	}
	return rep, recs
}

func emb(rec map[string]any) []any {
	d, _ := rec["data"].(map[string]any)
	v, _ := d["emb"].([]any)
	return v
}

func TestPipelineModes(t *testing.T) {
	want := MockVector("type: Doc\ntitle: Alpha\ntags: x, y", 3)
	rep, recs := runPipeline(t, FillMissing, nil, nil)
	if rep.EmbeddedRecords != 2 || rep.Records != 5 || rep.Mode != FillMissing {
		t.Fatalf("report %+v", rep)
	}
	if v := emb(recs[0]); len(v) != 3 || float32(v[0].(float64)) != want[0] {
		t.Fatalf("a: %v, want %v", v, want)
	}
	if v := emb(recs[1]); v[0].(float64) != 1 {
		t.Fatalf("b was re-embedded in fill_missing: %v", v)
	}
	if len(emb(recs[4])) != 3 || recs[2]["edge"] != "Cites" {
		t.Fatalf("records %v", recs)
	}

	rep, recs = runPipeline(t, ReembedAll, nil, nil)
	if rep.EmbeddedRecords != 3 || emb(recs[1])[0].(float64) == 1 {
		t.Fatalf("reembed_all: %+v %v", rep, recs[1])
	}
	rep, recs = runPipeline(t, FillMissing, []Selector{{Type: "Doc", Field: "slug", Value: "b"}}, nil)
	if rep.EmbeddedRecords != 1 || rep.Mode != ReembedSelected || emb(recs[1])[0].(float64) == 1 || emb(recs[0]) != nil {
		t.Fatalf("select: %+v %v", rep, recs)
	}
	rep, recs = runPipeline(t, Clean, nil, []string{"Doc"})
	if rep.CleanedRecords != 2 || emb(recs[1]) != nil || rep.SelectedRecords != 3 {
		t.Fatalf("clean: %+v %v", rep, recs)
	}
}

func TestParseSelector(t *testing.T) {
	for in, want := range map[string]Selector{
		"Doc:slug=a": {Type: "Doc", Field: "slug", Value: "a"},
		"slug = a ":  {Field: "slug", Value: "a"},
	} {
		got, err := ParseSelector(in)
		if err != nil || got != want {
			t.Errorf("ParseSelector(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"slug", "Doc:=a", "=a"} {
		if _, err := ParseSelector(bad); err == nil {
			t.Errorf("ParseSelector(%q) accepted", bad)
		}
	}
}
