package table

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// sortFidxEntries sorts the entries of one index section by (key, off),
// the order encodeFragmentIndex writes. It is the index encoder's largest
// cost after compression, so instead of comparing 40-byte entries by
// their strings it radix-sorts 16-byte (prefix, position) pairs: the
// prefix is the 8 key bytes after the section's common prefix (ULIDs of
// one load share their timestamp bytes), big-endian and zero-padded, so
// prefix order agrees with key order, and only runs of equal prefixes are
// then ordered by the full entries. The result is exactly the order of a
// plain sort of ents (TestSortFidxEntriesMatchesPlainSort).
func sortFidxEntries(ents []fidxEntry) []fidxEntry {
	if len(ents) < 2 || slices.IsSortedFunc(ents, compareFidxEntries) {
		// Generated ids (monotonic ULIDs) and edges listed by source
		// arrive sorted.
		return ents
	}
	lcp := len(ents[0].key)
	for _, e := range ents[1:] {
		lcp = min(lcp, commonPrefix(ents[0].key[:lcp], e.key))
		if lcp == 0 {
			break
		}
	}
	ords := make([]fidxOrd, len(ents))
	for i, e := range ents {
		ords[i] = fidxOrd{pfx: keyPrefix64(e.key[lcp:]), i: int32(i)}
	}
	ords = radixSortOrds(ords, make([]fidxOrd, len(ords)))
	// Equal prefixes: ordered by the full entries.
	for lo := 0; lo < len(ords); {
		hi := lo + 1
		for hi < len(ords) && ords[hi].pfx == ords[lo].pfx {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(ords[lo:hi], func(a, b fidxOrd) int { return compareFidxEntries(ents[a.i], ents[b.i]) })
		}
		lo = hi
	}
	out := make([]fidxEntry, len(ents))
	for j, o := range ords {
		out[j] = ents[o.i]
	}
	return out
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
	for shift := 0; shift < 64; shift += 8 {
		var count [256]int
		for _, o := range ords {
			count[byte(o.pfx>>shift)]++
		}
		if count[byte(ords[0].pfx>>shift)] == len(ords) {
			continue
		}
		pos := 0
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

func compareFidxEntries(a, b fidxEntry) int {
	if c := strings.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.off, b.off)
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
