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

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// TestDerivedImageMatchesAssembly pins derived images (snapshot/derive.go,
// rowspace.go): across random inserts (most writes), inline compactions,
// keyed updates, deletes, writes on two branches forked from one head and
// a schema apply, every image read has exactly the live rows of a
// from-scratch decode of its state, in order (its dead rows skipped);
// every derived lookup agrees with that decode (snapshot.Check); every
// query shape answers over the image as over an in-memory table of the
// decode; and every image read earlier still holds exactly what it held
// then — appending in place into shared backing arrays must never change
// rows an older image can see.
func TestDerivedImageMatchesAssembly(t *testing.T) {
	for _, cfg := range compactionModes {
		t.Run(cfg.name, func(t *testing.T) {
			ctx := context.Background()
			g, _, _ := peopleGraph(t, cfg.o, 7, 30, 50)
			side := ""
			rng := rand.New(rand.NewPCG(21, 22))
			type seen struct {
				where string
				want  *snapshot.Rows
				got   func() *snapshot.Rows // the image's live rows now
			}
			var history []seen
			derived, shared, withDead := 0, 0, 0
			prevLen := map[unsafe.Pointer]int{} // backing array → longest image seen on it
			for s := range 90 {
				// Fork a new side branch from main's head now and then: both
				// then derive from main's current (possibly derived) image.
				if s%8 == 4 {
					side = fmt.Sprintf("side%d", s)
					if err := g.CreateBranch(ctx, side, "main", "tester"); err != nil {
						t.Fatal(err)
					}
				}
				if s == 60 {
					// A schema apply on main: images under the old schema are
					// not derived from (their columns differ).
					if _, err := g.ApplySchema(ctx, engSchema+"\nnode Extra { name: String @key }\n", SchemaApplyOptions{}); err != nil {
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
				case r < 5:
					q = "ins"
				case r < 7:
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
					ref := &snapshot.Mem{Cat: snap.Catalog(), NodeT: map[string]*snapshot.NodeTable{}, EdgeT: map[string]*snapshot.EdgeTable{}}
					for _, tk := range []string{snapshot.NodeKey("Person"), snapshot.EdgeKey("Knows")} {
						want, err := snap.Decode(ctx, tk)
						if err != nil {
							t.Fatal(err)
						}
						where := fmt.Sprintf("step %d %s %s", s, b, tk)
						e := seen{where: where, want: cloneRows(want)}
						var ids []string
						var img interface {
							Compact() *snapshot.Rows
							Derived() bool
							HasDead() bool
						}
						if tk == snapshot.EdgeKey("Knows") {
							et, err := snap.Edges(ctx, "Knows")
							if err != nil {
								t.Fatal(err)
							}
							ids, img = et.IDs, et
							ref.EdgeT["Knows"] = &snapshot.EdgeTable{Type: et.Type, IDs: want.IDs, Src: want.Src, Dst: want.Dst, Cols: want.Cols}
						} else {
							nt, err := snap.Nodes(ctx, "Person")
							if err != nil {
								t.Fatal(err)
							}
							ids, img = nt.IDs, nt
							ref.NodeT["Person"] = &snapshot.NodeTable{Type: nt.Type, IDs: want.IDs, Cols: want.Cols}
						}
						e.got = img.Compact
						if img.Derived() {
							derived++
						}
						if img.HasDead() {
							withDead++
						}
						if len(ids) > 0 {
							p := unsafe.Pointer(unsafe.SliceData(ids))
							if n, ok := prevLen[p]; ok && n < len(ids) {
								shared++ // extended in place
							}
							prevLen[p] = max(prevLen[p], len(ids))
						}
						history = append(history, e)
						probe := []string{"absent", name, "n0", "n1", "n29"}
						if err := snap.Check(ctx, tk, probe); err != nil {
							t.Fatalf("%s: %v", where, err)
						}
					}
					// Every query shape answers over the image as over the decode.
					for _, qn := range []string{"pk", "scan_age", "count_all", "count_age", "hop2", "hop_in", "agg", "order", "edges", "text"} {
						p := headPlan(t, g, deriveReadQueries, qn)
						params := map[string]any{"n": fmt.Sprintf("n%d", s%30), "a": int64(s % 90)}
						for _, noIx := range []bool{false, true} {
							got, err := eval.Run(ctx, snap, p, params, eval.Options{NoIndexes: noIx})
							if err != nil {
								t.Fatal(err)
							}
							want, err := eval.Run(ctx, ref, p, params, eval.Options{NoIndexes: true})
							if err != nil {
								t.Fatal(err)
							}
							if !reflect.DeepEqual(got.Rows, want.Rows) {
								t.Fatalf("step %d %s: query %s (no indexes %v) = %v over the image, %v over the decode", s, b, qn, noIx, got.Rows, want.Rows)
							}
						}
					}
				}
				// Every image ever read still equals its state's decode.
				for _, h := range history {
					if got := h.got(); !reflect.DeepEqual(got, h.want) {
						t.Fatalf("after step %d: image of %s differs from its decode", s, h.where)
					}
				}
			}
			if derived == 0 || shared == 0 || withDead == 0 {
				t.Fatalf("derived %d images, %d extended in place, %d with dead rows: the test is vacuous", derived, shared, withDead)
			}
			snap := resolve(t, g, Target{})
			st, err := snap.State(ctx, snapshot.NodeKey("Person"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("derived %d images (%d with dead rows), %d extended in place; main's Person has %d fragments", derived, withDead, shared, st.NumFragments())
		})
	}
}

// deriveReadQueries are the read shapes TestDerivedImageMatchesAssembly
// runs over images with dead rows: key lookup, filtered scan, counts,
// traversals both ways, grouping, ordering, an edge scan and BM25 ranking.
const deriveReadQueries = `
query pk($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age } }
query scan_age($a: I32) { match { $p: Person  $p.age >= $a } return { $p.name, $p.age } }
query count_all() { match { $p: Person } return { count($p) } }
query count_age($a: I32) { match { $p: Person  $p.age < $a } return { count($p) } }
query hop2($n: String) { match { $p: Person { name: $n }  $p knows $q  $q knows $r } return { $r.name, $r.age } }
query hop_in($n: String) { match { $p: Person { name: $n }  $q knows $p } return { $q.name } }
query agg() { match { $p: Person  $p knows $q } return { $p.name, count($q) } }
query order() { match { $p: Person } return { $p.name, $p.age } order { $p.age desc, $p.name } limit 7 }
query edges() { match { $p: Person  $p knows $q } return { $p.name, $q.name } }
query text() { match { $p: Person } return { $p.name } order { bm25($p.name, "n1 n2 n7 m5 m9") } limit 4 }
`

// cloneRows deep-copies decoded rows (a later image must not be able to
// change what an earlier one was checked against).
func cloneRows(r *snapshot.Rows) *snapshot.Rows {
	out := &snapshot.Rows{IDs: slices.Clone(r.IDs), Src: slices.Clone(r.Src), Dst: slices.Clone(r.Dst), Cols: map[string][]any{}}
	for k, c := range r.Cols {
		out.Cols[k] = slices.Clone(c)
	}
	return out
}
