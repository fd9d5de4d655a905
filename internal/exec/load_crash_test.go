package exec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// TestEngineLoadCrashPoints fires a failure at every durable step of a load
// (engine, table and commit failpoints), then reopens the graph: it shows
// exactly the old or the new content, never a mix, and the next load works.
func TestEngineLoadCrashPoints(t *testing.T) {
	// A merge that rewrites Alice (deletion vector) and adds Eve and an edge.
	const data = `{"type":"Person","data":{"name":"Alice","age":31}}
{"type":"Person","data":{"name":"Eve","age":22}}
{"edge":"Knows","from":"Eve","to":"Alice"}`
	oldP := []string{"Alice=30", "Bob=25", "Charlie=35", "Diana=28"}
	newP := []string{"Alice=31", "Bob=25", "Charlie=35", "Diana=28", "Eve=22"}
	points := []struct {
		name    string
		visible bool // the write is visible after the failure
	}{
		{FPBeforeWrite, false},
		{"table/before-dv", false},
		{"table/after-dv", false},
		{"table/before-fragment", false},
		{"table/after-fragment", false},
		{FPAfterTableData, false},
		{"table/before-state", false},
		{"table/after-state", false},
		{FPAfterTableState, false},
		{FPBeforePublish, false},
		{"commit/before-commit-object", false},
		{"commit/after-commit-object", false},
		{"commit/before-cas", false},
		{"commit/after-cas", true},
		{FPAfterPublish, true},
	}
	for _, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			g, st := engFixture(t)
			ctx := context.Background()
			before := engSnap(t, g, "main")
			disable := failpoint.Enable(pt.name, failpoint.Error)
			_, err := g.Load(ctx, strings.NewReader(data), LoadRequest{Mode: LoadMerge})
			hits := failpoint.Hits(pt.name)
			disable()
			if !errors.Is(err, failpoint.ErrInjected) {
				t.Fatalf("load err = %v, want the injected failure (hits %d)", err, hits)
			}
			h, err := Open(ctx, st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := engNodes(t, h, "Person", "age")
			want := oldP
			if pt.visible {
				want = newP
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after failure at %s: persons %v, want %v", pt.name, got, want)
			}
			if !pt.visible && !engSnap(t, h, "main").equal(before) {
				t.Fatalf("failure at %s moved the head", pt.name)
			}
			if _, err := h.Load(ctx, strings.NewReader(`{"type":"Company","data":{"name":"Initech"}}`), LoadRequest{Mode: LoadAppend}); err != nil {
				t.Fatalf("next load: %v", err)
			}
		})
	}
}
