package exec

import (
	"fmt"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// TestAutoCompactionTiers pins the size-tiered rule of automatic compaction:
// it merges the newest fragments and leaves an older, much larger one alone,
// while a manual optimize still merges the whole run.
func TestAutoCompactionTiers(t *testing.T) {
	c := maintConfig{targetRows: 65536, budgetRows: 4 * 65536}
	frags := func(rows ...int64) []table.Fragment {
		out := make([]table.Fragment, len(rows))
		for i, r := range rows {
			out[i] = table.Fragment{Key: fmt.Sprintf("f%d", i), Rows: r}
		}
		return out
	}
	rewritten := func(segs []segment) (keys []string) {
		for _, sg := range segs {
			if sg.rewrite {
				for _, f := range sg.frags {
					keys = append(keys, f.Key)
				}
			}
		}
		return keys
	}
	tests := []struct {
		name string
		rows []int64
		auto bool
		want string
	}{
		{"medium fragment left alone", []int64{88456, 11544, 1, 1, 1}, true, "[f2 f3 f4]"},
		{"manual optimize merges the run", []int64{88456, 11544, 1, 1, 1}, false, "[f1 f2 f3 f4]"},
		{"similar sizes merge", []int64{88456, 6, 3, 1, 1}, true, "[f1 f2 f3 f4]"},
		{"always at least the two newest", []int64{1000, 100, 1}, true, "[f1 f2]"},
		{"two small fragments", []int64{5, 1}, true, "[f0 f1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fmt.Sprint(rewritten(c.planCompaction(frags(tc.rows...), tc.auto)))
			if got != tc.want {
				t.Fatalf("rewritten %s, want %s", got, tc.want)
			}
		})
	}
}

// TestAutoCompactionFullFragmentsWithDeletions: to automatic compaction a
// fragment is small by the rows it was written with, under half the
// target. A full fragment that lost a few rows (the hollow rule covers
// deletions) and one of over half the target are neither counted nor
// merged, so a write next to them does not trigger a compaction; a manual
// optimize still merges every fragment under the target by live rows.
func TestAutoCompactionFullFragmentsWithDeletions(t *testing.T) {
	c := maintConfig{targetRows: 65536, budgetRows: 4 * 65536, threshold: 3}
	frags := []table.Fragment{
		{Key: "f0", Rows: 65536, Deleted: 1},
		{Key: "f1", Rows: 34464, Deleted: 1},
		{Key: "f2", Rows: 20},
		{Key: "f3", Rows: 1},
		{Key: "f4", Rows: 1},
	}
	if c.tooManySmall(frags) {
		t.Errorf("three fragments written small: a compaction is due, want none")
	}
	frags = append(frags, table.Fragment{Key: "f5", Rows: 1})
	if !c.tooManySmall(frags) {
		t.Errorf("four fragments written small: no compaction is due, want one")
	}
	for _, tc := range []struct {
		auto bool
		want string
	}{{true, "[f3 f4 f5]"}, {false, "[f0 f1 f2 f3 f4 f5]"}} {
		var got []string
		for _, sg := range c.planCompaction(frags, tc.auto) {
			if sg.rewrite {
				for _, f := range sg.frags {
					got = append(got, f.Key)
				}
			}
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("auto=%v: rewritten %v, want %s", tc.auto, got, tc.want)
		}
	}
}
