package snapshot

import (
	"cmp"
	"slices"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Pair indexes. A scan with equalities on two properties (`$p.age = 31
// $p.city = "c3"`) used to intersect the two sorted indexes' equality
// intervals: one merge over both, thousands of rows for a dozen matches
// on the peer graph, and a branch the predictor misses on about every
// other step. A pair index orders the rows both sorted indexes hold by
// the pair of their value groups, ties by row, so the same rows are one
// interval found by binary search, already in row order. It is built
// lazily per (image, pair of properties), like the sorted indexes, on
// the IndexAfterScans+1-th request.
//
// A value group is named by its first position in the property's sorted
// index: the lo an equality interval starts at (SortedIndex.Interval). Two
// rows share a group exactly when their values compare equal, and every
// bound an Interval returns is a group boundary, so a non-empty interval
// narrowed by an equality is exactly one group.

// pairKey names the pair index of two properties, a < b.
type pairKey struct{ a, b string }

// PairIndex holds the rows with a value of both properties a and b
// (a < b; dead rows and nulls left out), ordered by (group of a, group
// of b, row). keys[i] is the group pair of row Perm[i].
type PairIndex struct {
	once sync.Once
	ok   bool // both properties have a usable sorted index
	a, b *SortedIndex
	n    int // rows of the image
	keys []uint64
	Perm []int32
}

// PairIndex returns the pair index of properties a and b (a < b), or nil
// until both have a sorted index (SortedIndex) and the pair has been
// requested more than IndexAfterScans times since, or when either sorted
// index is unusable.
func (t *NodeTable) PairIndex(a, b string) *PairIndex {
	if a >= b {
		return nil
	}
	ix := &t.ix
	k := pairKey{a, b}
	ix.mu.Lock()
	pi := ix.pairs[k]
	if pi == nil {
		sa, sb := ix.props[a], ix.props[b]
		if sa == nil || sb == nil {
			ix.mu.Unlock()
			return nil
		}
		if ix.pairUses == nil {
			ix.pairUses = map[pairKey]int{}
			ix.pairs = map[pairKey]*PairIndex{}
		}
		ix.pairUses[k]++
		if ix.pairUses[k] > IndexAfterScans {
			pi = &PairIndex{a: sa, b: sb, n: t.Len()}
			ix.pairs[k] = pi
		}
	}
	ix.mu.Unlock()
	if pi == nil {
		return nil
	}
	pi.once.Do(func() {
		pi.a.once.Do(pi.a.build)
		pi.b.once.Do(pi.b.build)
		if pi.ok = pi.a.ok && pi.b.ok; pi.ok {
			pi.build()
		}
	})
	if !pi.ok {
		return nil
	}
	return pi
}

func (pi *PairIndex) build() {
	gb := make([]int32, pi.n) // each row's group of b; -1: none
	for i := range gb {
		gb[i] = -1
	}
	g := 0
	for p, r := range pi.b.Perm {
		if p > 0 && pi.b.cmpPos(p-1, p) != 0 {
			g = p
		}
		gb[r] = int32(g)
	}
	type entry struct {
		key uint64
		row int32
	}
	es := make([]entry, 0, min(len(pi.a.Perm), len(pi.b.Perm)))
	g = 0
	for p, r := range pi.a.Perm {
		if p > 0 && pi.a.cmpPos(p-1, p) != 0 {
			g = p
		}
		if gb[r] >= 0 {
			es = append(es, entry{uint64(g)<<32 | uint64(gb[r]), r})
		}
	}
	slices.SortFunc(es, func(x, y entry) int {
		if c := cmp.Compare(x.key, y.key); c != 0 {
			return c
		}
		return cmp.Compare(x.row, y.row)
	})
	pi.keys = make([]uint64, len(es))
	pi.Perm = make([]int32, len(es))
	for i, e := range es {
		pi.keys[i], pi.Perm[i] = e.key, e.row
	}
}

// cmpPos compares the values at positions i and j of the index.
func (si *SortedIndex) cmpPos(i, j int) int {
	if si.ints != nil {
		return cmp.Compare(si.ints[i], si.ints[j])
	}
	return value.Compare(si.col[si.Perm[i]], si.col[si.Perm[j]])
}

// Rows returns the rows whose value of a is the group starting at
// position loA of a's sorted index and whose value of b is the group at
// loB of b's, in ascending row order (shared with the index: read-only).
// loA and loB are the starts of non-empty equality intervals.
func (pi *PairIndex) Rows(loA, loB int) []int32 {
	k := uint64(loA)<<32 | uint64(loB)
	lo, _ := slices.BinarySearch(pi.keys, k)
	n, _ := slices.BinarySearch(pi.keys[lo:], k+1) // loB < 1<<31: no carry
	return pi.Perm[lo : lo+n]
}
