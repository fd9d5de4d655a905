package exec

import (
	"slices"
	"testing"
)

// TestMergeCrashPoints fires a failure at every durable step of a merge —
// three-way (table, engine and commit failpoints) and fast-forward — then
// reopens: the target shows exactly its old or its new content, and the
// merge, run again, completes.
func TestMergeCrashPoints(t *testing.T) {
	oldMerged := []string{"Alice=30", "Bob=26", "Charlie=35", "Diana=28"}
	newMerged := []string{"Alice=31", "Bob=26", "Charlie=35", "Diana=28", "Eve=22"}
	oldFF := []string{"Alice=30", "Bob=25", "Charlie=35", "Diana=28"}
	newFF := []string{"Alice=31", "Bob=25", "Charlie=35", "Diana=28", "Eve=22"}
	points := []struct {
		name    string
		ff      bool
		visible bool
	}{
		{FPMergeBeforeWrite, false, false},
		{"table/before-dv", false, false},
		{"table/after-dv", false, false},
		{"table/before-fragment", false, false},
		{"table/after-fragment", false, false},
		{"table/before-state", false, false},
		{"table/after-state", false, false},
		{FPMergeAfterTableState, false, false},
		{FPMergeBeforePublish, false, false},
		{"commit/before-commit-object", false, false},
		{"commit/after-commit-object", false, false},
		{"commit/before-cas", false, false},
		{"commit/after-cas", false, true},
		{FPMergeAfterPublish, false, true},
		{FPMergeBeforeFastForward, true, false},
		{FPMergeAfterFastForward, true, true},
	}
	for _, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			h := featureBH(t)
			h.mut("feature", "age", map[string]any{"name": "Alice", "age": 31})
			h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
			want := [2][]string{oldMerged, newMerged}
			if pt.ff {
				want = [2][]string{oldFF, newFF}
			} else {
				h.mut("main", "age", map[string]any{"name": "Bob", "age": 26})
			}
			injectFailure(t, pt.name, "merge", func() error {
				_, err := h.g.Merge(h.ctx, "feature", "main", "")
				return err
			})
			h2 := h.reopen()
			got := h2.nodes(Target{}, "Person", "age")
			exp := want[0]
			if pt.visible {
				exp = want[1]
			}
			if !slices.Equal(got, exp) {
				t.Fatalf("after failure at %s: %v, want %v", pt.name, got, exp)
			}
			res, err := h2.g.Merge(h.ctx, "feature", "main", "")
			if err != nil {
				t.Fatalf("merge after failure: %v", err)
			}
			if pt.visible != (res.Outcome == MergeAlreadyUpToDate) {
				t.Fatalf("second merge outcome %s", res.Outcome)
			}
			if got := h2.nodes(Target{}, "Person", "age"); !slices.Equal(got, want[1]) {
				t.Fatalf("after re-merge: %v", got)
			}
		})
	}
}
