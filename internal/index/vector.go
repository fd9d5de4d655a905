package index

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// KindVector is the IndexRef.Kind of a vector index: one object per
// (fragment, Vector column), covering exactly that fragment.
const KindVector = "ivf"

// VectorIndexName is the IndexRef.Name of the vector index of column col.
func VectorIndexName(col string) string { return "ivf:" + col }

// FlatBelow: fragments with fewer non-null vectors get no inverted lists
// (one list holding every vector: an exact scan is as fast).
const FlatBelow = 4096

const (
	vecMagic   = "OGVX"
	vecVersion = 2
	vecHead    = 4 + 4 + 4*4 + 4 // magic, version+pad, rows, dim, nlist, slots, crc
	kmeansIter = 8
	// kmeansSample is the training sample per list.
	kmeansSample = 48
)

// VectorIndex is an IVF-flat index of one Vector column of one fragment:
// the non-null vectors grouped by their nearest of nlist k-means centroids,
// stored contiguously in list order (slot order) with their fragment
// offsets. Lists hold the full float32 vectors, so a probed list yields
// exact distances; only the choice of lists is approximate, and probing
// every list is an exact scan. With nlist = 0 (a small fragment, or one
// indexed in memory) there is one list of every vector.
//
// Every row is indexed, deleted or not (readers apply the deletion
// vector); null vectors have no slot. A *VectorIndex is immutable and safe
// for concurrent use.
type VectorIndex struct {
	rows, dim int
	nlist     int
	centroids []float32 // nlist × dim
	start     []int32   // list i holds slots start[i]:start[i+1]
	slotOff   []int32   // slot → fragment offset
	vecs      []float32 // slot × dim
}

// Rows is the number of fragment rows indexed; Dim the vector dimension.
func (x *VectorIndex) Rows() int { return x.rows }

// Dim is the vector dimension.
func (x *VectorIndex) Dim() int { return x.dim }

// Lists is the number of inverted lists (0: flat).
func (x *VectorIndex) Lists() int { return x.nlist }

// Slots is the number of indexed (non-null) vectors.
func (x *VectorIndex) Slots() int { return len(x.slotOff) }

// Size estimates the decoded index's memory in bytes.
func (x *VectorIndex) Size() int64 {
	return int64(4*(len(x.centroids)+len(x.start)+len(x.slotOff)+len(x.vecs)) + 128)
}

// BuildVector indexes one fragment's vectors (nil = null), all of
// dimension dim. lists ≤ 0 chooses √n lists, and none (flat) below
// FlatBelow vectors; the k-means seed is fixed, so equal input gives
// equal bytes.
func BuildVector(vecs [][]float32, dim, lists int) *VectorIndex {
	x := &VectorIndex{rows: len(vecs), dim: dim}
	var valid []int32
	for i, v := range vecs {
		if len(v) == dim {
			valid = append(valid, int32(i))
		}
	}
	if lists <= 0 {
		if len(valid) >= FlatBelow {
			lists = int(math.Sqrt(float64(len(valid))))
		} else {
			lists = 0
		}
	}
	lists = min(lists, len(valid))
	if lists <= 1 {
		x.start = []int32{0, int32(len(valid))}
		x.slotOff = valid
		x.vecs = make([]float32, 0, len(valid)*dim)
		for _, o := range valid {
			x.vecs = append(x.vecs, vecs[o]...)
		}
		return x
	}
	x.nlist = lists
	x.centroids = kmeans(vecs, valid, dim, lists)
	assign := make([]int32, len(valid))
	count := make([]int32, lists+1)
	for i, o := range valid {
		c := nearestCentroid(x.centroids, dim, vecs[o])
		assign[i] = int32(c)
		count[c+1]++
	}
	x.start = make([]int32, lists+1)
	for c := range lists {
		x.start[c+1] = x.start[c] + count[c+1]
	}
	fill := append([]int32(nil), x.start[:lists]...)
	x.slotOff = make([]int32, len(valid))
	x.vecs = make([]float32, len(valid)*dim)
	for i, o := range valid {
		s := fill[assign[i]]
		fill[assign[i]]++
		x.slotOff[s] = o
		copy(x.vecs[int(s)*dim:], vecs[o])
	}
	return x
}

// kmeans trains lists centroids on a sample of the valid vectors (Lloyd's
// iterations from a random start, fixed seed); empty clusters are reseeded
// from the sample.
func kmeans(vecs [][]float32, valid []int32, dim, lists int) []float32 {
	r := rand.New(rand.NewPCG(0x5eed, uint64(len(valid))))
	sample := valid
	if n := lists * kmeansSample; len(valid) > n {
		sample = make([]int32, n)
		for i := range sample {
			sample[i] = valid[r.IntN(len(valid))]
		}
	}
	cent := make([]float32, lists*dim)
	perm := r.Perm(len(sample))
	for c := range lists {
		copy(cent[c*dim:], vecs[sample[perm[c]]])
	}
	sums := make([]float64, lists*dim)
	counts := make([]int, lists)
	for range kmeansIter {
		clear(sums)
		clear(counts)
		for _, o := range sample {
			c := nearestCentroid(cent, dim, vecs[o])
			counts[c]++
			for k, v := range vecs[o] {
				sums[c*dim+k] += float64(v)
			}
		}
		for c := range lists {
			if counts[c] == 0 {
				copy(cent[c*dim:], vecs[sample[r.IntN(len(sample))]])
				continue
			}
			for k := range dim {
				cent[c*dim+k] = float32(sums[c*dim+k] / float64(counts[c]))
			}
		}
	}
	return cent
}

func nearestCentroid(cent []float32, dim int, v []float32) int {
	best, bd := 0, float32(math.Inf(1))
	for c := 0; c*dim < len(cent); c++ {
		if d := SquaredL2(cent[c*dim:(c+1)*dim], v); d < bd {
			best, bd = c, d
		}
	}
	return best
}

// SquaredL2 is Σ (a[i]-b[i])² in float32 with eight independent
// accumulators (written so the compiler drops the bounds checks);
// len(b) ≥ len(a).
func SquaredL2(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 {
		a8, b8 := a[:8:8], b[:8:8]
		d0, d1, d2, d3 := a8[0]-b8[0], a8[1]-b8[1], a8[2]-b8[2], a8[3]-b8[3]
		d4, d5, d6, d7 := a8[4]-b8[4], a8[5]-b8[5], a8[6]-b8[6], a8[7]-b8[7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
		a, b = a[8:], b[8:]
	}
	for i := range a {
		d := a[i] - b[i]
		s0 += d * d
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// SquaredL2Within is SquaredL2 that gives up once the partial sum
// exceeds bound (checked every 16 components): it returns a value >
// bound for every vector farther than bound, and otherwise the distance
// (rounded like SquaredL2, up to summation order). An exact scan keeping
// a top-k skips most of the work of the vectors that cannot enter it.
func SquaredL2Within(a, b []float32, bound float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 16 {
		a16, b16 := a[:16:16], b[:16:16]
		d0, d1, d2, d3 := a16[0]-b16[0], a16[1]-b16[1], a16[2]-b16[2], a16[3]-b16[3]
		d4, d5, d6, d7 := a16[4]-b16[4], a16[5]-b16[5], a16[6]-b16[6], a16[7]-b16[7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
		d0, d1, d2, d3 = a16[8]-b16[8], a16[9]-b16[9], a16[10]-b16[10], a16[11]-b16[11]
		d4, d5, d6, d7 = a16[12]-b16[12], a16[13]-b16[13], a16[14]-b16[14], a16[15]-b16[15]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
		a, b = a[16:], b[16:]
		if sum := ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)); sum > bound {
			return sum
		}
	}
	for i := range a {
		d := a[i] - b[i]
		s0 += d * d
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// Probe returns the lists to visit for q, nearest centroid first: all of
// them when nprobe ≥ Lists() or the index is flat.
func (x *VectorIndex) Probe(q []float32, nprobe int) []int {
	if x.nlist == 0 {
		return []int{0}
	}
	if nprobe >= x.nlist {
		out := make([]int, x.nlist)
		for i := range out {
			out[i] = i
		}
		return out
	}
	type cd struct {
		c int
		d float32
	}
	h := make([]cd, 0, nprobe)
	for c := range x.nlist {
		d := SquaredL2(x.centroids[c*x.dim:(c+1)*x.dim], q)
		if len(h) < nprobe {
			h = append(h, cd{c, d})
			for j := len(h) - 1; j > 0 && h[j].d < h[j-1].d; j-- {
				h[j], h[j-1] = h[j-1], h[j]
			}
		} else if d < h[nprobe-1].d {
			h[nprobe-1] = cd{c, d}
			for j := nprobe - 1; j > 0 && h[j].d < h[j-1].d; j-- {
				h[j], h[j-1] = h[j-1], h[j]
			}
		}
	}
	out := make([]int, len(h))
	for i, e := range h {
		out[i] = e.c
	}
	return out
}

// ListSlots returns the slot range of list i.
func (x *VectorIndex) ListSlots(i int) (lo, hi int) { return int(x.start[i]), int(x.start[i+1]) }

// Slot returns the fragment offset and the vector of slot s (the vector
// must not be modified).
func (x *VectorIndex) Slot(s int) (int32, []float32) {
	return x.slotOff[s], x.vecs[s*x.dim : (s+1)*x.dim]
}

// Encode returns the version-2 object bytes: the header, then the front
// (centroids as float32, list starts as uint32) and its CRC-32C, then
// per list its slot offsets (uint32) and vectors (float32, slot order)
// followed by the list's CRC, so that a cold search reads the front and
// only the lists it probes, each verified (docs/format/table.md).
func (x *VectorIndex) Encode() []byte {
	h := make([]byte, 0, vecHead)
	h = append(h, vecMagic...)
	h = append(h, vecVersion, 0, 0, 0)
	for _, v := range []int{x.rows, x.dim, x.nlist, len(x.slotOff)} {
		h = binary.LittleEndian.AppendUint32(h, uint32(v))
	}
	h = binary.LittleEndian.AppendUint32(h, crc(h))
	out := h
	front := append(f32Bytes(x.centroids), i32Bytes(x.start)...)
	out = append(out, front...)
	out = binary.LittleEndian.AppendUint32(out, crc(front))
	for l := 0; l+1 < len(x.start); l++ {
		lo, hi := int(x.start[l]), int(x.start[l+1])
		at := len(out)
		out = append(out, i32Bytes(x.slotOff[lo:hi])...)
		out = append(out, f32Bytes(x.vecs[lo*x.dim:hi*x.dim])...)
		out = binary.LittleEndian.AppendUint32(out, crc(out[at:]))
	}
	return out
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func i32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(f))
	}
	return b
}

// vecHeader is the parsed header of a version-2 vector object.
type vecHeader struct {
	rows, dim, nlist, slots int
}

func (h *vecHeader) lists() int { return max(h.nlist, 1) }

// frontLen is the length of header, front and front CRC.
func (h *vecHeader) frontLen() int { return vecHead + 4*h.nlist*h.dim + 4*(h.lists()+1) + 4 }

// listLen is the stored length of a list of n slots, CRC included.
func (h *vecHeader) listLen(n int) int { return 4*n*(1+h.dim) + 4 }

func corruptVec(key string, off int, reason string) error {
	return &table.CorruptError{Key: key, Offset: int64(off), Reason: reason}
}

// parseVecHeader checks the magic, version and checksum of a version-2
// header and its sizes.
func parseVecHeader(key string, b []byte) (*vecHeader, error) {
	if err := checkHead(key, b, "vector index", vecMagic, vecVersion, vecHead); err != nil {
		return nil, err
	}
	u := func(i int) int { return int(binary.LittleEndian.Uint32(b[8+4*i:])) }
	h := &vecHeader{rows: u(0), dim: u(1), nlist: u(2), slots: u(3)}
	if h.dim <= 0 || h.dim > 1<<16 || h.slots > h.rows || h.nlist > h.slots || h.rows > 1<<31-1 {
		return nil, corruptVec(key, 8, "vector index sizes disagree with the object")
	}
	return h, nil
}

// parseVecFront checks the front (b: the object's first frontLen bytes)
// and returns the centroids and list starts.
func parseVecFront(key string, h *vecHeader, b []byte) (cent []float32, start []int32, err error) {
	n := h.frontLen()
	if len(b) < n {
		return nil, nil, corruptVec(key, 0, "truncated vector index front")
	}
	f := b[vecHead : n-4]
	if crc(f) != binary.LittleEndian.Uint32(b[n-4:]) {
		return nil, nil, corruptVec(key, n-4, "vector index front checksum mismatch")
	}
	cent = bytesF32(f[:4*h.nlist*h.dim])
	start = bytesI32(f[4*h.nlist*h.dim:])
	if start[0] != 0 || int(start[h.lists()]) != h.slots {
		return nil, nil, corruptVec(key, 0, "bad vector list bounds")
	}
	for i := range h.lists() {
		if start[i+1] < start[i] {
			return nil, nil, corruptVec(key, 0, "bad vector list bounds")
		}
	}
	for _, c := range cent {
		if math.IsNaN(float64(c)) || math.IsInf(float64(c), 0) {
			return nil, nil, corruptVec(key, 0, "non-finite centroid component")
		}
	}
	return cent, start, nil
}

// parseVecList checks one stored list of n slots at object offset at (b,
// CRC included): the CRC, offsets in range, components finite.
func parseVecList(key string, h *vecHeader, at, n int, b []byte) (offs []int32, vecs []float32, err error) {
	if len(b) != h.listLen(n) || crc(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, nil, corruptVec(key, at+len(b)-4, "vector list checksum mismatch")
	}
	offs = bytesI32(b[:4*n])
	vecs = bytesF32(b[4*n : len(b)-4])
	for _, o := range offs {
		if o < 0 || int(o) >= h.rows {
			return nil, nil, corruptVec(key, at, "bad vector slot offset")
		}
	}
	for _, f := range vecs {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, nil, corruptVec(key, at, "non-finite vector component")
		}
	}
	return offs, vecs, nil
}

// DecodeVector parses a vector index object read from key (version 1 or
// 2), checking every checksum and bound, and that no row has two slots.
func DecodeVector(key string, b []byte) (*VectorIndex, error) {
	if isV1(b, vecMagic) {
		return decodeVectorV1(key, b)
	}
	h, err := parseVecHeader(key, b)
	if err != nil {
		return nil, err
	}
	cent, start, err := parseVecFront(key, h, b)
	if err != nil {
		return nil, err
	}
	x := &VectorIndex{rows: h.rows, dim: h.dim, nlist: h.nlist, centroids: cent, start: start,
		slotOff: make([]int32, 0, h.slots), vecs: make([]float32, 0, h.slots*h.dim)}
	pos := h.frontLen()
	for l := range h.lists() {
		n := int(start[l+1] - start[l])
		ln := h.listLen(n)
		if pos+ln > len(b) {
			return nil, corruptVec(key, pos, "vector index sizes disagree with the object")
		}
		offs, vecs, err := parseVecList(key, h, pos, n, b[pos:pos+ln])
		if err != nil {
			return nil, err
		}
		x.slotOff = append(x.slotOff, offs...)
		x.vecs = append(x.vecs, vecs...)
		pos += ln
	}
	if pos != len(b) {
		return nil, corruptVec(key, 8, "vector index sizes disagree with the object")
	}
	seen := make([]bool, x.rows)
	for _, o := range x.slotOff {
		if seen[o] {
			return nil, corruptVec(key, 0, "bad vector slot offset")
		}
		seen[o] = true
	}
	return x, nil
}

func bytesF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bytesI32(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// WriteVector builds and stores the vector index of column col of fragment
// fragKey under <prefix>/index/ and returns the reference a table state
// carries. vecs[i] is row i's vector (nil for null).
func WriteVector(ctx context.Context, st storage.Store, prefix, fragKey, col string, vecs [][]float32) (table.IndexRef, error) {
	dim := 0
	for _, v := range vecs {
		if len(v) > 0 {
			dim = len(v)
			break
		}
	}
	if dim == 0 {
		dim = 1 // every vector null: an empty index still records coverage
	}
	x := BuildVector(vecs, dim, 0)
	return putObject(ctx, st, prefix, "ivf", x.Encode(), fragmentColumn(KindVector, VectorIndexName(col), fragKey, col))
}

// ReadVector reads and decodes a vector index object.
func ReadVector(ctx context.Context, st storage.Store, key string) (*VectorIndex, error) {
	return getObject(ctx, st, key, DecodeVector)
}
