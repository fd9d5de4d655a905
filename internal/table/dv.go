package table

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"path"
	"slices"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Deletion-vector object layout (all integers little-endian; see
// docs/format/table.md):
//
//	off  size  field
//	0    4     magic "OGDV"
//	4    1     version (1)
//	5    1     encoding: 1 = delta-uvarint, 2 = bitmap
//	6    2     reserved, zero
//	8    8     fragment row count
//	16   8     deleted row count
//	24   2     length L of the fragment id
//	26   L     fragment id (the fragment file's base name without ".parquet")
//	26+L ...   payload
//	end-4 4    CRC-32C (Castagnoli) of every preceding byte
const (
	dvMagic      = "OGDV"
	dvVersion    = 1
	dvHeaderSize = 26
	dvEncDelta   = 1
	dvEncBitmap  = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DeletionVector is the decoded form of a deletion-vector object: the sorted,
// distinct row offsets hidden from one fragment.
type DeletionVector struct {
	Fragment string  // fragment id the vector belongs to
	Rows     int64   // row count of that fragment
	Offsets  []int64 // sorted, distinct, each in [0, Rows)
}

// fragmentID is the base name of a fragment key without its extension; a
// deletion vector records it so that a vector paired with the wrong fragment
// is detected as corruption rather than silently hiding the wrong rows.
func fragmentID(key string) string {
	return strings.TrimSuffix(path.Base(key), ".parquet")
}

// encodeDV serialises a deletion vector, choosing whichever payload encoding
// is smaller: delta-uvarint for sparse deletions, a bitmap for dense ones.
// Offsets must be sorted, distinct and in range (callers guarantee it).
func encodeDV(dv DeletionVector) []byte {
	var delta []byte
	prev := int64(-1)
	for _, o := range dv.Offsets {
		// Gaps minus one: consecutive deletions encode as single zero bytes.
		delta = binary.AppendUvarint(delta, uint64(o-prev-1))
		prev = o
	}
	bitmapLen := (dv.Rows + 7) / 8
	enc, payload := byte(dvEncDelta), delta
	if bitmapLen < int64(len(delta)) {
		bm := make([]byte, bitmapLen)
		for _, o := range dv.Offsets {
			bm[o/8] |= 1 << (o % 8)
		}
		enc, payload = dvEncBitmap, bm
	}
	out := make([]byte, 0, dvHeaderSize+len(dv.Fragment)+len(payload)+4)
	out = append(out, dvMagic...)
	out = append(out, dvVersion, enc, 0, 0)
	out = binary.LittleEndian.AppendUint64(out, uint64(dv.Rows))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(dv.Offsets)))
	out = binary.LittleEndian.AppendUint16(out, uint16(len(dv.Fragment)))
	out = append(out, dv.Fragment...)
	out = append(out, payload...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// decodeDV parses and fully validates a deletion-vector object. Every failure
// is a *CorruptError (or *VersionError) naming key.
func decodeDV(key string, b []byte) (DeletionVector, error) {
	if len(b) < dvHeaderSize+4 {
		return DeletionVector{}, corrupt(key, int64(len(b)), "deletion vector truncated", nil)
	}
	if string(b[:4]) != dvMagic {
		return DeletionVector{}, corrupt(key, 0, "bad deletion vector magic", nil)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return DeletionVector{}, corrupt(key, int64(len(body)), "deletion vector checksum mismatch", nil)
	}
	if b[4] != dvVersion {
		return DeletionVector{}, &VersionError{Key: key, Kind: "deletion vector", Got: int(b[4]), Want: dvVersion}
	}
	enc := b[5]
	rows := int64(binary.LittleEndian.Uint64(b[8:]))
	count := binary.LittleEndian.Uint64(b[16:])
	idLen := int(binary.LittleEndian.Uint16(b[24:]))
	if rows < 0 || count > uint64(rows) {
		return DeletionVector{}, corrupt(key, 8, fmt.Sprintf("deleted count %d exceeds row count %d", count, rows), nil)
	}
	if dvHeaderSize+idLen > len(body) {
		return DeletionVector{}, corrupt(key, 24, "fragment id overruns object", nil)
	}
	dv := DeletionVector{Fragment: string(body[dvHeaderSize : dvHeaderSize+idLen]), Rows: rows}
	payload := body[dvHeaderSize+idLen:]
	base := int64(dvHeaderSize + idLen)
	switch enc {
	case dvEncDelta:
		dv.Offsets = make([]int64, 0, min(count, uint64(len(payload))))
		prev := int64(-1)
		pos := 0
		for range count {
			gap, n := binary.Uvarint(payload[pos:])
			if n <= 0 {
				return DeletionVector{}, corrupt(key, base+int64(pos), "bad delta varint", nil)
			}
			pos += n
			if gap >= uint64(rows) || prev+1+int64(gap) >= rows {
				return DeletionVector{}, corrupt(key, base+int64(pos), "row offset out of range", nil)
			}
			prev += 1 + int64(gap)
			dv.Offsets = append(dv.Offsets, prev)
		}
		if pos != len(payload) {
			return DeletionVector{}, corrupt(key, base+int64(pos), "trailing bytes after offsets", nil)
		}
	case dvEncBitmap:
		if int64(len(payload)) != (rows+7)/8 {
			return DeletionVector{}, corrupt(key, base, "bitmap length does not match row count", nil)
		}
		dv.Offsets = make([]int64, 0, count)
		for i, by := range payload {
			for by != 0 {
				bit := bits.TrailingZeros8(by)
				by &= by - 1
				o := int64(i)*8 + int64(bit)
				if o >= rows {
					return DeletionVector{}, corrupt(key, base+int64(i), "bit set past row count", nil)
				}
				dv.Offsets = append(dv.Offsets, o)
			}
		}
		if uint64(len(dv.Offsets)) != count {
			return DeletionVector{}, corrupt(key, base, "bitmap population differs from deleted count", nil)
		}
	default:
		return DeletionVector{}, corrupt(key, 5, fmt.Sprintf("unknown deletion vector encoding %d", enc), nil)
	}
	return dv, nil
}

// InlineDVPrefix starts a deletion-vector reference that carries the
// vector itself instead of naming an object (table-state format 4,
// docs/format/table.md): "inline:" + a fresh ULID + ":" + the vector's
// bytes (the object layout above, CRC included) in unpadded base64url. The
// ULID makes every written reference unique, like a vector object's name,
// so a state holding one is the write's own (storage.Ledger.AddName).
const InlineDVPrefix = "inline:"

// DefaultInlineDVBytes is the largest encoded vector the engine carries
// inline (DeleteOptions.InlineBytes): a few dozen deleted rows, or a
// bitmap over ~1,600 rows. Larger ones are objects.
const DefaultInlineDVBytes = 256

// IsInlineDV reports whether a fragment's deletion-vector reference is an
// inline vector rather than an object key. Code that treats references as
// objects (cleanup's live set, listings) has no object for it.
func IsInlineDV(ref string) bool { return strings.HasPrefix(ref, InlineDVPrefix) }

// inlineDVRef is the reference carrying enc inline.
func inlineDVRef(enc []byte) string {
	return InlineDVPrefix + ulid.Make().String() + ":" + base64.RawURLEncoding.EncodeToString(enc)
}

// inlineDVBytes returns the vector bytes an inline reference carries.
func inlineDVBytes(ref string) ([]byte, error) {
	rest := strings.TrimPrefix(ref, InlineDVPrefix)
	name, b64, ok := strings.Cut(rest, ":")
	if !ok {
		return nil, corrupt(ref, -1, "inline deletion vector without a name", nil)
	}
	if _, err := ulid.ParseStrict(name); err != nil {
		return nil, corrupt(ref, -1, "inline deletion vector name is not a ULID", err)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil {
		return nil, corrupt(ref, -1, "inline deletion vector is not base64url", err)
	}
	return b, nil
}

// ReadDeletionVector fetches and validates the deletion vector at key (an
// inline reference is decoded without a request).
func ReadDeletionVector(ctx context.Context, st storage.Store, key string) (DeletionVector, error) {
	if IsInlineDV(key) {
		b, err := inlineDVBytes(key)
		if err != nil {
			return DeletionVector{}, err
		}
		return decodeDV(key, b)
	}
	b, _, err := st.Get(ctx, key)
	if err != nil {
		return DeletionVector{}, fmt.Errorf("table: read deletion vector %s: %w", key, err)
	}
	return decodeDV(key, b)
}

// LoadDeletionVector reads the deletion vector of f and checks it belongs
// to f; a mismatch is a *CorruptError naming the vector.
func LoadDeletionVector(ctx context.Context, st storage.Store, f Fragment) (DeletionVector, error) {
	return loadDV(ctx, st, f)
}

// loadDV reads the deletion vector of f and checks it belongs to f.
func loadDV(ctx context.Context, st storage.Store, f Fragment) (DeletionVector, error) {
	dv, err := ReadDeletionVector(ctx, st, f.DV)
	if err != nil {
		return DeletionVector{}, err
	}
	if dv.Fragment != fragmentID(f.Key) || dv.Rows != f.Rows || int64(len(dv.Offsets)) != f.Deleted {
		return DeletionVector{}, corrupt(f.DV, -1, fmt.Sprintf(
			"deletion vector (fragment %s, %d rows, %d deleted) does not match state (fragment %s, %d rows, %d deleted)",
			dv.Fragment, dv.Rows, len(dv.Offsets), fragmentID(f.Key), f.Rows, f.Deleted), nil)
	}
	return dv, nil
}

// mergeOffsets returns the sorted union of two sorted, distinct offset lists.
func mergeOffsets(a, b []int64) []int64 {
	out := make([]int64, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// rowBitmap is a dense set of row offsets of one fragment.
type rowBitmap []uint64

func newRowBitmap(rows int64, offsets []int64) rowBitmap {
	bm := make(rowBitmap, (rows+63)/64)
	for _, o := range offsets {
		bm[o/64] |= 1 << (o % 64)
	}
	return bm
}

func (bm rowBitmap) has(o int64) bool { return bm[o/64]&(1<<(o%64)) != 0 }

func crc32Castagnoli(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
