package s3

import (
	"context"
	"errors"
	"fmt"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// class is what one failed attempt means for the request.
type class int

const (
	classFatal        class = iota // a definite answer: do not retry
	classNotFound                  // 404 for the key
	classPrecondition              // 412
	classRetry                     // transient: 5xx, timeouts, connection errors
	classThrottle                  // 429 / 503 SlowDown
	classUnsupported               // 501 NotImplemented
)

// failure is one classified attempt error.
type failure struct {
	class  class
	status int    // HTTP status, 0 for transport errors
	code   string // S3 error code, if any
	err    error
}

// classify interprets an SDK error. reqCtx is the caller's context: its
// cancellation is never retried, while an attempt's own timeout is.
func classify(reqCtx context.Context, err error) failure {
	f := failure{err: err}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		f.status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		f.code = ae.ErrorCode()
	}
	if reqCtx.Err() != nil {
		f.class = classFatal
		return f
	}
	switch {
	case f.code == "NoSuchKey" || (f.status == 404 && f.code == "NotFound"):
		f.class = classNotFound
	case f.status == 404 && f.code == "":
		f.class = classNotFound // HEAD: no body, no code
	case f.status == 412 || f.code == "PreconditionFailed":
		f.class = classPrecondition
	case f.status == 429 || f.code == "SlowDown" || f.code == "Throttling" || f.code == "ThrottlingException" || f.code == "RequestLimitExceeded":
		f.class = classThrottle
	case f.status == 409 && f.code == "ConditionalRequestConflict":
		// AWS: a concurrent conditional write is in progress; retry.
		f.class = classRetry
	case f.status == 501 || f.code == "NotImplemented":
		f.class = classUnsupported
	case f.status >= 500, f.code == "RequestTimeout", f.code == "InternalError":
		f.class = classRetry
	case f.status == 0:
		// No HTTP response: connection refused/reset, DNS, attempt timeout.
		f.class = classRetry
	default:
		f.class = classFatal
	}
	return f
}

// sentinel maps a final failure to the storage error it wraps.
func (s *Store) finalError(reqCtx context.Context, f failure, attempts int) error {
	if err := reqCtx.Err(); err != nil {
		return err
	}
	where := s.cfg.URI()
	if s.cfg.Endpoint != "" {
		where += " at " + s.cfg.Endpoint
	}
	switch {
	case f.class == classNotFound:
		return storage.ErrNotFound
	case f.class == classPrecondition:
		return storage.ErrPrecondition
	case f.class == classUnsupported:
		return fmt.Errorf("%w: %s (%s)", storage.ErrUnsupported, where, codeOr(f))
	case f.code == "ObjectParentIsFile" || f.code == "ExistingObjectIsDirectory":
		// File-system backed servers (VersityGW posix) cannot hold both
		// "a" and "a/b", like storage.Local.
		return &keyShapeError{parentIsObject: f.code == "ObjectParentIsFile"}
	case f.code == "NoSuchBucket":
		return fmt.Errorf("%w: bucket %q does not exist (%s)", storage.ErrBucketNotFound, s.cfg.Bucket, where)
	case f.status == 403 || f.code == "AccessDenied" || f.code == "InvalidAccessKeyId" ||
		f.code == "SignatureDoesNotMatch" || f.code == "ExpiredToken" || f.code == "InvalidToken":
		return fmt.Errorf("%w: %s refused the credentials of %s (%s): check %s and %s",
			storage.ErrAccessDenied, where, s.cfg.AccessKeyID, codeOr(f), EnvAccessKeyID, EnvSecretAccessKey)
	case f.class == classThrottle:
		return fmt.Errorf("%w: %s is still throttling after %d attempts (%s)", storage.ErrThrottled, where, attempts, codeOr(f))
	case f.class == classRetry && f.status == 0:
		return fmt.Errorf("%w: cannot reach %s after %d attempts: %v", storage.ErrUnavailable, where, attempts, rootCause(f.err))
	case f.class == classRetry:
		return fmt.Errorf("%w: %s kept failing after %d attempts (%s)", storage.ErrUnavailable, where, attempts, codeOr(f))
	}
	return fmt.Errorf("%s: %w", where, f.err)
}

func codeOr(f failure) string {
	if f.code != "" {
		return fmt.Sprintf("HTTP %d %s", f.status, f.code)
	}
	return fmt.Sprintf("HTTP %d", f.status)
}

// rootCause strips the SDK's operation/send wrappers for a short message.
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// keyShapeError: the server cannot store the key next to an existing one
// ("a" and "a/b"). It is an ErrInvalidKey, as on storage.Local.
type keyShapeError struct{ parentIsObject bool }

func (e *keyShapeError) Error() string {
	if e.parentIsObject {
		return "a parent of the key is an object (invalid object key)"
	}
	return "key names a directory of other keys (invalid object key)"
}

func (e *keyShapeError) Is(target error) bool { return target == storage.ErrInvalidKey }
