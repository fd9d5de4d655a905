package storage

import "fmt"

// Op names a kind of store request. Counting and Faulty use the same names,
// and failpoints are named "storage/before-<op>" and "storage/after-<op>".
type Op string

// The request kinds. An [OpenReadAt] counts as one OpStat (S3: HEAD) and each
// ReadAt on the returned reader as one OpGetRange.
const (
	OpGet         Op = "get"
	OpGetRange    Op = "get_range"
	OpStat        Op = "stat"
	OpPut         Op = "put"
	OpPutIfAbsent Op = "put_if_absent"
	OpPutIfMatch  Op = "put_if_match"
	OpList        Op = "list"
	OpDelete      Op = "delete"
	// OpSweepTemp is a TempSweeper sweep of temporary leftovers.
	OpSweepTemp Op = "sweep_temp"
	// OpCopyIfAbsent is a Copier's server-side copy (S3: CopyObject).
	OpCopyIfAbsent Op = "copy_if_absent"
	// OpPutShared is a SharedPutter's one object stored under several
	// fresh names (Local: one file, hard links); its key is the first name.
	OpPutShared Op = "put_shared"
)

// allOps is every Op in a fixed order; Counting indexes its tallies by it.
var allOps = [...]Op{OpGet, OpGetRange, OpStat, OpPut, OpPutIfAbsent, OpPutIfMatch, OpList, OpDelete, OpSweepTemp, OpCopyIfAbsent, OpPutShared}

// Ops returns every Op, in a fixed order (for reports and tests).
func Ops() []Op { return allOps[:len(allOps):len(allOps)] }

// Error is the error type every backend returns for a failed request on a key.
// It wraps one of the sentinels (or an I/O error); use errors.Is / errors.As.
type Error struct {
	Op  Op
	Key string // for OpList: the prefix
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("storage %s %q: %v", e.Op, e.Key, e.Err) }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

func opErr(op Op, key string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Key: key, Err: err}
}
