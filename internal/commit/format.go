package commit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// StampKey is the format stamp at the graph root.
const StampKey = "_omnigraph.json"

// stampFormatName is the fixed "format" field that marks our stamp.
const stampFormatName = "omnigraph"

// Format versions are a ratchet: every layout change takes the next number,
// and a retired number stays here as a comment so it is never reused.
const (
	// FormatV1: stamp + refs/heads + commits/<ulid>.json + schemas/<sha256>.pg
	// + tables/<table>/state/<sha256>.json (docs/format/commit.md).
	FormatV1 = 1

	// FormatCurrent is the one version this build reads and writes.
	FormatCurrent = FormatV1
)

// Stamp is the decoded format stamp.
type Stamp struct {
	Format    string `json:"format"`
	Version   int    `json:"version"`
	CreatedAt int64  `json:"created_at"` // unix microseconds
	// Sum is the SHA-256 of the canonical encoding without Sum (checksum.go).
	// A stamp with a sum marks a graph whose every commit and ref carries one.
	Sum string `json:"sum,omitempty"`
}

func encodeStamp(createdAt time.Time) []byte {
	s := Stamp{Format: stampFormatName, Version: FormatCurrent, CreatedAt: createdAt.UnixMicro()}
	s.Sum, _ = sealed(s)
	b, _ := json.Marshal(s)
	return append(b, '\n')
}

func decodeStamp(data []byte) (Stamp, error) {
	var s Stamp
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Stamp{}, corrupt(StampKey, "%v", err)
	}
	if dec.More() {
		return Stamp{}, corrupt(StampKey, "trailing data")
	}
	if s.Sum != "" {
		c := s
		c.Sum = ""
		if got, err := sealed(c); err != nil || got != s.Sum || !validSum(s.Sum) {
			return Stamp{}, corrupt(StampKey, "checksum mismatch: the stamp was modified after it was written")
		}
	}
	if s.Format != stampFormatName {
		return Stamp{}, corrupt(StampKey, "format is %q, want %q", s.Format, stampFormatName)
	}
	if s.Version < 0 {
		return Stamp{}, corrupt(StampKey, "negative version %d", s.Version)
	}
	return s, nil
}

// checkStamp reads the stamp (1 GET, never a write) and refuses any version
// but FormatCurrent. It returns ErrNotInitialized if there is no stamp.
//
// INVARIANT: no write request precedes or follows a refused stamp
// (TestOpenRefusesOtherFormats).
func checkStamp(ctx context.Context, st storage.Store) (Stamp, error) {
	data, _, err := st.Get(ctx, StampKey)
	if errors.Is(err, storage.ErrNotFound) {
		return Stamp{}, fmt.Errorf("%w: no %s", ErrNotInitialized, StampKey)
	}
	if err != nil {
		return Stamp{}, fmt.Errorf("read format stamp: %w", err)
	}
	s, err := decodeStamp(data)
	if err != nil {
		return Stamp{}, err
	}
	if s.Version != FormatCurrent {
		return Stamp{}, &FormatError{Key: StampKey, Found: s.Version, Supported: FormatCurrent}
	}
	return s, nil
}
