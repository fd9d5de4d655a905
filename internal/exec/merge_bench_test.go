package exec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// branchBenchGraph builds a graph of `types` node types (Person plus fillers and
// the Knows edge) with rows Persons loaded in one commit.
func branchBenchGraph(tb testing.TB, st storage.Store, types, rows int) *bh {
	tb.Helper()
	var s strings.Builder
	s.WriteString("node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person\n")
	for i := 2; i < types; i++ {
		fmt.Fprintf(&s, "node T%d { name: String @key }\n", i)
	}
	var d strings.Builder
	for i := range rows {
		fmt.Fprintf(&d, "{\"type\":\"Person\",\"data\":{\"name\":\"p%07d\",\"age\":%d}}\n", i, i%100)
	}
	return newBH(tb, st, s.String(), d.String(), "")
}

// mergeFixture sets up the merge BenchmarkMerge and TestMergeReadsFollowDelta
// measure: over a base of rows Persons (one big fragment), branch "src"
// updates delta of them (a DV on the big fragment plus one new fragment) and
// the target commit returned updates one other (another DV on it, another
// fragment). Both sides changed the same big fragment. The base is
// compacted first, so that neither side's write triggers an inline
// compaction: rows a compaction moves are read by the diff like any other
// fragment only one side holds, a cost bounded by the compaction budget
// rather than by the delta, and not what this fixture measures.
func mergeFixture(tb testing.TB, st storage.Store, rows, delta int) (h *bh, target string) {
	tb.Helper()
	h = branchBenchGraph(tb, st, 4, rows)
	if _, err := h.g.Optimize(h.ctx, "main"); err != nil {
		tb.Fatal(err)
	}
	base := h.head("main")
	h.branch("src", "")
	var d strings.Builder
	for i := range delta {
		fmt.Fprintf(&d, "{\"type\":\"Person\",\"data\":{\"name\":\"p%07d\",\"age\":%d}}\n", i+1, 200+i%50)
	}
	h.load("src", "merge", d.String())
	h.branch("tgt0", base)
	h.mut("tgt0", "age", map[string]any{"name": "p0000000", "age": 7})
	return h, h.head("tgt0")
}

// BenchmarkBranchCreate: creating a branch writes one ref whatever the
// graph's size, so the time is flat across type and row counts.
func BenchmarkBranchCreate(b *testing.B) {
	for _, sz := range []struct{ types, rows int }{{8, 1000}, {140, 1000}, {8, 100000}} {
		b.Run(fmt.Sprintf("types=%d/rows=%d", sz.types, sz.rows), func(b *testing.B) {
			h := branchBenchGraph(b, storage.NewMem(), sz.types, sz.rows)
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
// Time should follow delta (first group) and stay flat in the table size at
// a fixed delta (second group): shared fragments are not read, and of the
// big fragment both sides changed only the rows whose deletion-vector bit
// differs are decoded (from its cached image).
func BenchmarkMerge(b *testing.B) {
	run := func(b *testing.B, rows, delta int) {
		h, tgt0 := mergeFixture(b, storage.NewMem(), rows, delta)
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

// TestMergeReadsFollowDelta pins the merge's cost model in bytes: with a
// fixed delta on both sides of one big shared fragment, the merge reads the
// same bytes at 10k and 100k rows, up to a small constant (object sizes
// grow by a few bytes with the row count: state statistics, Parquet
// footers of the fixed-size new fragments). The handle is the one that
// wrote and read both sides, as in a server, so the big fragment's decoded
// image is cached; the merge must not read its columns again.
func TestMergeReadsFollowDelta(t *testing.T) {
	read := func(rows int) int64 {
		cs := storage.NewCounting(storage.NewMem())
		h, tgt := mergeFixture(t, cs, rows, 10)
		h.branch("t", tgt)
		// The handle has read both sides (writes alone no longer decode
		// fragments: they probe the persisted indexes).
		for _, b := range []string{"src", "t"} {
			snap := resolve(t, h.g, Target{Branch: b})
			if _, err := snap.Nodes(h.ctx, "Person"); err != nil {
				t.Fatal(err)
			}
		}
		before := cs.Snapshot()
		res, err := h.g.Merge(h.ctx, "src", "t", "")
		if err != nil || res.Outcome != MergeMerged {
			t.Fatalf("merge %+v %v", res, err)
		}
		d := cs.Snapshot().Sub(before)
		t.Logf("rows=%d: %d requests, get %+v, get_range %+v", rows, d.Requests(), d[storage.OpGet], d[storage.OpGetRange])
		return d[storage.OpGet].Bytes + d[storage.OpGetRange].Bytes
	}
	small, big := read(10000), read(100000)
	if diff := big - small; diff < -1024 || diff > 1024 {
		t.Fatalf("merge read %d bytes at 10k rows and %d at 100k: cost follows the table size", small, big)
	}
}

// TestMergeReadsFollowDeltaColdHandle is TestMergeReadsFollowDelta on a
// fresh handle (a new process: nothing cached). There the changed shared
// fragment must be read, but the cost follows the fragment, which writers
// and compaction keep near CompactTargetRows, not the table: the merge reads
// the same bytes at 100k and 200k rows (whose touched fragments are the
// same size), and less at 10k (a smaller fragment). Engine fragments span at
// most two 64Ki-row row groups, so the diff decodes the fragment's image
// once (it then serves the base→target diff too) rather than reading rows by
// offset per diff (readRowsPays).
func TestMergeReadsFollowDeltaColdHandle(t *testing.T) {
	read := func(rows int) (int64, int) {
		cs := storage.NewCounting(storage.NewMem())
		h, tgt := mergeFixture(t, cs, rows, 10)
		h.branch("t", tgt)
		g := mustOpen(t, cs, Options{})
		// The fragment count, through the writing handle (g stays cold).
		snap := resolve(t, h.g, Target{Branch: "t"})
		st, err := snap.State(h.ctx, "node:Person")
		if err != nil {
			t.Fatal(err)
		}
		before := cs.Snapshot()
		res, err := g.Merge(h.ctx, "src", "t", "")
		if err != nil || res.Outcome != MergeMerged {
			t.Fatalf("merge %+v %v", res, err)
		}
		d := cs.Snapshot().Sub(before)
		t.Logf("rows=%d: %d fragments, %d requests, get %+v, get_range %+v", rows, len(st.Fragments()), d.Requests(), d[storage.OpGet], d[storage.OpGetRange])
		return d[storage.OpGet].Bytes + d[storage.OpGetRange].Bytes, len(st.Fragments())
	}
	small, _ := read(10000)
	big, bigFrags := read(100000)
	bigger, biggerFrags := read(200000)
	// The three table states the merge reads (base, source, target) grow
	// by one fragment entry (~420 bytes with its statistics and index
	// reference) per extra fragment of the table; the fragment reads
	// themselves are equal.
	slack := int64(1024 + 3*512*(biggerFrags-bigFrags))
	if diff := bigger - big; diff < -slack || diff > slack {
		t.Fatalf("merge read %d bytes at 100k rows and %d at 200k: cost follows the table size", big, bigger)
	}
	if small > big {
		t.Fatalf("merge read %d bytes at 10k rows, more than the %d at 100k", small, big)
	}
}
