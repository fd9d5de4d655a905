package exec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// branchBenchGraph builds a graph of `types` node types (Person plus fillers and
// the Knows edge) with rows Persons loaded in one commit.
func branchBenchGraph(b *testing.B, types, rows int) *bh {
	b.Helper()
	var s strings.Builder
	s.WriteString("node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n")
	for i := 2; i < types; i++ {
		fmt.Fprintf(&s, "node T%d { name: String @key }\n", i)
	}
	var d strings.Builder
	for i := range rows {
		fmt.Fprintf(&d, "{\"type\":\"Person\",\"data\":{\"name\":\"p%07d\",\"age\":%d}}\n", i, i%100)
	}
	return newBH(b, storage.NewMem(), s.String(), d.String(), "")
}

// BenchmarkBranchCreate: creating a branch writes one ref whatever the
// graph's size, so the time is flat across type and row counts.
func BenchmarkBranchCreate(b *testing.B) {
	for _, sz := range []struct{ types, rows int }{{8, 1000}, {140, 1000}, {8, 100000}} {
		b.Run(fmt.Sprintf("types=%d/rows=%d", sz.types, sz.rows), func(b *testing.B) {
			h := branchBenchGraph(b, sz.types, sz.rows)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := h.g.CreateBranch(h.ctx, fmt.Sprintf("b%d", i), "main", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMerge measures a three-way merge where both sides changed the
// Person table: the source updates delta rows, the target one other row.
// Time should follow delta (first group) and stay near-flat in the table
// size at a fixed delta (second group): shared fragments are not read.
func BenchmarkMerge(b *testing.B) {
	run := func(b *testing.B, rows, delta int) {
		h := branchBenchGraph(b, 4, rows)
		base := h.head("main")
		h.branch("src", "")
		var d strings.Builder
		for i := range delta {
			fmt.Fprintf(&d, "{\"type\":\"Person\",\"data\":{\"name\":\"p%07d\",\"age\":%d}}\n", i+1, 200+i%50)
		}
		h.load("src", "merge", d.String())
		h.branch("tgt0", base)
		h.mut("tgt0", "age", map[string]any{"name": "p0000000", "age": 7})
		tgt0 := h.head("tgt0")
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			name := fmt.Sprintf("t%d", i)
			h.branch(name, tgt0)
			b.StartTimer()
			res, err := h.g.Merge(h.ctx, "src", name, "")
			if err != nil || res.Outcome != MergeMerged {
				b.Fatalf("merge %+v %v", res, err)
			}
		}
	}
	for _, delta := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("rows=10000/delta=%d", delta), func(b *testing.B) { run(b, 10000, delta) })
	}
	for _, rows := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("rows=%d/delta=10", rows), func(b *testing.B) { run(b, rows, 10) })
	}
}
