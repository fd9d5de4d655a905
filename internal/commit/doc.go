// Package commit keeps a graph's history: the format stamp, immutable commit
// objects, content-addressed schema sources, and branch refs advanced by
// compare-and-swap. It is the graph's one commit point (DESIGN §2); the
// object formats are specified in docs/format/commit.md.
//
// A write is: the caller writes data files and table states under fresh
// names, then calls Repo.Publish, which writes a commit object under a fresh
// ULID name and CASes the branch ref from the captured base head to it.
// Group commit builds several commits on top of each other with
// Repo.NextCommit (the base need not be published) and makes the whole
// chain visible with one CAS: Repo.PublishChain (TestPublishChain).
//
// Guarantees:
//   - Atomic publish. Nothing a write produced is reachable before the ref
//     CAS and everything is after it; a crash or error at any step leaves the
//     head exactly at the old or the new commit (TestCrashInProcess,
//     TestCrashSubprocess).
//   - Linear history under concurrent writers, goroutines or processes: a lost
//     CAS returns *HeadMovedError with the current head and writes nothing
//     visible; rebasing and publishing again yields one chain containing every
//     successful publish exactly once (TestConcurrentPublishLinear).
//   - A retried conditional PUT that actually won is success, not a conflict:
//     after any failed or ambiguous CAS, Publish re-reads the ref and reports
//     success if it names its own commit (TestPublishAmbiguousCAS).
//   - Within a context from WithHeadMemo, a Resolve that follows a Resolve of
//     the same branch reuses its head once (a mutation compiles against the
//     head and then writes on it with one ref read); Head and the re-reads
//     after a lost CAS always read the store (TestHeadMemo).
//   - Publish flushes a storage.Batching batch of the write's objects before
//     its CAS, and never defers the CAS itself.
//   - Head resolution costs one GET of the ref whatever the history length;
//     with the head commit cached (a warm handle) Resolve is one request in
//     all (TestCostIndependentOfHistory).
//   - Open checks the format stamp before anything else and never writes; any
//     version but FormatCurrent is refused with *FormatError naming both
//     (TestOpenRefusesOtherFormats).
//   - Init publishes main last, by PutIfAbsent: of racing inits exactly one
//     wins, and an interrupted init leaves a location that Open refuses and a
//     re-run of Init completes (TestInitRace, TestInitInterrupted, TestInitKilled).
//
// Caveats:
//   - Refs are the only mutable objects, and they are never cached: every
//     Head/Resolve goes to the store. Commits and schemas are cached forever
//     by name; values returned are shared and must not be modified.
//   - Publish does not check that the table-state keys it is given exist;
//     the caller writes them first. It checks only the commit's own shape.
//   - Unreferenced objects (commits of lost or interrupted publishes, their
//     data) are left for cleanup, which must honour a grace period so it never
//     deletes an in-flight writer's objects.
//   - Branch create checks path-prefix conflicts ("a" vs "a/b") by listing
//     refs, then creates with PutIfAbsent; on an object store two processes
//     creating such a pair at the same instant can both succeed.
//   - Deleting a branch and recreating it at the same commit produces the same
//     ref bytes as the old ref at seq 1; a writer holding that exact old head
//     could then publish onto the recreated branch. The state it rebases on is
//     identical, so no write is lost.
package commit
