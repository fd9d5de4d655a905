package eval

import (
	"errors"
	"fmt"
)

// Error is a failure while executing a well-typed plan (an unparsable
// date literal, a missing embedder, a ranking that cannot be computed). It
// renders as "execution error: …" per spec/languages.md §1.
type Error struct {
	Msg string
	Err error // the cause, when another package's typed error (an embedding failure)
}

func (e *Error) Error() string { return "execution error: " + e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func runErrorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// errTypedFallback stops a typed column scan (aggregate_typed.go) that met
// a column it does not read unboxed: the row path answers instead. It never
// leaves the package.
var errTypedFallback = errors.New("eval: column not read by the typed path")
