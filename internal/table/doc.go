// Package table stores one node or edge table as immutable objects: Parquet
// data fragments, deletion vectors and a content-addressed table state that
// names them. It knows nothing of .pg schemas, commits or branches; the
// executor maps schema types onto ColumnType and publishes states in commits.
//
// Objects under the caller's prefix (e.g. "tables/node-Person"):
//
//	<prefix>/data/<ulid>.parquet   fragment (WriteFragment)
//	<prefix>/dv/<ulid>.dv          deletion vector (DeleteRows, Delete)
//	<prefix>/state/<sha256>.json   table state (WriteState)
//
// Guarantees:
//
//   - Nothing is modified in place. Fragments and deletion vectors get fresh
//     ULID names; states are named by the SHA-256 of their bytes, so writing
//     the same state twice is idempotent and equal states share one object.
//   - A *State is immutable; Append, Replace, DeleteRows and Delete return new
//     states. Until a commit references a state, everything written for it is
//     unreferenced garbage that cleanup may reclaim after its grace period.
//   - Reads verify what they read: deletion vectors carry a CRC-32C and the id
//     of their fragment, states are checked against their hash name, format
//     version and invariants, fragments against the row count, size and column
//     types the state records. Failures are *CorruptError (errors.Is
//     ErrCorrupt) or *VersionError naming the object, never a panic.
//   - Scans prune whole fragments with the statistics in the state (no read at
//     all) and row groups with the Parquet footer statistics, then apply
//     filters exactly on the typed Arrow columns. Only the column chunks of
//     projected and filtered columns are fetched; a String/Enum column read
//     only for filtering, whose chunks are dictionary encoded, is decoded as
//     dictionary indices and its filters evaluated once per entry
//     (ScanStats.DictBatches, TestDictionaryFilterMatchesBrute).
//
// Caveats:
//
//   - Every Arrow object returned must be released; Scanner.Record is owned by
//     the scanner and valid until the next Next or Close.
//   - Failpoints (table/before-fragment, table/after-fragment, table/before-dv,
//     table/after-dv, table/before-state, table/after-state) fire at every
//     durable step.
//   - All fragments of a state share the state's schema; schema evolution
//     (adding columns to old fragments) is not handled here yet.
//   - Nullable Vector columns are stored in Parquet as List<float32> because
//     pqarrow cannot write null fixed-size-list entries; DateTime is stored as
//     Timestamp(ms, UTC) because pqarrow truncates Date64 to days. Readers of
//     this package see the spec types (FixedSizeList, Date64) either way.
//
// The format is specified in docs/format/table.md.
package table
