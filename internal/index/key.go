package index

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// KindKey is the IndexRef.Kind of a key index.
const KindKey = "key"

// KeyIndexName is the IndexRef.Name of key indexes built by this package.
const KeyIndexName = "id"

const (
	keyMagic   = "OGKI"
	keyVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FragmentIDs is the input of a key index for one fragment: the ids of its
// rows and their offsets in the fragment (Offsets nil = 0, 1, 2, …).
type FragmentIDs struct {
	Key     string
	IDs     []string
	Offsets []int64
}

// Loc is one indexed row: a fragment key and the row's offset in it.
type Loc struct {
	Fragment string
	Offset   int64
}

// KeyIndex is a decoded key index: entries sorted by id.
type KeyIndex struct {
	frags   []string
	ids     []string
	frag    []uint32
	offsets []int64
}

// Fragments lists the fragments the index covers.
func (k *KeyIndex) Fragments() []string { return slices.Clone(k.frags) }

// Len is the number of entries.
func (k *KeyIndex) Len() int { return len(k.ids) }

// Lookup returns every indexed location of id (normally at most one per
// covered fragment; an id may appear in several fragments when older copies
// are hidden by deletion vectors).
func (k *KeyIndex) Lookup(id string) []Loc {
	i := sort.SearchStrings(k.ids, id)
	var out []Loc
	for ; i < len(k.ids) && k.ids[i] == id; i++ {
		out = append(out, Loc{Fragment: k.frags[k.frag[i]], Offset: k.offsets[i]})
	}
	return out
}

// EncodeKey builds the bytes of a key index over frags.
//
// Layout (integers little-endian, varints unsigned LEB128): magic "OGKI",
// version byte 1, 3 reserved zero bytes; fragment count F; F × (length, key
// bytes); entry count N; N entries sorted by (id, fragment, offset), each
// (id length, id bytes, fragment ordinal, offset); CRC-32C of everything
// before it as 4 bytes. docs/maintenance.md repeats this.
func EncodeKey(frags []FragmentIDs) ([]byte, error) {
	type ent struct {
		id   string
		frag uint32
		off  int64
	}
	var ents []ent
	for fi, f := range frags {
		if f.Offsets != nil && len(f.Offsets) != len(f.IDs) {
			return nil, fmt.Errorf("index: fragment %s: %d ids, %d offsets", f.Key, len(f.IDs), len(f.Offsets))
		}
		for i, id := range f.IDs {
			off := int64(i)
			if f.Offsets != nil {
				off = f.Offsets[i]
			}
			ents = append(ents, ent{id, uint32(fi), off})
		}
	}
	slices.SortFunc(ents, func(a, b ent) int {
		if c := cmp.Compare(a.id, b.id); c != 0 {
			return c // ids rarely repeat: decide without the other two
		}
		return cmp.Or(cmp.Compare(a.frag, b.frag), cmp.Compare(a.off, b.off))
	})
	var b bytes.Buffer
	b.WriteString(keyMagic)
	b.Write([]byte{keyVersion, 0, 0, 0})
	b.Write(binary.AppendUvarint(nil, uint64(len(frags))))
	for _, f := range frags {
		b.Write(binary.AppendUvarint(nil, uint64(len(f.Key))))
		b.WriteString(f.Key)
	}
	b.Write(binary.AppendUvarint(nil, uint64(len(ents))))
	var tmp []byte
	for _, e := range ents {
		tmp = binary.AppendUvarint(tmp[:0], uint64(len(e.id)))
		tmp = append(tmp, e.id...)
		tmp = binary.AppendUvarint(tmp, uint64(e.frag))
		tmp = binary.AppendUvarint(tmp, uint64(e.off))
		b.Write(tmp)
	}
	b.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b.Bytes(), castagnoli)))
	return b.Bytes(), nil
}

// DecodeKey parses a key index; key names the object in errors.
func DecodeKey(key string, data []byte) (*KeyIndex, error) {
	bad := func(off int, reason string) error {
		return &table.CorruptError{Key: key, Offset: int64(off), Reason: reason}
	}
	if len(data) < 12 {
		return nil, bad(0, "key index too short")
	}
	if string(data[:4]) != keyMagic {
		return nil, bad(0, "bad key index magic")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, bad(len(data)-4, "key index checksum mismatch")
	}
	if data[4] != keyVersion {
		return nil, &table.VersionError{Key: key, Kind: "key index", Got: int(data[4]), Want: keyVersion}
	}
	pos := 8
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(body[pos:])
		if n <= 0 {
			return 0, bad(pos, "malformed varint")
		}
		pos += n
		return v, nil
	}
	str := func() (string, error) {
		n, err := uv()
		if err != nil {
			return "", err
		}
		if n > uint64(len(body)-pos) {
			return "", bad(pos, "string overruns the object")
		}
		s := string(body[pos : pos+int(n)])
		pos += int(n)
		return s, nil
	}
	// count reads a count of what, which cannot exceed the object's bytes.
	count := func(what string) (uint64, error) {
		n, err := uv()
		if err != nil {
			return 0, err
		}
		if n > uint64(len(body)) {
			return 0, bad(pos, what+" count overruns the object")
		}
		return n, nil
	}
	nf, err := count("fragment")
	if err != nil {
		return nil, err
	}
	k := &KeyIndex{frags: make([]string, nf)}
	for i := range k.frags {
		if k.frags[i], err = str(); err != nil {
			return nil, err
		}
	}
	ne, err := count("entry")
	if err != nil {
		return nil, err
	}
	k.ids = make([]string, 0, ne)
	k.frag = make([]uint32, 0, ne)
	k.offsets = make([]int64, 0, ne)
	for range ne {
		id, err := str()
		if err != nil {
			return nil, err
		}
		fi, err := uv()
		if err != nil {
			return nil, err
		}
		off, err := uv()
		if err != nil {
			return nil, err
		}
		if fi >= nf {
			return nil, bad(pos, "fragment ordinal out of range")
		}
		if off > 1<<62 {
			return nil, bad(pos, "row offset out of range")
		}
		if n := len(k.ids); n > 0 && k.ids[n-1] > id {
			return nil, bad(pos, "entries not sorted")
		}
		k.ids = append(k.ids, id)
		k.frag = append(k.frag, uint32(fi))
		k.offsets = append(k.offsets, int64(off))
	}
	if pos != len(body) {
		return nil, bad(pos, "trailing bytes")
	}
	return k, nil
}

// WriteKey writes a key index over frags under <prefix>/index/ and returns
// the reference a table state carries.
func WriteKey(ctx context.Context, st storage.Store, prefix string, frags []FragmentIDs) (table.IndexRef, error) {
	data, err := EncodeKey(frags)
	if err != nil {
		return table.IndexRef{}, err
	}
	covered := make([]string, len(frags))
	for i, f := range frags {
		covered[i] = f.Key
	}
	return putObject(ctx, st, prefix, "idx", data, table.IndexRef{Name: KeyIndexName, Kind: KindKey, Columns: []string{table.KeyColumn}, Fragments: covered})
}

// ReadKey reads and decodes a key index object.
func ReadKey(ctx context.Context, st storage.Store, key string) (*KeyIndex, error) {
	return getObject(ctx, st, key, DecodeKey)
}

// FragmentIDsOf reads the id column of fragments of s (live rows only, with
// their offsets): the input of an index over fragments already written.
func FragmentIDsOf(ctx context.Context, st storage.Store, s *table.State, frags []table.Fragment) ([]FragmentIDs, error) {
	if len(frags) == 0 {
		return nil, nil
	}
	sub, err := subState(s, frags)
	if err != nil {
		return nil, err
	}
	sc, err := table.Scan(ctx, st, sub, table.ScanOptions{Columns: []string{table.KeyColumn}, RowOffsets: true})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	byKey := map[string]*FragmentIDs{}
	out := make([]FragmentIDs, len(frags))
	for i, f := range frags {
		out[i] = FragmentIDs{Key: f.Key, IDs: []string{}, Offsets: []int64{}}
		byKey[f.Key] = &out[i]
	}
	for sc.Next() {
		f := byKey[sc.Fragment()]
		if f == nil {
			return nil, fmt.Errorf("index: scan returned unknown fragment %s", sc.Fragment())
		}
		arr := sc.Record().Column(0)
		for i, off := range sc.Offsets() {
			f.IDs = append(f.IDs, table.Value(arr, i).(string))
			f.Offsets = append(f.Offsets, off)
		}
	}
	return out, sc.Err()
}

// subState is the state of s restricted to frags (in the given order).
func subState(s *table.State, frags []table.Fragment) (*table.State, error) {
	sub, err := table.NewState(s.Schema())
	if err != nil {
		return nil, err
	}
	return sub.Append(frags...)
}

// Candidates returns the fragments of s that may hold one of ids: a fragment
// covered by a key index of s is kept only if the index lists one of the
// ids; uncovered fragments are always kept (the scan's statistics pruning
// then applies). Order follows s. readIndex loads an index object (callers
// pass a cached reader; nil = ReadKey on st).
func Candidates(ctx context.Context, st storage.Store, s *table.State, ids []string, readIndex func(ctx context.Context, key string) (*KeyIndex, error)) ([]table.Fragment, error) {
	if readIndex == nil {
		readIndex = func(ctx context.Context, key string) (*KeyIndex, error) { return ReadKey(ctx, st, key) }
	}
	frags := s.Fragments()
	live := make(map[string]bool, len(frags))
	for _, f := range frags {
		live[f.Key] = true
	}
	covered := map[string]bool{}
	hit := map[string]bool{}
	for _, ref := range s.Indexes() {
		if ref.Kind != KindKey {
			continue
		}
		ki, err := readIndex(ctx, ref.Key)
		if err != nil {
			return nil, err
		}
		for _, fk := range ref.Fragments {
			covered[fk] = true
		}
		for _, id := range ids {
			for _, l := range ki.Lookup(id) {
				hit[l.Fragment] = true
			}
		}
	}
	var out []table.Fragment
	for _, f := range frags {
		if !covered[f.Key] || hit[f.Key] {
			out = append(out, f)
		}
	}
	return out, nil
}

// LookupIDs is table.LookupIDs narrowed by the state's key indexes: it
// returns the live rows whose id is one of ids, reading only fragments an
// index (or, for unindexed fragments, the statistics) says may hold them.
func LookupIDs(ctx context.Context, st storage.Store, s *table.State, ids []string, columns []string, mem memory.Allocator) (arrow.RecordBatch, error) {
	frags, err := Candidates(ctx, st, s, ids, nil)
	if err != nil {
		return nil, err
	}
	sub, err := subState(s, frags)
	if err != nil {
		return nil, err
	}
	return table.LookupIDs(ctx, st, sub, ids, columns, mem)
}
