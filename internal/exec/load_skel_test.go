package exec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSkelRowsMatchRows pins skelRows against the []Row it replaces: adds
// and replacements (a merge's repeated id) of nodes (no endpoints) and
// edges, empty strings and NUL bytes, past the sizes where its slices
// double, with images read in between (the cached rows must follow every
// change).
func TestSkelRowsMatchRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	str := func() string {
		switch rng.IntN(5) {
		case 0:
			return ""
		case 1:
			return "\x00a\x00"
		case 2:
			return fmt.Sprintf("%0*d", rng.IntN(300), rng.IntN(1000))
		default:
			return fmt.Sprintf("p%d", rng.IntN(1_000_000))
		}
	}
	var k skelRows
	var want []Row
	check := func(step int) {
		t.Helper()
		if k.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, k.len(), len(want))
		}
		got := k.images()
		if len(got) != len(want) {
			t.Fatalf("step %d: %d images, want %d", step, len(got), len(want))
		}
		for i, w := range want {
			if g := got[i]; g.ID != w.ID || g.Src != w.Src || g.Dst != w.Dst || g.Values != nil {
				t.Fatalf("step %d: image %d = %+v, want %+v", step, i, g, w)
			}
		}
		for i := range want {
			if s := k.src(i); s != want[i].Src {
				t.Fatalf("step %d: src(%d) = %q, want %q", step, i, s, want[i].Src)
			}
		}
	}
	check(0)
	for step := 1; step <= 5000; step++ {
		r := Row{ID: str()}
		if rng.IntN(2) == 0 {
			r.Src, r.Dst = str(), str()
		}
		if len(want) > 0 && rng.IntN(8) == 0 {
			i := rng.IntN(len(want))
			k.set(i, r.ID, r.Src, r.Dst)
			want[i] = r
		} else {
			k.add(r.ID, r.Src, r.Dst)
			want = append(want, r)
		}
		if step%97 == 0 || step == 5000 {
			check(step)
		}
	}
}
