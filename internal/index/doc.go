// Package index builds and reads secondary index objects over table
// fragments. It has four kinds: the key index (key.go), a sorted map from
// row id to (fragment, row offset) for a set of fragments of one table; the
// scalar index of an enum or orderable scalar column of one fragment
// (btree.go, btree_ranged.go: each distinct value's row offsets, read by
// ranged reads of the blocks a comparison needs); the full-text index of a
// String column of one fragment (text.go, BM25 postings); and the IVF
// vector index of a Vector column of one fragment (vector.go).
//
// Guarantees:
//
//   - Index objects are immutable and written under fresh ULID names
//     (<prefix>/index/<ulid>.idx, .btr, .fts or .ivf; object.go); a table state
//     refers to them through table.IndexRef, which lists the fragments an
//     index covers.
//   - Lookups are exact: a fragment not covered by any index is scanned with
//     the table's ordinary statistics pruning, and deletion vectors are
//     applied by the scan, so an index only ever narrows the fragments read
//     and never changes an answer (TestLookupMatchesScan).
//   - Corrupt or truncated index objects are *table.CorruptError naming the
//     key, never a panic (TestKeyIndexCorrupt).
//
// Caveats: an index records every row of a fragment at build time,
// including rows a later deletion vector hides; it is therefore valid for
// every later state that still holds the fragment, and stale entries only
// cost an extra (exact) scan of a fragment.
package index
