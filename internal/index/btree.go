package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// KindBTree is the IndexRef.Kind of a scalar index: one object per
// (fragment, column) of an `@index` property that is an enum or an
// orderable scalar, covering exactly that fragment.
const KindBTree = "btree"

// BTreeIndexName is the IndexRef.Name of the scalar index of column col.
func BTreeIndexName(col string) string { return "btree:" + col }

// The object (docs/format/table.md, "Scalar index objects"): a header,
// a directory of blocks (each block's first value and place), and the
// blocks. A block holds whole runs — one distinct value, its row count
// and its row offsets ascending — so an equality or a range reads only
// the blocks its values fall in, with one ranged read, and checks each
// against its own CRC. Nulls are not indexed (a null never compares).
const (
	btMagic   = "OGBT"
	btVersion = 1
	// btHead: magic, version u8, domain u8, 2 reserved, rows, entries,
	// runs, blocks, directory length (u32 each), data length (u64), crc.
	btHead = 4 + 4 + 4*5 + 8 + 4
	// btBlockBytes is the size a block is cut at (at a run boundary: a
	// run longer than this makes one larger block).
	btBlockBytes = 2 << 10
	// BTreeFrontBytes is the first ranged read of a lookup: the header
	// and the directory, and for a small fragment the whole object.
	BTreeFrontBytes = 2 << 10
)

// Value domains of a scalar index: how the column's values are ordered.
const (
	btInt  = 1 // signed 64-bit: I32, I64, Date, DateTime, Bool (false < true)
	btUint = 2 // unsigned 64-bit: U32, U64
	btStr  = 3 // bytewise: String, Enum
)

// BTreeIndexable reports whether a column of kind k can have a scalar
// index (floats are left out: their NaN order differs between the table
// scan and the query's comparisons).
func BTreeIndexable(k table.Kind) bool { return btDomain(k) != 0 }

func btDomain(k table.Kind) uint8 {
	switch k {
	case table.I32, table.I64, table.Date, table.DateTime, table.Bool:
		return btInt
	case table.U32, table.U64:
		return btUint
	case table.String, table.Enum:
		return btStr
	}
	return 0
}

// bkey is one indexed value: i for btInt, u for btUint, s for btStr.
type bkey struct {
	i int64
	u uint64
	s string
}

func (d btDom) cmp(a, b bkey) int {
	switch d {
	case btInt:
		return cmp.Compare(a.i, b.i)
	case btUint:
		return cmp.Compare(a.u, b.u)
	}
	return strings.Compare(a.s, b.s)
}

type btDom uint8

// keyOf converts a column value (table.Value's types) to the domain's
// key; ok is false for a value of another type.
func (d btDom) keyOf(v any) (bkey, bool) {
	switch x := v.(type) {
	case int64:
		if d == btInt {
			return bkey{i: x}, true
		}
	case int32:
		if d == btInt {
			return bkey{i: int64(x)}, true
		}
	case bool:
		if d == btInt {
			if x {
				return bkey{i: 1}, true
			}
			return bkey{}, true
		}
	case uint64:
		if d == btUint {
			return bkey{u: x}, true
		}
	case uint32:
		if d == btUint {
			return bkey{u: uint64(x)}, true
		}
	case string:
		if d == btStr {
			return bkey{s: x}, true
		}
	}
	return bkey{}, false
}

// BuildBTree encodes the scalar index of one fragment column of kind k
// whose values by row offset are vals (table.Value's types, nil for
// null). Every row is indexed, deleted or not: readers apply the
// fragment's deletion vector.
func BuildBTree(k table.Kind, vals []any) ([]byte, error) {
	d := btDom(btDomain(k))
	if d == 0 {
		return nil, fmt.Errorf("%w: a scalar index over a %s column", table.ErrSchema, k)
	}
	type ent struct {
		k   bkey
		off int32
	}
	ents := make([]ent, 0, len(vals))
	for r, v := range vals {
		if v == nil {
			continue
		}
		key, ok := d.keyOf(v)
		if !ok {
			return nil, fmt.Errorf("%w: value %v (%T) in a %s column", table.ErrSchema, v, v, k)
		}
		ents = append(ents, ent{key, int32(r)})
	}
	// Stable by value: offsets stay ascending within a run.
	slices.SortStableFunc(ents, func(a, b ent) int { return d.cmp(a.k, b.k) })

	var dir, data, blk []byte
	nblocks, runs := 0, 0
	var first, prev bkey
	blkEnts, blkRuns := 0, 0
	flush := func() {
		if blkRuns == 0 {
			return
		}
		blk = binary.LittleEndian.AppendUint32(blk, crc(blk))
		dir = d.appendKey(dir, first)
		dir = binary.AppendUvarint(dir, uint64(len(data)))
		dir = binary.AppendUvarint(dir, uint64(len(blk)))
		dir = binary.AppendUvarint(dir, uint64(blkEnts))
		dir = binary.AppendUvarint(dir, uint64(blkRuns))
		data = append(data, blk...)
		blk, blkEnts, blkRuns = blk[:0], 0, 0
		nblocks++
	}
	for i := 0; i < len(ents); {
		j := i + 1
		for j < len(ents) && d.cmp(ents[j].k, ents[i].k) == 0 {
			j++
		}
		if blkRuns == 0 {
			first, prev = ents[i].k, ents[i].k
		}
		blk = d.appendDelta(blk, prev, ents[i].k)
		blk = binary.AppendUvarint(blk, uint64(j-i))
		last := int32(-1)
		for _, e := range ents[i:j] {
			blk = binary.AppendUvarint(blk, uint64(e.off-last))
			last = e.off
		}
		prev = ents[i].k
		blkEnts += j - i
		blkRuns++
		runs++
		if len(blk) >= btBlockBytes {
			flush()
		}
		i = j
	}
	flush()
	dir = binary.LittleEndian.AppendUint32(dir, crc(dir))
	h := make([]byte, 0, btHead+len(dir)+len(data))
	h = append(h, btMagic...)
	h = append(h, btVersion, byte(d), 0, 0)
	for _, n := range []int{len(vals), len(ents), runs, nblocks, len(dir)} {
		h = binary.LittleEndian.AppendUint32(h, uint32(n))
	}
	h = binary.LittleEndian.AppendUint64(h, uint64(len(data)))
	h = binary.LittleEndian.AppendUint32(h, crc(h))
	return append(append(h, dir...), data...), nil
}

// appendKey encodes a directory value: 8 bytes little endian for the
// integer domains, uvarint length and bytes for strings.
func (d btDom) appendKey(b []byte, k bkey) []byte {
	switch d {
	case btInt:
		return binary.LittleEndian.AppendUint64(b, uint64(k.i))
	case btUint:
		return binary.LittleEndian.AppendUint64(b, k.u)
	}
	b = binary.AppendUvarint(b, uint64(len(k.s)))
	return append(b, k.s...)
}

// appendDelta encodes a run's value after prev (the block's first run
// is encoded after the block's first value: a zero delta): integers as
// a uvarint of the difference (values ascend), strings as the length
// shared with prev and the rest.
func (d btDom) appendDelta(b []byte, prev, k bkey) []byte {
	switch d {
	case btInt:
		return binary.AppendUvarint(b, uint64(k.i)-uint64(prev.i))
	case btUint:
		return binary.AppendUvarint(b, k.u-prev.u)
	}
	p := commonPrefix(prev.s, k.s)
	b = binary.AppendUvarint(b, uint64(p))
	b = binary.AppendUvarint(b, uint64(len(k.s)-p))
	return append(b, k.s[p:]...)
}

// WriteBTree builds and stores the scalar index of column col (kind k)
// of fragment fragKey, whose values by row offset are vals, as
// <prefix>/index/<ulid>.btr, and returns its reference.
func WriteBTree(ctx context.Context, st storage.Store, prefix, fragKey, col string, k table.Kind, vals []any) (table.IndexRef, error) {
	data, err := BuildBTree(k, vals)
	if err != nil {
		return table.IndexRef{}, err
	}
	return putObject(ctx, st, prefix, "btr", data, fragmentColumn(KindBTree, BTreeIndexName(col), fragKey, col))
}

// btHeader is the parsed header of a scalar index object.
type btHeader struct {
	dom                          btDom
	rows, ents, runs, blocks, dl int
	dataLen                      uint64
}

func (h *btHeader) size() uint64 { return btHead + uint64(h.dl) + h.dataLen }

// btBlock is one directory entry.
type btBlock struct {
	first     bkey
	off, n    uint64 // place in the data section (CRC included)
	ents, rns int
}

func corruptBT(key string, off int64, reason string) error {
	return &table.CorruptError{Key: key, Offset: off, Reason: reason}
}

func parseBTHeader(key string, b []byte) (*btHeader, error) {
	if len(b) < 8 || string(b[:4]) != btMagic {
		return nil, corruptBT(key, 0, "not a scalar index object")
	}
	if b[4] != btVersion {
		return nil, &table.VersionError{Key: key, Kind: "scalar index", Got: int(b[4]), Want: btVersion}
	}
	if len(b) < btHead {
		return nil, corruptBT(key, 0, "scalar index header truncated")
	}
	if binary.LittleEndian.Uint32(b[btHead-4:]) != crc(b[:btHead-4]) {
		return nil, corruptBT(key, 0, "scalar index header checksum mismatch")
	}
	u := func(i int) int { return int(binary.LittleEndian.Uint32(b[8+4*i:])) }
	h := &btHeader{dom: btDom(b[5]), rows: u(0), ents: u(1), runs: u(2), blocks: u(3), dl: u(4),
		dataLen: binary.LittleEndian.Uint64(b[28:])}
	if h.dom < btInt || h.dom > btStr || h.ents > h.rows || h.runs > h.ents || h.blocks > h.runs || h.dl < 4 ||
		(h.ents > 0) != (h.blocks > 0) {
		return nil, corruptBT(key, 0, "scalar index header out of range")
	}
	return h, nil
}

func parseBTDir(key string, h *btHeader, b []byte) ([]btBlock, error) {
	if len(b) != h.dl || binary.LittleEndian.Uint32(b[len(b)-4:]) != crc(b[:len(b)-4]) {
		return nil, corruptBT(key, btHead, "scalar index directory checksum mismatch")
	}
	b = b[:len(b)-4]
	bad := corruptBT(key, btHead, "bad scalar index directory")
	out := make([]btBlock, h.blocks)
	var at uint64
	ents, runs := 0, 0
	for i := range out {
		var k bkey
		if h.dom == btStr {
			n, w := binary.Uvarint(b)
			if w <= 0 || uint64(len(b)-w) < n {
				return nil, bad
			}
			k.s, b = string(b[w:w+int(n)]), b[w+int(n):]
		} else {
			if len(b) < 8 {
				return nil, bad
			}
			v := binary.LittleEndian.Uint64(b)
			k.i, k.u, b = int64(v), v, b[8:]
		}
		var vs [4]uint64
		for j := range vs {
			v, w := binary.Uvarint(b)
			if w <= 0 {
				return nil, bad
			}
			vs[j], b = v, b[w:]
		}
		if vs[0] != at || vs[1] < 4 || vs[2] == 0 || vs[3] == 0 || vs[3] > vs[2] || (i > 0 && h.dom.cmp(out[i-1].first, k) >= 0) {
			return nil, bad
		}
		out[i] = btBlock{first: k, off: vs[0], n: vs[1], ents: int(vs[2]), rns: int(vs[3])}
		at += vs[1]
		ents += int(vs[2])
		runs += int(vs[3])
	}
	if len(b) != 0 || at != h.dataLen || ents != h.ents || runs != h.runs {
		return nil, bad
	}
	return out, nil
}

// walkBTBlock checks block blk (its bytes b, CRC included, at object
// offset at) and calls fn with each run's value and offsets.
func walkBTBlock(key string, h *btHeader, blk btBlock, b []byte, at int64, fn func(k bkey, offs []int64)) error {
	if uint64(len(b)) != blk.n || binary.LittleEndian.Uint32(b[len(b)-4:]) != crc(b[:len(b)-4]) {
		return corruptBT(key, at, "scalar index block checksum mismatch")
	}
	b = b[:len(b)-4]
	bad := corruptBT(key, at, "bad scalar index block")
	prev, ents := blk.first, 0
	var offs []int64
	for r := range blk.rns {
		k := prev
		if h.dom == btStr {
			p, w := binary.Uvarint(b)
			if w <= 0 || p > uint64(len(prev.s)) {
				return bad
			}
			b = b[w:]
			n, w := binary.Uvarint(b)
			if w <= 0 || uint64(len(b)-w) < n {
				return bad
			}
			k.s, b = prev.s[:p]+string(b[w:w+int(n)]), b[w+int(n):]
		} else {
			d, w := binary.Uvarint(b)
			if w <= 0 {
				return bad
			}
			b = b[w:]
			k.i, k.u = prev.i+int64(d), prev.u+d
		}
		if c := h.dom.cmp(prev, k); (r == 0 && c != 0) || (r > 0 && c >= 0) {
			return bad
		}
		n, w := binary.Uvarint(b)
		if w <= 0 || n == 0 || n > uint64(blk.ents-ents) {
			return bad
		}
		b = b[w:]
		offs = offs[:0]
		last := int64(-1)
		for range n {
			d, w := binary.Uvarint(b)
			if w <= 0 || d == 0 || last+int64(d) >= int64(h.rows) {
				return bad
			}
			b, last = b[w:], last+int64(d)
			offs = append(offs, last)
		}
		ents += int(n)
		fn(k, offs)
		prev = k
	}
	if len(b) != 0 || ents != blk.ents {
		return bad
	}
	return nil
}

// BTreeOp is a comparison a scalar index answers.
type BTreeOp uint8

// Comparisons of a column with a constant.
const (
	BTreeEq BTreeOp = iota + 1
	BTreeLt
	BTreeLe
	BTreeGt
	BTreeGe
)

// BTreeCond is one comparison `column op Value` (Value in the value
// model: int64, uint64, int32, uint32, bool or string).
type BTreeCond struct {
	Op    BTreeOp
	Value any
}

// btRange is the set of values a conjunction of conditions allows.
type btRange struct {
	empty          bool
	lo, hi         *bkey
	loIncl, hiIncl bool
}

// rangeOf intersects conds into one interval of the domain; ok is false
// when a constant has a type the domain does not compare with.
func (d btDom) rangeOf(conds []BTreeCond) (btRange, bool) {
	var r btRange
	for _, c := range conds {
		k, below, above, ok := d.constKey(c.Value)
		if !ok {
			return r, false
		}
		// below/above: the constant lies beyond every value of the domain.
		switch {
		case below: // every value > c
			if c.Op == BTreeEq || c.Op == BTreeLt || c.Op == BTreeLe {
				r.empty = true
			}
			continue
		case above: // every value < c
			if c.Op == BTreeEq || c.Op == BTreeGt || c.Op == BTreeGe {
				r.empty = true
			}
			continue
		}
		if c.Op == BTreeEq || c.Op == BTreeGt || c.Op == BTreeGe {
			incl := c.Op != BTreeGt
			if r.lo == nil || d.cmp(k, *r.lo) > 0 || d.cmp(k, *r.lo) == 0 && !incl {
				r.lo, r.loIncl = &k, incl
			}
		}
		if c.Op == BTreeEq || c.Op == BTreeLt || c.Op == BTreeLe {
			incl := c.Op != BTreeLt
			if r.hi == nil || d.cmp(k, *r.hi) < 0 || d.cmp(k, *r.hi) == 0 && !incl {
				k := k
				r.hi, r.hiIncl = &k, incl
			}
		}
	}
	if r.lo != nil && r.hi != nil {
		if c := d.cmp(*r.lo, *r.hi); c > 0 || c == 0 && !(r.loIncl && r.hiIncl) {
			r.empty = true
		}
	}
	return r, true
}

// constKey converts a query constant to the domain, exactly: an integer
// outside the domain's range reports below or above instead.
func (d btDom) constKey(v any) (k bkey, below, above, ok bool) {
	switch x := v.(type) {
	case int32:
		v = int64(x)
	case uint32:
		v = uint64(x)
	}
	switch x := v.(type) {
	case int64:
		if d == btUint {
			if x < 0 {
				return k, true, false, true
			}
			return bkey{u: uint64(x)}, false, false, true
		}
	case uint64:
		if d == btInt {
			if x > math.MaxInt64 {
				return k, false, true, true
			}
			return bkey{i: int64(x)}, false, false, true
		}
	}
	k, ok = d.keyOf(v)
	return k, false, false, ok
}

func (r *btRange) holds(d btDom, k bkey) bool {
	if r.lo != nil {
		if c := d.cmp(k, *r.lo); c < 0 || c == 0 && !r.loIncl {
			return false
		}
	}
	if r.hi != nil {
		if c := d.cmp(k, *r.hi); c > 0 || c == 0 && !r.hiIncl {
			return false
		}
	}
	return true
}

// blocksOf returns the blocks [i, j) whose runs may hold values of r.
// Runs never span blocks, so a value lies in the last block whose first
// value is not above it.
func blocksOf(d btDom, dir []btBlock, r btRange) (int, int) {
	i, j := 0, len(dir)
	if r.lo != nil {
		// the first block whose first value is above lo, minus one
		n, _ := slices.BinarySearchFunc(dir, *r.lo, func(b btBlock, k bkey) int {
			if d.cmp(b.first, k) <= 0 {
				return -1
			}
			return 1
		})
		i = max(n-1, 0)
	}
	if r.hi != nil {
		j, _ = slices.BinarySearchFunc(dir, *r.hi, func(b btBlock, k bkey) int {
			if c := d.cmp(b.first, k); c < 0 || c == 0 && r.hiIncl {
				return -1
			}
			return 1
		})
	}
	return i, max(i, j)
}
