package commit

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

// Fuzz targets of the commit-layer decoders (issue 17 item 6). Every input
// either decodes or fails with a *CorruptError naming the key, never a
// panic; what decodes re-encodes to bytes that decode to the same values.
// The checksum would stop almost every mutation at the first check, so each
// input is also tried with its "sum" field cut out (the pre-checksum
// encoding), which reaches every structural check.

func withoutSum(data []byte) []byte {
	i := bytes.Index(data, []byte(`,"sum":"`))
	if i < 0 {
		return nil
	}
	j := bytes.IndexByte(data[i+8:], '"')
	if j < 0 {
		return nil
	}
	return append(append([]byte(nil), data[:i]...), data[i+8+j+1:]...)
}

func FuzzDecodeCommit(f *testing.F) {
	f.Add([]byte(goldenCommit))
	f.Add([]byte(goldenLegacyCommit))
	genesis, _ := Encode(&Commit{ID: mustIDF(idC), CreatedAt: 5, Kind: KindInit, Branch: "main", Schema: "schemas/x.pg",
		Tables: map[string]string{"node:P": "tables/node-P/state/a.json"}})
	f.Add(genesis)
	key := CommitKey(mustIDF(idC))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, withoutSum(data)} {
			if in == nil {
				continue
			}
			c, err := Decode(key, in)
			if err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Key != key {
					t.Fatalf("error %v is not a CorruptError naming %s", err, key)
				}
				continue
			}
			enc, err := Encode(c)
			if err != nil {
				t.Fatalf("decoded commit does not encode: %v", err)
			}
			d, err := Decode(key, enc)
			if err != nil {
				t.Fatalf("re-encoded commit does not decode: %v\n%s", err, enc)
			}
			d.summed = c.summed
			if !reflect.DeepEqual(c, d) {
				t.Fatalf("round trip changed the commit:\n%+v\n%+v", c, d)
			}
		}
	})
}

func FuzzDecodeRef(f *testing.F) {
	f.Add(encodeRef(mustIDF(idA), 1))
	f.Add(encodeRef(mustIDF(idB), 1<<40))
	f.Add([]byte(`{"commit":"` + idA + `","seq":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, withoutSum(data)} {
			if in == nil {
				continue
			}
			h, _, err := decodeRef("b", in, "e")
			if err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Key != RefKey("b") {
					t.Fatalf("error %v is not a CorruptError naming the ref", err)
				}
				continue
			}
			h2, summed, err := decodeRef("b", encodeRef(h.Commit, h.Seq), "e")
			if err != nil || !summed || h2 != h {
				t.Fatalf("round trip: %+v → %+v, %v", h, h2, err)
			}
		}
	})
}

func FuzzDecodeStamp(f *testing.F) {
	f.Add(encodeStamp(time.UnixMicro(1767323045001000)))
	f.Add([]byte(`{"format":"omnigraph","version":1,"created_at":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, withoutSum(data)} {
			if in == nil {
				continue
			}
			if _, err := decodeStamp(in); err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Key != StampKey {
					t.Fatalf("error %v is not a CorruptError naming the stamp", err)
				}
			}
		}
	})
}

func mustIDF(s string) ID {
	id, err := ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}
