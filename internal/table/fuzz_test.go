package table

import (
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"testing"
)

// Fuzz targets of the table-layer decoders (issue 17 item 6): table states
// and deletion vectors. Every input decodes or fails with a *CorruptError
// (or *VersionError) naming the key, never a panic; what decodes re-encodes
// to an object that decodes to the same value.

func FuzzDecodeState(f *testing.F) {
	if b, err := os.ReadFile("testdata/state_v1.json"); err == nil {
		f.Add(b)
	}
	empty, _ := NewState(Schema{Columns: []Column{{Name: KeyColumn, Type: ColumnType{Kind: String}}}})
	if b, err := empty.Encode(); err == nil {
		f.Add(b)
	}
	// The content address would reject every mutation at once, so the key
	// used here is not of the state naming form: the structural checks run.
	const key = "fuzz/state.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeState(key, data)
		if err != nil {
			if !namesObject(err, key) {
				t.Fatalf("error %v does not name %s", err, key)
			}
			return
		}
		enc, err := s.Encode()
		if err != nil {
			t.Fatalf("decoded state does not encode: %v", err)
		}
		s2, err := DecodeState(StateKey("tables/node-X", enc), enc)
		if err != nil {
			t.Fatalf("re-encoded state does not decode: %v\n%s", err, enc)
		}
		enc2, _ := s2.Encode()
		if string(enc2) != string(enc) {
			t.Fatalf("encoding not stable:\n%s\n%s", enc, enc2)
		}
	})
}

func FuzzDecodeDV(f *testing.F) {
	f.Add(encodeDV(DeletionVector{Fragment: "F1", Rows: 20, Offsets: []int64{2, 3, 9}}))
	f.Add(encodeDV(DeletionVector{Fragment: "01JGQ5Z8M0AAAAAAAAAAAAAAAA", Rows: 100, Offsets: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 50, 99}}))
	const key = "tables/t/dv/x.dv"
	f.Fuzz(func(t *testing.T, data []byte) {
		// Also with the checksum fixed up, so mutations reach the body.
		fixed := append([]byte(nil), data...)
		if len(fixed) >= 4 {
			binary.LittleEndian.PutUint32(fixed[len(fixed)-4:], crc32Castagnoli(fixed[:len(fixed)-4]))
		}
		for _, in := range [][]byte{data, fixed} {
			dv, err := decodeDV(key, in)
			if err != nil {
				if !namesObject(err, key) {
					t.Fatalf("error %v does not name %s", err, key)
				}
				continue
			}
			back, err := decodeDV(key, encodeDV(dv))
			if err != nil || !reflect.DeepEqual(back, dv) && !(len(back.Offsets) == 0 && len(dv.Offsets) == 0) {
				t.Fatalf("round trip %+v → %+v, %v", dv, back, err)
			}
		}
	})
}

// namesObject reports whether err is a *CorruptError or *VersionError
// naming the object key: a decoder's refusal must say which object broke.
func namesObject(err error, key string) bool {
	var ce *CorruptError
	var ve *VersionError
	return (errors.As(err, &ce) && ce.Key == key) || (errors.As(err, &ve) && ve.Key == key)
}
