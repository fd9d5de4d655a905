// Package exec is the write side of a graph handle (Graph): everything that
// creates commits, plus resolving a target to the snapshot a read runs on.
//
//   - engine.go, resolve.go: Graph, Options, Init/Open, Resolve (a target
//     to one commit's snapshot.Snapshot), Log, Tables; engine_query.go
//     hands reads to internal/eval.
//   - jsonl*.go: the strict, streaming reader of the graph-batch JSONL
//     format (Reader); values convert through internal/value.
//   - validate*.go: the integrity evaluator shared by load, mutation and
//     merge (Validate), run over a staged Delta and the Committed lookups a
//     snapshot answers.
//   - load*.go: load (append, merge, overwrite; streamed in chunks);
//     mutate*.go: insert/update/delete mutations.
//   - publish.go: the write pipeline (runWrite): per-branch group commit
//     (a leader chains queued writes, one CAS), rebasing after lost races
//     with jittered back-off and a bounded budget (*ContentionError);
//     readset.go: the row-level read sets of strict mutations and the
//     conflict rules (docs/write-path.md); table_write.go: the one writer
//     of table states (writeTable), used by load, mutate, merge and
//     compaction.
//   - branch.go, merge*.go, diff*.go: branches, three-way merge with
//     conflicts, entity diffs; maint.go, optimize.go, cleanup.go:
//     maintenance (compaction, key indexes, reclaiming unreachable objects).
//   - errors.go: every error type and sentinel of the package.
//
// Guarantees: a write publishes at most one commit, by the ref CAS (one CAS
// may publish a chain of writes, each its own commit), after validating the
// complete change on top of everything ahead of it; a failure at any earlier step leaves the
// branch where it was and only unreferenced objects behind (cleanup
// reclaims them). Every failure is a typed error (*value.Error,
// *InputError, *ConstraintError, *KeyConflictError, *PreconditionFailedError,
// *ReadSetChangedError naming the row or table that changed,
// *ContentionError, *MergeConflictsError, …) whose text matches
// spec/languages.md; callers branch on the type, never on text.
// Validation has no side effects.
//
// Caveats: the reader does not generate ids (unkeyed nodes and edges
// without data.id come back with an empty ID for the loader to fill with a
// ULID) and does not apply the external-blob policy. Conditional writes
// (IfCommit) are never retried.
package exec
