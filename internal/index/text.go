package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"

	"github.com/oklog/ulid/v2"

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
	textVersion = 1
	textHead    = 4 + 4 + 4 + 4 + 8 + 4 + 6*8 + 4 // magic, version+pad, rows, docs, total, nterms, 3×(off,len), crc
)

// TextIndex is the inverted index of one String column of one fragment:
// every row is indexed, deleted or not (readers apply the deletion vector),
// with per-row document lengths and per-term postings (row offset, term
// frequency) in offset order. It carries the fragment's corpus statistics
// (documents = non-null rows, total terms), so BM25 over several fragments
// sums them and gets the exact scorer's numbers.
//
// A *TextIndex is immutable and safe for concurrent use.
type TextIndex struct {
	rows  int
	docs  int   // non-null rows
	total int64 // Σ document length over non-null rows
	dl    []int32
	terms []string
	df    []uint32
	poff  []uint32 // postings of term i: post[poff[i]:poff[i+1]]
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

// Postings calls fn for every row holding dictionary term i, in offset
// order, with the term's frequency in that row.
//
// An entry out of bounds (only a checksum-valid but malformed object has
// one; VerifyText reports it) ends the walk.
func (x *TextIndex) Postings(i int, fn func(off int32, tf int32)) {
	b := x.post[x.poff[i]:x.poff[i+1]]
	off := int64(-1)
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || d == 0 {
			return
		}
		b = b[n:]
		tf, m := binary.Uvarint(b)
		if m <= 0 || tf == 0 || tf > 1<<30 {
			return
		}
		b = b[m:]
		off += int64(d)
		if off >= int64(x.rows) {
			return
		}
		fn(int32(off), int32(tf))
	}
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
	x := &TextIndex{rows: n, dl: make([]int32, n)}
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
		for _, p := range ps {
			x.post = binary.AppendUvarint(x.post, uint64(p.off-prev))
			x.post = binary.AppendUvarint(x.post, uint64(p.tf))
			prev = p.off
		}
		x.poff[i+1] = uint32(len(x.post))
	}
	return x
}

// Encode returns the object bytes: a fixed header, then three sections
// each followed by its CRC-32C: document lengths (uvarint dl+1, 0 = null),
// the dictionary (prefix-compressed term, df, postings length), and the
// postings (uvarint offset delta from the previous posting +1, then tf).
// docs/format/table.md specifies the layout.
func (x *TextIndex) Encode() []byte {
	var dl []byte
	for _, d := range x.dl {
		dl = binary.AppendUvarint(dl, uint64(d+1))
	}
	dl = binary.LittleEndian.AppendUint32(dl, crc(dl))
	var dict []byte
	prev := ""
	for i, t := range x.terms {
		p := commonPrefix(prev, t)
		dict = binary.AppendUvarint(dict, uint64(p))
		dict = binary.AppendUvarint(dict, uint64(len(t)-p))
		dict = append(dict, t[p:]...)
		dict = binary.AppendUvarint(dict, uint64(x.df[i]))
		dict = binary.AppendUvarint(dict, uint64(x.poff[i+1]-x.poff[i]))
		prev = t
	}
	dict = binary.LittleEndian.AppendUint32(dict, crc(dict))
	post := binary.LittleEndian.AppendUint32(slices.Clone(x.post), crc(x.post))

	h := make([]byte, 0, textHead)
	h = append(h, textMagic...)
	h = append(h, textVersion, 0, 0, 0)
	h = binary.LittleEndian.AppendUint32(h, uint32(x.rows))
	h = binary.LittleEndian.AppendUint32(h, uint32(x.docs))
	h = binary.LittleEndian.AppendUint64(h, uint64(x.total))
	h = binary.LittleEndian.AppendUint32(h, uint32(len(x.terms)))
	off := uint64(textHead)
	for _, sec := range [][]byte{dl, dict, post} {
		h = binary.LittleEndian.AppendUint64(h, off)
		h = binary.LittleEndian.AppendUint64(h, uint64(len(sec)))
		off += uint64(len(sec))
	}
	h = binary.LittleEndian.AppendUint32(h, crc(h))
	out := make([]byte, 0, off)
	out = append(out, h...)
	out = append(out, dl...)
	out = append(out, dict...)
	return append(out, post...)
}

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// DecodeText parses a full-text index object read from key, checking
// every checksum and bound: failures are *table.CorruptError or
// *table.VersionError.
func DecodeText(key string, b []byte) (*TextIndex, error) {
	bad := func(off int, reason string) error {
		return &table.CorruptError{Key: key, Offset: int64(off), Reason: reason}
	}
	if len(b) < textHead || string(b[:4]) != textMagic {
		return nil, bad(0, "bad full-text index magic")
	}
	if b[4] != textVersion {
		return nil, &table.VersionError{Key: key, Kind: "full-text index", Got: int(b[4]), Want: textVersion}
	}
	if crc(b[:textHead-4]) != binary.LittleEndian.Uint32(b[textHead-4:]) {
		return nil, bad(textHead-4, "full-text index header checksum mismatch")
	}
	x := &TextIndex{
		rows:  int(binary.LittleEndian.Uint32(b[8:])),
		docs:  int(binary.LittleEndian.Uint32(b[12:])),
		total: int64(binary.LittleEndian.Uint64(b[16:])),
	}
	nterms := int(binary.LittleEndian.Uint32(b[24:]))
	var secs [3][]byte
	for i := range secs {
		o := binary.LittleEndian.Uint64(b[28+16*i:])
		l := binary.LittleEndian.Uint64(b[36+16*i:])
		if l < 4 || o < textHead || o+l > uint64(len(b)) {
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
	uv := func() uint64 {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			r = nil
			return 1 << 62
		}
		r = r[n:]
		return v
	}
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

// VerifyText decodes a full-text index and also checks every posting:
// offsets in range and increasing, tf between 1 and the row's length,
// and as many postings per term as its document frequency. DecodeText
// leaves that to Postings, which stops at the first bad entry, so a
// reader pays only for the terms it looks up.
func VerifyText(key string, b []byte) (*TextIndex, error) {
	x, err := DecodeText(key, b)
	if err != nil {
		return nil, err
	}
	bad := func(reason string) error { return &table.CorruptError{Key: key, Offset: -1, Reason: reason} }
	nterms := len(x.terms)
	for i := range nterms {
		q := x.post[x.poff[i]:x.poff[i+1]]
		off, cnt := int64(-1), uint32(0)
		for len(q) > 0 {
			d, n := binary.Uvarint(q)
			if n <= 0 || d == 0 {
				return nil, bad("bad posting")
			}
			q = q[n:]
			tf, m := binary.Uvarint(q)
			if m <= 0 || tf == 0 {
				return nil, bad("bad posting")
			}
			q = q[m:]
			off += int64(d)
			cnt++
			if off >= int64(x.rows) || x.dl[off] < int32(tf) {
				return nil, bad("posting out of range")
			}
		}
		if cnt != x.df[i] {
			return nil, bad("posting count disagrees with df")
		}
	}
	return x, nil
}

// WriteText stores x as the full-text index of column col of fragment
// fragKey under <prefix>/index/ and returns the reference a table state
// carries.
func WriteText(ctx context.Context, st storage.Store, prefix, fragKey, col string, x *TextIndex) (table.IndexRef, error) {
	key := prefix + "/index/" + ulid.Make().String() + ".fts"
	if _, err := storage.PutFresh(ctx, st, key, x.Encode()); err != nil {
		return table.IndexRef{}, fmt.Errorf("index: write %s: %w", key, err)
	}
	return table.IndexRef{Name: TextIndexName(col), Kind: KindText, Columns: []string{col}, Key: key, Fragments: []string{fragKey}}, nil
}

// ReadText reads and decodes a full-text index object.
func ReadText(ctx context.Context, st storage.Store, key string) (*TextIndex, error) {
	data, _, err := st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("index: read %s: %w", key, err)
	}
	return DecodeText(key, data)
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
