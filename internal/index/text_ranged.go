package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TextSource answers the lookups of a cold ranking from a full-text index
// object without reading it whole: OpenText reads its front (the header
// and the block directory, TextFrontBytes from offset 0), then each
// looked-up term costs one ranged read of its dictionary block (none when
// the front holds it) and one of its postings, and the document lengths
// of given rows one ranged read of the chunks holding them. Every piece
// read is checked against its own CRC, so a ranged lookup verifies what
// it uses (exec TestColdSearchReadsIndexes, index TestTextSourceRanged).
//
// A version-1 object (no per-piece checksums) is read whole, as is any
// object already decoded (TextSourceOf). A *TextSource is not safe for
// concurrent use.
type TextSource struct {
	key   string
	st    storage.Store
	whole *TextIndex // set: answer from the decoded index
	h     *textHeader
	front []byte // object bytes [0, len(front))
	dir   []dirEnt
	blks  map[int][]dictEnt
}

// TextSourceOf serves lookups from an index already decoded.
func TextSourceOf(x *TextIndex) *TextSource { return &TextSource{whole: x} }

// OpenText reads the front of the full-text index object key.
func OpenText(ctx context.Context, st storage.Store, key string) (*TextSource, error) {
	front, x, err := readFront(ctx, st, key, TextFrontBytes, textMagic, decodeTextV1)
	if err != nil {
		return nil, err
	}
	if x != nil {
		return TextSourceOf(x), nil
	}
	h, err := parseTextHeader(key, front)
	if err != nil {
		return nil, err
	}
	s := &TextSource{key: key, st: st, h: h, front: front, blks: map[int][]dictEnt{}}
	if len(front) < TextFrontBytes && uint64(len(front)) != h.end() {
		return nil, corruptText(key, 0, "full-text index size disagrees with its header")
	}
	d, err := s.at(ctx, h.sec[secDir].off, h.sec[secDir].len)
	if err != nil {
		return nil, err
	}
	if s.dir, err = parseTextDir(key, h, d); err != nil {
		return nil, err
	}
	return s, nil
}

// at returns object bytes [off, off+n): from the front when it holds
// them, else by one ranged read.
func (s *TextSource) at(ctx context.Context, off, n uint64) ([]byte, error) {
	return frontOr(ctx, s.st, s.key, s.front, off, n, "full-text index truncated")
}

// Rows is the number of fragment rows indexed.
func (s *TextSource) Rows() int {
	if s.whole != nil {
		return s.whole.rows
	}
	return s.h.rows
}

// Docs is the number of non-null rows.
func (s *TextSource) Docs() int {
	if s.whole != nil {
		return s.whole.docs
	}
	return s.h.docs
}

// TotalLen is the summed document length of the non-null rows.
func (s *TextSource) TotalLen() int64 {
	if s.whole != nil {
		return s.whole.total
	}
	return s.h.total
}

// Posting is one row holding a term: its offset, the term's frequency
// there and the row's length.
type Posting struct{ Off, TF, DL int32 }

// Postings returns the postings of term (nil when the fragment has none),
// checked: offsets in range and increasing, 1 ≤ tf ≤ length, as many as
// the term's document frequency.
func (s *TextSource) Postings(ctx context.Context, term string) ([]Posting, error) {
	if x := s.whole; x != nil {
		i, ok := x.Lookup(term)
		if !ok {
			return nil, nil
		}
		out := make([]Posting, 0, x.df[i])
		x.Postings(i, func(off, tf int32) { out = append(out, Posting{off, tf, x.dl[off]}) })
		return out, nil
	}
	bi := sort.Search(len(s.dir), func(i int) bool { return s.dir[i].first > term }) - 1
	if bi < 0 {
		return nil, nil
	}
	ents, ok := s.blks[bi]
	if !ok {
		d := s.dir[bi]
		b, err := s.at(ctx, s.h.sec[secDict].off+d.off, d.len)
		if err != nil {
			return nil, err
		}
		if ents, err = parseTextBlock(s.key, s.h, d, min(textBlock, s.h.nterms-bi*textBlock), b); err != nil {
			return nil, err
		}
		s.blks[bi] = ents
	}
	j := sort.Search(len(ents), func(i int) bool { return ents[i].term >= term })
	if j == len(ents) || ents[j].term != term {
		return nil, nil
	}
	e := ents[j]
	b, err := s.at(ctx, s.h.sec[secPost].off+e.poff, e.pln)
	if err != nil {
		return nil, err
	}
	if err := checkPostingCRC(s.key, s.h, e.poff, b); err != nil {
		return nil, err
	}
	out := make([]Posting, 0, e.df)
	done := walkPostings(b[:len(b)-4], true, s.h.rows, func(off, tf, dl int32) bool {
		out = append(out, Posting{off, tf, dl})
		return true
	})
	if !done || len(out) != int(e.df) {
		return nil, corruptText(s.key, int64(s.h.sec[secPost].off+e.poff), "bad postings")
	}
	return out, nil
}

// DocLens returns the lengths of rows offs (sorted, in range; -1 for a
// null field) with one ranged read of the chunks holding them.
func (s *TextSource) DocLens(ctx context.Context, offs []int64) ([]int32, error) {
	out := make([]int32, len(offs))
	if len(offs) == 0 {
		return out, nil
	}
	if x := s.whole; x != nil {
		for i, o := range offs {
			out[i] = x.dl[o]
		}
		return out, nil
	}
	if offs[0] < 0 || offs[len(offs)-1] >= int64(s.h.rows) {
		return nil, fmt.Errorf("index: %s: row %d out of range", s.key, offs[len(offs)-1])
	}
	chunk := uint64(textChunk*s.h.width + 4)
	c0, c1 := int(offs[0]/textChunk), int(offs[len(offs)-1]/textChunk)
	lo := uint64(c0) * chunk
	hi := min(uint64(c1+1)*chunk, s.h.sec[secDL].len)
	b, err := s.at(ctx, s.h.sec[secDL].off+lo, hi-lo)
	if err != nil {
		return nil, err
	}
	k := 0
	err = parseTextDL(s.key, s.h, c0, b, func(row int, dl int32) error {
		for k < len(offs) && offs[k] == int64(row) {
			out[k] = dl
			k++
		}
		return nil
	})
	return out, err
}

// TextFromPostings builds the index of rows whose lengths (dl[i], -1 for
// a null field) and postings of some terms are known — a cold ranking's
// few rows, from the postings it read — without their text. Postings
// must be in row order; terms without postings are left out.
func TextFromPostings(dl []int32, post map[string][]Posting) *TextIndex {
	x := &TextIndex{ver: textVersion, rows: len(dl), dl: slices.Clone(dl)}
	for _, d := range dl {
		if d >= 0 {
			x.docs++
			x.total += int64(d)
		}
	}
	for t, ps := range post {
		if len(ps) > 0 {
			x.terms = append(x.terms, t)
		}
	}
	sort.Strings(x.terms)
	x.df = make([]uint32, len(x.terms))
	x.poff = make([]uint32, len(x.terms)+1)
	for i, t := range x.terms {
		x.df[i] = uint32(len(post[t]))
		start, prev := len(x.post), int32(-1)
		for _, p := range post[t] {
			x.post = binary.AppendUvarint(x.post, uint64(p.Off-prev))
			x.post = binary.AppendUvarint(x.post, uint64(p.TF))
			x.post = binary.AppendUvarint(x.post, uint64(p.DL))
			prev = p.Off
		}
		x.post = binary.LittleEndian.AppendUint32(x.post, crc(x.post[start:]))
		x.poff[i+1] = uint32(len(x.post))
	}
	return x
}
