package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/remote"
	"github.com/omnigraph-go/omnigraph/internal/server"
	"github.com/spf13/cobra"
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

// printWarnings prints a write's warnings (it succeeded; something beside
// it did not, such as its automatic compaction) on standard error, one
// "warning: " line each, so standard output stays the result alone. Under
// --json they are the result's "warnings" array instead.
func (a *app) printWarnings(ws []string) {
	for _, w := range ws {
		fmt.Fprintf(a.io.Err, "warning: %s\n", w)
	}
}

// conflictJSON is the --json error body of a write conflict: the shape of
// the server's 409 ErrorOutput (spec/surfaces.md §2.5), with
// read_set_conflict or key_conflict when the conflict names one (the
// server's own renderings of them).
type conflictJSON struct {
	Error           string                        `json:"error"`
	Code            string                        `json:"code"`
	ReadSetConflict *server.ReadSetConflictOutput `json:"read_set_conflict,omitempty"`
	KeyConflict     *server.KeyConflictOutput     `json:"key_conflict,omitempty"`
}

// conflictBody renders a write conflict (a changed read set, a key
// conflict, too much contention) as its --json body; ok is false for any
// other error.
func conflictBody(err error) (body conflictJSON, ok bool) {
	var (
		rs *omnigraph.ReadSetChangedError
		kc *omnigraph.KeyConflictError
	)
	body = conflictJSON{Error: err.Error(), Code: "conflict"}
	switch {
	case errors.As(err, &rs):
		body.ReadSetConflict = server.ReadSetConflict(rs)
	case errors.As(err, &kc):
		body.KeyConflict = server.KeyConflict(kc)
	case errors.Is(err, omnigraph.ErrContention):
	default:
		return conflictJSON{}, false
	}
	return body, true
}

// reportConflict prints err's conflict body on stdout under --json (the
// error line still goes to stderr, exit 1) and returns err.
func (a *app) reportConflict(err error, asJSON bool) error {
	if !asJSON {
		return err
	}
	if body, ok := conflictBody(err); ok {
		_ = a.printJSON(body)
	}
	return err
}

// jsonRequested reports whether the command that ran was asked for JSON
// (--json, or --format json).
func jsonRequested(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	if f := cmd.Flags().Lookup("json"); f != nil && f.Value.String() == "true" {
		return true
	}
	f := cmd.Flags().Lookup("format")
	return f != nil && (f.Value.String() == "json" || f.Value.String() == "jsonl")
}

// printErrorJSON prints err as the error body of spec/surfaces.md §2.5 on
// standard output (the error line still goes to standard error): the
// server's own body for a served command, else the body the server would
// answer the same error with. Usage errors are bad_request.
func (a *app) printErrorJSON(err error) {
	var re *remote.Error
	if errors.As(err, &re) && re.Body != nil {
		var raw json.RawMessage
		if json.Unmarshal([]byte(re.Raw), &raw) == nil {
			_ = a.printJSON(raw)
			return
		}
	}
	if body, ok := conflictBody(err); ok {
		_ = a.printJSON(body)
		return
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		_ = a.printJSON(server.ErrorOutput{Error: friendlyUsage(err).Error(), Code: "bad_request"})
		return
	}
	_, body := server.ErrorBody(err)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && body.Code == "internal" {
		body.Code = "bad_request" // a local file the command was given
	}
	_ = a.printJSON(body)
}
