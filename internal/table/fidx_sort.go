package table

import (
	"encoding/binary"
	"slices"
	"strings"
)

// sortRows returns the rows 0..n-1 of keys in (key, row) order, the
// order encodeFragmentIndex writes a section in. It is the index
// encoder's largest cost after compression, so instead of comparing
// strings it radix-sorts 16-byte (prefix, row) pairs: the prefix is the 8
// key bytes after the section's common prefix (ULIDs of one load share
// their timestamp bytes), big-endian and zero-padded, so prefix order
// agrees with key order, and only runs of equal prefixes are then ordered
// by their full keys. The result is exactly the order of a plain stable
// sort by key (TestSortRowsMatchesPlainSort). The slice returned is
// fresh; the radix buffers are sc's, reused from section to section.
func (sc *fidxScratch) sortRows(keys strView, n int) []int32 {
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	if keysAscend(keys, n) {
		// Generated ids (monotonic ULIDs) and edges listed by source
		// arrive sorted.
		return rows
	}
	first := keys.at(0)
	lcp := len(first)
	for i := 1; i < n && lcp > 0; i++ {
		lcp = commonPrefix(first[:lcp], keys.at(i))
	}
	if cap(sc.ords) < n {
		sc.ords, sc.tmp = make([]fidxOrd, n), make([]fidxOrd, n)
	}
	ords := sc.ords[:n]
	for i := range ords {
		ords[i] = fidxOrd{pfx: keyPrefix64(keys.at(i)[lcp:]), i: int32(i)}
	}
	ords = radixSortOrds(ords, sc.tmp[:n])
	// Equal prefixes: ordered by the full keys, then by row (the radix
	// sort is stable, so rows already ascend within a run).
	for lo := 0; lo < len(ords); {
		hi := lo + 1
		for hi < len(ords) && ords[hi].pfx == ords[lo].pfx {
			hi++
		}
		if hi-lo > 1 && !equalKeys(keys, ords[lo:hi], lcp) {
			slices.SortStableFunc(ords[lo:hi], func(a, b fidxOrd) int {
				return strings.Compare(keys.at(int(a.i)), keys.at(int(b.i)))
			})
		}
		lo = hi
	}
	for j, o := range ords {
		rows[j] = o.i
	}
	return rows
}

// keysAscend reports whether keys 0..n-1 are in order (each at most the
// next). (A comparison by shared prefix length, commonPrefix, cost more
// instructions than the runtime's string comparison on load ids.)
func keysAscend(keys strView, n int) bool {
	if n == 0 {
		return true
	}
	prev := keys.at(0)
	for i := 1; i < n; i++ {
		k := keys.at(i)
		if prev > k {
			return false
		}
		prev = k
	}
	return true
}

// equalKeys reports whether the keys of run (rows with one prefix) are
// certainly all equal: equal prefixes, equal lengths, and no byte past
// the prefix. Such a run (an adjacency section's repeated node) is
// already in row order.
func equalKeys(keys strView, run []fidxOrd, lcp int) bool {
	n := len(keys.at(int(run[0].i)))
	if n > lcp+8 {
		return false
	}
	for _, o := range run[1:] {
		if len(keys.at(int(o.i))) != n {
			return false
		}
	}
	return true
}

// fidxOrd is an entry's sort key: its key prefix and its position.
type fidxOrd struct {
	pfx uint64
	i   int32
}

// radixSortOrds sorts ords by prefix, stably (LSD radix, one byte a pass,
// skipping bytes every prefix shares); tmp is scratch of the same length.
// It returns whichever of the two holds the result.
func radixSortOrds(ords, tmp []fidxOrd) []fidxOrd {
	// The counts of every byte position in one pass over ords, not one
	// pass a position (they do not change as passes reorder ords).
	var counts [8][256]int32
	for _, o := range ords {
		x := o.pfx
		counts[0][byte(x)]++
		counts[1][byte(x>>8)]++
		counts[2][byte(x>>16)]++
		counts[3][byte(x>>24)]++
		counts[4][byte(x>>32)]++
		counts[5][byte(x>>40)]++
		counts[6][byte(x>>48)]++
		counts[7][byte(x>>56)]++
	}
	for pass := range counts {
		shift := 8 * pass
		count := &counts[pass]
		if int(count[byte(ords[0].pfx>>shift)]) == len(ords) {
			continue
		}
		pos := int32(0)
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for _, o := range ords {
			d := byte(o.pfx >> shift)
			tmp[count[d]] = o
			count[d]++
		}
		ords, tmp = tmp, ords
	}
	return ords
}

// keyPrefix64 returns the first 8 bytes of s as a big-endian integer,
// zero-padded: a shorter string never orders after its extensions.
func keyPrefix64(s string) uint64 {
	if len(s) >= 8 {
		return binary.BigEndian.Uint64([]byte(s[:8]))
	}
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}
