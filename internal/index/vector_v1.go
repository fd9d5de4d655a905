package index

import (
	"encoding/binary"
	"math"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Version 1 of the vector object: one CRC per section (centroids, list
// starts, slot offsets, vectors), so a list cannot be verified alone. It
// is still read whole (OpenVector too); optimize rewrites it as version 2.

// decodeVectorV1 parses a version-1 vector index object, checking every
// checksum and bound.
func decodeVectorV1(key string, b []byte) (*VectorIndex, error) {
	bad := func(off int, reason string) error {
		return &table.CorruptError{Key: key, Offset: int64(off), Reason: reason}
	}
	if len(b) < vecHead || string(b[:4]) != vecMagic {
		return nil, bad(0, "bad vector index magic")
	}
	if b[4] != 1 {
		return nil, &table.VersionError{Key: key, Kind: "vector index", Got: int(b[4]), Want: 1}
	}
	if crc(b[:vecHead-4]) != binary.LittleEndian.Uint32(b[vecHead-4:]) {
		return nil, bad(vecHead-4, "vector index header checksum mismatch")
	}
	u := func(i int) int { return int(binary.LittleEndian.Uint32(b[8+4*i:])) }
	x := &VectorIndex{rows: u(0), dim: u(1), nlist: u(2)}
	slots := u(3)
	lists := max(x.nlist, 1)
	sizes := []int{4 * x.nlist * x.dim, 4 * (lists + 1), 4 * slots, 4 * slots * x.dim}
	total := vecHead
	for _, s := range sizes {
		total += s + 4
	}
	if x.dim <= 0 || slots > x.rows || x.nlist > slots || total != len(b) || x.dim > 1<<16 {
		return nil, bad(8, "vector index sizes disagree with the object")
	}
	pos := vecHead
	var secs [4][]byte
	for i, s := range sizes {
		sb := b[pos : pos+s]
		if crc(sb) != binary.LittleEndian.Uint32(b[pos+s:]) {
			return nil, bad(pos+s, "vector index section checksum mismatch")
		}
		secs[i] = sb
		pos += s + 4
	}
	x.centroids = bytesF32(secs[0])
	x.start = bytesI32(secs[1])
	x.slotOff = bytesI32(secs[2])
	x.vecs = bytesF32(secs[3])
	if x.start[0] != 0 || int(x.start[lists]) != slots {
		return nil, bad(0, "bad vector list bounds")
	}
	for i := range lists {
		if x.start[i+1] < x.start[i] {
			return nil, bad(0, "bad vector list bounds")
		}
	}
	seen := make([]bool, x.rows)
	for _, o := range x.slotOff {
		if o < 0 || int(o) >= x.rows || seen[o] {
			return nil, bad(0, "bad vector slot offset")
		}
		seen[o] = true
	}
	for _, f := range x.vecs {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, bad(0, "non-finite vector component")
		}
	}
	return x, nil
}
