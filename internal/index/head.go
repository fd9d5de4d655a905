package index

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// The fixed head every full-text and vector index object starts with
// (docs/format/table.md): magic, version, and for version 2 a checksummed
// header. Version-1 objects are read whole; version-2 ones by range.

// isV1 reports whether b starts an index object of format version 1 under
// magic: one encoded whole, from before ranged reads existed.
func isV1(b []byte, magic string) bool {
	return len(b) >= 8 && string(b[:4]) == magic && b[4] == 1
}

// readFront reads the first n bytes of index object key for a ranged
// open. A version-1 object has no front to read by range: readFront then
// reads it whole (a second read when it is larger than n) and returns it
// decoded by decodeV1 as whole, with no front.
func readFront[X any](ctx context.Context, st storage.Store, key string, n int, magic string,
	decodeV1 func(key string, b []byte) (*X, error)) (front []byte, whole *X, err error) {
	b, err := st.GetRange(ctx, key, 0, int64(n))
	if err != nil {
		return nil, nil, fmt.Errorf("index: read %s: %w", key, err)
	}
	if !isV1(b, magic) {
		return b, nil, nil
	}
	if len(b) == n {
		if b, _, err = st.Get(ctx, key); err != nil {
			return nil, nil, fmt.Errorf("index: read %s: %w", key, err)
		}
	}
	whole, err = decodeV1(key, b)
	return nil, whole, err
}

// checkHead checks the fixed head of a version-2 index object of kind
// ("full-text index", "vector index"): its magic, its version, its length
// (head bytes, the last four a checksum of the rest) and that checksum.
func checkHead(key string, b []byte, kind, magic string, version, head int) error {
	if len(b) < 8 || string(b[:4]) != magic {
		return &table.CorruptError{Key: key, Offset: 0, Reason: "bad " + kind + " magic"}
	}
	if int(b[4]) != version {
		return &table.VersionError{Key: key, Kind: kind, Got: int(b[4]), Want: version}
	}
	if len(b) < head {
		return &table.CorruptError{Key: key, Offset: 0, Reason: "truncated " + kind + " header"}
	}
	if crc(b[:head-4]) != binary.LittleEndian.Uint32(b[head-4:]) {
		return &table.CorruptError{Key: key, Offset: int64(head - 4), Reason: kind + " header checksum mismatch"}
	}
	return nil
}
