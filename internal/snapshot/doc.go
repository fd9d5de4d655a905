// Package snapshot is one commit of a graph as readers see it: its node and
// edge tables decoded into images, the fragment layouts those images were
// assembled from, the indexes built over them, and the read cache that
// holds them all.
//
//   - snapshot.go: Loader (store + cache, shared by every snapshot of a
//     handle) and Snapshot (one commit: catalog, table states, images).
//   - table.go: NodeTable and EdgeTable, the decoded images readers use;
//     Mem, a snapshot held in memory.
//   - image.go: fragment images (Rows), decoded once per fragment and
//     concatenated into a state's first table image; rowspace.go: an
//     image's physical rows (where each fragment sits, the dead bitmap);
//     derive.go derives the image of the next state from a recent one by
//     marking the rows a write hid dead and appending its new rows, never
//     copying the table; retire.go drops superseded images from the cache.
//   - layout.go: a table state seen as its fragments' images and deletion
//     vectors (Layout): point lookups by id without assembling the image.
//   - committed.go: the committed-row lookups writes validate against.
//   - lookup_index.go: those lookups (and CommittedRows, KeyRow) through
//     the tables' persisted fragment indexes (table.Reader) when the
//     fragments are not decoded yet, as in a fresh CLI process.
//   - partial.go: Partial, the rows an anchored read (every scan pinned by
//     key or id, bounded traversals) can touch, gathered through the same
//     indexes into a Mem snapshot: a cold read costs what it touches.
//   - scan.go: the unanchored side of Partial: a read whose only scan has
//     no traversal streams a table scan of just the columns it names, with
//     its comparisons pushed down (statistics pruning, typed and dictionary
//     evaluation); filtered scans that start traversals get their anchors
//     the same way. Tables whose image would exceed half the cache budget
//     stay on these paths on a warm handle too, so memory follows the
//     budget (OMNIGRAPH_CACHE_BYTES), not the graph.
//   - scalar_scan.go: those filtered scans (and the dense filter bitmaps)
//     narrowed by the fragments' persisted scalar indexes: only the rows
//     an index matches are read, and a count the indexes decide reads no
//     column.
//   - dense.go: dense views for unanchored traversals (eval/dense.go): an
//     exact id → row map per node type from the id column alone, filter
//     bitmaps from pushed-down table scans, int32 CSRs streamed from the
//     edge tables' src/dst columns; per query, charged to its budget.
//   - index.go, adjacency.go: sorted property indexes and row-resolved
//     adjacency (CSR) kept with an image.
//   - columns.go: the mapping between .pg types and table columns, and
//     table keys ("node:T", "edge:E").
//   - check.go: Decode (the from-scratch reference) and Check, which
//     compares every derived structure with it.
//
// Guarantees: a Snapshot never changes and is safe for concurrent use.
// Every cache entry is keyed by immutable object names (state, fragment and
// deletion-vector keys, plus the schema key), so nothing is ever
// invalidated and a warm read costs no store request. Images, Rows and
// indexes are shared between snapshots and must not be modified by callers.
// The index paths answer exactly what the image paths answer, row order
// included (exec TestIndexLookupsMatchFragSet, TestPartialReadsMatchFull);
// SetIndexPath(false) turns them off.
//
// Caveats: this package reads only; it never writes objects. Index memory
// (fragment id maps, sorted indexes, CSRs) is not charged to the cache
// budget: it lives and dies with its image.
package snapshot
