package exec

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestEngineCookbookSeeds initializes a graph from each cookbook's schema
// and loads its seed in one overwrite commit, then checks the committed row
// counts equal the records read.
func TestEngineCookbookSeeds(t *testing.T) {
	root := fixture.Dir(t, "cookbooks")
	for _, book := range []string{"industry-intel", "pharma-intel", "second-brain", "vc-os"} {
		t.Run(book, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(root, book)
			src, err := os.ReadFile(filepath.Join(dir, "schema.pg"))
			if err != nil {
				t.Fatal(err)
			}
			st := storage.NewMem()
			g, err := Init(ctx, st, "schema.pg", string(src), "", Options{})
			if err != nil {
				t.Fatalf("init: %v", err)
			}
			t.Cleanup(func() { engCheck(t, st) })
			f, err := os.Open(filepath.Join(dir, "seed.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, err := g.Load(ctx, f, LoadRequest{Mode: LoadOverwrite})
			if err != nil {
				t.Fatalf("load seed: %v", err)
			}
			tabs, err := g.Tables(ctx, Target{})
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			for _, ti := range tabs {
				rows += ti.Rows
			}
			if rows == 0 || rows > res.Total {
				t.Fatalf("%d rows committed from %d records", rows, res.Total)
			}
		})
	}
}
