package limits

import (
	"context"
	"errors"
	"time"
)

// WithTimeout bounds ctx by d: when d passes, context.Cause(ctx) is an
// *Error for resource with the limit in milliseconds, which callers report
// instead of context.DeadlineExceeded. d <= 0 returns ctx unchanged.
func WithTimeout(ctx context.Context, resource string, d time.Duration, hint string) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	ms := d.Milliseconds()
	return context.WithTimeoutCause(ctx, d, &Error{Resource: resource, Limit: ms, Actual: ms, Hint: hint})
}

// FromContext returns the *Error a WithTimeout deadline left on ctx when
// ctx has ended that way, else err unchanged.
func FromContext(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	var le *Error
	if cause := context.Cause(ctx); errors.As(cause, &le) {
		return cause
	}
	return err
}
