// Package eval executes read queries: it runs a compiled query.Plan
// against a Snapshot, an interface it declares (satisfied by
// *snapshot.Snapshot over a commit and *snapshot.Mem in memory).
//
//   - run.go: Run, Options, Result, the runner and its operator dispatch;
//     rows.go: the binding-row layout.
//   - scan.go, index.go: node scans, with candidates from the images' key
//     lookups and sorted indexes when a pushed-down filter allows.
//   - expand.go, adjacency.go: traversals over the row-resolved adjacency
//     (or the id-keyed maps with Options.NoIndexes).
//   - dense.go: counts over unanchored traversals, computed on the dense
//     views of a DenseSource (*snapshot.Snapshot: id maps, filter bitmaps,
//     int32 CSRs) without binding rows, when the snapshot prefers them.
//   - expr.go: operands, literals and predicates; output.go: projection,
//     aggregation and ordering; search.go: text predicates, BM25, vector
//     distance and reciprocal-rank fusion.
//
// Guarantees: Run only reads the snapshot; it never changes an image or
// the store. Every query error is a typed error (*Error, *value.Error for
// a bad parameter). Index paths return exactly the rows of the full scan
// in the same order (TestScanIndexMatchesFullScan, Options.NoIndexes is
// the reference).
//
// Caveats: text search indexes are built per run in memory (there is no
// persisted full-text index yet); nearest() with a String query needs
// Options.Embed.
package eval
