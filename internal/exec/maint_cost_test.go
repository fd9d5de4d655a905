package exec

import (
	"context"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// maintColdRead opens a fresh handle on st (through a counting wrapper)
// and returns the requests one read made after open.
func maintColdRead(t testing.TB, st storage.Store, src string) (rows []string, c storage.Counts) {
	t.Helper()
	cnt := storage.NewCounting(st)
	g := mustOpen(t, cnt, Options{})
	before := cnt.Snapshot()
	rows = maintQuery(t, g, Target{}, src, map[string]any{"name": "p300"})
	return rows, cnt.Snapshot().Sub(before)
}

// TestMaintReadCostBounded is the must-show of automatic compaction: after
// 1,000 single-row commits and no manual step, every table holds at most
// threshold + 1 fragments, so a cold point read and a cold 2-hop read make
// at most two requests per extra fragment of each table they touch on top
// of the requests the bulk-loaded copy makes; the wall-clock comparison is
// BenchmarkMaintRead.
//
// INVARIANT: automatic compaction bounds fragments per table by the
// threshold + 1 (TestMaintReadCostBounded).
func TestMaintReadCostBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 commits")
	}
	const n = 1000
	hist, g, bulk := maintHistoryAndBulk(t, n)

	for tk, f := range maintFragments(t, g) {
		if f > DefaultCompactFragments+1 {
			t.Errorf("%s has %d fragments after %d commits, want ≤ %d", tk, f, n, DefaultCompactFragments+1)
		}
	}
	for _, q := range []struct {
		name, src string
		tables    int64 // tables the read touches (Person; Person and Knows)
	}{{"point", maintPointQ, 1}, {"2-hop", maintHopQ, 2}} {
		t.Run(q.name, func(t *testing.T) {
			hr, hc := maintColdRead(t, hist, q.src)
			br, bc := maintColdRead(t, bulk, q.src)
			if len(hr) == 0 || len(hr) != len(br) {
				t.Fatalf("history read %v, bulk read %v", hr, br)
			}
			t.Logf("history: %d requests %d bytes; bulk: %d requests %d bytes", hc.Requests(), hc[storage.OpGetRange].Bytes+hc[storage.OpGet].Bytes, bc.Requests(), bc[storage.OpGetRange].Bytes+bc[storage.OpGet].Bytes)
			// Each extra fragment of a touched table may cost up to two
			// more requests (its index header and a Bloom block, or its
			// footer and a page); opening a fragment sends nothing.
			if got, limit := hc.Requests(), bc.Requests()+2*q.tables*DefaultCompactFragments; got > limit {
				t.Errorf("history read made %d requests, want ≤ %d (bulk %d)", got, limit, bc.Requests())
			}
		})
	}
}

// BenchmarkMaintRead compares a cold read (fresh handle: ref, commit,
// schema, states, fragments) after 1,000 single-row commits with automatic
// compaction against the same read on a bulk-loaded copy. The target is
// history ≤ 2× bulk (docs/maintenance.md records the numbers).
func BenchmarkMaintRead(b *testing.B) {
	const n = 1000
	hist, _, bulk := maintHistoryAndBulk(b, n)
	ctx := context.Background()
	for _, q := range []struct{ name, src string }{{"point", maintPointQ}, {"2hop", maintHopQ}} {
		for _, c := range []struct {
			name string
			st   storage.Store
		}{{"history", hist}, {"bulk", bulk}} {
			b.Run(q.name+"/"+c.name, func(b *testing.B) {
				g0, err := Open(ctx, c.st, Options{})
				if err != nil {
					b.Fatal(err)
				}
				plan, err := query.CompileQuery(resolve(b, g0, Target{}).Catalog(), "q.gq", q.src, "q")
				if err != nil {
					b.Fatal(err)
				}
				params := map[string]any{"name": "p300"}
				b.ResetTimer()
				for b.Loop() {
					h, err := Open(ctx, c.st, Options{})
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := h.Query(ctx, Target{}, plan, params); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
