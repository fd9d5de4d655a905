package table

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// ScanOptions selects what a scan returns. The zero value returns every
// column of every live row.
type ScanOptions struct {
	// Columns is the projection, in output order; nil means all columns.
	Columns []string
	// Filters are ANDed. Only rows satisfying all of them are returned.
	Filters []Filter
	// BatchSize caps the rows per returned record (default 65536).
	BatchSize int
	// RowOffsets makes Scanner.Offsets report each returned row's offset in
	// its fragment (the address DeleteRows takes).
	RowOffsets bool
	// Alloc allocates the returned records (default Go heap).
	Alloc memory.Allocator
	// Rows, when non-nil, restricts a scan of a one-fragment state to
	// these row offsets of its fragment (ascending, distinct, in range;
	// an index's candidates): row groups holding none are not read, one
	// holding a few is read row by row through the page index. The
	// deletion vector and Filters still apply.
	Rows []int64
}

// ScanStats counts what a scan touched; tests use it to pin pruning.
type ScanStats struct {
	Fragments       int // fragments in the state
	FragmentsPruned int // skipped using table-state statistics, without any read
	RowGroups       int // row groups in the fragments that were opened
	RowGroupsPruned int // skipped using Parquet footer statistics or deletions
	RowsRead        int64
	// DictBatches counts the batches of filter-only String/Enum columns
	// that were decoded as dictionary indices instead of strings.
	DictBatches int
	// PageRuns counts the runs of wanted rows decoded from their pages
	// alone (pages.go) instead of from whole row groups.
	PageRuns int
}

// Scanner iterates over the records of a scan. Records never span fragments.
// A Scanner is not safe for concurrent use; Close it when done.
type Scanner struct {
	ctx     context.Context
	st      storage.Store
	schema  Schema
	mem     memory.Allocator
	batch   int64
	offsets bool

	filters []compiledFilter
	proj    []int // schema indices, output order
	read    []int // schema indices read from files, ascending
	// filterOnly[i]: schema column i is read for filters only (never
	// projected); such a String/Enum column whose chunks are dictionary
	// encoded is decoded as dictionary indices, and its filters are
	// evaluated once per dictionary entry (dictCols, per fragment).
	filterOnly map[int]bool
	outSchema  *arrow.Schema

	frags []Fragment // fragments that survived state-level pruning
	next  int
	cur   *fragCursor

	// want, when non-nil, restricts the scan to these sorted offsets of its
	// only fragment (ReadRows): other row groups are not read, other rows
	// are dropped like deleted ones.
	want     []int64
	wantBits rowBitmap

	// rd, when set, supplies cached footers and deletion vectors.
	rd *Reader

	rec      arrow.RecordBatch
	recFrag  string
	recOffs  []int64
	err      error
	stats    ScanStats
	finished bool
}

// Scan starts a scan of the table state. ctx governs every read the scanner
// makes until it is closed.
func Scan(ctx context.Context, st storage.Store, s *State, opts ScanOptions) (*Scanner, error) {
	sc := &Scanner{ctx: ctx, st: st, schema: s.schema, mem: opts.Alloc, batch: int64(opts.BatchSize), offsets: opts.RowOffsets}
	if sc.mem == nil {
		sc.mem = memory.DefaultAllocator
	}
	if sc.batch <= 0 {
		sc.batch = DefaultRowGroupRows
	}
	var err error
	if sc.filters, err = compileFilters(s.schema, opts.Filters); err != nil {
		return nil, err
	}
	if opts.Columns == nil {
		for i := range s.schema.Columns {
			sc.proj = append(sc.proj, i)
		}
	} else {
		for _, name := range opts.Columns {
			i := s.schema.Index(name)
			if i < 0 {
				return nil, fmt.Errorf("%w: unknown column %q in projection", ErrSchema, name)
			}
			if slices.Contains(sc.proj, i) {
				return nil, fmt.Errorf("%w: column %q projected twice", ErrSchema, name)
			}
			sc.proj = append(sc.proj, i)
		}
	}
	fields := make([]arrow.Field, len(sc.proj))
	read := map[int]bool{}
	for j, i := range sc.proj {
		c := s.schema.Columns[i]
		fields[j] = arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: c.Type.Nullable}
		read[i] = true
	}
	for _, f := range sc.filters {
		if !read[f.col] && (f.kind == String || f.kind == Enum) {
			if sc.filterOnly == nil {
				sc.filterOnly = map[int]bool{}
			}
			sc.filterOnly[f.col] = true
		}
		read[f.col] = true
	}
	for i := range read {
		sc.read = append(sc.read, i)
	}
	slices.Sort(sc.read)
	sc.outSchema = arrow.NewSchema(fields, nil)

	if opts.Rows != nil {
		if err := sc.restrict(s, opts.Rows); err != nil {
			return nil, err
		}
		if len(opts.Rows) == 0 {
			sc.stats.Fragments = len(s.fragments)
			return sc, nil // nothing to read: an empty scan
		}
	}
	sc.stats.Fragments = len(s.fragments)
	for _, f := range s.fragments {
		if sc.fragmentMayMatch(f) {
			sc.frags = append(sc.frags, f)
		} else {
			sc.stats.FragmentsPruned++
		}
	}
	return sc, nil
}

// restrict sets the row restriction of ScanOptions.Rows, checked.
func (sc *Scanner) restrict(s *State, rows []int64) error {
	if len(s.fragments) != 1 {
		return fmt.Errorf("%w: a row restriction needs a one-fragment state, not %d fragments", ErrValue, len(s.fragments))
	}
	f := s.fragments[0]
	for i, o := range rows {
		if o < 0 || o >= f.Rows {
			return &RowOffsetError{Key: f.Key, Offset: o, Rows: f.Rows}
		}
		if i > 0 && o <= rows[i-1] {
			return fmt.Errorf("%w: row offsets of %s not ascending at %d", ErrValue, f.Key, o)
		}
	}
	sc.want, sc.wantBits = slices.Clone(rows), newRowBitmap(f.Rows, rows)
	return nil
}

func (sc *Scanner) fragmentMayMatch(f Fragment) bool {
	if f.Live() == 0 {
		return false
	}
	for i := range sc.filters {
		cf := &sc.filters[i]
		if !cf.mayMatch(f.Stats[cf.col], f.Rows) {
			return false
		}
	}
	return true
}

// Schema is the Arrow schema of the returned records.
func (sc *Scanner) Schema() *arrow.Schema { return sc.outSchema }

// Record is the current batch. It is owned by the scanner and valid until the
// next call to Next or Close; Retain it to keep it longer.
func (sc *Scanner) Record() arrow.RecordBatch { return sc.rec }

// Fragment is the key of the fragment the current record came from.
func (sc *Scanner) Fragment() string { return sc.recFrag }

// Offsets are the fragment row offsets of the current record's rows; nil
// unless ScanOptions.RowOffsets was set.
func (sc *Scanner) Offsets() []int64 { return sc.recOffs }

// Err is the error that ended the scan, if any.
func (sc *Scanner) Err() error { return sc.err }

// Stats reports what the scan has touched so far.
func (sc *Scanner) Stats() ScanStats { return sc.stats }

// Close releases every resource of the scan. It is safe to call more than once.
func (sc *Scanner) Close() error {
	sc.releaseRec()
	if sc.cur != nil {
		sc.cur.close()
		sc.cur = nil
	}
	sc.finished = true
	return nil
}

func (sc *Scanner) releaseRec() {
	if sc.rec != nil {
		sc.rec.Release()
		sc.rec = nil
	}
	sc.recFrag, sc.recOffs = "", nil
}

// Next advances to the next non-empty record. It returns false at the end of
// the scan or on error (see Err).
func (sc *Scanner) Next() bool {
	sc.releaseRec()
	for !sc.finished && sc.err == nil {
		if err := sc.ctx.Err(); err != nil {
			sc.err = err
			break
		}
		if sc.cur == nil {
			if sc.next >= len(sc.frags) {
				sc.finished = true
				break
			}
			f := sc.frags[sc.next]
			sc.next++
			cur, err := sc.open(f)
			if err != nil {
				sc.err = err
				break
			}
			sc.cur = cur
			continue
		}
		rec, base, ok, err := sc.cur.nextBatch(sc)
		if err != nil {
			sc.err = err
			break
		}
		if !ok {
			sc.cur.close()
			sc.cur = nil
			continue
		}
		out, offs, err := sc.process(rec, base)
		rec.Release()
		if err != nil {
			sc.err = err
			break
		}
		if out == nil {
			continue
		}
		sc.rec, sc.recFrag, sc.recOffs = out, sc.cur.frag.Key, offs
		return true
	}
	if sc.cur != nil {
		sc.cur.close()
		sc.cur = nil
	}
	return false
}

// fragCursor is the open state of one fragment being scanned.
type fragCursor struct {
	frag Fragment
	// cols maps the scanned schema's columns onto the file's fields (-1:
	// absent, reads as null) and names are the file's field names; see
	// evolve.go. For a fragment without a field map cols is the identity.
	cols  []int
	names []string
	// dict maps the schema columns decoded as dictionaries to their leaf.
	dict   map[int]int
	or     *objectReader
	fr     *pqarrow.FileReader
	leaves []int
	del    rowBitmap // nil when the fragment has no deletion vector
	rgs    []int     // row groups still to read
	starts []int64   // first row offset of every row group of the file
	rr     pqarrow.RecordReader
	rgNext int64 // fragment offset of the next batch of the open row group

	// sums are the content checksums from the footer (nil for fragments
	// written before they existed); rg is the open row group and acc the
	// running checksums of its decoded columns, by schema column index.
	sums *fileChecksums
	rg   int
	acc  map[int]*colSum
	// Page mode (pages.go): one positioned reader per read field of row
	// group pageRG, and the runs of wanted rows still to decode.
	pageRdrs   []*pqarrow.ColumnReader
	pageSchema *arrow.Schema
	pageRG     int
	pageRuns   []rowRun
	paged      bool
}

func (c *fragCursor) close() {
	if c.rr != nil {
		c.rr.Release()
		c.rr = nil
	}
	c.closePages()
	if c.or != nil {
		_ = c.or.Close() // read-only: nothing to lose on a failed close
		c.or = nil
	}
}

// guard runs a call into the Parquet decoder, turning a panic into a
// corruption error: arrow-go asserts on some malformed inputs instead of
// returning errors, and a bad object must never crash the process. Our own
// code is not called under guard, so our bugs still crash.
func guard(key string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = corrupt(key, -1, fmt.Sprintf("parquet decoder panicked: %v", p), nil)
		}
	}()
	return fn()
}

func (sc *Scanner) open(f Fragment) (*fragCursor, error) {
	c := &fragCursor{frag: f}
	if sc.rd != nil {
		del, err := sc.rd.deleted(sc.ctx, f)
		if err != nil {
			return nil, err
		}
		c.del = del
	} else if f.DV != "" {
		dv, err := loadDV(sc.ctx, sc.st, f)
		if err != nil {
			return nil, err
		}
		c.del = newRowBitmap(f.Rows, dv.Offsets)
	}
	or, err := openObject(sc.ctx, sc.st, f.Key, f.Bytes)
	if err != nil {
		return nil, err
	}
	c.or = or
	var md0 *metadata.FileMetaData
	if sc.rd != nil {
		md0 = sc.rd.footer(f)
	}
	var pf *file.Reader
	err = guard(f.Key, func() error {
		var err error
		// Decode buffers come from the Go heap (the reader pools them and frees
		// them with finalizers); only returned records use sc.mem.
		props := parquet.NewReaderProperties(memory.DefaultAllocator)
		if sc.want != nil {
			// A few rows: stream pages through ranged reads instead of
			// fetching whole column chunks.
			props.BufferedStreamEnabled = true
			props.BufferSize = seekBufferBytes
		}
		opts := []file.ReadOption{file.WithReadProps(props)}
		if md0 != nil {
			opts = append(opts, file.WithMetadata(md0))
		}
		if pf, err = file.NewParquetReader(c.or, opts...); err != nil {
			return err
		}
		arp := pqarrow.ArrowReadProperties{BatchSize: sc.batch}
		c.dict = sc.dictColumns(pf, f)
		for _, leaf := range c.dict {
			arp.SetReadDict(leaf, true)
		}
		c.fr, err = pqarrow.NewFileReader(pf, arp, sc.mem)
		return err
	})
	if err != nil {
		err = c.or.classify(err, "unreadable Parquet footer")
		c.close()
		return nil, err
	}
	if err := sc.checkFile(c, pf); err != nil {
		c.close()
		return nil, err
	}
	md := pf.MetaData()
	if raw := md.KeyValueMetadata().FindValue(checksumKey); raw != nil {
		if c.sums, err = parseChecksums(f.Key, *raw, pf.NumRowGroups(), len(c.names)); err != nil {
			c.close()
			return nil, err
		}
	}
	if sc.rd != nil && md0 == nil {
		sc.rd.keepFooter(f, md)
	}
	var start int64
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		c.starts = append(c.starts, start)
		n := md.RowGroup(rg).NumRows()
		sc.stats.RowGroups++
		if sc.wantsRange(start, n) && sc.rowGroupMayMatch(c, rg, start, n) {
			c.rgs = append(c.rgs, rg)
		} else {
			sc.stats.RowGroupsPruned++
		}
		start += n
	}
	return c, nil
}

// checkFile verifies the Parquet file is the one the state describes: same
// row count and the expected Arrow fields for every column we read.
func (sc *Scanner) checkFile(c *fragCursor, pf *file.Reader) error {
	key := c.frag.Key
	if pf.NumRows() != c.frag.Rows {
		return corrupt(key, -1, fmt.Sprintf("file has %d rows, table state says %d", pf.NumRows(), c.frag.Rows), nil)
	}
	fields := c.fr.Manifest.Fields
	c.names = make([]string, len(fields))
	for i := range fields {
		c.names[i] = fields[i].Field.Name
	}
	cols, err := fileColumns(c.frag, sc.schema, c.names)
	if err != nil {
		return corrupt(key, -1, err.Error(), nil)
	}
	c.cols = cols
	// Leaves in file order: the record reader returns fields in that order.
	read := make([]int, 0, len(sc.read))
	for _, i := range sc.read {
		col := sc.schema.Columns[i]
		fi := cols[i]
		if fi < 0 {
			continue // not in this file: reads as null (process)
		}
		fld := fields[fi].Field
		want := col.Name
		if c.frag.Fields != nil {
			want = c.frag.Fields[i]
		}
		ft := fld.Type
		if dt, ok := ft.(*arrow.DictionaryType); ok {
			if _, asked := c.dict[i]; asked {
				ft = dt.ValueType
			}
		}
		if fld.Name != want || !arrow.TypeEqual(ft, col.Type.fileArrowType()) {
			return corrupt(key, -1, fmt.Sprintf("file column %d is %s %v, schema wants %s %v", fi, fld.Name, fld.Type, want, col.Type.fileArrowType()), nil)
		}
		read = append(read, fi)
	}
	slices.Sort(read)
	for _, fi := range read {
		c.leaves = appendLeaves(c.leaves, &fields[fi])
	}
	return nil
}

func appendLeaves(dst []int, f *pqarrow.SchemaField) []int {
	if f.IsLeaf() {
		return append(dst, f.ColIndex)
	}
	for i := range f.Children {
		dst = appendLeaves(dst, &f.Children[i])
	}
	return dst
}

func (sc *Scanner) rowGroupMayMatch(c *fragCursor, rg int, start, n int64) bool {
	if c.del != nil && allDeleted(c.del, start, n) {
		return false
	}
	md := c.fr.ParquetReader().MetaData().RowGroup(rg)
	for i := range sc.filters {
		cf := &sc.filters[i]
		fi := c.cols[cf.col]
		if fi < 0 {
			// Absent from this file: every row is null.
			if !cf.mayMatch(ColumnStats{Nulls: n}, n) {
				return false
			}
			continue
		}
		leaf := c.fr.Manifest.Fields[fi].ColIndex
		if leaf < 0 {
			continue
		}
		cc, err := md.ColumnChunk(leaf)
		if err != nil {
			continue // no usable statistics: read the row group
		}
		ts, err := cc.Statistics()
		if err != nil || ts == nil {
			continue
		}
		if !cf.mayMatch(parquetStats(cf.kind, ts), n) {
			return false
		}
	}
	return true
}

// wantsRange reports whether rows [start, start+n) hold a wanted offset
// (always true without a row restriction).
func (sc *Scanner) wantsRange(start, n int64) bool {
	if sc.want == nil {
		return true
	}
	i, _ := slices.BinarySearch(sc.want, start)
	return i < len(sc.want) && sc.want[i] < start+n
}

func allDeleted(del rowBitmap, start, n int64) bool {
	for o := start; o < start+n; o++ {
		if !del.has(o) {
			return false
		}
	}
	return true
}

// parquetStats converts Parquet footer statistics to canonical ColumnStats.
func parquetStats(k Kind, ts metadata.TypedStatistics) ColumnStats {
	cs := ColumnStats{Nulls: -1}
	if ts.HasNullCount() {
		cs.Nulls = ts.NullCount()
	}
	if !ts.HasMinMax() {
		return cs
	}
	switch s := ts.(type) {
	case *metadata.ByteArrayStatistics:
		if k == String || k == Enum {
			cs.Min, cs.Max = string(s.Min()), string(s.Max())
		}
	case *metadata.BooleanStatistics:
		cs.Min, cs.Max = s.Min(), s.Max()
	case *metadata.Int32Statistics:
		if k == U32 {
			cs.Min, cs.Max = uint64(uint32(s.Min())), uint64(uint32(s.Max()))
		} else {
			cs.Min, cs.Max = int64(s.Min()), int64(s.Max())
		}
	case *metadata.Int64Statistics:
		if k == U64 {
			cs.Min, cs.Max = uint64(s.Min()), uint64(s.Max())
		} else {
			cs.Min, cs.Max = s.Min(), s.Max()
		}
	case *metadata.Float32Statistics:
		lo, hi := float64(s.Min()), float64(s.Max())
		if !math.IsNaN(lo) && !math.IsNaN(hi) {
			cs.Min, cs.Max = lo, hi
		}
	case *metadata.Float64Statistics:
		if lo, hi := s.Min(), s.Max(); !math.IsNaN(lo) && !math.IsNaN(hi) {
			cs.Min, cs.Max = lo, hi
		}
	}
	return cs
}

// nextBatch returns the next raw batch of the fragment (file types, read
// columns only) and the fragment offset of its first row.
func (c *fragCursor) nextBatch(sc *Scanner) (rec arrow.RecordBatch, base int64, ok bool, err error) {
	for {
		if len(c.pageRuns) > 0 {
			return c.nextPages(sc)
		}
		if c.rr == nil {
			if len(c.rgs) == 0 {
				return nil, 0, false, nil
			}
			rg := c.rgs[0]
			c.rgs = c.rgs[1:]
			offs := sc.wantedIn(c.starts[rg], c.rowGroupRows(rg))
			if len(offs) > 0 {
				var runs []rowRun
				var ranges []byteRange
				var paged bool
				err := guard(c.frag.Key, func() error {
					var err error
					runs, ranges, paged, err = c.pagePlan(rg, offs)
					return err
				})
				if err != nil {
					return nil, 0, false, c.or.classify(err, "unreadable page index")
				}
				if !paged && (len(offs) > maxSeekRows || !c.hasOffsetIndex(rg)) {
					// Read whole, or seeking without an offset index
					// (which walks the chunk from its start per row).
					ranges, err = c.chunkRanges(rg)
				}
				if err == nil {
					err = guard(c.frag.Key, func() error { return c.prefetch(ranges) })
				}
				if err != nil {
					return nil, 0, false, c.or.classify(err, "unreadable row group")
				}
				if !paged && len(offs) <= maxSeekRows {
					// Seek mode: each wanted row a run of its own,
					// positioned by the page index where there is one.
					runs = make([]rowRun, len(offs))
					for i, o := range offs {
						runs[i] = rowRun{o, o}
					}
				}
				if runs != nil {
					if err := c.openPages(sc, rg, runs, paged); err != nil {
						return nil, 0, false, c.or.classify(err, "unreadable row group")
					}
					continue
				}
			}
			err := guard(c.frag.Key, func() error {
				var err error
				c.rr, err = c.fr.GetRecordReader(sc.ctx, c.leaves, []int{rg})
				return err
			})
			if err != nil {
				return nil, 0, false, c.or.classify(err, "unreadable row group")
			}
			c.rgNext = c.starts[rg]
			c.rg, c.acc = rg, nil
		}
		var more bool
		err := guard(c.frag.Key, func() error {
			more = c.rr.Next()
			if !more {
				return c.rr.Err()
			}
			return nil
		})
		if err != nil {
			return nil, 0, false, c.or.classify(err, "undecodable column data")
		}
		if !more {
			c.rr.Release()
			c.rr = nil
			c.or.spans = nil // the row group's prefetched chunks, if any
			if err := c.verifyRowGroup(sc); err != nil {
				return nil, 0, false, err
			}
			continue
		}
		rec = c.rr.RecordBatch()
		if err := c.accumulate(sc, rec); err != nil {
			return nil, 0, false, err
		}
		rec.Retain()
		base = c.rgNext
		c.rgNext += rec.NumRows()
		sc.stats.RowsRead += rec.NumRows()
		return rec, base, true, nil
	}
}

// accumulate feeds a decoded batch of the open row group to the running
// content checksums of its columns.
func (c *fragCursor) accumulate(sc *Scanner, rec arrow.RecordBatch) error {
	if c.sums == nil {
		return nil
	}
	if c.acc == nil {
		c.acc = make(map[int]*colSum, rec.NumCols())
	}
	for i, f := range rec.Schema().Fields() {
		col := slices.Index(c.names, f.Name) // checksums are by file field
		if col < 0 {
			return corrupt(c.frag.Key, -1, fmt.Sprintf("decoded column %q is not in the file", f.Name), nil)
		}
		s := c.acc[col]
		if s == nil {
			s = &colSum{}
			c.acc[col] = s
		}
		if err := s.add(rec.Column(i)); err != nil {
			return err
		}
	}
	return nil
}

// verifyRowGroup compares the checksums of the row group just decoded in
// full with the ones the writer recorded.
func (c *fragCursor) verifyRowGroup(sc *Scanner) error {
	if c.sums == nil {
		return nil
	}
	want := c.sums.Sums[c.rg]
	for col, s := range c.acc {
		if got := s.sum(); got != want[col] {
			return corrupt(c.frag.Key, -1, fmt.Sprintf("row group %d column %q: content checksum %08x, the writer recorded %08x (the decoded values are not the ones written)", c.rg, c.names[col], got, want[col]), nil)
		}
	}
	c.acc = nil
	return nil
}

// seekBufferBytes is the read size of page streaming in seek mode.
const seekBufferBytes = 8 << 10

// maxSeekRows is the most wanted rows of one row group read by seeking
// row by row; more are read with the row group.
const maxSeekRows = 32

func (c *fragCursor) rowGroupRows(rg int) int64 {
	return c.fr.ParquetReader().MetaData().RowGroup(rg).NumRows()
}

// wantedIn returns the wanted offsets in rows [start, start+n), or nil
// without a row restriction.
func (sc *Scanner) wantedIn(start, n int64) []int64 {
	if sc.want == nil {
		return nil
	}
	i, _ := slices.BinarySearch(sc.want, start)
	j, _ := slices.BinarySearch(sc.want, start+n)
	return sc.want[i:j]
}

// process applies deletions and filters to a raw batch and projects it.
// It returns nil when no row survives.
func (sc *Scanner) process(raw arrow.RecordBatch, base int64) (arrow.RecordBatch, []int64, error) {
	n := int(raw.NumRows())
	byName := make(map[string]arrow.Array, raw.NumCols())
	for i, f := range raw.Schema().Fields() {
		byName[f.Name] = raw.Column(i)
	}
	column := func(i int) (arrow.Array, error) {
		c := sc.schema.Columns[i]
		fi := sc.cur.cols[i]
		if fi < 0 {
			// Added after this fragment was written (evolve.go).
			return array.MakeArrayOfNull(sc.mem, c.Type.ArrowType(), n), nil
		}
		a, ok := byName[sc.cur.names[fi]]
		if !ok || a.Len() != n {
			return nil, corrupt(sc.cur.frag.Key, -1, fmt.Sprintf("column %q missing from decoded batch", c.Name), nil)
		}
		if _, isDict := a.(*array.Dictionary); isDict {
			if _, asked := sc.cur.dict[i]; !asked {
				return nil, corrupt(sc.cur.frag.Key, -1, fmt.Sprintf("column %q decoded as a dictionary", c.Name), nil)
			}
			a.Retain() // a filter-only column: evaluated as it is (compiledFilter.evalDict)
			sc.stats.DictBatches++
			return a, nil
		}
		return fromFileArray(sc.mem, sc.cur.frag.Key, c, a)
	}

	mask := make([]bool, n)
	for i := range mask {
		mask[i] = true
	}
	if sc.cur.del != nil {
		for i := range mask {
			mask[i] = !sc.cur.del.has(base + int64(i))
		}
	}
	if sc.wantBits != nil {
		for i := range mask {
			mask[i] = mask[i] && sc.wantBits.has(base+int64(i))
		}
	}
	for i := range sc.filters {
		cf := &sc.filters[i]
		a, err := column(cf.col)
		if err != nil {
			return nil, nil, err
		}
		cf.eval(a, mask)
		a.Release()
	}
	kept := 0
	for _, m := range mask {
		if m {
			kept++
		}
	}
	if kept == 0 {
		return nil, nil, nil
	}

	cols := make([]arrow.Array, len(sc.proj))
	defer releaseAll(cols)
	for j, i := range sc.proj {
		a, err := column(i)
		if err != nil {
			return nil, nil, err
		}
		cols[j] = a
	}
	out := array.NewRecordBatch(sc.outSchema, cols, int64(n))
	var offs []int64
	if sc.offsets {
		offs = make([]int64, 0, kept)
		for i, m := range mask {
			if m {
				offs = append(offs, base+int64(i))
			}
		}
	}
	if kept == n {
		return out, offs, nil
	}
	defer out.Release()
	mb := array.NewBooleanBuilder(sc.mem)
	mb.AppendValues(mask, nil)
	maskArr := mb.NewArray()
	mb.Release()
	defer maskArr.Release()
	filtered, err := compute.FilterRecordBatch(compute.WithAllocator(sc.ctx, sc.mem), out, maskArr, compute.DefaultFilterOptions())
	if err != nil {
		return nil, nil, fmt.Errorf("table: select rows: %w", err)
	}
	return filtered, offs, nil
}

// LookupIDs returns the live rows whose key column (id) is one of ids, with
// the given columns (nil = all), as one record the caller releases. It is
// Reader.LookupIDs without a cache: fragments are probed through their
// indexes and only the pages of the hits are read; unindexed fragments and
// row groups whose id range holds none of the ids are not read.
func LookupIDs(ctx context.Context, st storage.Store, s *State, ids []string, columns []string, mem memory.Allocator) (arrow.RecordBatch, error) {
	return NewReader(st, nil).LookupIDs(ctx, s, ids, columns, mem)
}

// Collect runs a scan to completion and concatenates its records into one
// (the caller releases it). Meant for small results.
func Collect(ctx context.Context, st storage.Store, s *State, opts ScanOptions) (arrow.RecordBatch, error) {
	if opts.Alloc == nil {
		opts.Alloc = memory.DefaultAllocator
	}
	sc, err := Scan(ctx, st, s, opts)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	return collect(sc, opts.Alloc)
}

// collect drains sc into one record allocated from mem.
func collect(sc *Scanner, mem memory.Allocator) (arrow.RecordBatch, error) {
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for sc.Next() {
		r := sc.Record()
		r.Retain()
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return concat(recs, sc.Schema(), mem)
}

// concatRecords concatenates records of the projection columns (nil = all)
// of schema into one.
func concatRecords(recs []arrow.RecordBatch, schema Schema, columns []string, mem memory.Allocator) (arrow.RecordBatch, error) {
	out := schema.ArrowSchema()
	if columns != nil {
		fields := make([]arrow.Field, len(columns))
		for j, name := range columns {
			i := schema.Index(name)
			if i < 0 {
				return nil, fmt.Errorf("%w: unknown column %q in projection", ErrSchema, name)
			}
			fields[j] = out.Field(i)
		}
		out = arrow.NewSchema(fields, nil)
	}
	return concat(recs, out, mem)
}

// concat concatenates records of one schema into one (recs stay owned by
// the caller).
func concat(recs []arrow.RecordBatch, schema *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	var err error
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	defer releaseAll(cols)
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for j, f := range schema.Fields() {
		if len(recs) == 0 {
			b := array.NewBuilder(mem, f.Type)
			cols[j] = b.NewArray()
			b.Release()
			continue
		}
		parts := make([]arrow.Array, len(recs))
		for k, r := range recs {
			parts[k] = r.Column(j)
		}
		if cols[j], err = array.Concatenate(parts, mem); err != nil {
			return nil, fmt.Errorf("table: concatenate: %w", err)
		}
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

// dictColumns returns the filter-only String/Enum columns of the scan
// whose chunks carry a dictionary in every row group of pf, mapped to
// their leaf index: decoding those as dictionary indices skips building
// one string per row.
func (sc *Scanner) dictColumns(pf *file.Reader, f Fragment) map[int]int {
	if len(sc.filterOnly) == 0 || sc.want != nil {
		return nil
	}
	md := pf.MetaData()
	var out map[int]int
	for i := range sc.filterOnly {
		name := sc.schema.Columns[i].Name
		if f.Fields != nil {
			name = f.Fields[i] // the file's name for the column (evolve.go)
		}
		leaf := -1
		if name != "" {
			leaf = md.Schema.ColumnIndexByName(name)
		}
		if leaf < 0 {
			continue
		}
		all := md.NumRowGroups() > 0
		for rg := 0; rg < md.NumRowGroups() && all; rg++ {
			cc, err := md.RowGroup(rg).ColumnChunk(leaf)
			all = err == nil && cc.HasDictionaryPage()
		}
		if all {
			if out == nil {
				out = map[int]int{}
			}
			out[i] = leaf
		}
	}
	return out
}
