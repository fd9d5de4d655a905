package omnigraph_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

// TestSchemaWarnings: Init, PlanSchema and ApplySchema hand back the
// warnings of the compile they already do, so a caller (the CLI) prints
// them without compiling the source again; a clean schema has none, and a
// handle from Open has none.
func TestSchemaWarnings(t *testing.T) {
	ctx := context.Background()
	const clean = "node P { name: String @key }\n"
	const nearMiss = "node P { name: String @key\n  age: I32? @idnex }\n"
	const want = "2:13: warning: unknown annotation @idnex has no effect; did you mean @index?"
	render := func(ws []omnigraph.SchemaWarning) string {
		var out []string
		for _, w := range ws {
			out = append(out, w.Error())
		}
		return strings.Join(out, "\n")
	}
	for _, c := range []struct {
		name, src, want string
	}{
		{"clean", clean, ""},
		{"near miss", nearMiss, "n.pg:" + want},
	} {
		t.Run("init "+c.name, func(t *testing.T) {
			g, err := omnigraph.Init(ctx, filepath.Join(t.TempDir(), "g"), "n.pg", c.src, "", omnigraph.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := render(g.SchemaWarnings()); got != c.want {
				t.Fatalf("init warnings = %q, want %q", got, c.want)
			}
		})
	}
	uri := filepath.Join(t.TempDir(), "g")
	g, err := omnigraph.Init(ctx, uri, "n.pg", clean, "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err = omnigraph.Open(ctx, uri, omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ws := g.SchemaWarnings(); ws != nil {
		t.Fatalf("an opened handle has init warnings: %v", ws)
	}
	p, err := g.PlanSchema(ctx, nearMiss, omnigraph.SchemaApplyOptions{})
	if err != nil || !strings.HasSuffix(render(p.Warnings), want) {
		t.Fatalf("plan warnings = %q, %v", render(p.Warnings), err)
	}
	res, err := g.ApplySchema(ctx, nearMiss, omnigraph.SchemaApplyOptions{})
	if err != nil || !res.Applied || !strings.HasSuffix(render(res.Plan.Warnings), want) {
		t.Fatalf("apply warnings = %q, applied %v, %v", render(res.Plan.Warnings), res != nil && res.Applied, err)
	}
}
