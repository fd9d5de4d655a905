package commit

import (
	"context"
	"fmt"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestCostIndependentOfHistory pins request counts of the hot paths at two
// history depths: resolving the head on a warm handle is 1 request, and a
// 1-row write (resolve + fragment + table state + publish) is 5, whatever the
// number of commits before it (DESIGN §2, §7).
func TestCostIndependentOfHistory(t *testing.T) {
	ctx := context.Background()
	const maxWrite = 6 // acceptance ceiling; we pin the exact value below
	type cost struct{ resolve, write, writeByOp string }
	var costs []cost
	for _, depth := range []int{10, 2000} {
		t.Run(fmt.Sprintf("depth=%d", depth), func(t *testing.T) {
			mem := storage.NewMem()
			w, h := initGraph(t, mem)
			deepen(t, w, h, depth)
			cs := storage.NewCounting(mem)
			r := openRepo(t, cs)
			if _, _, err := r.Resolve(ctx, MainBranch); err != nil { // warm up: caches the head commit
				t.Fatal(err)
			}

			cs.Reset()
			head, c, err := r.Resolve(ctx, MainBranch)
			if err != nil || c.Height != uint64(depth) {
				t.Fatalf("resolve: %v (height %d)", err, c.Height)
			}
			resolve := cs.Snapshot()
			if n := resolve.Requests(); n != 1 || resolve[storage.OpGet].Requests != 1 {
				t.Fatalf("warm resolve cost %d requests (%v), want 1 GET", n, resolve)
			}

			cs.Reset()
			head, _, err = r.Resolve(ctx, MainBranch)
			if err != nil {
				t.Fatal(err)
			}
			publishPerson(t, r, head, depth)
			write := cs.Snapshot()
			if n := write.Requests(); n > maxWrite || n != 5 {
				t.Fatalf("1-row write cost %d requests (%v), want 5 (ceiling %d)", n, write, maxWrite)
			}
			if write[storage.OpGet].Requests != 1 || write[storage.OpPut].Requests != 3 || write[storage.OpPutIfMatch].Requests != 1 {
				t.Fatalf("1-row write by op: %v", write)
			}
			if write[storage.OpList].Requests != 0 {
				t.Fatal("write listed objects")
			}
			// Request counts per op must match across depths; bytes may differ
			// by the digits of the ref's seq.
			byOp := ""
			for _, op := range storage.Ops() {
				byOp += fmt.Sprintf("%s=%d ", op, write[op].Requests)
			}
			costs = append(costs, cost{fmt.Sprint(resolve.Requests()), fmt.Sprint(write.Requests()), byOp})
		})
	}
	if len(costs) == 2 && costs[0] != costs[1] {
		t.Fatalf("cost depends on history depth: %v vs %v", costs[0], costs[1])
	}
}

// TestColdResolveCost: a handle that has never seen the head commit pays one
// more GET for it, still independent of history.
func TestColdResolveCost(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	historyGraph(t, mem, 50)
	cs := storage.NewCounting(mem)
	r := openRepo(t, cs)
	cs.Reset()
	if _, _, err := r.Resolve(ctx, MainBranch); err != nil {
		t.Fatal(err)
	}
	if s := cs.Snapshot(); s.Requests() != 2 || s[storage.OpGet].Requests != 2 {
		t.Fatalf("cold resolve: %v", s)
	}
}

// TestHeadMemo: within WithHeadMemo the Resolve that follows a Resolve of
// the same branch reuses its head (no request), once; without the memo, or
// after it was taken, every Resolve reads the ref.
func TestHeadMemo(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	initGraph(t, mem)
	cs := storage.NewCounting(mem)
	r := openRepo(t, cs)
	gets := func(fn func()) int64 {
		t.Helper()
		cs.Reset()
		fn()
		return cs.Snapshot()[storage.OpGet].Requests
	}
	resolve := func(ctx context.Context) Head {
		t.Helper()
		h, _, err := r.Resolve(ctx, MainBranch)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	resolve(ctx) // warm: the head commit is cached from here on
	if n := gets(func() { resolve(ctx); resolve(ctx) }); n != 2 {
		t.Fatalf("without memo: %d GETs, want 2", n)
	}
	mctx := WithHeadMemo(ctx)
	var a, b Head
	if n := gets(func() { a = resolve(mctx); b = resolve(mctx) }); n != 1 {
		t.Fatalf("with memo: %d GETs, want 1", n)
	}
	if a != b || a.ETag == "" {
		t.Fatalf("memo returned %v, read %v", b, a)
	}
	if n := gets(func() { resolve(mctx) }); n != 1 {
		t.Fatalf("third resolve: %d GETs, want 1 (the memo is used once)", n)
	}
	if n := gets(func() { r.Head(mctx, MainBranch) }); n != 1 {
		t.Fatalf("Head with memo: %d GETs, want 1 (Head never uses it)", n)
	}
}
