package exec

import (
	"errors"
	"testing"
)

// TestPreviewMerge pins that a preview reports what Merge would do and
// writes nothing: heads stay, and the real merge then agrees with it.
func TestPreviewMerge(t *testing.T) {
	preview := func(h *bh, source, target string) *MergePreview {
		h.t.Helper()
		before := [2]string{h.head(source), h.head(target)}
		p, err := h.g.PreviewMerge(h.ctx, source, target)
		if err != nil {
			h.t.Fatalf("preview %s into %s: %v", source, target, err)
		}
		if after := [2]string{h.head(source), h.head(target)}; after != before {
			h.t.Fatalf("preview moved heads: %v -> %v", before, after)
		}
		return p
	}
	t.Run("up to date", func(t *testing.T) {
		h := featureBH(t)
		p := preview(h, "feature", "main")
		if p.Outcome != MergeAlreadyUpToDate || len(p.Changes) != 0 || p.Base != "" {
			t.Fatalf("got %+v", p)
		}
	})
	t.Run("fast-forward lists the source's changes", func(t *testing.T) {
		h := featureBH(t)
		h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
		p := preview(h, "feature", "main")
		if p.Outcome != MergeFastForward || p.Base != h.head("main") || len(p.Changes) != 1 ||
			p.Changes[0].ID != "Eve" || p.Changes[0].Op != OpInsert || len(p.Conflicts) != 0 {
			t.Fatalf("got %+v", p)
		}
		if res := h.merge("feature", "main"); res.Outcome != p.Outcome {
			t.Fatalf("merge %s, preview %s", res.Outcome, p.Outcome)
		}
	})
	t.Run("three-way clean", func(t *testing.T) {
		h := featureBH(t)
		h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
		h.mut("main", "add", map[string]any{"name": "Fay", "age": 33})
		p := preview(h, "feature", "main")
		if p.Outcome != MergeMerged || len(p.Conflicts) != 0 || len(p.Changes) != 1 || p.Changes[0].ID != "Eve" {
			t.Fatalf("got %+v", p)
		}
		if res := h.merge("feature", "main"); res.Outcome != MergeMerged {
			t.Fatalf("merge %s", res.Outcome)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		h := featureBH(t)
		h.mut("feature", "age", map[string]any{"name": "Bob", "age": 26})
		h.mut("main", "age", map[string]any{"name": "Bob", "age": 27})
		p := preview(h, "feature", "main")
		if p.Outcome != MergeMerged || len(p.Conflicts) != 1 || p.Conflicts[0].Kind != ConflictDivergentUpdate || p.Conflicts[0].EntityID != "Bob" {
			t.Fatalf("got %+v", p)
		}
		_, err := h.g.Merge(h.ctx, "feature", "main", "merger")
		var mc *MergeConflictsError
		if !errors.As(err, &mc) || len(mc.Conflicts) != len(p.Conflicts) {
			t.Fatalf("merge: %v; preview conflicts %+v", err, p.Conflicts)
		}
	})
	t.Run("same branch", func(t *testing.T) {
		h := fixtureBH(t)
		if _, err := h.g.PreviewMerge(h.ctx, "main", ""); !errors.Is(err, ErrMergeSameBranch) {
			t.Fatalf("got %v", err)
		}
	})
}
