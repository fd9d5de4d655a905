package exec

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestCommitChangesPaging: pages by count reproduce the one-page sequence
// in the frozen order; a byte budget smaller than one change still makes
// progress; limits are typed; authored_branch names the branch.
func TestCommitChangesPaging(t *testing.T) {
	h := featureBH(t)
	h.load("feature", "append", `{"type":"Person","data":{"name":"feed-C","age":3}}
{"type":"Person","data":{"name":"feed-A","age":1}}
{"type":"Company","data":{"name":"Initech"}}
{"edge":"Knows","from":"feed-A","to":"feed-C"}
{"type":"Person","data":{"name":"feed-B","age":2}}`)
	id := h.head("feature")
	all, err := h.g.CommitChangesPage(h.ctx, id, ChangeScope{}, "", 0, 0)
	if err != nil || all.NextPageToken != "" {
		t.Fatalf("one page: %+v %v", all, err)
	}
	var order []string
	for _, c := range all.Changes {
		order = append(order, c.TypeID+"/"+c.ID)
	}
	if got := strings.Join(order[:4], " "); got != "node:Company/Initech node:Person/feed-A node:Person/feed-B node:Person/feed-C" || !strings.HasPrefix(order[4], "edge:Knows/") {
		t.Fatalf("order = %v", order)
	}
	if all.Cause.AuthoredBranch != "feature" || all.Cause.Parent == "" {
		t.Fatalf("cause = %+v", all.Cause)
	}
	for _, budget := range []struct {
		n int
		b int64
	}{{1, 0}, {2, 0}, {0, 1}} {
		var got []string
		tok := ""
		for pages := 0; ; pages++ {
			p, err := h.g.CommitChangesPage(h.ctx, id, ChangeScope{}, tok, budget.n, budget.b)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Changes {
				got = append(got, c.TypeID+"/"+c.ID)
			}
			if tok = p.NextPageToken; tok == "" || pages > 10 {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(order) {
			t.Fatalf("paged (%d changes, %d bytes) = %v, want %v", budget.n, budget.b, got, order)
		}
	}
	// Scope: inserts of Person only; a token of another scope is rejected.
	p, _ := h.g.CommitChangesPage(h.ctx, id, ChangeScope{Types: []string{"Person"}}, "", 1, 0)
	if len(p.Changes) != 1 || p.Changes[0].ID != "feed-A" {
		t.Fatalf("scoped page = %+v", p.Changes)
	}
	if _, err := h.g.CommitChangesPage(h.ctx, id, ChangeScope{}, p.NextPageToken, 1, 0); !errors.Is(err, ErrChangeCursorRejected) || !strings.Contains(err.Error(), "different filter scope") {
		t.Fatalf("other scope: %v", err)
	}
	if _, err := h.g.CommitChangesPage(h.ctx, h.head("main"), ChangeScope{Types: []string{"Person"}}, p.NextPageToken, 1, 0); !errors.Is(err, ErrChangeCursorRejected) {
		t.Fatalf("other commit: %v", err)
	}
	var rl *ResourceLimitError
	if _, err := h.g.CommitChangesPage(h.ctx, id, ChangeScope{}, "", 8193, 0); !errors.As(err, &rl) || rl.Resource != "commit_changes_page_changes" || rl.Limit != 8192 || rl.Actual != 8193 {
		t.Fatalf("8193 changes: %v", err)
	}
	if main, _ := h.g.CommitChangesPage(h.ctx, h.head("main"), ChangeScope{}, "", 0, 0); main.Cause.AuthoredBranch != "" {
		t.Fatalf("main commit authored_branch = %q", main.Cause.AuthoredBranch)
	}
}

// TestFeedGapAfterCleanup: a cursor from before history that cleanup
// reclaimed fails with the typed gap naming the first unreadable commit;
// a new baseline resumes.
func TestFeedGapAfterCleanup(t *testing.T) {
	h := newBH(t, storage.NewMem(), ttSchema, ttData, "")
	start, err := h.g.PollChanges(h.ctx, FeedRequest{Start: "now"})
	if err != nil {
		t.Fatal(err)
	}
	h.mut("main", "add", map[string]any{"name": "Eve", "age": 22})
	a := h.head("main")
	h.mut("main", "add", map[string]any{"name": "Fay", "age": 23})
	h.mut("main", "add", map[string]any{"name": "Gus", "age": 24})
	if _, err := h.g.Cleanup(h.ctx, CleanupOptions{Keep: 1, Confirm: true, Grace: -1}); err != nil {
		t.Fatal(err)
	}
	_, err = h.g.PollChanges(h.ctx, FeedRequest{Cursor: start.Cursor})
	var gap *ChangeFeedGapError
	if !errors.As(err, &gap) || gap.FirstUnreadable != a || gap.Cursor != start.Cursor {
		t.Fatalf("poll across reclaimed history: %v (%+v), want the gap at %s", err, gap, a)
	}
	var b strings.Builder
	bl, err := h.g.CaptureBaseline(h.ctx, "main", ChangeScope{}, &b)
	if err != nil || !strings.Contains(b.String(), "Gus") {
		t.Fatalf("baseline: %v", err)
	}
	h.mut("main", "add", map[string]any{"name": "Hal", "age": 25})
	page, err := h.g.PollChanges(h.ctx, FeedRequest{Cursor: bl.ResumeCursor})
	if err != nil || len(page.Blocks) != 1 || page.Blocks[0].Changes[0].ID != "Hal" || !page.CaughtUp {
		t.Fatalf("after a new baseline: %+v %v", page, err)
	}
	// Cursors are bound to their branch and kind.
	h.branch("feature", "")
	if _, err := h.g.PollChanges(h.ctx, FeedRequest{Branch: "feature", Cursor: bl.ResumeCursor}); !errors.Is(err, ErrChangeCursorRejected) || !strings.Contains(err.Error(), "different branch") {
		t.Fatalf("other branch: %v", err)
	}
	if _, err := h.g.PollChanges(h.ctx, FeedRequest{PageToken: bl.ResumeCursor}); !errors.Is(err, ErrChangeCursorRejected) {
		t.Fatalf("cursor as page token: %v", err)
	}
	if _, err := h.g.PollChanges(h.ctx, FeedRequest{Start: "after:01HXXXXXXXXXXXXXXXXXXXXXXX"}); !errors.Is(err, ErrChangeCursorRejected) {
		t.Fatalf("after an unknown commit: %v", err)
	}
}
