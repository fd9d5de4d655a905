package table

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Fragment describes one immutable Parquet data file of a table as recorded in
// a table state.
type Fragment struct {
	// Key is the object key of the Parquet file, <prefix>/data/<ulid>.parquet.
	Key string
	// Rows is the number of rows in the file (deleted ones included).
	Rows int64
	// Bytes is the size of the file; readers use it instead of a Stat call.
	Bytes int64
	// Stats has one entry per schema column, in schema order.
	Stats []ColumnStats
	// DV is the key of the deletion vector hiding rows of this fragment, or "".
	DV string
	// Deleted is the number of rows the deletion vector hides.
	// INVARIANT: Deleted == 0 iff DV == "", and Deleted <= Rows
	// (TestDeleteMergesDeletionVectors, TestStateValidateRejects).
	Deleted int64
	// Index is the key of the fragment's index object
	// (<prefix>/index/<ulid>.fidx, fragindex.go), or "" for fragments
	// written before indexes existed (readers then scan the fragment).
	Index string
	// IndexBytes is the size of the index object.
	// INVARIANT: IndexBytes > 0 iff Index != "" (TestStateValidateRejects).
	IndexBytes int64
	// Fields maps the state's columns onto the file's, for fragments
	// written under an earlier schema of the table (evolve.go): Fields[i]
	// is the name of the file field holding column i, or "" when the file
	// has no such field (the column reads as null). nil means the file's
	// fields are exactly the state's columns, in order.
	Fields []string
}

// Live is the number of rows of the fragment a scan returns.
func (f Fragment) Live() int64 { return f.Rows - f.Deleted }

func (f Fragment) clone() Fragment {
	f.Stats = append([]ColumnStats(nil), f.Stats...)
	if f.Fields != nil {
		f.Fields = append([]string(nil), f.Fields...)
	}
	return f
}

// WriteOptions tunes fragment writing. The zero value is sensible.
type WriteOptions struct {
	// RowGroupRows caps the rows per Parquet row group (default 65536): the
	// unit of pruning and of reading inside a fragment.
	RowGroupRows int64
	// Alloc is the allocator for temporary Arrow buffers (default Go heap).
	Alloc memory.Allocator
	// InlineIndexBytes: a fragment index of at most this many bytes rides
	// in the table state (IsInlineIndex, state format 5) instead of being
	// an object of its own; 0 writes every index as an object.
	InlineIndexBytes int
}

// tinyFragmentRows: a fragment of at most this many rows is written
// without dictionaries (WriteFragment).
const tinyFragmentRows = 16

// DefaultRowGroupRows is the row-group size used when WriteOptions leaves it 0.
// 64Ki rows keeps a point lookup's read to one modest chunk per column while
// keeping per-row-group footer overhead negligible.
const DefaultRowGroupRows = 1 << 16

// Failpoint names of the fragment writer.
const (
	FPBeforeFragment = "table/before-fragment"
	FPAfterFragment  = "table/after-fragment"
)

// WriteFragment writes rec as a new Parquet fragment under
// <prefix>/data/<ulid>.parquet and returns its description with statistics.
// The record's columns must match schema (names, order, Arrow types); a
// non-nullable column must hold no nulls. The record is not released.
//
// The object is written once under a fresh name and never modified; until a
// table state that names it is published it is garbage that cleanup may
// reclaim after its grace period.
func WriteFragment(ctx context.Context, st storage.Store, prefix string, schema Schema, rec arrow.RecordBatch, opts WriteOptions) (Fragment, error) {
	if err := schema.Validate(); err != nil {
		return Fragment{}, err
	}
	if err := checkRecord(schema, rec); err != nil {
		return Fragment{}, err
	}
	if rec.NumRows() == 0 {
		return Fragment{}, fmt.Errorf("%w: refusing to write an empty fragment", ErrValue)
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	mem := opts.Alloc
	if mem == nil {
		mem = memory.DefaultAllocator
	}

	// The fragment index is built from the in-memory record and written
	// concurrently with the fragment (both are unreferenced until a state
	// names them).
	idxData, stats := fragmentIndexStats(schema, rec)

	fileRec := toFileRecord(mem, schema, rec)
	defer fileRec.Release()

	var buf bytes.Buffer
	wprops := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithMaxRowGroupLength(opts.RowGroupRows),
		parquet.WithStats(true),
		parquet.WithCreatedBy("omnigraph"),
		// Small pages plus the page index let a point read fetch one page
		// per column instead of a whole column chunk (ReadRows).
		parquet.WithDataPageSize(DataPageBytes),
		// The writer closes a page only between batches of values, so the
		// batch bounds a page's rows: with the library's 1,024 a page of
		// wide strings ran to tens of KiB (a 12-word bio: ~90 KiB raw).
		parquet.WithBatchSize(PageBatchRows),
		parquet.WithPageIndexEnabled(true),
	}
	if rec.NumRows() <= tinyFragmentRows {
		// A fragment of a few rows (a single-row write's): a dictionary
		// saves nothing on it, and its page (encoded and compressed on
		// its own) was a fifth of the Parquet encoding of such a write.
		// Compression stays: zstd's frame checksum is what turns a
		// flipped bit in a page into a typed error rather than values
		// that decode into a malformed array (TestFragmentBitFlipsNeverPanic).
		wprops = append(wprops, parquet.WithDictionaryDefault(false))
	}
	edge := isEdgeSchema(schema)
	oneGroup := rec.NumRows() <= int64(opts.RowGroupRows)
	for i, c := range schema.Columns {
		if oneGroup && exactStringBounds(schema.Columns[i], stats[i]) && sortedByIndex(schema, i) {
			// The fragment is one row group and the index already gave
			// this column's exact bounds (fragmentIndexStats): Parquet's
			// statistics of its only column chunk would say the same as
			// the state's, which the scanner checks first
			// (fragmentMayMatch), at a comparison of every value — about
			// 3 % of a bulk load's CPU for ids and endpoints. A column
			// chunk without statistics is never pruned by them
			// (rowGroupMayMatch reads it), so nothing can be skipped
			// wrongly.
			wprops = append(wprops, parquet.WithStatsFor(c.Name, false))
		}
		switch {
		case highCardinality(rec.Column(i)):
			// A dictionary of mostly distinct values is one large page that
			// every point read of the chunk would have to fetch.
			wprops = append(wprops, parquet.WithDictionaryFor(c.Name, false))
		case edge && i < 3:
			// An edge's endpoints: where they repeat (a load lists a
			// node's edges together), zstd over plain pages codes the
			// runs in fewer bytes than a dictionary does, and costs less
			// to write (a 65,536-edge fragment of the 1M/5M load: 715 →
			// 625 KB, and about a fifth less Parquet encoding CPU;
			// docs/format/table.md).
			wprops = append(wprops, parquet.WithDictionaryFor(c.Name, false))
		}
	}
	props := parquet.NewWriterProperties(wprops...)
	// WithStoreSchema keeps the exact Arrow types (fixed-size lists, large
	// binary, unsigned ints) in the ARROW:schema footer key.
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem))
	fw, err := pqarrow.NewFileWriter(fileRec.Schema(), &buf, props, arrProps)
	if err != nil {
		return Fragment{}, fmt.Errorf("table: parquet writer: %w", err)
	}
	sums, err := writeRowGroups(mem, fw, fileRec, opts.RowGroupRows)
	if err != nil {
		_ = fw.Close()
		return Fragment{}, fmt.Errorf("table: encode fragment: %w", err)
	}
	if err := fw.AppendKeyValueMetadata(checksumKey, sums); err != nil {
		_ = fw.Close()
		return Fragment{}, fmt.Errorf("table: encode fragment: %w", err)
	}
	if err := fw.Close(); err != nil {
		return Fragment{}, fmt.Errorf("table: encode fragment: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Fragment{}, err
	}

	key := prefix + "/data/" + ulid.Make().String() + ".parquet"
	if err := failpoint.Hit(FPBeforeFragment); err != nil {
		return Fragment{}, err
	}
	frag := Fragment{Key: key, Rows: rec.NumRows(), Bytes: int64(buf.Len()), Stats: stats}
	idxErr := make(chan error, 1)
	if idxData != nil {
		go func() {
			k, err := writeFragmentIndex(ctx, st, key, idxData, opts.InlineIndexBytes)
			frag.Index, frag.IndexBytes = k, int64(len(idxData))
			idxErr <- err
		}()
	} else {
		idxErr <- nil
	}
	_, err = storage.PutFresh(ctx, st, key, buf.Bytes())
	if ierr := <-idxErr; err == nil {
		err = ierr
	}
	if err != nil {
		return Fragment{}, fmt.Errorf("table: write fragment %s: %w", key, err)
	}
	if err := failpoint.Hit(FPAfterFragment); err != nil {
		return Fragment{}, err
	}
	return frag, nil
}

// fragmentIndexStats returns the fragment index of rec (nil for a table
// without one) and the statistics of its columns. A column an index
// section sorted, when it is a String column without nulls, takes its
// bounds from the section's first and last keys: the same values
// computeStats finds by comparing every row twice
// (TestFragmentStatsFromIndexMatchComputeStats).
func fragmentIndexStats(schema Schema, rec arrow.RecordBatch) ([]byte, []ColumnStats) {
	var idx []byte
	var sorted []fidxSorted
	if indexedSections(schema) != nil {
		idx, sorted = encodeFragmentIndexSorted(schema, rec)
	}
	stats := make([]ColumnStats, len(schema.Columns))
	done := make([]bool, len(schema.Columns))
	for _, s := range sorted {
		if s.col >= 0 && schema.Columns[s.col].Type.Kind == String && rec.Column(s.col).NullN() == 0 {
			stats[s.col] = ColumnStats{Min: boundString(s.lo, false), Max: boundString(s.hi, true)}
			done[s.col] = true
		}
	}
	for i, c := range schema.Columns {
		if !done[i] {
			stats[i] = computeStats(c.Type, rec.Column(i))
		}
	}
	return idx, stats
}

// sortedByIndex reports whether column i is one an index section sorts
// (so fragmentIndexStats took its bounds from the section).
func sortedByIndex(schema Schema, i int) bool {
	for _, k := range indexedSections(schema) {
		if schema.Index(k.column()) == i {
			return true
		}
	}
	return false
}

// exactStringBounds reports whether st holds the exact least and greatest
// value of a String column without nulls (boundString cuts neither).
func exactStringBounds(c Column, st ColumnStats) bool {
	lo, ok1 := st.Min.(string)
	hi, ok2 := st.Max.(string)
	return c.Type.Kind == String && st.Nulls == 0 && ok1 && ok2 && len(lo) < maxStatString && len(hi) < maxStatString
}

// DataPageBytes is the target size of a Parquet data page: the unit a
// point read fetches per column.
const DataPageBytes = 8 << 10

// PageBatchRows is the writer's batch of values per column: a page holds
// a whole number of batches, at least one, so pages of wide values hold
// about DataPageBytes (and at least PageBatchRows rows), not 1,024 rows
// whatever their width (docs/format/table.md).
const PageBatchRows = 128

// highCardinality reports whether a flat column's first values are mostly
// distinct (then dictionary encoding only adds a large dictionary page).
func highCardinality(arr arrow.Array) bool {
	switch arr.DataType().ID() {
	case arrow.STRING, arrow.LARGE_BINARY, arrow.BINARY, arrow.INT64, arrow.INT32, arrow.UINT64, arrow.UINT32,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.DATE64:
	default:
		return false
	}
	n := min(arr.Len(), 4096)
	if n < 64 {
		return false
	}
	seen := make(map[string]struct{}, n/4+1)
	for i := range n {
		seen[arr.ValueStr(i)] = struct{}{}
		if len(seen) > n/4 {
			return true // decided: the rest can only add values
		}
	}
	return false
}

// checkRecord verifies rec has exactly the schema's columns and Arrow types and
// no nulls in non-nullable columns.
func checkRecord(schema Schema, rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != len(schema.Columns) {
		return fmt.Errorf("%w: record has %d columns, schema has %d", ErrSchema, rec.NumCols(), len(schema.Columns))
	}
	for i, c := range schema.Columns {
		f := rec.Schema().Field(i)
		if f.Name != c.Name {
			return fmt.Errorf("%w: record column %d is %q, schema says %q", ErrSchema, i, f.Name, c.Name)
		}
		if want := c.Type.ArrowType(); !arrow.TypeEqual(f.Type, want) {
			return fmt.Errorf("%w: column %q has Arrow type %v, want %v", ErrSchema, c.Name, f.Type, want)
		}
		if !c.Type.Nullable && rec.Column(i).NullN() > 0 {
			return fmt.Errorf("%w: non-nullable column %q has %d nulls", ErrValue, c.Name, rec.Column(i).NullN())
		}
	}
	return nil
}

// writeRowGroups writes rec as row groups of at most rgRows rows, one
// FileWriter.Write call per row group.
//
// pqarrow's writer ignores the slice offset of a fixed-size-list column: given
// a sliced array (which it makes itself when one Write call spans several row
// groups, and which callers make when they write part of a larger record) it
// encodes the child values from the start of the unsliced child, so every
// vector past the first row group would hold another row's values. Splitting
// here and handing the writer only offset-free nested columns (dense copies of
// sliced ones, see denseColumn) keeps pqarrow on the path that encodes what
// the arrays hold. Flat columns are passed through as slices: their offsets are
// honoured. It returns the footer entry of content checksums (checksum.go) of
// exactly what was handed to the encoder.
func writeRowGroups(mem memory.Allocator, fw *pqarrow.FileWriter, rec arrow.RecordBatch, rgRows int64) (checksums string, err error) {
	fc := fileChecksums{V: checksumVersion}
	n := rec.NumRows()
	for off := int64(0); off < n; off += rgRows {
		end := min(off+rgRows, n)
		part := rec
		if off != 0 || end != n {
			part = rec.NewSlice(off, end)
		}
		dense, err := denseRecord(mem, part)
		if part != rec {
			part.Release()
		}
		if err != nil {
			return "", err
		}
		sums, err := recordChecksums(dense)
		if err == nil {
			err = fw.Write(dense)
		}
		dense.Release()
		if err != nil {
			return "", err
		}
		fc.Sums = append(fc.Sums, sums)
	}
	b, err := json.Marshal(fc)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// denseRecord returns rec with every nested column that carries a slice
// offset (on the array or on any child) replaced by an offset-free copy. The
// result is a new reference the caller releases.
func denseRecord(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer releaseAll(cols)
	for i, c := range rec.Columns() {
		d, err := denseColumn(mem, c)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		cols[i] = d
	}
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows()), nil
}

// denseColumn returns arr itself (retained) when it is flat or holds no
// offsets, else a copy whose data and children all start at offset 0.
func denseColumn(mem memory.Allocator, arr arrow.Array) (arrow.Array, error) {
	if !nestedWithOffset(arr.Data()) {
		arr.Retain()
		return arr, nil
	}
	// Concatenating a single array copies its visible rows into fresh
	// buffers, children included.
	return array.Concatenate([]arrow.Array{arr}, mem)
}

func nestedWithOffset(d arrow.ArrayData) bool {
	if len(d.Children()) == 0 {
		return false
	}
	if d.Offset() != 0 {
		return true
	}
	for _, c := range d.Children() {
		if c.Offset() != 0 || nestedWithOffset(c) {
			return true
		}
	}
	return false
}
