package storage

import (
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key accepted, in bytes (S3's limit).
const MaxKeyLen = 1024

// Reserved name prefixes: the local backend's temp and lock files. No key
// segment may start with them, so they can never collide with an object and
// List can skip them by name.
const (
	TempPrefix = ".tmp-"
	LockPrefix = ".lock"
)

// ValidateKey reports whether key is a legal object key. It returns an error
// wrapping ErrInvalidKey if the key is empty, too long, not UTF-8, contains NUL,
// starts or ends with "/", has an empty, "." or ".." segment, or has a segment
// starting with a reserved prefix (TempPrefix, LockPrefix).
//
// INVARIANT: every backend rejects exactly these keys (storagetest "InvalidKeys").
func ValidateKey(key string) error {
	if reason := keyProblem(key); reason != "" {
		return invalidKeyError(reason)
	}
	return nil
}

// checkKey is ValidateKey wrapped as an *Error so errors.Is(err, ErrInvalidKey) holds.
func checkKey(op Op, key string) error {
	if reason := keyProblem(key); reason != "" {
		return &Error{Op: op, Key: key, Err: invalidKeyError(reason)}
	}
	return nil
}

type invalidKeyError string

func (e invalidKeyError) Error() string        { return string(e) + " (invalid object key)" }
func (e invalidKeyError) Is(target error) bool { return target == ErrInvalidKey }

func keyProblem(key string) string {
	switch {
	case key == "":
		return "empty key"
	case len(key) > MaxKeyLen:
		return "key longer than 1024 bytes"
	case !utf8.ValidString(key):
		return "key is not UTF-8"
	case strings.IndexByte(key, 0) >= 0:
		return "key contains NUL"
	case strings.HasPrefix(key, "/"):
		return "absolute key"
	case strings.HasSuffix(key, "/"):
		return "key ends with /"
	}
	for seg := range strings.SplitSeq(key, "/") {
		if p := segmentProblem(seg); p != "" {
			return p
		}
	}
	return ""
}

func segmentProblem(seg string) string {
	switch {
	case seg == "":
		return "empty key segment"
	case seg == "." || seg == "..":
		return "dot segment"
	case strings.HasPrefix(seg, TempPrefix) || strings.HasPrefix(seg, LockPrefix):
		return "reserved key segment"
	}
	return ""
}

// ValidatePrefix reports whether prefix is a legal List prefix (see
// checkPrefix); backends outside this package use it so every backend
// rejects exactly the same prefixes.
func ValidatePrefix(prefix string) error { return checkPrefix(prefix) }

// checkPrefix validates a List prefix: "" or a string whose complete segments
// (everything up to the last "/") form a valid key; the trailing partial
// segment may be anything without NUL.
func checkPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	bad := func(reason string) error {
		return &Error{Op: OpList, Key: prefix, Err: invalidKeyError("prefix: " + reason)}
	}
	if !utf8.ValidString(prefix) || strings.IndexByte(prefix, 0) >= 0 || len(prefix) > MaxKeyLen {
		return bad("not a UTF-8 string of at most 1024 bytes without NUL")
	}
	if strings.HasPrefix(prefix, "/") {
		return bad("absolute")
	}
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if p := keyProblem(prefix[:i]); p != "" {
			return bad(p)
		}
	}
	return nil
}
