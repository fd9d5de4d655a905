package limits

import (
	"errors"
	"fmt"
)

// ErrResourceLimit is matched (errors.Is) by every *Error.
var ErrResourceLimit = errors.New("resource limit exceeded")

// Error reports a request stopped at a bound: Resource names what was
// bounded (e.g. "query_memory_bytes", "query_time_ms"), Limit the bound,
// Actual what the request needed (at least; counting stops at the first
// charge over the limit).
type Error struct {
	Resource string
	Limit    int64
	Actual   int64
	// Hint, if set, says how to raise the bound.
	Hint string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("resource limit exceeded: %s (limit %d, needed at least %d)", e.Resource, e.Limit, e.Actual)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrResourceLimit) hold.
func (e *Error) Unwrap() error { return ErrResourceLimit }
