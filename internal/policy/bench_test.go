package policy

import "testing"

// BenchmarkDecide measures one authorization decision of the base bundle
// (an allow with a scoped rule, and a deny), the cost every protected
// request pays.
func BenchmarkDecide(b *testing.B) {
	bundle := graphBundle(b, "base", basePolicy, "knowledge")
	for _, c := range []struct {
		name string
		req  Request
	}{
		{"allow", Request{Actor: "act-andrew", Action: BranchMerge, Branch: "dev", TargetBranch: "main"}},
		{"deny", Request{Actor: "act-reader", Action: Change, Branch: "main"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := bundle.Decide(c.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
