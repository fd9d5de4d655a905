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
