package table

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBloomBuilderMatchesBloomBits pins the section Bloom builder (keys
// hashed four at a time, repeats skipped by the block coder) to the
// filter of bloomBits applied key by key: for every count of keys modulo
// four, keys of mixed lengths (empty, shorter and longer than the others
// of their group of four), and several filter sizes.
func TestBloomBuilderMatchesBloomBits(t *testing.T) {
	keys := []string{"", "p1", "01JQZX00000000000000000042", "a-very-long-shared-prefix-p100003", "p1", "x", "p999999", "c"}
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("p%d", i*7919))
	}
	for _, blocks := range []uint32{1, 3, 64} {
		for n := range len(keys) + 1 {
			want := make([]byte, int(blocks)*fidxBloomUnit)
			for _, k := range keys[:n] {
				blk, bits := bloomBits(k, blocks)
				for _, bit := range bits {
					want[blk*fidxBloomUnit+int(bit/8)] |= 1 << (bit % 8)
				}
			}
			var b fidxBloom
			b.reset(blocks)
			for _, k := range keys[:n] {
				b.add(k)
			}
			if got := b.finish(); !slices.Equal(got, want) {
				t.Fatalf("blocks %d, %d keys: builder filter differs from bloomBits", blocks, n)
			}
		}
	}
}

// TestFnv64a4MatchesFnv64a: the four-way hash is fnv64a of each string,
// whichever of them is shortest.
func TestFnv64a4MatchesFnv64a(t *testing.T) {
	s := []string{"", "a", "p12", "01JQZX00000000000000000042", "p1000000", "zz"}
	for _, a := range s {
		for _, b := range s {
			for _, c := range s {
				d := a + b
				x0, x1, x2, x3 := fnv64a4(a, b, c, d)
				if x0 != fnv64a(a) || x1 != fnv64a(b) || x2 != fnv64a(c) || x3 != fnv64a(d) {
					t.Fatalf("fnv64a4(%q, %q, %q, %q) differs from fnv64a", a, b, c, d)
				}
			}
		}
	}
}

// TestFastModMatchesMod: the remainder by multiplication equals a % d at
// the edges of both ranges and for random pairs.
func TestFastModMatchesMod(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	edges := []uint32{0, 1, 2, 3, 7, 1280, 1<<16 - 1, 1 << 16, 1<<31 - 1, 1 << 31, 1<<32 - 2, 1<<32 - 1}
	check := func(a, d uint32) {
		if got := fastMod(a, fastModM(d), d); got != a%d {
			t.Fatalf("fastMod(%d, %d) = %d, want %d", a, d, got, a%d)
		}
	}
	for _, d := range edges {
		if d == 0 {
			continue
		}
		for _, a := range edges {
			check(a, d)
		}
		for range 2000 {
			check(rng.Uint32(), d)
		}
	}
	for range 200000 {
		if d := rng.Uint32() >> rng.IntN(32); d > 0 {
			check(rng.Uint32(), d)
		}
	}
}
