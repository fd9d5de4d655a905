// Package integrity checks a graph's stored objects from the outside and
// restores what can be restored: Verify (behind `omnigraph verify`) walks
// every ref, every commit reachable from one, and every schema, table state,
// fragment, deletion vector and index they name, read-only; Repair (behind
// `omnigraph repair`) points a lost or damaged branch ref at the newest
// intact commit of that branch.
//
// Guarantees:
//   - Verify never writes and reports each damaged or missing object once,
//     naming it and what names it (internal/cli TestVerifyHealthy,
//     TestVerifyNamesDamage: one case per object kind).
//   - A graph written by the engine verifies clean, --deep included
//     (TestVerifyHealthy, and the crash and concurrency suites of
//     internal/cli end with verifyClean).
//   - Repair changes at most the refs it reports, each with a conditional
//     write, and never moves an intact ref (commit.ErrRefIntact); after it,
//     the restored branch's history is the history of the chosen commit
//     (TestLostMainRefRepair, TestRepairDamagedBranchRef).
//
// Caveats:
//   - Commits are found by listing commits/: repair of a lost ref costs one
//     GET per stored commit. It is a recovery operation, never on a read or
//     write path.
//   - A commit written by a write that stopped after its commit object but
//     before its ref swap is indistinguishable from a published one. If the
//     lost ref's real head was older than such a leftover, repair restores
//     the leftover (a complete write whose caller saw it fail); the preview
//     names the chosen commit, and --commit picks another.
//   - Verify decodes Parquet data only with Deep; Parquet pages carry no
//     checksum in the writer we use (docs/format/table.md, "Integrity caveat").
package integrity
