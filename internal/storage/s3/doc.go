// Package s3 is the S3 backend of storage.Store, on aws-sdk-go-v2 (the s3
// service client with static credentials; no shared-config module). One
// Store is one bucket prefix, "s3://bucket/prefix"; ConfigFromEnv reads the
// standard AWS_* variables (docs/s3.md).
//
// Mapping (the storage package's contract, nothing stronger):
//
//   - PutIfAbsent is PUT with If-None-Match: *, PutIfMatch is PUT with
//     If-Match: <etag>; puts of MultipartThreshold bytes or more are
//     multipart uploads whose CompleteMultipartUpload carries the same
//     condition, so nothing is visible before it and the condition holds
//     for large objects too.
//   - GetRange is a ranged GET (416 past the end = no bytes), Stat a HEAD,
//     List is ListObjectsV2 with StartAfter and continuation tokens.
//   - ETags are the server's, passed back verbatim; never computed.
//   - CopyIfAbsent (storage.Copier) is CopyObject with If-None-Match: * on
//     the destination, offered only when Config.ConditionalCopy says the
//     server honours it (AWS by default): VersityGW v1.8.0 and gofakes3
//     accept the header and copy over an existing object, which no answer
//     reveals, so support cannot be detected from a refusal
//     (TestConditionalCopyServer). A 501 answer turns the capability off.
//
// Guarantees:
//
//   - Retries are ours, not the SDK's: transient failures (connection
//     errors, attempt timeouts, 5xx, 429/SlowDown, 409 conditional
//     conflicts) are retried with capped exponential back-off and full
//     jitter, up to MaxAttempts; the caller's context cancels at once,
//     also during back-off (TestCancelDuringBackoff).
//   - A conditional put whose earlier attempt may have been applied and
//     whose retry gets 412 reads the object back: if it holds exactly our
//     bytes the put succeeded (TestRetriedConditionalPutThatWon). Callers
//     that write unique bytes (refs name a fresh commit) can rely on it.
//   - Failures are typed: storage.ErrAccessDenied, ErrBucketNotFound,
//     ErrThrottled, ErrUnavailable (each with the endpoint and the attempt
//     count in its message), ErrConfig before any request; a failed request
//     leaves nothing visible (TestTypedErrors).
//   - The shared conformance suite passes on gofakes3 in process and on
//     VersityGW (TestConformanceFake, TestConformanceServer).
//
// Caveats:
//
//   - A multipart upload that fails is aborted best effort; a bucket
//     lifecycle rule for incomplete uploads should reclaim what an abort
//     missed (a killed process cannot abort).
//   - Attempts counts HTTP requests on the wire (retries and read-backs
//     included); storage.Counting counts Store calls.
package s3
