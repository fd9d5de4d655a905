package snapshot

import (
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// TestInlineStateNames: cache keys derived from a table state name an
// inline state (whose key is its bytes) by a short digest, the same in
// every commit naming the same state and for the writer's AddState; an
// object key names itself.
func TestInlineStateNames(t *testing.T) {
	ts := table.Schema{Columns: []table.Column{{Name: "id", Type: table.ColumnType{Kind: table.String}}}}
	st, err := table.NewState(ts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := st.Encode()
	if err != nil {
		t.Fatal(err)
	}
	inline := table.InlineStateKey("tables/node-Person", []byte(string(data)+strings.Repeat(" ", 12<<10)))
	object := "tables/edge-Knows/state/" + strings.Repeat("a", 64) + ".json"
	l := NewLoader(storage.NewMem(), cache.New[any](1<<20))
	snap := func(id byte) *Snapshot {
		c := &commit.Commit{Schema: "schemas/s.pg", Tables: map[string]string{"node:Person": inline, "edge:Knows": object}}
		c.ID[15] = id
		return l.Snapshot(nil, c, "")
	}
	a, b := snap(1), snap(2)
	for _, s := range []*Snapshot{a, b, a} {
		if got := s.ImageKey("node:Person"); len(got) > 128 || got != a.ImageKey("node:Person") {
			t.Fatalf("image key of an inline state: %.80q (%d bytes)", got, len(got))
		}
		if got := s.ImageKey("edge:Knows"); !strings.HasSuffix(got, object) {
			t.Fatalf("image key of a state object: %q", got)
		}
	}
	if a.stateName("node:Person") != StateName(inline) || StateName(object) != object {
		t.Fatal("the memoized name differs from StateName")
	}
	if !table.IsInlineState(inline) || table.IsInlineState(object) || !table.IsInlineState("inline:abc") {
		t.Fatal("IsInlineState")
	}
}

// TestCommitNamesFollowTheCommit: the cache names memoized per commit
// (commitNames) are never those of another commit. Commits with one id
// but other tables (hand-made ones repeat ids) get their own names, and a
// new head's tables are named afresh, so a warm read of a moved head
// never finds an older state's image or state under a memoized key.
func TestCommitNamesFollowTheCommit(t *testing.T) {
	l := NewLoader(storage.NewMem(), cache.New[any](1<<20))
	obj := func(s string) string { return "tables/node-Person/state/" + strings.Repeat(s, 64) + ".json" }
	mk := func(id byte, state string) *commit.Commit {
		c := &commit.Commit{Schema: "schemas/s.pg", Tables: map[string]string{"node:Person": state}}
		c.ID[15] = id
		return c
	}
	for _, tc := range []struct {
		name string
		a, b *commit.Commit
	}{
		{"same id, other tables", mk(0, obj("a")), mk(0, obj("b"))},
		{"next head", mk(1, obj("a")), mk(2, obj("b"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []*commit.Commit{tc.a, tc.b, tc.a, tc.b} {
				s := l.Snapshot(nil, c, "main")
				key := c.Tables["node:Person"]
				if got, want := s.ImageKey("node:Person"), "exec/image/schemas/s.pg/"+key; got != want {
					t.Fatalf("image key %q, want %q", got, want)
				}
				if got := s.stateName("node:Person"); got != key {
					t.Fatalf("state name %q, want %q", got, key)
				}
				if got, want := s.ImageKey("node:Company"), "exec/image/schemas/s.pg/empty:node:Company"; got != want {
					t.Fatalf("image key of a table without state %q, want %q", got, want)
				}
			}
		})
	}
}
