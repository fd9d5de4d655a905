package cli

import (
	"errors"
	"fmt"

	"github.com/omnigraph-go/omnigraph"
)

// UsageError is a command-line usage mistake: exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// SilentError reports a failure the command already printed (as --json
// output, or lint with status=error): nothing more is printed, and the exit
// status is ExitCode of Err.
type SilentError struct{ Err error }

func (e *SilentError) Error() string { return e.Err.Error() }
func (e *SilentError) Unwrap() error { return e.Err }

// errReported is the failure of a command whose output already says it
// failed (lint errors, verify findings): exit 1.
var errReported = errors.New("command failed")

// ExitCode maps an error returned by a command to the process exit status.
// It is the only place that decides exit codes.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2
	}
	if errors.Is(err, omnigraph.ErrPreconditionFailed) {
		return 4 // spec/surfaces.md §1.6: a lost --if-commit race
	}
	return 1
}
