// Package exec executes writes and queries against a graph.
//
// The write-side front half lives in three groups of files:
//
//   - values (their representation, conversion, order and JSON encoding)
//     live in internal/value; this package only applies them.
//   - jsonl*.go: a streaming, strict reader of the graph-batch JSONL format
//     (Reader). It holds one line in memory at a time.
//   - validate*.go: the integrity evaluator shared by load, mutation and
//     branch merge (Validate), run over a staged Delta and a small Committed
//     interface the caller implements over its committed tables.
//
// Guarantees: every conversion or validation failure is a typed error
// (*value.Error, *InputError, *ConstraintError, *KeyConflictError) whose text
// matches spec/languages.md; callers branch on the type, never on text.
// Validation has no side effects: it only reads Committed.
//
// Caveats: the reader does not generate ids (unkeyed nodes and edges without
// data.id come back with an empty ID for the caller to fill with a ULID), and
// it does not apply the external-blob policy: a Blob given as a URI is
// returned as Blob{URI: ...} for the loader to admit or deny.
package exec
