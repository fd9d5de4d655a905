package table

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fidxStableRecord is a deterministic edge record shaped like a bulk
// load's (increasing ids, sources in runs, random destinations), plus a
// few keys that share long prefixes and an empty one.
func fidxStableRecord(n int) (Schema, arrow.RecordBatch) {
	schema := edgeKeySchema()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema())
	defer rb.Release()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		id := fmt.Sprintf("01JQZX%020d", i*7+rng.IntN(7))
		src := fmt.Sprintf("p%d", 100000+i/5)
		dst := fmt.Sprintf("p%d", rng.IntN(1_000_000))
		switch i % 997 {
		case 3:
			dst = ""
		case 5:
			src = "a-very-long-shared-prefix-" + src
		}
		rb.Field(0).(*array.StringBuilder).Append(id)
		rb.Field(1).(*array.StringBuilder).Append(src)
		rb.Field(2).(*array.StringBuilder).Append(dst)
	}
	return schema, rb.NewRecordBatch()
}

// TestFragmentIndexBytesStable pins the exact bytes the fragment index
// encoder writes (a SHA-256 of the objects of two deterministic records):
// encoder changes meant to be faster must not change the format. (An
// upgrade of the zstd library may change the compressed bytes without
// changing the format: then check old objects still read and re-pin.)
//
// Version 2 (256-entry blocks, what graphs written before version 3
// hold) is pinned too, by the hashes the encoder had before version 3:
// the version-2 objects TestFragmentIndexMatchesScan reads back are
// byte for byte those older graphs hold.
func TestFragmentIndexBytesStable(t *testing.T) {
	defer func(v byte) { fidxWriteVersion = v }(fidxWriteVersion)
	for _, tc := range []struct {
		version byte
		rows    int
		want    string
	}{
		{3, 1 << 16, "ca2ebda8212948ca0c5962602247bea4e5f4a741a4a97ac6dd2bffb708ce0287"},
		{3, 1000, "15f4f190497f8470791b81a3685f150a66b1c93ef13108a759a3bafcbc28c547"},
		{2, 1 << 16, "1bfb7f15ba4b63e422d3836cae7c3461eb8cd8a2caa944e4f4fd7ac064dfda69"},
		{2, 1000, "0ea9a788c3c196b237ae763f02c5253eea01ce18089b9d6acdc407ae8d1e5670"},
	} {
		fidxWriteVersion = tc.version
		schema, rec := fidxStableRecord(tc.rows)
		sum := sha256.Sum256(encodeFragmentIndex(schema, rec))
		rec.Release()
		if got := hex.EncodeToString(sum[:]); got != tc.want {
			t.Errorf("version %d, %d rows: index object hash %s, want %s", tc.version, tc.rows, got, tc.want)
		}
	}
}

// TestFragmentIndexVersionBlockRows pins what the version byte promises
// about block sizes: a version-3 object decodes blocks of up to 1,024
// entries; the same bytes labelled version 2 (blocks of at most 256) are
// corruption, not a silent read; a version this build does not know is
// refused with ErrUnsupportedVersion.
func TestFragmentIndexVersionBlockRows(t *testing.T) {
	schema, rec := fidxStableRecord(3000)
	defer rec.Release()
	good := encodeFragmentIndex(schema, rec)
	relabel := func(v byte) []byte {
		b := slices.Clone(good)
		b[4] = v
		headLen := fidxHeadFix + fidxSecBytes*int(b[5])
		binary.LittleEndian.PutUint32(b[headLen-4:], crc32Castagnoli(b[:headLen-4]))
		return b
	}
	firstBlock := func(b []byte) ([]fidxEntry, error) {
		h, err := decodeFidxHeader("x", b, int64(len(b)))
		if err != nil {
			return nil, err
		}
		s := &h.sections[0]
		d, err := decodeFidxDir("x", s.dirOff, b[s.dirOff:s.dirOff+s.dirLen], int64(len(b)))
		if err != nil {
			return nil, err
		}
		return decodeFidxBlock("x", d.off[0], b[d.off[0]:d.off[0]+d.len[0]], s, h.rows)
	}
	ents, err := firstBlock(good)
	if err != nil || len(ents) != fidxBlockRows {
		t.Fatalf("version 3: first block %d entries, %v; want %d", len(ents), err, fidxBlockRows)
	}
	if _, err := firstBlock(relabel(2)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("1,024-entry block labelled version 2: err = %v, want ErrCorrupt", err)
	}
	if _, err := firstBlock(relabel(fidxVersion + 1)); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("version %d: err = %v, want ErrUnsupportedVersion", fidxVersion+1, err)
	}
}
