package cli

import (
	"errors"
	"fmt"
)

// UsageError is a command-line usage mistake: exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// SilentError reports failure after the command already printed its output
// (for example lint with status=error): nothing more is printed.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// errPreconditionExit marks a lost --if-commit race (exit 4).
var errPreconditionExit = errors.New("precondition failed")

// ExitCode maps an error returned by a command to the process exit status.
// It is the only place that decides exit codes.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var se *SilentError
	if errors.As(err, &se) {
		return se.Code
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2
	}
	if errors.Is(err, errPreconditionExit) {
		return 4
	}
	return 1
}
