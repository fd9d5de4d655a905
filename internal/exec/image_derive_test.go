package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// TestDerivedImageMatchesAssembly pins derived images (snapshot/derive.go):
// across random inserts (most writes), inline compactions, updates,
// deletes and writes on two branches forked from one head, every image
// read equals a from-scratch decode of its state, and every image read
// earlier still holds exactly what it held then — appending in place into
// shared backing arrays must never change rows an older image can see.
func TestDerivedImageMatchesAssembly(t *testing.T) {
	for _, cfg := range compactionModes {
		t.Run(cfg.name, func(t *testing.T) {
			ctx := context.Background()
			g, _ := lookupGraph(t, cfg.o)
			side := ""
			rng := rand.New(rand.NewPCG(21, 22))
			type seen struct {
				where      string
				ids        []string
				src, dst   []string
				cols       map[string][]any
				gotIDs     *[]string
				gotSrc     *[]string
				gotDst     *[]string
				gotCols    map[string][]any
				checkAfter int
			}
			var history []seen
			derived, shared := 0, 0
			prevLen := map[unsafe.Pointer]int{} // backing array → longest image seen on it
			for s := range 80 {
				// Fork a new side branch from main's head now and then: both
				// then derive from main's current (possibly derived) image.
				if s%8 == 4 {
					side = fmt.Sprintf("side%d", s)
					if err := g.CreateBranch(ctx, side, "main", "tester"); err != nil {
						t.Fatal(err)
					}
				}
				branch := "main"
				if side != "" && rng.IntN(2) == 0 {
					branch = side
				}
				name := fmt.Sprintf("m%d", rng.IntN(200))
				var q string
				params := map[string]any{"name": name, "age": rng.IntN(90)}
				switch r := rng.IntN(10); {
				case r < 6:
					q = "ins"
				case r < 8:
					q, params = "friend", map[string]any{"from": fmt.Sprintf("n%d", rng.IntN(30)), "to": fmt.Sprintf("n%d", rng.IntN(30))}
				case r < 9:
					q, params["name"] = "set", fmt.Sprintf("n%d", rng.IntN(30))
				default:
					q, params = "del", map[string]any{"name": fmt.Sprintf("n%d", rng.IntN(30))}
				}
				_, _ = g.Mutate(ctx, branch, lookupPlan(t, g, q), params, MutateOptions{})
				// Both heads' images are first built concurrently (derivations
				// from one parent race for its spare room), then checked.
				var wg sync.WaitGroup
				for _, b := range []string{"main", side} {
					if b == "" {
						continue
					}
					wg.Go(func() {
						snap, err := g.Resolve(ctx, Target{Branch: b})
						if err != nil {
							t.Error(err)
							return
						}
						_, err1 := snap.Nodes(ctx, "Person")
						_, err2 := snap.Edges(ctx, "Knows")
						if err1 != nil || err2 != nil {
							t.Error(err1, err2)
						}
					})
				}
				wg.Wait()
				for _, b := range []string{"main", side} {
					if b == "" {
						continue
					}
					snap := resolve(t, g, Target{Branch: b})
					for _, tk := range []string{snapshot.NodeKey("Person"), snapshot.EdgeKey("Knows")} {
						st, err := snap.State(ctx, tk)
						if err != nil {
							t.Fatal(err)
						}
						_ = st
						edge := tk == snapshot.EdgeKey("Knows")
						want, err := snap.Decode(ctx, tk)
						if err != nil {
							t.Fatal(err)
						}
						where := fmt.Sprintf("step %d %s %s", s, b, tk)
						e := seen{where: where, ids: slices.Clone(want.IDs), src: slices.Clone(want.Src), dst: slices.Clone(want.Dst), cols: map[string][]any{}}
						for k, c := range want.Cols {
							e.cols[k] = slices.Clone(c)
						}
						var ids []string
						if edge {
							et, err := snap.Edges(ctx, "Knows")
							if err != nil {
								t.Fatal(err)
							}
							ids, e.gotIDs, e.gotSrc, e.gotDst, e.gotCols = et.IDs, &et.IDs, &et.Src, &et.Dst, et.Cols
							if et.Derived() {
								derived++
							}
						} else {
							nt, err := snap.Nodes(ctx, "Person")
							if err != nil {
								t.Fatal(err)
							}
							ids, e.gotIDs, e.gotCols = nt.IDs, &nt.IDs, nt.Cols
							if nt.Derived() {
								derived++
							}
						}
						if len(ids) > 0 {
							p := unsafe.Pointer(unsafe.SliceData(ids))
							if n, ok := prevLen[p]; ok && n < len(ids) {
								shared++ // extended in place
							}
							prevLen[p] = max(prevLen[p], len(ids))
						}
						history = append(history, e)
					}
				}
				// Every image ever read still equals its state's decode.
				for _, h := range history {
					if !reflect.DeepEqual(*h.gotIDs, h.ids) || (h.gotSrc != nil && (!reflect.DeepEqual(*h.gotSrc, h.src) || !reflect.DeepEqual(*h.gotDst, h.dst))) {
						t.Fatalf("after step %d: image of %s: ids/ends differ from its decode", s, h.where)
					}
					for k, c := range h.cols {
						if !reflect.DeepEqual(h.gotCols[k], c) {
							t.Fatalf("after step %d: image of %s: column %s differs from its decode", s, h.where, k)
						}
					}
				}
			}
			if derived == 0 || shared == 0 {
				t.Fatalf("derived %d images, %d extended in place: the test is vacuous", derived, shared)
			}
			snap := resolve(t, g, Target{})
			st, err := snap.State(ctx, snapshot.NodeKey("Person"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("derived %d images, %d extended in place; main's Person has %d fragments", derived, shared, st.NumFragments())
		})
	}
}
