package eval

import "fmt"

// Error is a failure while executing a well-typed plan (an unparsable
// date literal, a missing embedder, a ranking that cannot be computed). It
// renders as "execution error: …" per spec/languages.md §1.
type Error struct{ Msg string }

func (e *Error) Error() string { return "execution error: " + e.Msg }

func runErrorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}
