package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/schema"
)

func compileSchemaFile(t testing.TB, path string) *schema.Catalog {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := schema.Compile(filepath.Base(path), string(src))
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return cat
}

// loadDelta reads a whole JSONL file strictly and stages it as an overwrite
// load would (keyed duplicates rejected, explicit ids required to be unique).
func loadDelta(t testing.TB, cat *schema.Catalog, path string) (*Delta, recordCounts) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return loadDeltaBytes(t, cat, data)
}

type recordCounts struct{ nodes, edges int }

func loadDeltaBytes(t testing.TB, cat *schema.Catalog, data []byte) (*Delta, recordCounts) {
	t.Helper()
	ctx := context.Background()
	r := NewReader(bytes.NewReader(data), cat, ReaderOptions{})
	d := NewDelta()
	var n recordCounts
	gen := 0
	// Generated ids stand in for ULIDs; they cannot collide with input ids
	// because input ids never contain a NUL.
	genID := func() string { gen++; return "\x00gen-" + strconv.Itoa(gen) }
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec := rec.(type) {
		case *NodeRecord:
			n.nodes++
			nt, _ := cat.Node(rec.Type)
			id := rec.ID
			if id == "" {
				id = genID()
			}
			if err := d.PutNode(nt, Row{ID: id, Values: rec.Values}, DupReject); err != nil {
				t.Fatalf("line %d: %v", rec.Line, err)
			}
		case *EdgeRecord:
			n.edges++
			et, _ := cat.Edge(rec.Type)
			id := rec.ID
			if id == "" {
				id = genID()
			}
			if err := d.PutEdge(et, Row{ID: id, Src: rec.From, Dst: rec.To, Values: rec.Values}, DupReject); err != nil {
				t.Fatalf("line %d: %v", rec.Line, err)
			}
		}
	}
	return d, n
}

// Every line of every cookbook seed parses in strict mode and the whole
// seed validates as an overwrite load into an empty graph. The record
// counts are those of spec/surfaces.md §6.
func TestCookbookSeedsStrict(t *testing.T) {
	root := fixture.Dir(t, "cookbooks")
	for _, tc := range []struct {
		name         string
		nodes, edges int
	}{
		{"industry-intel", 109, 154},
		{"pharma-intel", 113, 200},
		{"second-brain", 121, 228},
		{"vc-os", 207, 460},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(root, tc.name)
			cat := compileSchemaFile(t, filepath.Join(dir, "schema.pg"))
			d, n := loadDelta(t, cat, filepath.Join(dir, "seed.jsonl"))
			if n.nodes != tc.nodes || n.edges != tc.edges {
				t.Fatalf("read %d nodes, %d edges; want %d, %d", n.nodes, n.edges, tc.nodes, tc.edges)
			}
			for _, td := range d.Nodes {
				td.Replace = true
			}
			for _, td := range d.Edges {
				td.Replace = true
			}
			if err := Validate(context.Background(), cat, NewMemState(), d); err != nil {
				t.Fatalf("validate: %v", err)
			}
		})
	}
}

func TestUpstreamFixturesStrict(t *testing.T) {
	root := fixture.Dir(t, "upstream")
	for _, name := range []string{"test", "search", "signals", "chain", "metric", "truth", "ranked_edge", "filtered_nearest"} {
		t.Run(name, func(t *testing.T) {
			cat := compileSchemaFile(t, filepath.Join(root, name+".pg"))
			d, _ := loadDelta(t, cat, filepath.Join(root, name+".jsonl"))
			if err := Validate(context.Background(), cat, NewMemState(), d); err != nil {
				t.Fatalf("validate: %v", err)
			}
		})
	}
}
