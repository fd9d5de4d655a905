package snapshot

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/limits"
)

// TestDenseAdjacencyKeepsEdgeOrder: each near row of a dense CSR lists its
// far rows in edge storage order, whether the edges come grouped by their
// near end (one pass) or not (two passes), for both directions; edges with
// an end that is not a live row are left out.
func TestDenseAdjacencyKeepsEdgeOrder(t *testing.T) {
	const nodes = 200
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i)
	}
	d := NewDenseNodes("N", ids)
	for _, tc := range []struct {
		name   string
		sorted bool
	}{{"grouped by source", true}, {"in any order", false}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			var src, dst []string
			for i := range nodes {
				for range rng.IntN(6) {
					src = append(src, ids[i])
					dst = append(dst, fmt.Sprintf("n%d", rng.IntN(nodes+20))) // some ends absent
				}
			}
			if !tc.sorted {
				perm := rng.Perm(len(src))
				s2, d2 := make([]string, len(src)), make([]string, len(src))
				for i, p := range perm {
					s2[i], d2[i] = src[p], dst[p]
				}
				src, dst = s2, d2
			}
			mem := limits.NewBudget("memory", 1<<30, "")
			out, in, err := NewDenseAdjacency(src, dst, d, d, true, true, mem)
			if err != nil {
				t.Fatal(err)
			}
			wantOut, wantIn := make([][]int32, nodes), make([][]int32, nodes)
			for e := range src {
				s, sok := d.Row(src[e])
				r, dok := d.Row(dst[e])
				if sok && dok {
					wantOut[s] = append(wantOut[s], r)
					wantIn[r] = append(wantIn[r], s)
				}
			}
			for k := range int32(nodes) {
				if !slices.Equal(out.At(k), wantOut[k]) && len(out.At(k))+len(wantOut[k]) > 0 {
					t.Fatalf("out of row %d: %v, want %v", k, out.At(k), wantOut[k])
				}
				if !slices.Equal(in.At(k), wantIn[k]) && len(in.At(k))+len(wantIn[k]) > 0 {
					t.Fatalf("in of row %d: %v, want %v", k, in.At(k), wantIn[k])
				}
			}
		})
	}
}
