package index

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// FuzzDecodeKey: a key index decodes or fails with a *table.CorruptError (or
// *table.VersionError) naming the key, never a panic; a decoded index
// re-encodes to one with the same lookups. Inputs are also tried with their
// CRC fixed up, so mutations reach the body.
func FuzzDecodeKey(f *testing.F) {
	seed, _ := EncodeKey([]FragmentIDs{{Key: "t/data/a.parquet", IDs: []string{"b", "a", "c"}}, {Key: "t/data/b.parquet", IDs: []string{"a"}, Offsets: []int64{7}}})
	f.Add(seed)
	const key = "t/index/x.idx"
	f.Fuzz(func(t *testing.T, data []byte) {
		fixed := append([]byte(nil), data...)
		if len(fixed) >= 4 {
			binary.LittleEndian.PutUint32(fixed[len(fixed)-4:], crc32.Checksum(fixed[:len(fixed)-4], castagnoli))
		}
		for _, in := range [][]byte{data, fixed} {
			k, err := DecodeKey(key, in)
			if err != nil {
				var ce *table.CorruptError
				var ve *table.VersionError
				if !(errors.As(err, &ce) && ce.Key == key) && !(errors.As(err, &ve) && ve.Key == key) {
					t.Fatalf("error %v does not name %s", err, key)
				}
				continue
			}
			frags := make([]FragmentIDs, len(k.frags))
			for i, fk := range k.frags {
				frags[i] = FragmentIDs{Key: fk, IDs: []string{}, Offsets: []int64{}}
			}
			for i, id := range k.ids {
				fi := k.frag[i]
				frags[fi].IDs = append(frags[fi].IDs, id)
				frags[fi].Offsets = append(frags[fi].Offsets, k.offsets[i])
			}
			enc, err := EncodeKey(frags)
			if err != nil {
				t.Fatalf("decoded index does not encode: %v", err)
			}
			k2, err := DecodeKey(key, enc)
			if err != nil || k2.Len() != k.Len() {
				t.Fatalf("round trip: %v (%d vs %d entries)", err, k2.Len(), k.Len())
			}
			for _, id := range k.ids {
				if len(k.Lookup(id)) != len(k2.Lookup(id)) {
					t.Fatalf("lookup %q changed", id)
				}
			}
		}
	})
}
