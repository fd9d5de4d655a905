package index

import (
	"context"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// BTreeSource answers comparisons from a scalar index object without
// reading it whole: OpenBTree reads its front (header and directory,
// BTreeFrontBytes from offset 0, and the rest of the directory when it
// is longer), then a lookup reads the blocks its values fall in with one
// ranged read (none when the front holds them), each checked against its
// CRC (index TestBTreeRanged, exec TestScalarIndexColdCountReads).
//
// A *BTreeSource is immutable after OpenBTree and safe for concurrent
// use.
type BTreeSource struct {
	key   string
	st    storage.Store
	h     *btHeader
	front []byte
	dir   []btBlock
}

// OpenBTree reads the front of the scalar index object key.
func OpenBTree(ctx context.Context, st storage.Store, key string) (*BTreeSource, error) {
	front, err := st.GetRange(ctx, key, 0, BTreeFrontBytes)
	if err != nil {
		return nil, fmt.Errorf("index: read %s: %w", key, err)
	}
	h, err := parseBTHeader(key, front)
	if err != nil {
		return nil, err
	}
	if len(front) < BTreeFrontBytes && uint64(len(front)) != h.size() {
		return nil, corruptBT(key, 0, "scalar index size disagrees with its header")
	}
	if need := btHead + h.dl; len(front) < need {
		if len(front) < BTreeFrontBytes {
			return nil, corruptBT(key, btHead, "scalar index directory truncated")
		}
		rest, err := st.GetRange(ctx, key, int64(len(front)), int64(need-len(front)))
		if err != nil {
			return nil, fmt.Errorf("index: read %s: %w", key, err)
		}
		if len(rest) != need-len(front) {
			return nil, corruptBT(key, btHead, "scalar index directory truncated")
		}
		front = append(front, rest...)
	}
	dir, err := parseBTDir(key, h, front[btHead:btHead+h.dl])
	if err != nil {
		return nil, err
	}
	return &BTreeSource{key: key, st: st, h: h, front: front, dir: dir}, nil
}

// DecodeBTree serves lookups from a whole scalar index object b (read
// by the caller), checking its header and directory; blocks are checked
// as lookups read them (VerifyBTree checks them all).
func DecodeBTree(key string, b []byte) (*BTreeSource, error) {
	h, err := parseBTHeader(key, b)
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) != h.size() {
		return nil, corruptBT(key, 0, "scalar index size disagrees with its header")
	}
	dir, err := parseBTDir(key, h, b[btHead:btHead+h.dl])
	if err != nil {
		return nil, err
	}
	return &BTreeSource{key: key, h: h, front: b, dir: dir}, nil
}

// VerifyBTree decodes b and checks every block.
func VerifyBTree(key string, b []byte) (*BTreeSource, error) {
	s, err := DecodeBTree(key, b)
	if err != nil {
		return nil, err
	}
	base := uint64(btHead + s.h.dl)
	for _, blk := range s.dir {
		at := base + blk.off
		if err := walkBTBlock(key, s.h, blk, b[at:at+blk.n], int64(at), func(bkey, []int64) {}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Rows is the number of fragment rows the index was built over.
func (s *BTreeSource) Rows() int { return s.h.rows }

// Size is the object's size in bytes.
func (s *BTreeSource) Size() int64 { return int64(s.h.size()) }

// FrontBytes is how many bytes of the object OpenBTree holds.
func (s *BTreeSource) FrontBytes() int64 { return int64(len(s.front)) }

// Estimate bounds from above, from the directory alone, how many rows
// Match(conds) returns (the entries of the blocks it would read), and
// says how many blocks it would read; ok is false as for Match.
func (s *BTreeSource) Estimate(conds []BTreeCond) (n, blocks int, ok bool) {
	r, ok := s.h.dom.rangeOf(conds)
	if !ok || r.empty {
		return 0, 0, ok
	}
	i, j := blocksOf(s.h.dom, s.dir, r)
	for _, blk := range s.dir[i:j] {
		n += blk.ents
	}
	return n, j - i, true
}

// Match returns the row offsets, ascending, whose value satisfies every
// condition (nulls never do); ok is false when a condition's constant
// is of a type the index's column does not compare with (the caller
// scans instead).
func (s *BTreeSource) Match(ctx context.Context, conds []BTreeCond) (offs []int64, ok bool, err error) {
	r, ok := s.h.dom.rangeOf(conds)
	if !ok {
		return nil, false, nil
	}
	if r.empty || len(s.dir) == 0 {
		return nil, true, nil
	}
	i, j := blocksOf(s.h.dom, s.dir, r)
	if i == j {
		return nil, true, nil
	}
	base := uint64(btHead + s.h.dl)
	lo, hi := base+s.dir[i].off, base+s.dir[j-1].off+s.dir[j-1].n
	b, err := s.at(ctx, lo, hi-lo)
	if err != nil {
		return nil, false, err
	}
	sorted, runs := true, 0
	for _, blk := range s.dir[i:j] {
		at := base + blk.off
		err := walkBTBlock(s.key, s.h, blk, b[at-lo:at-lo+blk.n], int64(at), func(k bkey, o []int64) {
			if r.holds(s.h.dom, k) {
				if runs > 0 && len(offs) > 0 && o[0] < offs[len(offs)-1] {
					sorted = false
				}
				offs = append(offs, o...)
				runs++
			}
		})
		if err != nil {
			return nil, false, err
		}
	}
	if !sorted {
		slices.Sort(offs)
	}
	return offs, true, nil
}

// at returns object bytes [off, off+n): from the front when it holds
// them, else by one ranged read.
func (s *BTreeSource) at(ctx context.Context, off, n uint64) ([]byte, error) {
	return frontOr(ctx, s.st, s.key, s.front, off, n, "scalar index truncated")
}
