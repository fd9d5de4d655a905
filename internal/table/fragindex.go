package table

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/klauspost/compress/zstd"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Per-fragment indexes. Every fragment of a table with an id column is
// written with one immutable index object (<prefix>/index/<ulid>.fidx, the
// ULID of its fragment) that the table state names next to the fragment.
// It holds up to three sections, each the fragment's rows sorted by one
// column:
//
//	SectionID   id  → row offset            (every table with an id column)
//	SectionSrc  src → row offset, dst       (edge tables: id, src, dst)
//	SectionDst  dst → row offset, src
//
// so "which rows of this fragment have id X / leave node X / enter node X"
// is answered without reading the fragment, and for edges without reading
// it at all (the far end is in the entry). Every row is indexed, deleted or
// not: the index is valid for every state holding the fragment, and
// readers apply the deletion vector.
//
// The object is laid out for ranged reads: a fixed header, then per
// section a blocked Bloom filter (64-byte blocks, one ranged read answers
// "may this fragment hold X"), a directory of the first key of every
// block, and blocks of 256 entries (version 2: keys prefix-compressed,
// offsets delta-coded where that is smaller, columns zstd-compressed; version
// 1, still read: prefix-compressed rows). A lookup reads the
// header, one Bloom block, the directory and one block; each unit carries
// its own CRC-32C. The format is specified in docs/format/table.md.

// Section names one sorted column of a fragment index.
type Section uint8

// Sections of a fragment index.
const (
	SectionID  Section = 1 // id → offset
	SectionSrc Section = 2 // src → offset, dst
	SectionDst Section = 3 // dst → offset, src
)

const (
	fidxMagic      = "OGFX"
	fidxVersion    = 3 // written; 2 (packed blocks of 256) and 1 (unpacked) are still read
	fidxSecBytes   = 40
	fidxBlockRows  = 1024 // entries of a version-3 block
	fidxBlockRows2 = 256  // entries of a version-1 or -2 block
	fidxBloomBlock = 64   // bytes of one Bloom block (512 bits), plus its CRC
	fidxBloomUnit  = fidxBloomBlock + 4
	fidxBitsPerKey = 10
	fidxBloomProbe = 6
	// fidxHeadRead is how much of the object the first read fetches: the
	// header of up to three sections (24 + 3×40 + 4 = 148 bytes).
	fidxHeadRead = 256
	fidxHeadFix  = 24
)

// IndexEntry is one row of a fragment index section: the row's offset in
// its fragment and, for the adjacency sections, the edge's far end.
type IndexEntry struct {
	Offset int64
	Far    string
}

type fidxEntry struct {
	key string
	off int64
	far string
}

type fidxSection struct {
	kind        Section
	packed      bool // version-2 and -3 blocks (appendBlock)
	blockRows   int  // most entries a block of this version holds
	entries     uint32
	bloomBlocks uint32
	bloomOff    int64
	dirOff      int64
	dirLen      int64
}

// fidxHeader is the decoded fixed header of a fragment index.
type fidxHeader struct {
	rows     int64
	idEqual  uint64 // bit i: column i equals the id column in every row
	sections []fidxSection
}

func (h *fidxHeader) section(k Section) *fidxSection {
	for i := range h.sections {
		if h.sections[i].kind == k {
			return &h.sections[i]
		}
	}
	return nil
}

// column is the name of the column section k sorts.
func (k Section) column() string {
	switch k {
	case SectionSrc:
		return "src"
	case SectionDst:
		return "dst"
	}
	return KeyColumn
}

// indexedSections returns the sections a fragment of schema gets (nil: the
// table has no id column and no index).
func indexedSections(schema Schema) []Section {
	if schema.Index(KeyColumn) < 0 {
		return nil
	}
	if isEdgeSchema(schema) {
		return []Section{SectionID, SectionSrc, SectionDst}
	}
	return []Section{SectionID}
}

// isEdgeSchema: columns 0..2 are id, src, dst, all non-nullable strings.
func isEdgeSchema(schema Schema) bool {
	if len(schema.Columns) < 3 {
		return false
	}
	for i, n := range []string{KeyColumn, "src", "dst"} {
		c := schema.Columns[i]
		if c.Name != n || c.Type.Kind != String || c.Type.Nullable {
			return false
		}
	}
	return true
}

// fidxWriteVersion is the version encodeFragmentIndex writes: fidxVersion,
// or 1 or 2 in tests that check old objects are still read.
var fidxWriteVersion byte = fidxVersion

// encodeFragmentIndex builds the index object of rec (a record of schema).
// It works on row numbers into rec's Arrow columns, never on copies of
// the keys: a section is its rows in key order ([]int32, nothing for the
// collector to scan), and blocks read the strings from the columns.
func encodeFragmentIndex(schema Schema, rec arrow.RecordBatch) []byte {
	b, _ := encodeFragmentIndexSorted(schema, rec)
	return b
}

// fidxSorted is a column an index section sorted, with its least and
// greatest values (the keys of the section's first and last rows).
type fidxSorted struct {
	col    int
	lo, hi string
}

// encodeFragmentIndexSorted is encodeFragmentIndex that also returns the
// bounds of the columns its sections sorted, which the fragment's
// statistics take instead of comparing every row again (fragmentStats).
func encodeFragmentIndexSorted(schema Schema, rec arrow.RecordBatch) ([]byte, []fidxSorted) {
	version := fidxWriteVersion
	secs := indexedSections(schema)
	n := int(rec.NumRows())
	col := func(name string) strView { return newStrView(rec.Column(schema.Index(name)).(*array.String)) }
	cols := make([]fidxColumns, len(secs))
	for si, k := range secs {
		switch k {
		case SectionID:
			cols[si].key = col(KeyColumn)
		case SectionSrc:
			cols[si].key, cols[si].far, cols[si].hasFar = col("src"), col("dst"), true
		case SectionDst:
			cols[si].key, cols[si].far, cols[si].hasFar = col("dst"), col("src"), true
		}
	}
	per := fidxRowsPerBlock(version)
	scratch := fidxScratchPool.Get().(*fidxScratch)
	defer fidxScratchPool.Put(scratch)
	sorted := make([][]int32, len(secs))
	bounds := make([]fidxSorted, 0, len(secs))
	for si, k := range secs {
		rows := scratch.sortRows(cols[si].key, n)
		sorted[si] = rows
		if n > 0 {
			bounds = append(bounds, fidxSorted{col: schema.Index(k.column()),
				lo: cols[si].key.at(int(rows[0])), hi: cols[si].key.at(int(rows[n-1]))})
		}
	}

	headLen := fidxHeadFix + fidxSecBytes*len(secs) + 4
	// The object is assembled in one buffer sized for the usual outcome
	// (about 10 bytes an entry a section, plus the Bloom filters), header
	// space first: growing it by doubling copied it log(size) times.
	out := make([]byte, headLen, headLen+len(secs)*(n*12+n*fidxBitsPerKey/8+4096))
	hdr := make([]fidxSection, len(secs))
	for si, rows := range sorted {
		h := &hdr[si]
		keys := cols[si].key
		h.kind, h.entries = secs[si], uint32(len(rows))
		// Bloom filter: its units (block, CRC) take their place in the
		// object now and are filled once the blocks below, which read
		// every key anyway, have added the keys (one pass over a
		// section's keys, not two).
		h.bloomBlocks = uint32(max(1, (len(rows)*fidxBitsPerKey+511)/512))
		h.bloomOff = int64(len(out))
		out = append(out, make([]byte, int(h.bloomBlocks)*fidxBloomUnit)...)
		scratch.bloom.reset(h.bloomBlocks)
		// Blocks, then the directory naming them.
		dir := scratch.dir[:0]
		dir = binary.AppendUvarint(dir, uint64((len(rows)+per-1)/per))
		prev := ""
		for lo := 0; lo < len(rows); lo += per {
			off := len(out)
			out = scratch.appendBlock(out, cols[si], rows[lo:min(lo+per, len(rows))], version >= 2)
			k := keys.at(int(rows[lo]))
			dir = appendPrefixed(dir, prev, k)
			dir = binary.AppendUvarint(dir, uint64(off))
			dir = binary.AppendUvarint(dir, uint64(len(out)-off))
			prev = k
		}
		bloom := out[h.bloomOff : h.bloomOff+int64(h.bloomBlocks)*fidxBloomUnit]
		copy(bloom, scratch.bloom.finish())
		for blk := 0; blk < int(h.bloomBlocks); blk++ {
			u := bloom[blk*fidxBloomUnit : (blk+1)*fidxBloomUnit]
			binary.LittleEndian.PutUint32(u[fidxBloomBlock:], crc32Castagnoli(u[:fidxBloomBlock]))
		}
		dir = binary.LittleEndian.AppendUint32(dir, crc32Castagnoli(dir))
		h.dirOff, h.dirLen = int64(len(out)), int64(len(dir))
		out = append(out, dir...)
		scratch.dir = dir
	}

	head := out[:0]
	head = append(head, fidxMagic...)
	head = append(head, version, byte(len(secs)), 0, 0)
	head = binary.LittleEndian.AppendUint64(head, uint64(n))
	head = binary.LittleEndian.AppendUint64(head, idEqualColumns(schema, rec))
	for _, h := range hdr {
		head = append(head, byte(h.kind), 0, 0, 0)
		head = binary.LittleEndian.AppendUint32(head, h.entries)
		head = binary.LittleEndian.AppendUint32(head, h.bloomBlocks)
		head = binary.LittleEndian.AppendUint32(head, 0)
		head = binary.LittleEndian.AppendUint64(head, uint64(h.bloomOff))
		head = binary.LittleEndian.AppendUint64(head, uint64(h.dirOff))
		head = binary.LittleEndian.AppendUint64(head, uint64(h.dirLen))
	}
	head = binary.LittleEndian.AppendUint32(head, crc32Castagnoli(head))
	if len(head) != headLen {
		panic("table: fragment index header size") // a bug: the layout above is fixed
	}
	return out, bounds
}

// idEqualColumns returns the bitmask of the first 64 columns that are
// non-null strings equal to the id in every row of rec (bit 0, the id
// column itself, included). Readers use it to find a row by a column
// value through the id section (a node's key is its id, exec).
func idEqualColumns(schema Schema, rec arrow.RecordBatch) uint64 {
	ids := newStrView(rec.Column(schema.Index(KeyColumn)).(*array.String))
	var mask uint64
	for i, c := range schema.Columns {
		if i >= 64 {
			break
		}
		col, ok := rec.Column(i).(*array.String)
		if !ok || (c.Type.Kind != String && c.Type.Kind != Enum) || col.NullN() > 0 {
			continue
		}
		if newStrView(col).equal(ids) {
			mask |= 1 << i
		}
	}
	return mask
}

// fidxColumns are the columns of one section: the sorted one and, for
// the adjacency sections, the far end.
type fidxColumns struct {
	key, far strView
	hasFar   bool
}

// fidxScratch holds the buffers encodeFragmentIndex reuses from block to
// block and section to section.
type fidxScratch struct {
	raw, dir  []byte
	ords, tmp []fidxOrd
	bloom     fidxBloom
}

// fidxScratchPool recycles the scratch of one index encode for the next
// (a load encodes a fragment index per fragment: the radix buffers alone
// are 2 MiB for 65,536 rows). Nothing the encoder returns points into it.
var fidxScratchPool = sync.Pool{New: func() any { return new(fidxScratch) }}

// fidxRowsPerBlock is how many entries a block of version holds (the
// last block of a section fewer). Version 3 quadrupled version 2's 256:
// zstd builds its entropy tables once per block, and a fourth as many
// tables made the encoder cheaper and the index smaller.
func fidxRowsPerBlock(version byte) int {
	if version >= 3 {
		return fidxBlockRows
	}
	return fidxBlockRows2
}

// appendBlock appends to b the block of up to fidxRowsPerBlock rows of one
// section, in key order. Unpacked (version 1): count, then per entry
// (shared prefix with the previous key, suffix, offset[, far]), then a
// CRC-32C of the block. Packed (versions 2 and 3): a flags byte
// (fidxDeltaOffsets), then one zstd frame of the columns — count; per
// entry shared prefix and suffix; per entry offset (zigzag delta from the
// previous one when the flag is set); per entry far end — then a CRC-32C
// of flags and frame. Columns compress far better than rows (the far ends
// and offsets of a section look alike), and a block stays one ranged
// read. An entry's offset is its row.
func (sc *fidxScratch) appendBlock(b []byte, cols fidxColumns, rows []int32, packed bool) []byte {
	start := len(b)
	far := cols.hasFar
	if !packed {
		b = binary.AppendUvarint(b, uint64(len(rows)))
		prev := ""
		for i, r := range rows {
			k := cols.key.at(int(r))
			b = sc.appendKey(b, i, prev, k)
			b = binary.AppendUvarint(b, uint64(r))
			if far {
				f := cols.far.at(int(r))
				b = binary.AppendUvarint(b, uint64(len(f)))
				b = append(b, f...)
			}
			prev = k
		}
		return binary.LittleEndian.AppendUint32(b, crc32Castagnoli(b[start:]))
	}
	raw := binary.AppendUvarint(sc.raw[:0], uint64(len(rows)))
	prev := ""
	for i, r := range rows {
		k := cols.key.at(int(r))
		raw = sc.appendKey(raw, i, prev, k)
		prev = k
	}
	// The offsets go plain or as deltas, whichever is smaller: measured
	// first, then written once.
	plainLen, deltaLen := 0, 0
	last := int64(0)
	for _, r := range rows {
		plainLen += uvarintLen(uint64(r))
		deltaLen += uvarintLen(zigzag(int64(r) - last))
		last = int64(r)
	}
	flags := byte(0)
	if deltaLen < plainLen {
		flags |= fidxDeltaOffsets
		last = 0
		for _, r := range rows {
			raw = binary.AppendVarint(raw, int64(r)-last)
			last = int64(r)
		}
	} else {
		for _, r := range rows {
			raw = binary.AppendUvarint(raw, uint64(r))
		}
	}
	if far {
		for _, r := range rows {
			f := cols.far.at(int(r))
			raw = binary.AppendUvarint(raw, uint64(len(f)))
			raw = append(raw, f...)
		}
	}
	sc.raw = raw
	b = append(b, flags)
	b = fidxEncoder().EncodeAll(raw, b)
	return binary.LittleEndian.AppendUint32(b, crc32Castagnoli(b[start:]))
}

// appendKey appends the i-th key k of a block coded against the previous
// one (appendPrefixed) and adds it to the section's Bloom filter unless
// it repeats prev (an adjacency section's node, once per edge; adding it
// again would set the same bits). The prefix comparison the coding needs
// tells equal keys apart, so no second comparison is made.
func (sc *fidxScratch) appendKey(b []byte, i int, prev, k string) []byte {
	p := commonPrefix(prev, k)
	if i == 0 || p != len(k) || p != len(prev) {
		sc.bloom.add(k)
	}
	b = binary.AppendUvarint(b, uint64(p))
	b = binary.AppendUvarint(b, uint64(len(k)-p))
	return append(b, k[p:]...)
}

// uvarintLen is the length of binary.AppendUvarint's coding of x.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// zigzag is binary.AppendVarint's mapping of x to an unsigned integer.
func zigzag(x int64) uint64 { return uint64(x)<<1 ^ uint64(x>>63) }

// fidxDeltaOffsets: a packed block's offsets are zigzag deltas.
const fidxDeltaOffsets = 1

// fidxMaxBlockBytes bounds a packed block's decompressed size (a corrupt
// or hostile frame cannot make a reader allocate more).
const fidxMaxBlockBytes = 16 << 20

var (
	fidxEncOnce sync.Once
	fidxEnc     *zstd.Encoder
	fidxDecOnce sync.Once
	fidxDec     *zstd.Decoder
)

// fidxEncoder is the shared block compressor (EncodeAll is safe for
// concurrent use; the small window fits blocks of a few KiB).
func fidxEncoder() *zstd.Encoder {
	fidxEncOnce.Do(func() {
		var err error
		fidxEnc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithWindowSize(1<<17), zstd.WithEncoderCRC(false))
		if err != nil {
			panic("table: zstd encoder: " + err.Error()) // only for invalid options
		}
	})
	return fidxEnc
}

// fidxDecoder is the shared block decompressor (DecodeAll is safe for
// concurrent use).
func fidxDecoder() *zstd.Decoder {
	fidxDecOnce.Do(func() {
		var err error
		fidxDec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecoderMaxMemory(fidxMaxBlockBytes), zstd.WithDecoderLowmem(true))
		if err != nil {
			panic("table: zstd decoder: " + err.Error()) // only for invalid options
		}
	})
	return fidxDec
}

// appendPrefixed appends key coded against prev: the shared prefix length,
// the suffix length and the suffix.
func appendPrefixed(b []byte, prev, key string) []byte {
	p := commonPrefix(prev, key)
	b = binary.AppendUvarint(b, uint64(p))
	b = binary.AppendUvarint(b, uint64(len(key)-p))
	return append(b, key[p:]...)
}

// commonPrefix returns the length of the longest common prefix of a and
// b, comparing eight bytes at a time (generated ids share ten or more),
// and the tail as one overlapping word (or two overlapping half-words
// for strings under eight bytes, a load's node keys): every byte before
// the overlap is already known equal, so its first difference is the
// first of the strings.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	// The loop walks x and y down the strings rather than index them: the
	// compiler then proves every load in bounds (no check per word).
	for x, y := a, b; len(x) >= 8 && len(y) >= 8; x, y = x[8:], y[8:] {
		if d := leUint64(x) ^ leUint64(y); d != 0 {
			return i + bits.TrailingZeros64(d)/8
		}
		i += 8
	}
	switch {
	case i == n:
		return n
	case n >= 8:
		if x := leUint64(a[n-8:]) ^ leUint64(b[n-8:]); x != 0 {
			return n - 8 + bits.TrailingZeros64(x)/8
		}
		return n
	case n >= 4:
		if x := strUint32(a) ^ strUint32(b); x != 0 {
			return bits.TrailingZeros32(x) / 8
		}
		if x := strUint32(a[n-4:]) ^ strUint32(b[n-4:]); x != 0 {
			return n - 4 + bits.TrailingZeros32(x)/8
		}
		return n
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// strUint32 reads the first 4 bytes of s little-endian, without a copy.
func strUint32(s string) uint32 {
	_ = s[3] // one bounds check, not four (golang.org/issue/14808)
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// leUint64 reads the first 8 bytes of s little-endian, without a copy.
func leUint64(s string) uint64 {
	_ = s[7] // one bounds check, not eight: the loop of commonPrefix is hot
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// bloomBits returns the Bloom block of key and its fidxBloomProbe bit
// positions in that block (stable across processes: FNV-1a 64).
func bloomBits(key string, blocks uint32) (int, [fidxBloomProbe]uint32) {
	return bloomBitsOf(fnv64a(key), blocks)
}

// bloomBitsOf is bloomBits of a key whose hash is x. The block is the
// hash's high half modulo blocks, taken in 32 bits (both fit; the same
// value as the 64-bit remainder, at a cheaper division).
func bloomBitsOf(x uint64, blocks uint32) (int, [fidxBloomProbe]uint32) {
	blk := int(uint32(x>>32) % blocks)
	h1, h2 := uint32(x), uint32(x>>32)|1
	var bits [fidxBloomProbe]uint32
	for i := range bits {
		bits[i] = (h1 + uint32(i)*h2) % (fidxBloomBlock * 8)
	}
	return blk, bits
}

// fnv64a is FNV-1a 64 of s (hash/fnv's New64a), computed in place: the
// hash.Hash route allocates the hasher and a copy of every key.
func fnv64a(s string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	x := uint64(offset64)
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= prime64
	}
	return x
}

// --- decoding (each unit separately, for ranged reads) ---

func decodeFidxHeader(key string, b []byte, size int64) (*fidxHeader, error) {
	bad := func(off int, reason string) error { return corrupt(key, int64(off), reason, nil) }
	if len(b) < 20 || string(b[:4]) != fidxMagic {
		return nil, bad(0, "bad fragment index magic")
	}
	if b[4] < 1 || b[4] > fidxVersion {
		return nil, &VersionError{Key: key, Kind: "fragment index", Got: int(b[4]), Want: fidxVersion}
	}
	packed, blockRows := b[4] >= 2, fidxRowsPerBlock(b[4])
	ns := int(b[5])
	headLen := fidxHeadFix + fidxSecBytes*ns + 4
	if ns == 0 || ns > 3 || len(b) < headLen {
		return nil, bad(5, "bad fragment index section count")
	}
	if crc32Castagnoli(b[:headLen-4]) != binary.LittleEndian.Uint32(b[headLen-4:]) {
		return nil, bad(headLen-4, "fragment index header checksum mismatch")
	}
	h := &fidxHeader{rows: int64(binary.LittleEndian.Uint64(b[8:])), idEqual: binary.LittleEndian.Uint64(b[16:])}
	for i := range ns {
		p := b[fidxHeadFix+i*fidxSecBytes:]
		s := fidxSection{
			kind:        Section(p[0]),
			packed:      packed,
			blockRows:   blockRows,
			entries:     binary.LittleEndian.Uint32(p[4:]),
			bloomBlocks: binary.LittleEndian.Uint32(p[8:]),
			bloomOff:    int64(binary.LittleEndian.Uint64(p[16:])),
			dirOff:      int64(binary.LittleEndian.Uint64(p[24:])),
			dirLen:      int64(binary.LittleEndian.Uint64(p[32:])),
		}
		if s.kind < SectionID || s.kind > SectionDst || s.bloomBlocks == 0 ||
			s.bloomOff < int64(headLen) || s.bloomOff+int64(s.bloomBlocks)*fidxBloomUnit > size ||
			s.dirOff < int64(headLen) || s.dirLen < 5 || s.dirOff+s.dirLen > size || int64(s.entries) != h.rows {
			return nil, bad(fidxHeadFix+i*fidxSecBytes, "bad fragment index section")
		}
		h.sections = append(h.sections, s)
	}
	return h, nil
}

// fidxDir is a decoded section directory: the first key of every block.
type fidxDir struct {
	first []string
	off   []int64
	len   []int64
}

func decodeFidxDir(key string, base int64, b []byte, size int64) (*fidxDir, error) {
	bad := func(off int, reason string) error { return corrupt(key, base+int64(off), reason, nil) }
	if len(b) < 5 || crc32Castagnoli(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, bad(len(b)-4, "fragment index directory checksum mismatch")
	}
	r := uvReader{b: b[:len(b)-4]}
	n := r.uv()
	if n > uint64(len(b)) {
		return nil, bad(0, "directory block count overruns the object")
	}
	d := &fidxDir{first: make([]string, 0, n), off: make([]int64, 0, n), len: make([]int64, 0, n)}
	prev := ""
	for range n {
		p := r.uv()
		if p > uint64(len(prev)) {
			return nil, bad(r.pos, "bad directory key prefix")
		}
		k := prev[:p] + r.str()
		prev = k
		off, l := int64(r.uv()), int64(r.uv())
		if r.bad {
			break
		}
		if off < 0 || l < 5 || off+l > size || (len(d.first) > 0 && d.first[len(d.first)-1] > k) {
			return nil, bad(r.pos, "bad directory entry")
		}
		d.first = append(d.first, k)
		d.off = append(d.off, off)
		d.len = append(d.len, l)
	}
	if r.bad || r.pos != len(r.b) {
		return nil, bad(r.pos, "malformed fragment index directory")
	}
	return d, nil
}

// decodeFidxBlock decodes one block of section s (far: an adjacency
// section) of an index over rows rows.
func decodeFidxBlock(key string, base int64, b []byte, s *fidxSection, rows int64) ([]fidxEntry, error) {
	far := s.kind != SectionID
	bad := func(off int, reason string) error { return corrupt(key, base+int64(off), reason, nil) }
	if len(b) < 5 || crc32Castagnoli(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, bad(max(0, len(b)-4), "fragment index block checksum mismatch")
	}
	if s.packed {
		return decodePackedBlock(bad, b[:len(b)-4], far, s.blockRows, rows)
	}
	r := uvReader{b: b[:len(b)-4]}
	n := r.uv()
	if n > uint64(s.blockRows) {
		return nil, bad(0, "fragment index block too large")
	}
	out := make([]fidxEntry, 0, n)
	prev := ""
	for range n {
		p := r.uv()
		if p > uint64(len(prev)) {
			return nil, bad(r.pos, "bad key prefix")
		}
		k := prev[:p] + r.str()
		e := fidxEntry{key: k, off: int64(r.uv())}
		if far {
			e.far = r.str()
		}
		if r.bad {
			break
		}
		if e.off < 0 || e.off >= rows || k < prev {
			return nil, bad(r.pos, "bad fragment index entry")
		}
		out = append(out, e)
		prev = k
	}
	if r.bad || r.pos != len(r.b) {
		return nil, bad(r.pos, "malformed fragment index block")
	}
	return out, nil
}

// decodePackedBlock decodes a version-2 block (flags byte, zstd frame of
// the columns), its CRC already checked. The entries' strings are views
// of two buffers, not a string each: the keys of one arena (a first pass
// over the key column sums their lengths), the far ends of the
// decompressed frame. A probe decodes a whole block for one key, so the
// 2,048 small allocations of a 1,024-entry block were most of a cold
// two-hop's CPU (and its garbage).
func decodePackedBlock(bad func(int, string) error, b []byte, far bool, blockRows int, rows int64) ([]fidxEntry, error) {
	flags := b[0]
	if flags&^fidxDeltaOffsets != 0 {
		return nil, bad(0, "unknown fragment index block flags")
	}
	raw, err := fidxDecoder().DecodeAll(b[1:], nil)
	if err != nil {
		return nil, bad(1, "fragment index block does not decompress: "+err.Error())
	}
	r := uvReader{b: raw}
	n := r.uv()
	if n > uint64(blockRows) {
		return nil, bad(0, "fragment index block too large")
	}
	// First pass: the keys' total length (each is a prefix of the one
	// before plus its suffix).
	keysAt := r.pos
	total, prevLen := 0, uint64(0)
	for range n {
		p := r.uv()
		if r.bad || p > prevLen {
			return nil, bad(1, "bad key prefix")
		}
		suf := r.uv()
		if r.bad || suf > uint64(len(raw)-r.pos) {
			return nil, bad(1, "bad key suffix")
		}
		r.pos += int(suf)
		prevLen = p + suf
		total += int(prevLen)
	}
	arena := make([]byte, 0, total)
	r.pos = keysAt
	out := make([]fidxEntry, n)
	prev := ""
	for i := range out {
		p := r.uv()
		suf := int(r.uv())
		start := len(arena)
		arena = append(arena, prev[:p]...)
		arena = append(arena, raw[r.pos:r.pos+suf]...)
		r.pos += suf
		var k string
		if len(arena) > start {
			k = unsafe.String(&arena[start], len(arena)-start)
		}
		if k < prev {
			return nil, bad(1, "fragment index keys out of order")
		}
		out[i].key, prev = k, k
	}
	last := int64(0)
	for i := range out {
		var off int64
		if flags&fidxDeltaOffsets != 0 {
			off = last + r.v()
		} else {
			off = int64(r.uv())
		}
		if r.bad || off < 0 || off >= rows {
			return nil, bad(1, "bad fragment index entry")
		}
		out[i].off, last = off, off
	}
	if far {
		for i := range out {
			out[i].far = r.view()
		}
	}
	if r.bad || r.pos != len(r.b) {
		return nil, bad(1, "malformed fragment index block")
	}
	return out, nil
}

type uvReader struct {
	b   []byte
	pos int
	bad bool
}

func (r *uvReader) uv() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.pos += n
	return v
}

// v reads a signed (zigzag) varint, as binary.AppendVarint writes it.
func (r *uvReader) v() int64 {
	u := r.uv()
	return int64(u>>1) ^ -int64(u&1)
}

// view is str as a view of the buffer (which the caller keeps alive
// and never writes again).
func (r *uvReader) view() string {
	n := r.uv()
	if r.bad || n > uint64(len(r.b)-r.pos) {
		r.bad = true
		return ""
	}
	if n == 0 {
		return ""
	}
	s := unsafe.String(&r.b[r.pos], int(n))
	r.pos += int(n)
	return s
}

func (r *uvReader) str() string {
	n := r.uv()
	if r.bad || n > uint64(len(r.b)-r.pos) {
		r.bad = true
		return ""
	}
	s := string(r.b[r.pos : r.pos+int(n)])
	r.pos += int(n)
	return s
}

// writeFragmentIndex stores the index of a fragment written under key.
func writeFragmentIndex(ctx context.Context, st storage.Store, fragKey string, data []byte, inline int) (string, error) {
	if len(data) <= inline {
		return inlineIndexRef(data), nil
	}
	key := fragmentIndexKey(fragKey)
	if _, err := storage.PutFresh(ctx, st, key, data); err != nil {
		return "", fmt.Errorf("table: write fragment index %s: %w", key, err)
	}
	return key, nil
}

// InlineIndexPrefix starts a fragment-index reference that carries the
// index itself instead of naming an object (table-state format 5,
// docs/format/table.md): "inline:" + the index bytes (the object layout
// above) in unpadded base64url. A small fragment's index rides in its
// table state, so writing the fragment creates one object, not two.
const InlineIndexPrefix = "inline:"

// DefaultInlineIndexBytes is the largest encoded index the engine carries
// inline (WriteOptions.InlineIndexBytes): the index of a node fragment of
// a few dozen rows, of an edge fragment (which indexes its endpoints too)
// of about a dozen. Larger ones are objects.
const DefaultInlineIndexBytes = 1 << 10

// IsInlineIndex reports whether a fragment's index reference is an inline
// index rather than an object key. Code that treats references as objects
// (cleanup's live set, verify, listings) has no object for it.
func IsInlineIndex(ref string) bool { return strings.HasPrefix(ref, InlineIndexPrefix) }

// inlineIndexRef is the reference carrying data inline.
func inlineIndexRef(data []byte) string {
	return InlineIndexPrefix + base64.RawURLEncoding.EncodeToString(data)
}

// inlineIndexBytes returns the index bytes an inline reference carries,
// checked against the size the state records.
func inlineIndexBytes(ref string, size int64) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(strings.TrimPrefix(ref, InlineIndexPrefix))
	if err != nil {
		return nil, corrupt(inlineIndexName, -1, "inline fragment index is not base64url", err)
	}
	if int64(len(b)) != size {
		return nil, corrupt(inlineIndexName, min(int64(len(b)), size), fmt.Sprintf("inline fragment index is %d bytes, the table state records %d", len(b), size), nil)
	}
	return b, nil
}

// inlineIndexName stands for an inline index in errors (its reference is
// its bytes).
const inlineIndexName = "inline fragment index"

// indexName is how errors name the index ref refers to.
func indexName(ref string) string {
	if IsInlineIndex(ref) {
		return inlineIndexName
	}
	return ref
}

// fragmentIndexKey is <prefix>/index/<ulid>.fidx for fragment
// <prefix>/data/<ulid>.parquet.
func fragmentIndexKey(fragKey string) string {
	prefix := strings.TrimSuffix(fragKey, "/data/"+fragmentID(fragKey)+".parquet")
	return prefix + "/index/" + fragmentID(fragKey) + ".fidx"
}

func leUint32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// VerifyFragmentIndex reads f's whole index object and checks every unit:
// header (row count against f), each Bloom block's checksum, each
// directory and block, that blocks hold every row exactly once in key
// order, and that the Bloom filter admits every key. f must have an index.
func VerifyFragmentIndex(ctx context.Context, st storage.Store, f Fragment) error {
	if f.Index == "" {
		return fmt.Errorf("table: fragment %s has no index", f.Key)
	}
	var b []byte
	var err error
	if IsInlineIndex(f.Index) {
		b, err = inlineIndexBytes(f.Index, f.IndexBytes)
	} else if b, _, err = st.Get(ctx, f.Index); err != nil {
		err = fmt.Errorf("table: read fragment index %s: %w", f.Index, err)
	}
	if err != nil {
		return err
	}
	if int64(len(b)) != f.IndexBytes {
		return corrupt(indexName(f.Index), min(int64(len(b)), f.IndexBytes), fmt.Sprintf("object is %d bytes, table state says %d", len(b), f.IndexBytes), nil)
	}
	h, err := decodeFidxHeader(indexName(f.Index), b, f.IndexBytes)
	if err != nil {
		return err
	}
	if h.rows != f.Rows {
		return corrupt(indexName(f.Index), 8, fmt.Sprintf("index covers %d rows, fragment %s has %d", h.rows, f.Key, f.Rows), nil)
	}
	for _, s := range h.sections {
		for blk := int64(0); blk < int64(s.bloomBlocks); blk++ {
			u := b[s.bloomOff+blk*fidxBloomUnit : s.bloomOff+(blk+1)*fidxBloomUnit]
			if crc32Castagnoli(u[:fidxBloomBlock]) != leUint32(u[fidxBloomBlock:]) {
				return corrupt(indexName(f.Index), s.bloomOff+blk*fidxBloomUnit, "fragment index Bloom block checksum mismatch", nil)
			}
		}
		d, err := decodeFidxDir(indexName(f.Index), s.dirOff, b[s.dirOff:s.dirOff+s.dirLen], f.IndexBytes)
		if err != nil {
			return err
		}
		seen := make([]bool, f.Rows)
		prev := ""
		for i := range d.first {
			ents, err := decodeFidxBlock(indexName(f.Index), d.off[i], b[d.off[i]:d.off[i]+d.len[i]], &s, f.Rows)
			if err != nil {
				return err
			}
			if len(ents) == 0 || ents[0].key != d.first[i] || ents[0].key < prev {
				return corrupt(indexName(f.Index), d.off[i], "fragment index block out of order or disagreeing with its directory", nil)
			}
			for _, e := range ents {
				if seen[e.off] {
					return corrupt(indexName(f.Index), d.off[i], fmt.Sprintf("row %d indexed twice", e.off), nil)
				}
				seen[e.off] = true
				blkNo, bits := bloomBits(e.key, s.bloomBlocks)
				u := b[s.bloomOff+int64(blkNo)*fidxBloomUnit:]
				for _, bit := range bits {
					if u[bit/8]&(1<<(bit%8)) == 0 {
						return corrupt(indexName(f.Index), s.bloomOff, fmt.Sprintf("Bloom filter rejects indexed key %q", e.key), nil)
					}
				}
			}
			prev = ents[len(ents)-1].key
		}
		if slices.Contains(seen, false) {
			return corrupt(indexName(f.Index), s.dirOff, "fragment index section misses rows", nil)
		}
	}
	return nil
}
