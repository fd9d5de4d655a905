package index

import (
	"context"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// VectorFrontBytes is the first ranged read of a cold vector search: the
// header and the front (centroids and list starts: 129 KB for the 256
// lists of a 65,536-row fragment of Vector(128)); a larger front takes a
// second read.
const VectorFrontBytes = 32 << 10

// VectorSource answers a cold nearest() from a vector index object
// without reading it whole: OpenVector reads the front, Probe chooses
// lists by the centroids, and Lists reads the probed lists, adjacent ones
// together, one ranged read per run of lists, each list checked against
// its CRC (exec TestColdVectorRankingsReadIndexes). A version-1 object is read
// whole, as is any object already decoded (VectorSourceOf).
type VectorSource struct {
	key   string
	st    storage.Store
	whole *VectorIndex
	h     *vecHeader
	front []byte
	x     *VectorIndex // centroids and starts only (for Probe)
	pos   []int        // object offset of each list, and the end
}

// VectorSourceOf serves a cold search from an index already decoded.
func VectorSourceOf(x *VectorIndex) *VectorSource { return &VectorSource{whole: x, x: x} }

// OpenVector reads the front of the vector index object key.
func OpenVector(ctx context.Context, st storage.Store, key string) (*VectorSource, error) {
	b, x, err := readFront(ctx, st, key, VectorFrontBytes, vecMagic, decodeVectorV1)
	if err != nil {
		return nil, err
	}
	if x != nil {
		return VectorSourceOf(x), nil
	}
	h, err := parseVecHeader(key, b)
	if err != nil {
		return nil, err
	}
	if n := h.frontLen(); len(b) < n && len(b) == VectorFrontBytes {
		rest, err := st.GetRange(ctx, key, int64(len(b)), int64(n-len(b)))
		if err != nil {
			return nil, fmt.Errorf("index: read %s: %w", key, err)
		}
		b = append(b, rest...)
	}
	cent, start, err := parseVecFront(key, h, b)
	if err != nil {
		return nil, err
	}
	s := &VectorSource{key: key, st: st, h: h, front: b,
		x: &VectorIndex{rows: h.rows, dim: h.dim, nlist: h.nlist, centroids: cent, start: start}}
	s.pos = make([]int, h.lists()+1)
	s.pos[0] = h.frontLen()
	for l := range h.lists() {
		s.pos[l+1] = s.pos[l] + h.listLen(int(start[l+1]-start[l]))
	}
	if len(b) < VectorFrontBytes && len(b) != s.pos[h.lists()] {
		return nil, corruptVec(key, 8, "vector index sizes disagree with the object")
	}
	return s, nil
}

// Rows is the number of fragment rows indexed.
func (s *VectorSource) Rows() int { return s.x.rows }

// Dim is the vector dimension.
func (s *VectorSource) Dim() int { return s.x.dim }

// NLists is the number of inverted lists (0: flat).
func (s *VectorSource) NLists() int { return s.x.nlist }

// Probe is VectorIndex.Probe over the source's centroids.
func (s *VectorSource) Probe(q []float32, nprobe int) []int { return s.x.Probe(q, nprobe) }

// Lists calls fn for every slot of lists (any order; each list once),
// reading runs of adjacent lists with one ranged read each.
func (s *VectorSource) Lists(ctx context.Context, lists []int, fn func(off int32, v []float32)) error {
	ls := slices.Clone(lists)
	slices.Sort(ls)
	ls = slices.Compact(ls)
	if x := s.whole; x != nil {
		for _, l := range ls {
			lo, hi := x.ListSlots(l)
			for k := lo; k < hi; k++ {
				fn(x.Slot(k))
			}
		}
		return nil
	}
	dim := s.h.dim
	for i := 0; i < len(ls); {
		j := i + 1
		for j < len(ls) && ls[j] == ls[j-1]+1 {
			j++
		}
		lo, hi := s.pos[ls[i]], s.pos[ls[j-1]+1]
		var b []byte
		if hi <= len(s.front) {
			b = s.front[lo:hi]
		} else {
			var err error
			if b, err = s.st.GetRange(ctx, s.key, int64(lo), int64(hi-lo)); err != nil {
				return fmt.Errorf("index: read %s: %w", s.key, err)
			}
			if len(b) != hi-lo {
				return corruptVec(s.key, lo, "vector index truncated")
			}
		}
		for _, l := range ls[i:j] {
			n := int(s.x.start[l+1] - s.x.start[l])
			at := s.pos[l]
			offs, vecs, err := parseVecList(s.key, s.h, at, n, b[at-lo:s.pos[l+1]-lo])
			if err != nil {
				return err
			}
			for k, o := range offs {
				fn(o, vecs[k*dim:(k+1)*dim])
			}
		}
		i = j
	}
	return nil
}
