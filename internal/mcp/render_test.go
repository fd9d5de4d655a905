package mcp

import (
	"encoding/json"
	"testing"
)

// TestRenderings pins each tool's text rendering of its JSON result, and
// that a result that does not decode is shown as it is.
func TestRenderings(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		render    func(json.RawMessage) string
		want      string
	}{
		{"rows", `{"query_name":"q","row_count":1,"graph_commit_id":"C1","columns":["a","b"],"rows":[{"a":1,"b":"x"}]}`,
			func(r json.RawMessage) string { return decoded(r, renderRows) }, "q: 1 row at commit C1\na | b\n1 | \"x\""},
		{"rows empty", `{"query_name":"q","row_count":0,"rows":[]}`,
			func(r json.RawMessage) string { return decoded(r, renderRows) }, "q: 0 rows"},
		{"change", `{"query_name":"add","branch":"main","affected_nodes":1,"affected_edges":2,"commit":{"graph_commit_id":"C2"}}`,
			func(r json.RawMessage) string { return decoded(r, renderChange) }, "add on main: 1 node and 2 edges affected; commit C2"},
		{"change no commit", `{"query_name":"add","branch":"main","commit":null}`,
			func(r json.RawMessage) string { return decoded(r, renderChange) }, "add on main: 0 nodes and 0 edges affected; nothing changed, no commit"},
		{"load", `{"branch":"feat","branch_created":true,"mode":"merge","total_entities":3,"commit":{"graph_commit_id":"C3"}}`,
			func(r json.RawMessage) string { return decoded(r, renderLoad) }, "loaded 3 entities into feat (merge), branch created; commit C3"},
		{"merge deleted", `{"source":"f","target":"main","outcome":"merged","commit":{"graph_commit_id":"C4"},"branch_deleted":true}`,
			func(r json.RawMessage) string { return decoded(r, renderMerge) }, "merge f into main: merged; commit C4; branch f deleted"},
		{"merge not deleted", `{"source":"f","target":"main","outcome":"fast_forward","branch_deleted":false,"branch_delete_error":"denied"}`,
			func(r json.RawMessage) string { return decoded(r, renderMerge) }, "merge f into main: fast_forward; nothing changed, no commit; branch f not deleted: denied"},
		{"commits", `{"commits":[{"graph_commit_id":"C5","actor_id":"act"},{"graph_commit_id":"C6"}]}`,
			func(r json.RawMessage) string { return decoded(r, renderCommits) }, "2 commits, newest first\nC5 by act\nC6"},
		{"commit changes", `{"cause":{"graph_commit_id":"C7"},"changes":[{"kind":"node","type":{"name":"P"},"id":"a","op":"insert"}],"next_page_token":"T"}`,
			func(r json.RawMessage) string { return decoded(r, renderCommitChanges) }, "commit C7: 1 change (more: pass page_token T)\ninsert node P a"},
		{"diff", `{"total":2,"truncated":true,"changes":[{"kind":"edge","type":{"name":"K"},"id":"e","op":"delete"}]}`,
			func(r json.RawMessage) string { return decoded(r, renderDiff) }, "2 changes (first 1 returned; raise limit for more)\ndelete edge K e"},
		{"feed", `{"blocks":[{"cause":{"graph_commit_id":"C8"},"changes":[{"kind":"node","type":{"name":"P"},"id":"b","op":"update"}]}],"cursor":"K1","caught_up":true}`,
			func(r json.RawMessage) string { return decoded(r, renderFeed) }, "1 commit, 1 change; caught up, next cursor K1\nupdate node P b"},
		{"undecodable", `{"total":"many"}`,
			func(r json.RawMessage) string { return decoded(r, renderDiff) }, `{"total":"many"}`},
	} {
		if got := c.render(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
