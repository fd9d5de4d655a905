package table

import (
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Page reads. A row-restricted scan (ReadRows, ScanOptions.Rows) of a
// row group whose read columns are all flat and carry an offset index
// (the Parquet page index every fragment has been written with since
// 8 KiB pages; fragment.go) reads only the data pages holding a wanted
// row: the offset index names each page's byte range and first row, the
// pages (and dictionary pages) needed by any read column are fetched in
// one pass of ranged reads, adjacent ones coalesced, and each run of
// wanted rows is decoded from them alone. Rows between two wanted rows of
// one run are decoded and dropped (process masks them with wantBits); a
// run ends where some column would cross a page no wanted row needs.
//
// A row group without an offset index, with a nested read column (lists,
// vectors: their pages need not start at row boundaries), or where the
// needed pages are more than maxPageShare of the read chunks is read as
// before (seek mode for a few rows, else the whole row group), so files
// written before the page index read exactly as they did. Page reads,
// like seek mode, decode part of a row group and so cannot check its
// content checksums (docs/format/table.md).

// maxPageShare: page reads are used while the needed pages are at most
// this fraction of the read columns' chunk bytes; past it one read of
// each chunk costs less than many ranged ones (and verifies checksums).
const maxPageShare = 0.5

// pageGapBytes is the largest gap between two needed byte ranges that a
// prefetch reads through instead of issuing two reads.
const pageGapBytes = 1 << 10

// byteRange is a range [Off, Off+Len) of a fragment object.
type byteRange struct{ Off, Len int64 }

// rowRun is a run of rows [First, Last] (fragment offsets) read from one
// row group by one positioned decode per column.
type rowRun struct{ First, Last int64 }

// pagePlan returns the runs and byte ranges of a page read of wanted
// offsets offs (ascending, all in row group rg), or ok false when the row
// group must be read another way.
func (c *fragCursor) pagePlan(rg int, offs []int64) (runs []rowRun, ranges []byteRange, ok bool, err error) {
	pf := c.fr.ParquetReader()
	pir := pf.GetPageIndexReader()
	if pir == nil || len(c.leaves) == 0 {
		return nil, nil, false, nil
	}
	rgi, err := pir.RowGroup(rg)
	if err != nil || rgi == nil {
		return nil, nil, false, nil // no page index: the row-group path
	}
	md := pf.MetaData().RowGroup(rg)
	start, n := c.starts[rg], md.NumRows()
	// firsts[l][p]: the first row (row-group relative) of page p of leaf l.
	firsts := make([][]int64, len(c.leaves))
	var need []byteRange
	var chunkBytes, needBytes int64
	for li, leaf := range c.leaves {
		if pf.MetaData().Schema.Column(leaf).MaxRepetitionLevel() > 0 {
			return nil, nil, false, nil
		}
		cc, err := md.ColumnChunk(leaf)
		if err != nil {
			return nil, nil, false, nil
		}
		oi, err := rgi.GetOffsetIndex(leaf)
		if err != nil {
			return nil, nil, false, c.or.classify(err, fmt.Sprintf("row group %d column %d: unreadable offset index", rg, leaf))
		}
		if oi == nil {
			return nil, nil, false, nil
		}
		locs := oi.GetPageLocations()
		if len(locs) == 0 || locs[0].FirstRowIndex != 0 {
			return nil, nil, false, corrupt(c.frag.Key, -1, fmt.Sprintf("row group %d column %d: offset index does not start at row 0", rg, leaf), nil)
		}
		fs := make([]int64, len(locs))
		chunkBytes += cc.TotalCompressedSize()
		for p, l := range locs {
			fs[p] = l.FirstRowIndex
			if p > 0 && fs[p] <= fs[p-1] || fs[p] >= n {
				return nil, nil, false, corrupt(c.frag.Key, -1, fmt.Sprintf("row group %d column %d: offset index page %d starts at row %d", rg, leaf, p, fs[p]), nil)
			}
		}
		firsts[li] = fs
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DataPageOffset() > cc.DictionaryPageOffset() {
			r := byteRange{cc.DictionaryPageOffset(), cc.DataPageOffset() - cc.DictionaryPageOffset()}
			need = append(need, r)
			needBytes += r.Len
		}
		last := -1
		for _, o := range offs {
			p := pageOf(fs, o-start)
			if p == last {
				continue
			}
			last = p
			r := byteRange{locs[p].Offset, int64(locs[p].CompressedPageSize)}
			if r.Off < 0 || r.Len <= 0 || r.Off+r.Len > c.frag.Bytes {
				return nil, nil, false, corrupt(c.frag.Key, -1, fmt.Sprintf("row group %d column %d: page %d at [%d,+%d) outside the object", rg, leaf, p, r.Off, r.Len), nil)
			}
			need = append(need, r)
			needBytes += r.Len
		}
	}
	if float64(needBytes) > maxPageShare*float64(chunkBytes) {
		return nil, nil, false, nil
	}
	// Runs: a wanted row joins the previous one's run while no column
	// would decode through a page between them that no wanted row needs.
	run := rowRun{offs[0], offs[0]}
	for _, o := range offs[1:] {
		joins := true
		for _, fs := range firsts {
			if pageOf(fs, o-start)-pageOf(fs, run.Last-start) > 1 {
				joins = false
				break
			}
		}
		if joins {
			run.Last = o
			continue
		}
		runs = append(runs, run)
		run = rowRun{o, o}
	}
	runs = append(runs, run)
	return runs, coalesce(need, pageGapBytes), true, nil
}

// pageOf returns the page of firsts (ascending first rows, firsts[0] = 0)
// holding row r.
func pageOf(firsts []int64, r int64) int {
	return sort.Search(len(firsts), func(i int) bool { return firsts[i] > r }) - 1
}

// coalesce sorts ranges and merges those overlapping or closer than gap.
func coalesce(rs []byteRange, gap int64) []byteRange {
	slices.SortFunc(rs, func(a, b byteRange) int {
		if a.Off != b.Off {
			return int(a.Off - b.Off)
		}
		return int(a.Len - b.Len)
	})
	out := rs[:0:0]
	for _, r := range rs {
		if k := len(out) - 1; k >= 0 && r.Off <= out[k].Off+out[k].Len+gap {
			out[k].Len = max(out[k].Len, r.Off+r.Len-out[k].Off)
			continue
		}
		out = append(out, r)
	}
	return out
}

// openPages opens a run read of row group rg: one positioned reader per
// read field, each run decoded by seeking every field to its first row
// (through the offset index where there is one) and reading its rows.
// Fields are read in the calling goroutine, so a decoder panic on a
// corrupt file is recovered by guard. paged reports whether the runs come
// from pagePlan (counted in ScanStats.PageRuns) or are seek-mode rows.
func (c *fragCursor) openPages(sc *Scanner, rg int, runs []rowRun, paged bool) error {
	c.closeReaders()
	return guard(c.frag.Key, func() error {
		rdrs, schema, err := c.fr.GetFieldReaders(sc.ctx, c.leaves, []int{rg})
		if err != nil {
			return err
		}
		c.pageRdrs, c.pageSchema, c.pageRG, c.pageRuns, c.paged = rdrs, schema, rg, runs, paged
		return nil
	})
}

// prefetch fetches ranges of the fragment into its object reader, first
// noting where the file's column chunks end.
func (c *fragCursor) prefetch(ranges []byteRange) error {
	if c.or.dataEnd == 0 && len(ranges) > 0 {
		md := c.fr.ParquetReader().MetaData()
		for rg := range md.NumRowGroups() {
			g := md.RowGroup(rg)
			for col := range g.NumColumns() {
				cc, err := g.ColumnChunk(col)
				if err != nil {
					return corrupt(c.frag.Key, -1, fmt.Sprintf("row group %d column %d: %v", rg, col, err), nil)
				}
				start := cc.DataPageOffset()
				if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
					start = min(start, cc.DictionaryPageOffset())
				}
				c.or.dataEnd = max(c.or.dataEnd, start+cc.TotalCompressedSize())
			}
		}
	}
	return c.or.prefetch(ranges)
}

// closeReaders releases the open run read's readers, if any.
func (c *fragCursor) closeReaders() {
	for _, r := range c.pageRdrs {
		r.Release()
	}
	c.pageRdrs, c.pageRuns = nil, nil
}

// closePages ends the open run read and drops its prefetched ranges.
func (c *fragCursor) closePages() {
	c.closeReaders()
	if c.or != nil {
		c.or.spans = nil
	}
}

// nextPages decodes the next run of the open page read as one batch of
// rows [First, Last].
func (c *fragCursor) nextPages(sc *Scanner) (arrow.RecordBatch, int64, bool, error) {
	run := c.pageRuns[0]
	c.pageRuns = c.pageRuns[1:]
	n := run.Last - run.First + 1
	cols := make([]arrow.Array, len(c.pageRdrs))
	release := func() {
		for _, a := range cols {
			if a != nil {
				_ = guard(c.frag.Key, func() error { a.Release(); return nil })
			}
		}
	}
	err := guard(c.frag.Key, func() error {
		for i, r := range c.pageRdrs {
			if err := r.SeekToRow(run.First - c.starts[c.pageRG]); err != nil {
				return err
			}
			a, err := readRun(sc, r, n)
			if err != nil {
				return err
			}
			cols[i] = a
			// Checked under guard: a corrupt page can decode to an
			// array whose data is missing.
			if got := int64(a.Len()); got != n {
				return corrupt(c.frag.Key, -1, fmt.Sprintf("row group %d column %q: %d rows decoded at offset %d, %d wanted", c.pageRG, c.pageSchema.Field(i).Name, got, run.First, n), nil)
			}
		}
		return nil
	})
	if err != nil {
		release()
		return nil, 0, false, c.or.classify(err, "undecodable column data")
	}
	rec := array.NewRecordBatch(c.pageSchema, cols, n)
	release()
	if len(c.pageRuns) == 0 {
		c.closePages()
	}
	sc.stats.RowsRead += n
	if c.paged {
		sc.stats.PageRuns++
	}
	return rec, run.First, true, nil
}

// readRun reads the next n rows of r as one array.
func readRun(sc *Scanner, r *pqarrow.ColumnReader, n int64) (arrow.Array, error) {
	ch, err := r.NextBatch(n)
	if err != nil {
		return nil, err
	}
	defer ch.Release()
	switch len(ch.Chunks()) {
	case 0:
		return nil, fmt.Errorf("no rows decoded")
	case 1:
		a := ch.Chunk(0)
		a.Retain()
		return a, nil
	}
	return array.Concatenate(ch.Chunks(), sc.mem)
}

// chunkRanges returns the byte ranges of the read leaves' column chunks in
// row group rg, coalesced: a row-restricted scan streams pages (16 KiB
// peeks at every page header, overlapping the next pages), so a row group
// it reads whole is fetched first, one ranged read per run of chunks, and
// the stream is served from memory.
func (c *fragCursor) chunkRanges(rg int) ([]byteRange, error) {
	md := c.fr.ParquetReader().MetaData().RowGroup(rg)
	rs := make([]byteRange, 0, len(c.leaves))
	for _, leaf := range c.leaves {
		cc, err := md.ColumnChunk(leaf)
		if err != nil {
			return nil, err
		}
		off := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && off > cc.DictionaryPageOffset() {
			off = cc.DictionaryPageOffset()
		}
		n := cc.TotalCompressedSize()
		if off < 0 || n <= 0 || off+n > c.frag.Bytes {
			return nil, corrupt(c.frag.Key, -1, fmt.Sprintf("row group %d column %d: chunk [%d,+%d) outside the object", rg, leaf, off, n), nil)
		}
		rs = append(rs, byteRange{off, n})
	}
	return coalesce(rs, pageGapBytes), nil
}

// hasOffsetIndex reports whether row group rg has a page index.
func (c *fragCursor) hasOffsetIndex(rg int) bool {
	pir := c.fr.ParquetReader().GetPageIndexReader()
	if pir == nil {
		return false
	}
	rgi, err := pir.RowGroup(rg)
	return err == nil && rgi != nil
}
