package table

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// sortFidxEntries sorts the entries of one index section by (key, off),
// the order encodeFragmentIndex writes. It is the index encoder's largest
// cost after compression, so it sorts 16-byte (prefix, position) pairs by
// an integer compare instead of 40-byte entries by string compares: the
// prefix is the 8 key bytes after the section's common prefix (ULIDs of
// one load share their timestamp bytes), big-endian and zero-padded, so
// prefix order agrees with key order and only equal prefixes fall back to
// the full keys. The result is exactly the order of a plain sort of ents
// (TestSortFidxEntriesMatchesPlainSort).
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
	type ord struct {
		pfx uint64
		i   int32
	}
	ords := make([]ord, len(ents))
	for i, e := range ents {
		ords[i] = ord{pfx: keyPrefix64(e.key[lcp:]), i: int32(i)}
	}
	slices.SortFunc(ords, func(a, b ord) int {
		if a.pfx != b.pfx {
			return cmp.Compare(a.pfx, b.pfx)
		}
		return compareFidxEntries(ents[a.i], ents[b.i])
	})
	out := make([]fidxEntry, len(ents))
	for j, o := range ords {
		out[j] = ents[o.i]
	}
	return out
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
