package exec

import (
	"encoding/binary"
	"hash/maphash"
)

// idTable maps the ids of a TypeDelta's Upserts to their positions. A bulk
// load stages every entity of its input in one TypeDelta and looks up both
// endpoints of each edge there, so with millions of ids this lookup is a
// large share of a load's CPU; a Go map[string]int spends it on cache
// misses (control word, key header, key bytes) and makes the collector
// scan one string pointer per id on every cycle.
//
// The table is open addressing with linear probing over pointer-free
// arrays. A slot is two words: meta (a used bit, a 23-bit hash tag, the
// key length saturated at 255, the position) and the key itself when it
// has at most 8 bytes, else the offset of the key in arena (uvarint
// length, bytes). A lookup of a short id (the usual @key) therefore reads
// one slot and nothing else; a longer one reads one arena entry more, and
// a miss almost never does (the tag differs). Memory is 16 bytes per slot
// (load factor ≤ 1/2) plus the bytes of keys longer than 8.
// TestIDTableMatchesMap pins it against a map.
type idTable struct {
	slots []idSlot
	arena []byte
	n     int // distinct keys
	seed  maphash.Seed
}

type idSlot struct{ meta, key uint64 }

const (
	idUsed     = 1 << 63
	idTagShift = 40 // meta: used(1) | tag(23) | len(8) | pos(32)
	idTagMask  = 1<<23 - 1
	idInline   = 8 // keys up to this many bytes live in the slot
)

func newIDTable(hint int) *idTable {
	size := 16
	for size < 2*hint {
		size *= 2
	}
	return &idTable{slots: make([]idSlot, size), seed: maphash.MakeSeed()}
}

// head is the meta of id without its position: what a slot holding id
// matches on.
func idHead(h uint64, id string) uint64 {
	return idUsed | (h>>41&idTagMask)<<idTagShift | uint64(min(len(id), 255))<<32
}

// idWord packs a key of at most idInline bytes, zero-padded; the length in
// meta tells "a" from "a\x00".
func idWord(id string) uint64 {
	var b [8]byte
	copy(b[:], id)
	return binary.LittleEndian.Uint64(b[:])
}

// get returns the position stored for id.
func (t *idTable) get(id string) (int, bool) {
	i, ok := t.find(id, maphash.String(t.seed, id))
	if !ok {
		return 0, false
	}
	return int(uint32(t.slots[i].meta)), true
}

// find returns the slot holding id, or the empty slot where it belongs.
func (t *idTable) find(id string, h uint64) (uint64, bool) {
	head := idHead(h, id)
	mask := uint64(len(t.slots) - 1)
	var word uint64
	if len(id) <= idInline {
		word = idWord(id)
	}
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.meta == 0 {
			return i, false
		}
		if s.meta&^0xffffffff != head {
			continue
		}
		if len(id) <= idInline {
			if s.key == word {
				return i, true
			}
			continue
		}
		if t.arenaKey(s.key) == id {
			return i, true
		}
	}
}

// arenaKey returns the key stored at off (a string view, no copy).
func (t *idTable) arenaKey(off uint64) string {
	n, w := binary.Uvarint(t.arena[off:])
	k := int(off) + w
	return string(t.arena[k : k+int(n)])
}

// put stores pos for id, replacing the position of an id already held.
func (t *idTable) put(id string, pos int) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	h := maphash.String(t.seed, id)
	i, ok := t.find(id, h)
	if ok {
		t.slots[i].meta = idHead(h, id) | uint64(uint32(pos))
		return
	}
	t.fill(i, id, h, pos)
}

// insert stores pos for id unless id is held already; it returns the
// position held then (true), else pos. A load stages each new id with one
// probe of the table this way, where a get and a put took two.
func (t *idTable) insert(id string, pos int) (int, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	h := maphash.String(t.seed, id)
	i, ok := t.find(id, h)
	if ok {
		return int(uint32(t.slots[i].meta)), true
	}
	t.fill(i, id, h, pos)
	return pos, false
}

// fill stores a new id (hash h) and its position in the empty slot i.
func (t *idTable) fill(i uint64, id string, h uint64, pos int) {
	s := &t.slots[i]
	t.n++
	if len(id) <= idInline {
		s.key = idWord(id)
	} else {
		s.key = uint64(len(t.arena))
		t.arena = binary.AppendUvarint(t.arena, uint64(len(id)))
		t.arena = append(t.arena, id...)
	}
	s.meta = idHead(h, id) | uint64(uint32(pos))
}

// grow doubles the slots and re-inserts every entry.
func (t *idTable) grow() {
	old := t.slots
	t.slots = make([]idSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	var buf [idInline]byte
	for _, s := range old {
		if s.meta == 0 {
			continue
		}
		var h uint64
		if n := int(s.meta >> 32 & 0xff); n <= idInline {
			binary.LittleEndian.PutUint64(buf[:], s.key)
			h = maphash.Bytes(t.seed, buf[:n])
		} else {
			h = maphash.String(t.seed, t.arenaKey(s.key))
		}
		i := h & mask
		for t.slots[i].meta != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// idSlotRef names the slot where a lookup of id in t starts (h is id's
// hash); rec, if set, is told whether id is there (EdgeRecord.toStaged).
type idSlotRef struct {
	t   *idTable
	h   uint64
	id  string
	rec *EdgeRecord
}

// slotRef appends the slot where a lookup of id starts to refs (t may be
// nil: nothing is appended). Reading the slots of many refs in a row, with
// nothing else between the reads, lets their cache misses overlap instead
// of coming one after another (loadStream.ahead).
func (t *idTable) slotRef(refs []idSlotRef, id string, rec *EdgeRecord) []idSlotRef {
	if t == nil {
		return refs
	}
	return append(refs, idSlotRef{t: t, h: maphash.String(t.seed, id), id: id, rec: rec})
}

// meta reads the slot where r's lookup starts.
func (r *idSlotRef) meta() uint64 { return r.t.slots[r.h&uint64(len(r.t.slots)-1)].meta }

// has is get(r.id)'s verdict, with the hash already taken.
func (r *idSlotRef) has() bool {
	_, ok := r.t.find(r.id, r.h)
	return ok
}
