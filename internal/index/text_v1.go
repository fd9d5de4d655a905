package index

import (
	"encoding/binary"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Version 1 of the full-text object (docs/format/table.md): one CRC per
// section, postings of (offset delta, tf) without document lengths. It is
// still read (decodeTextV1, and TextSource reads such an object whole);
// optimize rewrites it as version 2 (exec.buildSearchIndexes).

const textHeadV1 = 4 + 4 + 4 + 4 + 8 + 4 + 6*8 + 4 // magic, version+pad, rows, docs, total, nterms, 3×(off,len), crc

func decodeTextV1(key string, b []byte) (*TextIndex, error) {
	bad := func(off int, reason string) error {
		return &table.CorruptError{Key: key, Offset: int64(off), Reason: reason}
	}
	if len(b) < textHeadV1 {
		return nil, bad(0, "truncated full-text index header")
	}
	if crc(b[:textHeadV1-4]) != binary.LittleEndian.Uint32(b[textHeadV1-4:]) {
		return nil, bad(textHeadV1-4, "full-text index header checksum mismatch")
	}
	x := &TextIndex{
		ver:   1,
		rows:  int(binary.LittleEndian.Uint32(b[8:])),
		docs:  int(binary.LittleEndian.Uint32(b[12:])),
		total: int64(binary.LittleEndian.Uint64(b[16:])),
	}
	nterms := int(binary.LittleEndian.Uint32(b[24:]))
	var secs [3][]byte
	for i := range secs {
		o := binary.LittleEndian.Uint64(b[28+16*i:])
		l := binary.LittleEndian.Uint64(b[36+16*i:])
		if l < 4 || o < textHeadV1 || o+l > uint64(len(b)) {
			return nil, bad(28+16*i, "full-text index section out of bounds")
		}
		s := b[o : o+l]
		if crc(s[:len(s)-4]) != binary.LittleEndian.Uint32(s[len(s)-4:]) {
			return nil, bad(int(o+l-4), "full-text index section checksum mismatch")
		}
		secs[i] = s[:len(s)-4]
	}
	if x.rows > len(secs[0]) || nterms > len(secs[1]) {
		return nil, bad(8, "full-text index counts exceed its sections")
	}
	// Document lengths.
	x.dl = make([]int32, x.rows)
	p, docs, total := secs[0], 0, int64(0)
	for i := range x.rows {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > 1<<31 {
			return nil, bad(0, "bad document length")
		}
		p = p[n:]
		x.dl[i] = int32(v) - 1
		if x.dl[i] >= 0 {
			docs++
			total += int64(x.dl[i])
		}
	}
	if len(p) != 0 || docs != x.docs || total != x.total {
		return nil, bad(0, "document lengths disagree with the header")
	}
	// Dictionary.
	x.terms = make([]string, 0, nterms)
	x.df = make([]uint32, nterms)
	x.poff = make([]uint32, nterms+1)
	r := secs[1]
	uv := func() uint64 { return nextUvarint(&r) }
	prev := ""
	for i := range nterms {
		pl, sl := uv(), uv()
		if pl > uint64(len(prev)) || sl > uint64(len(r)) {
			return nil, bad(0, "bad dictionary entry")
		}
		t := prev[:pl] + string(r[:sl])
		r = r[sl:]
		df, plen := uv(), uv()
		if (i > 0 && t <= prev) || df == 0 || df > uint64(x.rows) || uint64(x.poff[i])+plen > uint64(len(secs[2])) {
			return nil, bad(0, "bad dictionary entry")
		}
		x.terms = append(x.terms, t)
		x.df[i] = uint32(df)
		x.poff[i+1] = x.poff[i] + uint32(plen)
		prev = t
	}
	if len(r) != 0 || int(x.poff[nterms]) != len(secs[2]) {
		return nil, bad(0, "dictionary disagrees with the postings")
	}
	x.post = secs[2]
	return x, nil
}
