package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// flatTypesSchema is allTypesSchema without its nested columns (vectors,
// lists): the columns page reads apply to.
func flatTypesSchema() Schema {
	var s Schema
	for _, c := range allTypesSchema().Columns {
		if c.Type.Kind != Vector && c.Type.Kind != List {
			s.Columns = append(s.Columns, c)
		}
	}
	return s
}

// flatRows projects allTypesSchema rows onto flatTypesSchema.
func flatRows(rows [][]any) [][]any {
	all, flat := allTypesSchema(), flatTypesSchema()
	out := make([][]any, len(rows))
	for i, r := range rows {
		for _, c := range flat.Columns {
			out[i] = append(out[i], r[all.Index(c.Name)])
		}
	}
	return out
}

// TestPageReadsMatchScan pins that row-restricted reads answered from the
// pages holding the wanted rows (pages.go) return exactly what a full
// scan has at those offsets: every flat type, nulls, several row groups,
// runs across page boundaries, projections, filters and deleted rows; and
// that dense selections and nested columns take the row-group path.
func TestPageReadsMatchScan(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	st := storage.NewMem()
	r := rand.New(rand.NewPCG(11, 12))
	const n = 40000
	schema := flatTypesSchema()
	f := writeRows(t, st, schema, flatRows(randomAllTypesRows(r, n)), WriteOptions{Alloc: mem, RowGroupRows: 1 << 15})
	s := stateOf(t, schema, f)
	all, _ := scanAll(t, st, s, ScanOptions{Alloc: mem})
	every := func(step, from int64) []int64 {
		var o []int64
		for i := from; i < n; i += step {
			o = append(o, i)
		}
		return o
	}
	cases := []struct {
		name  string
		offs  []int64
		paged bool // read from pages alone
	}{
		{"one row", []int64{12345}, true},
		{"first and last rows", []int64{0, n - 1}, true},
		{"row-group edges", []int64{32767, 32768, n - 2}, true},
		{"sparse", every(7919, 3), true},
		{"a run across pages", every(1, 1000)[:1500], true},
		{"runs and singles", append(every(1, 5000)[:40], 9000, 9001, 25000, 39999), true},
		{"dense", every(3, 0), false},
	}
	rd := NewReader(st, cache.New[any](1<<20))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, cols := range [][]string{nil, {"e", "s", "blob"}, {"id"}} {
				sc, err := rd.Scan(ctx, s, ScanOptions{Alloc: mem, Columns: cols, Rows: tc.offs, RowOffsets: true})
				if err != nil {
					t.Fatal(err)
				}
				got, offs, stats := drainWithOffsets(t, sc)
				if !slices.Equal(offs, tc.offs) {
					t.Fatalf("columns %v: offsets %v, want %v", cols, offs, tc.offs)
				}
				for i, o := range tc.offs {
					want := all[o]
					if cols != nil {
						want = nil
						for _, c := range cols {
							want = append(want, all[o][schema.Index(c)])
						}
					}
					if !equalRows(got[i], want) {
						t.Fatalf("columns %v: row %d = %v, want %v", cols, o, got[i], want)
					}
				}
				if (stats.PageRuns > 0) != tc.paged {
					t.Fatalf("columns %v: %d page runs, want paged = %v", cols, stats.PageRuns, tc.paged)
				}
			}
		})
	}

	t.Run("filters and deleted rows", func(t *testing.T) {
		want := append(every(1, 100)[:60], every(7919, 7)...)
		slices.Sort(want)
		want = slices.Compact(want)
		sDel, err := DeleteRows(ctx, st, testPrefix, s, map[string][]int64{f.Key: {want[0], want[5], want[6]}})
		if err != nil {
			t.Fatal(err)
		}
		flt := []Filter{{Column: "b", Op: OpEq, Value: true}}
		sc, err := rd.Scan(ctx, sDel, ScanOptions{Alloc: mem, Rows: want, Filters: flt, RowOffsets: true})
		if err != nil {
			t.Fatal(err)
		}
		_, got, stats := drainWithOffsets(t, sc)
		var exp []int64
		for k, o := range want {
			if k != 0 && k != 5 && k != 6 && all[o][schema.Index("b")] == true {
				exp = append(exp, o)
			}
		}
		if !slices.Equal(got, exp) || stats.PageRuns == 0 {
			t.Fatalf("offsets %v (%d page runs), want %v from pages", got, stats.PageRuns, exp)
		}
	})

	t.Run("nested columns take the row-group path", func(t *testing.T) {
		sAll, fAll := allTypesFragment(t, st, mem, r, 3000)
		rec, err := rd.ReadRows(ctx, sAll, fAll.Key, []int64{5, 2900}, nil, mem)
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		if rec.NumRows() != 2 {
			t.Fatalf("%d rows", rec.NumRows())
		}
	})
}

// writeUnpagedFragment writes rec as fragments were written before the
// page index: the library's default page size (1 MiB) and no page index.
// Such files must read exactly as before, through the row-group path.
func writeUnpagedFragment(t testing.TB, st storage.Store, schema Schema, rec arrow.RecordBatch) Fragment {
	t.Helper()
	mem := memory.DefaultAllocator
	fileRec := toFileRecord(mem, schema, rec)
	defer fileRec.Release()
	props := parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1), parquet.WithMaxRowGroupLength(DefaultRowGroupRows), parquet.WithStats(true),
		parquet.WithCreatedBy("omnigraph"))
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(fileRec.Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeRowGroups(mem, fw, fileRec, DefaultRowGroupRows); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	stats := make([]ColumnStats, len(schema.Columns))
	for i, c := range schema.Columns {
		stats[i] = computeStats(c.Type, rec.Column(i))
	}
	key := testPrefix + "/data/" + ulid.Make().String() + ".parquet"
	if _, err := storage.PutFresh(context.Background(), st, key, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return Fragment{Key: key, Rows: rec.NumRows(), Bytes: int64(buf.Len()), Stats: stats}
}

// TestPageReadsBytes pins with the counting store what a cold read of
// sparse rows of a 200,000-row Person table (four fragments of 65,536 rows,
// as a bulk load writes them) costs: the name and bio of one row in 6,000
// (10–11 rows per fragment, each in a page of its own) are read from
// their pages alone, under a third of what the row-group path reads for
// the same rows of the same data written before the page index (the whole
// name and bio chunks); the rows are the same.
func TestPageReadsBytes(t *testing.T) {
	ctx := context.Background()
	const rows, per, step = 200000, 1 << 16, 6000
	type table struct {
		st *storage.Counting
		s  *State
	}
	build := func(unpaged bool) table {
		st := storage.NewCounting(storage.NewMem())
		var s *State
		for lo := 0; lo < rows; lo += per {
			schema, rec := personRecord(lo, min(lo+per, rows))
			if s == nil {
				s, _ = NewState(schema)
			}
			var f Fragment
			var err error
			if unpaged {
				f = writeUnpagedFragment(t, st, schema, rec)
			} else {
				f, err = WriteFragment(ctx, st, testPrefix, schema, rec, WriteOptions{})
			}
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			if s, err = s.Append(f); err != nil {
				t.Fatal(err)
			}
		}
		return table{st, s}
	}
	read := func(tb table) ([][]any, int64, int) {
		tb.st.Reset()
		rd := NewReader(tb.st, cache.New[any](64<<20)) // cold: a fresh cache
		var out [][]any
		runs := 0
		for k, f := range tb.s.Fragments() {
			var offs []int64
			for o := int64((step - k*per%step) % step); o < f.Rows; o += step {
				offs = append(offs, o)
			}
			one := &State{schema: tb.s.schema, fragments: []Fragment{f}}
			sc, err := rd.Scan(ctx, one, ScanOptions{Columns: []string{"name", "bio"}, Rows: offs})
			if err != nil {
				t.Fatal(err)
			}
			for sc.Next() {
				out = append(out, rowsOf(sc.Record())...)
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			runs += sc.Stats().PageRuns
			sc.Close()
		}
		c := tb.st.Snapshot()
		return out, c[storage.OpGet].Bytes + c[storage.OpGetRange].Bytes, runs
	}
	paged, unpaged := build(false), build(true)
	gotP, bytesP, runsP := read(paged)
	gotU, bytesU, runsU := read(unpaged)
	if len(gotP) != (rows+step-1)/step || fmt.Sprint(gotP) != fmt.Sprint(gotU) {
		t.Fatalf("paged read %d rows, unpaged %d (want %d), or they differ", len(gotP), len(gotU), (rows+step-1)/step)
	}
	t.Logf("%d rows of %d: page reads %d bytes (%d runs), row-group path %d bytes", len(gotP), rows, bytesP, runsP, bytesU)
	if runsP == 0 || runsU != 0 {
		t.Fatalf("page runs: paged %d, unpaged %d", runsP, runsU)
	}
	if bytesP*3 > bytesU {
		t.Fatalf("page reads read %d bytes, over a third of the row-group path's %d", bytesP, bytesU)
	}
}

// TestPageReadsBitFlipsNeverPanic flips bytes of a fragment read by page
// reads: the read succeeds or fails with ErrCorrupt, never panics, and a
// read that succeeds through a flipped page index still returns rows.
func TestPageReadsBitFlipsNeverPanic(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	st := storage.NewMem()
	r := rand.New(rand.NewPCG(13, 14))
	schema := flatTypesSchema()
	f := writeRows(t, st, schema, flatRows(randomAllTypesRows(r, 6000)), WriteOptions{Alloc: mem})
	s := stateOf(t, schema, f)
	orig, _, _ := st.Get(ctx, f.Key)
	offs := []int64{17, 2500, 5999}
	step := max(1, len(orig)/2500) // every part of the file, ~2,500 flips
	if testing.Short() {
		step = max(1, len(orig)/300)
	}
	corrupted := 0
	for i := 0; i < len(orig); i += step {
		data := append([]byte{}, orig...)
		data[i] ^= 0xA5
		_, _ = st.Put(ctx, f.Key, data)
		rec, err := ReadRows(ctx, st, s, f.Key, offs, nil, mem)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flip at %d: untyped error %v", i, err)
			}
			corrupted++
			continue
		}
		if rec.NumRows() != int64(len(offs)) {
			t.Fatalf("flip at %d: %d rows", i, rec.NumRows())
		}
		rec.Release()
	}
	if corrupted == 0 {
		t.Fatal("no flip was detected at all")
	}
}

// TestSpansCutOnlyOnce pins the object reader's prefetched spans: a read
// inside a span is served from it and cut at its end, the next read at
// that end reports io.EOF once (ending a page stream's look-ahead), and a
// read there again, or any read outside the chunks' region, comes from
// the store, byte for byte.
func TestSpansCutOnlyOnce(t *testing.T) {
	ctx := context.Background()
	st := storage.NewCounting(storage.NewMem())
	data := make([]byte, 100)
	for i := range data {
		data[i] = byte(i)
	}
	const key = testPrefix + "/data/x.parquet"
	if _, err := st.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	or, err := openObject(ctx, st, key, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer or.Close()
	or.dataEnd = 60
	if err := or.prefetch([]byteRange{{10, 10}, {40, 20}}); err != nil { // the second span ends at dataEnd
		t.Fatal(err)
	}
	before := st.Snapshot()[storage.OpGetRange].Requests
	type read struct {
		off, n  int64
		got     int
		eof     bool
		fetched bool // from the store
	}
	for i, rd := range []read{
		{12, 4, 4, false, false},
		{12, 16, 8, true, false},  // cut at the span's end
		{20, 16, 0, true, false},  // the end, once
		{20, 16, 16, false, true}, // again: the store (this small object comes whole with the tail read)
		{45, 15, 15, false, false},
		{60, 8, 8, false, false}, // past the chunks' region: never cut
	} {
		p := make([]byte, rd.n)
		n, err := or.ReadAt(p, rd.off)
		fetched := st.Snapshot()[storage.OpGetRange].Requests != before
		before = st.Snapshot()[storage.OpGetRange].Requests
		if n != rd.got || (err == io.EOF) != rd.eof || (err != nil && err != io.EOF) || fetched != rd.fetched {
			t.Fatalf("read %d [%d,+%d): %d bytes, err %v, fetched %v; want %d, eof %v, fetched %v", i, rd.off, rd.n, n, err, fetched, rd.got, rd.eof, rd.fetched)
		}
		if !bytes.Equal(p[:n], data[rd.off:rd.off+int64(n)]) {
			t.Fatalf("read %d: wrong bytes %v", i, p[:n])
		}
	}
}
