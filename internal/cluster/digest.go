package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// digest is the content address of a payload: lowercase hex SHA-256.
func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// digestJSON is the digest of v's canonical JSON (encoding/json sorts map
// keys, so equal values give equal digests).
func digestJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("cluster: digest of unencodable value: " + err.Error())
	}
	return digest(b)
}
