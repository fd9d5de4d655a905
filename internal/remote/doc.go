// Package remote is the HTTP client of omnigraph-server (spec/surfaces.md
// §2.4) that the CLI's served mode uses. It speaks the server's JSON and
// NDJSON shapes and nothing else: no engine logic, no retries of writes.
//
// # Guarantees
//
//   - Every non-2xx response becomes an *Error carrying the status and the
//     server's ErrorOutput (error, code and the structured fields), or the
//     raw body when it is not an ErrorOutput; callers branch on Status and
//     the structured fields, never on the text.
//   - The bearer token is sent only as `Authorization: Bearer …` and only
//     when one is configured.
//   - Streams (export) are copied as they arrive; a stream that fails after
//     the 200 returns an error and the caller must discard partial output.
package remote
