package commit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Checksums of the mutable and ULID-named metadata objects (docs/format/commit.md
// §0). Schema sources and table states are content-addressed (their name is
// the SHA-256 of their bytes), so they need no field of their own; the
// stamp, refs and commits are named by something else, so each carries a
// "sum": the lowercase hex SHA-256 of the object's canonical JSON encoding
// with the sum field left out.
//
// The sum is checked over the canonical re-encoding of the decoded fields,
// not over the stored bytes, so it protects exactly what a reader uses: a
// change that decodes to different values fails the check, and a change
// that still decodes to the same values (none exists for the canonical
// encodings this package writes, but the argument does not depend on it)
// changes nothing a reader can see.
//
// Objects written before checksums existed have no sum. They are accepted,
// verified structurally only, on graphs whose stamp itself has no sum (graphs
// created before checksums). On a graph whose stamp carries a sum, every
// commit and ref must carry one too: a missing sum there is corruption.

// sumOf returns the checksum of canonical bytes.
func sumOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// sealed marshals v (whose sum field must be empty, so omitted) and returns
// the sum of the bytes, for the caller to store and marshal again.
func sealed(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return sumOf(b), nil
}

// validSum reports whether s has the shape of a sum (64 lowercase hex digits).
func validSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
