package table

import (
	"errors"
	"fmt"
)

// Sentinel errors. Functions wrap them with context; callers test with errors.Is.
var (
	// ErrCorrupt: a stored object (fragment, deletion vector, table state,
	// index; commit.ErrCorrupt is this one too: commits, refs, schemas)
	// failed validation. The error is a *CorruptError naming the key.
	ErrCorrupt = errors.New("corrupt object")
	// ErrUnsupportedVersion: a stored object carries a format version this
	// build does not read. The error is always a *VersionError.
	ErrUnsupportedVersion = errors.New("unsupported table format version")
	// ErrSchema: a schema is invalid, or a record does not match the schema.
	ErrSchema = errors.New("table schema mismatch")
	// ErrValue: a Go value cannot be stored in a column (wrong type, null in a
	// non-nullable column, wrong vector length, out of range).
	ErrValue = errors.New("invalid column value")
	// ErrFilter: a scan filter names an unknown column, uses an operator the
	// column's type does not support, or has a literal of the wrong type.
	ErrFilter = errors.New("invalid scan filter")
	// ErrUnknownFragment: an operation names a fragment the state does not hold.
	ErrUnknownFragment = errors.New("unknown fragment")
)

// CorruptError reports a stored object that failed validation: bad magic,
// checksum mismatch, truncation, undecodable JSON or Parquet, or contents that
// disagree with the table state referencing them.
type CorruptError struct {
	Key    string // object key
	Offset int64  // byte offset of the problem, or -1 when not meaningful
	Reason string
	Err    error // underlying decoder error, if any
}

func (e *CorruptError) Error() string {
	s := "corrupt object " + e.Key
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at offset %d", e.Offset)
	}
	s += ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap exposes both the ErrCorrupt kind and the underlying cause.
func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}

func corrupt(key string, off int64, reason string, err error) error {
	return &CorruptError{Key: key, Offset: off, Reason: reason, Err: err}
}

// VersionError reports an object whose format version is not the one this
// build reads (formats are a ratchet: older and newer are both refused).
type VersionError struct {
	Key  string
	Kind string // "table state" or "deletion vector"
	Got  int
	Want int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("table: %s %s has format version %d, this build reads version %d", e.Kind, e.Key, e.Got, e.Want)
}

// Unwrap makes errors.Is(err, ErrUnsupportedVersion) hold.
func (e *VersionError) Unwrap() error { return ErrUnsupportedVersion }
