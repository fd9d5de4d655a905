package index

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"sort"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// KindText is the IndexRef.Kind of a full-text index: one object per
// (fragment, String column), covering exactly that fragment.
const KindText = "fts"

// TextIndexName is the IndexRef.Name of the full-text index of column col.
func TextIndexName(col string) string { return "fts:" + col }

const (
	textMagic   = "OGFT"
	textVersion = 2
	// textHead: magic, version u8 + dl width u8 + 2 reserved, rows,
	// docs, total, nterms, 4×(off,len), crc.
	textHead = 4 + 4 + 4 + 4 + 8 + 4 + 4*16 + 4
	// textBlock terms make one dictionary block (the unit a ranged
	// lookup reads), textChunk rows one document-length chunk.
	textBlock = 64
	textChunk = 4096
	// TextFrontBytes is the first ranged read of a cold lookup: the
	// header and the block directory, and with a small dictionary the
	// dictionary too (it follows the directory).
	TextFrontBytes = 64 << 10
)

// TextIndex is the inverted index of one String column of one fragment:
// every row is indexed, deleted or not (readers apply the deletion vector),
// with per-row document lengths and per-term postings (row offset, term
// frequency, and in version 2 the row's length) in offset order. It
// carries the fragment's corpus statistics (documents = non-null rows,
// total terms), so BM25 over several fragments sums them and gets the
// exact scorer's numbers.
//
// A *TextIndex is immutable and safe for concurrent use.
type TextIndex struct {
	ver   int   // 1: postings (delta, tf); 2: (delta, tf, dl) + CRC per term
	rows  int   //
	docs  int   // non-null rows
	total int64 // Σ document length over non-null rows
	dl    []int32
	terms []string
	df    []uint32
	poff  []uint32 // postings of term i: post[poff[i]:poff[i+1]] (version 2: CRC included)
	post  []byte
}

// Rows is the number of fragment rows indexed.
func (x *TextIndex) Rows() int { return x.rows }

// Docs is the number of non-null rows (documents of the corpus).
func (x *TextIndex) Docs() int { return x.docs }

// TotalLen is the summed document length of the non-null rows.
func (x *TextIndex) TotalLen() int64 { return x.total }

// DocLen returns the term count of row off; ok is false for a null field.
func (x *TextIndex) DocLen(off int) (int32, bool) {
	d := x.dl[off]
	return d, d >= 0
}

// Terms returns the sorted dictionary (must not be modified).
func (x *TextIndex) Terms() []string { return x.terms }

// Lookup returns the dictionary position of term.
func (x *TextIndex) Lookup(term string) (int, bool) {
	return slices.BinarySearch(x.terms, term)
}

// DF is the number of rows holding dictionary term i (deleted rows included).
func (x *TextIndex) DF(i int) int { return int(x.df[i]) }

// postingBytes returns the encoded postings of term i, CRC excluded.
func (x *TextIndex) postingBytes(i int) []byte {
	b := x.post[x.poff[i]:x.poff[i+1]]
	if x.ver >= 2 {
		b = b[:len(b)-4]
	}
	return b
}

// Postings calls fn for every row holding dictionary term i, in offset
// order, with the term's frequency in that row.
//
// An entry out of bounds (only a checksum-valid but malformed object has
// one; VerifyText reports it) ends the walk.
func (x *TextIndex) Postings(i int, fn func(off int32, tf int32)) {
	walkPostings(x.postingBytes(i), x.ver >= 2, x.rows, func(off, tf, _ int32) bool {
		fn(off, tf)
		return true
	})
}

// walkPostings decodes one term's postings (withDL: version 2 entries);
// it stops at the first malformed entry, or when fn returns false, and
// reports whether it reached the end of b.
func walkPostings(b []byte, withDL bool, rows int, fn func(off, tf, dl int32) bool) bool {
	off := int64(-1)
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || d == 0 {
			return false
		}
		b = b[n:]
		tf, m := binary.Uvarint(b)
		if m <= 0 || tf == 0 || tf > 1<<30 {
			return false
		}
		b = b[m:]
		dl := uint64(0)
		if withDL {
			var k int
			dl, k = binary.Uvarint(b)
			if k <= 0 || dl < tf || dl > 1<<31-1 {
				return false
			}
			b = b[k:]
		}
		off += int64(d)
		if off >= int64(rows) {
			return false
		}
		if !fn(int32(off), int32(tf), int32(dl)) {
			return false
		}
	}
	return true
}

// Size estimates the decoded index's memory in bytes.
func (x *TextIndex) Size() int64 {
	n := int64(len(x.post) + 4*len(x.dl) + 8*len(x.df) + 256)
	for _, t := range x.terms {
		n += int64(len(t)) + 16
	}
	return n
}

// BuildText indexes n rows; text(i) returns row i's field and false for a
// null field.
func BuildText(n int, text func(i int) (string, bool)) *TextIndex {
	x := &TextIndex{ver: textVersion, rows: n, dl: make([]int32, n)}
	type posting struct{ off, tf int32 }
	posts := map[string][]posting{}
	for i := range n {
		s, ok := text(i)
		if !ok {
			x.dl[i] = -1
			continue
		}
		terms := Analyze(s)
		x.dl[i] = int32(len(terms))
		x.docs++
		x.total += int64(len(terms))
		tf := map[string]int32{}
		for _, t := range terms {
			tf[t]++
		}
		for t, c := range tf {
			posts[t] = append(posts[t], posting{int32(i), c})
		}
	}
	x.terms = make([]string, 0, len(posts))
	for t := range posts {
		x.terms = append(x.terms, t)
	}
	sort.Strings(x.terms)
	x.df = make([]uint32, len(x.terms))
	x.poff = make([]uint32, len(x.terms)+1)
	for i, t := range x.terms {
		ps := posts[t]
		x.df[i] = uint32(len(ps))
		prev := int32(-1)
		start := len(x.post)
		for _, p := range ps {
			x.post = binary.AppendUvarint(x.post, uint64(p.off-prev))
			x.post = binary.AppendUvarint(x.post, uint64(p.tf))
			x.post = binary.AppendUvarint(x.post, uint64(x.dl[p.off]))
			prev = p.off
		}
		x.post = binary.LittleEndian.AppendUint32(x.post, crc(x.post[start:]))
		x.poff[i+1] = uint32(len(x.post))
	}
	return x
}

// v2 returns x in the version-2 in-memory form (x itself unless it was
// decoded from a version-1 object).
func (x *TextIndex) v2() *TextIndex {
	if x.ver >= 2 {
		return x
	}
	y := *x
	y.ver, y.post, y.poff = textVersion, nil, make([]uint32, len(x.terms)+1)
	for i := range x.terms {
		start := len(y.post)
		prev := int32(-1)
		x.Postings(i, func(off, tf int32) {
			y.post = binary.AppendUvarint(y.post, uint64(off-prev))
			y.post = binary.AppendUvarint(y.post, uint64(tf))
			y.post = binary.AppendUvarint(y.post, uint64(x.dl[off]))
			prev = off
		})
		y.post = binary.LittleEndian.AppendUint32(y.post, crc(y.post[start:]))
		y.poff[i+1] = uint32(len(y.post))
	}
	return &y
}

// dlWidth is the byte width of the stored document lengths (length + 1,
// 0 = null): the smallest of 1, 2 and 4 that holds the longest.
func dlWidth(dl []int32) int {
	m := int32(0)
	for _, d := range dl {
		m = max(m, d+1)
	}
	switch {
	case m < 1<<8:
		return 1
	case m < 1<<16:
		return 2
	}
	return 4
}

// dlSectionLen is the length of the document-length section of rows rows
// of width w: each chunk of textChunk rows is followed by its CRC.
func dlSectionLen(rows, w int) uint64 {
	chunks := (rows + textChunk - 1) / textChunk
	return uint64(rows*w + 4*chunks)
}

// Encode returns the version-2 object bytes: a fixed header, then the
// block directory, the dictionary blocks, the postings and the document
// lengths, every piece checksummed so that a ranged read verifies what it
// reads (docs/format/table.md specifies the layout):
//
//   - directory: per block of textBlock terms its first term (length,
//     bytes), offset in the dictionary and length; then a CRC;
//   - dictionary block: per term the shared-prefix length with the
//     previous term of the block, suffix length, suffix, document
//     frequency, postings offset and length; then a CRC;
//   - postings, per term: per row holding it in offset order the offset
//     delta (the first from −1, never 0), tf and the row's length; then a
//     CRC;
//   - document lengths: length + 1 (0 = null) as a width-byte integer,
//     in chunks of textChunk rows, each followed by a CRC.
func (x *TextIndex) Encode() []byte {
	x = x.v2()
	var dir, dict []byte
	for b0 := 0; b0 < len(x.terms); b0 += textBlock {
		start := len(dict)
		prev := ""
		for i := b0; i < min(b0+textBlock, len(x.terms)); i++ {
			t := x.terms[i]
			p := commonPrefix(prev, t)
			dict = binary.AppendUvarint(dict, uint64(p))
			dict = binary.AppendUvarint(dict, uint64(len(t)-p))
			dict = append(dict, t[p:]...)
			dict = binary.AppendUvarint(dict, uint64(x.df[i]))
			dict = binary.AppendUvarint(dict, uint64(x.poff[i]))
			dict = binary.AppendUvarint(dict, uint64(x.poff[i+1]-x.poff[i]))
			prev = t
		}
		dict = binary.LittleEndian.AppendUint32(dict, crc(dict[start:]))
		dir = binary.AppendUvarint(dir, uint64(len(x.terms[b0])))
		dir = append(dir, x.terms[b0]...)
		dir = binary.AppendUvarint(dir, uint64(start))
		dir = binary.AppendUvarint(dir, uint64(len(dict)-start))
	}
	dir = binary.LittleEndian.AppendUint32(dir, crc(dir))
	w := dlWidth(x.dl)
	dl := make([]byte, 0, dlSectionLen(x.rows, w))
	for c0 := 0; c0 < x.rows; c0 += textChunk {
		start := len(dl)
		for _, d := range x.dl[c0:min(c0+textChunk, x.rows)] {
			switch w {
			case 1:
				dl = append(dl, byte(d+1))
			case 2:
				dl = binary.LittleEndian.AppendUint16(dl, uint16(d+1))
			default:
				dl = binary.LittleEndian.AppendUint32(dl, uint32(d+1))
			}
		}
		dl = binary.LittleEndian.AppendUint32(dl, crc(dl[start:]))
	}

	h := make([]byte, 0, textHead)
	h = append(h, textMagic...)
	h = append(h, textVersion, byte(w), 0, 0)
	h = binary.LittleEndian.AppendUint32(h, uint32(x.rows))
	h = binary.LittleEndian.AppendUint32(h, uint32(x.docs))
	h = binary.LittleEndian.AppendUint64(h, uint64(x.total))
	h = binary.LittleEndian.AppendUint32(h, uint32(len(x.terms)))
	off := uint64(textHead)
	for _, sec := range [][]byte{dir, dict, x.post, dl} {
		h = binary.LittleEndian.AppendUint64(h, off)
		h = binary.LittleEndian.AppendUint64(h, uint64(len(sec)))
		off += uint64(len(sec))
	}
	h = binary.LittleEndian.AppendUint32(h, crc(h))
	out := make([]byte, 0, off)
	out = append(out, h...)
	out = append(out, dir...)
	out = append(out, dict...)
	out = append(out, x.post...)
	return append(out, dl...)
}

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// nextUvarint reads one uvarint off the front of *r. A truncated or
// overlong one empties *r and reads as 1<<62, which every caller's bound
// check refuses (a length or count can never be that large).
func nextUvarint(r *[]byte) uint64 {
	v, k := binary.Uvarint(*r)
	if k <= 0 {
		*r = nil
		return 1 << 62
	}
	*r = (*r)[k:]
	return v
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Section indexes of a version-2 object.
const (
	secDir = iota
	secDict
	secPost
	secDL
)

// textHeader is the parsed header of a version-2 object.
type textHeader struct {
	rows, docs int
	total      int64
	nterms     int
	width      int
	sec        [4]struct{ off, len uint64 }
}

func (h *textHeader) end() uint64 { return h.sec[secDL].off + h.sec[secDL].len }

func corruptText(key string, off int64, reason string) error {
	return &table.CorruptError{Key: key, Offset: off, Reason: reason}
}

// parseTextHeader checks the magic, version and header checksum of b (at
// least textHead bytes of a version-2 object) and the sections' layout:
// contiguous, in order, the directory and document lengths of the sizes
// the counts imply.
func parseTextHeader(key string, b []byte) (*textHeader, error) {
	if err := checkHead(key, b, "full-text index", textMagic, textVersion, textHead); err != nil {
		return nil, err
	}
	h := &textHeader{
		width:  int(b[5]),
		rows:   int(binary.LittleEndian.Uint32(b[8:])),
		docs:   int(binary.LittleEndian.Uint32(b[12:])),
		total:  int64(binary.LittleEndian.Uint64(b[16:])),
		nterms: int(binary.LittleEndian.Uint32(b[24:])),
	}
	next := uint64(textHead)
	for i := range h.sec {
		h.sec[i].off = binary.LittleEndian.Uint64(b[28+16*i:])
		h.sec[i].len = binary.LittleEndian.Uint64(b[36+16*i:])
		if h.sec[i].off != next || h.sec[i].len > 1<<40 {
			return nil, corruptText(key, int64(28+16*i), "full-text index sections out of order")
		}
		next += h.sec[i].len
	}
	if (h.width != 1 && h.width != 2 && h.width != 4) || h.docs > h.rows ||
		h.sec[secDL].len != dlSectionLen(h.rows, h.width) || h.sec[secDir].len < 4 ||
		uint64(h.nterms) > h.sec[secDict].len || (h.nterms == 0) != (h.sec[secDict].len == 0) {
		return nil, corruptText(key, 8, "full-text index counts disagree with its sections")
	}
	return h, nil
}

// dirEnt is one dictionary block of the directory.
type dirEnt struct {
	first    string
	off, len uint64 // within the dictionary section, CRC included
}

// parseTextDir checks and parses the block directory.
func parseTextDir(key string, h *textHeader, b []byte) ([]dirEnt, error) {
	bad := func() error { return corruptText(key, int64(h.sec[secDir].off), "bad full-text index directory") }
	if crc(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, corruptText(key, int64(h.sec[secDir].off)+int64(len(b))-4, "full-text index directory checksum mismatch")
	}
	b = b[:len(b)-4]
	nblk := (h.nterms + textBlock - 1) / textBlock
	dir := make([]dirEnt, 0, nblk)
	next := uint64(0)
	for range nblk {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, bad()
		}
		first := string(b[n : n+int(l)])
		b = b[n+int(l):]
		o, n1 := binary.Uvarint(b)
		if n1 <= 0 {
			return nil, bad()
		}
		ln, n2 := binary.Uvarint(b[n1:])
		if n2 <= 0 || o != next || ln < 5 || (len(dir) > 0 && first <= dir[len(dir)-1].first) {
			return nil, bad()
		}
		b = b[n1+n2:]
		dir = append(dir, dirEnt{first, o, ln})
		next += ln
	}
	if len(b) != 0 || next != h.sec[secDict].len {
		return nil, bad()
	}
	return dir, nil
}

// dictEnt is one term of a dictionary block.
type dictEnt struct {
	term      string
	df        uint32
	poff, pln uint64 // within the postings section, CRC included
}

// parseTextBlock checks and parses dictionary block bi (b, CRC included):
// n terms, the first the directory's, in order, with postings inside the
// section.
func parseTextBlock(key string, h *textHeader, d dirEnt, n int, b []byte) ([]dictEnt, error) {
	at := int64(h.sec[secDict].off + d.off)
	if crc(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, corruptText(key, at+int64(len(b))-4, "full-text index dictionary checksum mismatch")
	}
	bad := func() error { return corruptText(key, at, "bad dictionary entry") }
	r := b[:len(b)-4]
	uv := func() uint64 { return nextUvarint(&r) }
	out := make([]dictEnt, 0, n)
	prev := ""
	for i := range n {
		pl, sl := uv(), uv()
		if pl > uint64(len(prev)) || sl > uint64(len(r)) {
			return nil, bad()
		}
		t := prev[:pl] + string(r[:sl])
		r = r[sl:]
		df, po, pn := uv(), uv(), uv()
		if (i > 0 && t <= prev) || (i == 0 && t != d.first) || df == 0 || df > uint64(h.rows) ||
			pn < 5 || po > h.sec[secPost].len || pn > h.sec[secPost].len-po {
			return nil, bad()
		}
		out = append(out, dictEnt{t, uint32(df), po, pn})
		prev = t
	}
	if len(r) != 0 {
		return nil, bad()
	}
	return out, nil
}

// checkPostingCRC checks one term's postings block (CRC included) read
// at section offset off.
func checkPostingCRC(key string, h *textHeader, off uint64, b []byte) error {
	if crc(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return corruptText(key, int64(h.sec[secPost].off+off)+int64(len(b))-4, "full-text index postings checksum mismatch")
	}
	return nil
}

// parseTextDL checks the CRCs of the document-length chunks in b (whole
// chunks from chunk c0, CRCs included) and calls fn for every row.
func parseTextDL(key string, h *textHeader, c0 int, b []byte, fn func(row int, dl int32) error) error {
	w := h.width
	row := c0 * textChunk
	pos := 0
	for len(b) > 0 {
		n := min(textChunk, h.rows-row)
		size := n*w + 4
		if n <= 0 || size > len(b) {
			return corruptText(key, int64(h.sec[secDL].off)+int64(pos), "truncated document lengths")
		}
		c := b[:size]
		if crc(c[:size-4]) != binary.LittleEndian.Uint32(c[size-4:]) {
			return corruptText(key, int64(h.sec[secDL].off)+int64(pos+size-4), "document length checksum mismatch")
		}
		for i := range n {
			var v uint32
			switch w {
			case 1:
				v = uint32(c[i])
			case 2:
				v = uint32(binary.LittleEndian.Uint16(c[2*i:]))
			default:
				v = binary.LittleEndian.Uint32(c[4*i:])
			}
			if v > 1<<31-1 {
				return corruptText(key, int64(h.sec[secDL].off)+int64(pos+w*i), "bad document length")
			}
			if err := fn(row+i, int32(v)-1); err != nil {
				return err
			}
		}
		b, pos, row = b[size:], pos+size, row+n
	}
	return nil
}

// DecodeText parses a full-text index object read from key (version 1 or
// 2), checking every checksum and bound: failures are *table.CorruptError
// or *table.VersionError.
func DecodeText(key string, b []byte) (*TextIndex, error) {
	if isV1(b, textMagic) {
		return decodeTextV1(key, b)
	}
	h, err := parseTextHeader(key, b)
	if err != nil {
		return nil, err
	}
	if h.end() != uint64(len(b)) {
		return nil, corruptText(key, 0, "full-text index size disagrees with its header")
	}
	sec := func(i int) []byte { return b[h.sec[i].off : h.sec[i].off+h.sec[i].len] }
	dir, err := parseTextDir(key, h, sec(secDir))
	if err != nil {
		return nil, err
	}
	x := &TextIndex{ver: textVersion, rows: h.rows, docs: h.docs, total: h.total,
		terms: make([]string, 0, h.nterms), df: make([]uint32, 0, h.nterms), poff: make([]uint32, 1, h.nterms+1)}
	post := sec(secPost)
	dict := sec(secDict)
	for bi, d := range dir {
		n := min(textBlock, h.nterms-bi*textBlock)
		ents, err := parseTextBlock(key, h, d, n, dict[d.off:d.off+d.len])
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if (len(x.terms) > 0 && e.term <= x.terms[len(x.terms)-1]) || e.poff != uint64(x.poff[len(x.poff)-1]) {
				return nil, corruptText(key, int64(h.sec[secDict].off+d.off), "dictionary disagrees with the postings")
			}
			if err := checkPostingCRC(key, h, e.poff, post[e.poff:e.poff+e.pln]); err != nil {
				return nil, err
			}
			x.terms = append(x.terms, e.term)
			x.df = append(x.df, e.df)
			x.poff = append(x.poff, uint32(e.poff+e.pln))
		}
	}
	if uint64(x.poff[len(x.poff)-1]) != uint64(len(post)) {
		return nil, corruptText(key, int64(h.sec[secPost].off), "dictionary disagrees with the postings")
	}
	x.post = post
	x.dl = make([]int32, h.rows)
	docs, total := 0, int64(0)
	if err := parseTextDL(key, h, 0, sec(secDL), func(row int, dl int32) error {
		x.dl[row] = dl
		if dl >= 0 {
			docs++
			total += int64(dl)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if docs != x.docs || total != x.total {
		return nil, corruptText(key, 0, "document lengths disagree with the header")
	}
	return x, nil
}

// VerifyText decodes a full-text index and also checks every posting:
// offsets in range and increasing, tf between 1 and the row's length
// (version 2: the length stored with the posting is the row's), and as
// many postings per term as its document frequency. DecodeText leaves
// that to Postings, which stops at the first bad entry, so a reader pays
// only for the terms it looks up.
func VerifyText(key string, b []byte) (*TextIndex, error) {
	x, err := DecodeText(key, b)
	if err != nil {
		return nil, err
	}
	for i := range x.terms {
		if err := x.checkPostings(key, i); err != nil {
			return nil, err
		}
	}
	return x, nil
}

func (x *TextIndex) checkPostings(key string, i int) error {
	cnt, okRows := uint32(0), true
	done := walkPostings(x.postingBytes(i), x.ver >= 2, x.rows, func(off, tf, dl int32) bool {
		cnt++
		okRows = x.dl[off] >= tf && (x.ver < 2 || dl == x.dl[off])
		return okRows
	})
	if !done || !okRows {
		return corruptText(key, -1, "posting out of range")
	}
	if cnt != x.df[i] {
		return corruptText(key, -1, "posting count disagrees with df")
	}
	return nil
}

// WriteText stores x as the full-text index of column col of fragment
// fragKey under <prefix>/index/ and returns the reference a table state
// carries.
func WriteText(ctx context.Context, st storage.Store, prefix, fragKey, col string, x *TextIndex) (table.IndexRef, error) {
	return putObject(ctx, st, prefix, "fts", x.Encode(), fragmentColumn(KindText, TextIndexName(col), fragKey, col))
}

// ReadText reads and decodes a full-text index object.
func ReadText(ctx context.Context, st storage.Store, key string) (*TextIndex, error) {
	return getObject(ctx, st, key, DecodeText)
}

// RefFor returns the index of kind over column col that covers fragment
// fragKey among refs.
func RefFor(refs []table.IndexRef, kind, col, fragKey string) (table.IndexRef, bool) {
	for _, r := range refs {
		if r.Kind == kind && len(r.Columns) == 1 && r.Columns[0] == col && slices.Contains(r.Fragments, fragKey) {
			return r, true
		}
	}
	return table.IndexRef{}, false
}
