package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestChecksumIsBatchInvariant: the canonical checksum of a column does not
// depend on how its rows are split into batches.
func TestChecksumIsBatchInvariant(t *testing.T) {
	schema := propertySchema()
	rec := buildRecord(t, memory.DefaultAllocator, schema, randomRows(7, schema, 300))
	defer rec.Release()
	fileRec := toFileRecord(memory.DefaultAllocator, schema, rec)
	defer fileRec.Release()
	whole, err := recordChecksums(fileRec)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int64{1, 17, 150, 299} {
		acc := make([]colSum, fileRec.NumCols())
		for _, r := range [][2]int64{{0, cut}, {cut, fileRec.NumRows()}} {
			part := fileRec.NewSlice(r[0], r[1])
			for i, c := range part.Columns() {
				if err := acc[i].add(c); err != nil {
					t.Fatal(err)
				}
			}
			part.Release()
		}
		for i := range acc {
			if got := acc[i].sum(); got != whole[i] {
				t.Errorf("cut %d column %s: %08x, whole %08x", cut, schema.Columns[i].Name, got, whole[i])
			}
		}
	}
}

// TestChecksumCatchesMisencodedValues writes a fragment the way the writer
// once did — one pqarrow Write of a record spanning two row groups, which
// stores the second row group's vectors from the start of the column — with
// the checksums of the values it was meant to hold. A scan must fail with a
// typed corruption error naming the fragment, never return the wrong vectors.
func TestChecksumCatchesMisencodedValues(t *testing.T) {
	schema := Schema{Columns: []Column{
		{Name: KeyColumn, Type: ColumnType{Kind: String}},
		{Name: "v", Type: ColumnType{Kind: Vector, Dim: 4}},
	}}
	const rows, rg = 2500, 1000
	rec := buildRecord(t, memory.DefaultAllocator, schema, randomRows(3, schema, rows))
	defer rec.Release()
	fc := fileChecksums{V: checksumVersion}
	for off := int64(0); off < rows; off += rg {
		part := rec.NewSlice(off, min(off+rg, rows))
		dense, err := denseRecord(memory.DefaultAllocator, part)
		if err != nil {
			t.Fatal(err)
		}
		sums, err := recordChecksums(dense)
		if err != nil {
			t.Fatal(err)
		}
		fc.Sums = append(fc.Sums, sums)
		dense.Release()
		part.Release()
	}
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rg))
	fw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil { // the faulty path: pqarrow slices the vectors itself
		t.Fatal(err)
	}
	b, _ := json.Marshal(fc)
	if err := fw.AppendKeyValueMetadata(checksumKey, string(b)); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	st := storage.NewMem()
	key := testPrefix + "/data/misencoded.parquet"
	if _, err := st.Put(context.Background(), key, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	stats := make([]ColumnStats, len(schema.Columns))
	for i, c := range schema.Columns {
		stats[i] = computeStats(c.Type, rec.Column(i))
	}
	s0, _ := NewState(schema)
	s, err := s0.Append(Fragment{Key: key, Rows: rows, Bytes: int64(buf.Len()), Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Scan(context.Background(), st, s, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for sc.Next() {
	}
	var ce *CorruptError
	if err := sc.Err(); !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Key != key {
		t.Fatalf("scan of a misencoded fragment: err = %v, want a CorruptError for %s", err, key)
	}
	t.Log(sc.Err())

	// The same values through WriteFragment read back intact.
	f, err := WriteFragment(context.Background(), st, testPrefix, schema, rec, WriteOptions{RowGroupRows: rg})
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := s0.Append(f)
	got, _ := scanAll(t, st, s1, ScanOptions{})
	diffRows(t, schema, got, rowsOf(rec))
}

// TestChecksumBinaryStreams pins a string column's checksum streams to
// their definition — the lengths of the valid values as little-endian
// uint32s, and their bytes back to back — for columns with and without
// nulls (the no-null path skips the validity tests) and for slices that
// start past the array's first value.
func TestChecksumBinaryStreams(t *testing.T) {
	for _, nulls := range []bool{false, true} {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range 300 {
			if nulls && i%7 == 3 {
				b.AppendNull()
				continue
			}
			b.Append(strings.Repeat("k", i%13) + strconv.Itoa(i))
		}
		whole := b.NewStringArray()
		b.Release()
		for _, r := range [][2]int64{{0, 300}, {1, 300}, {17, 150}, {299, 300}, {5, 5}} {
			arr := array.NewSlice(whole, r[0], r[1]).(*array.String)
			var lens, data []byte
			for i := range arr.Len() {
				if arr.IsValid(i) {
					lens = binary.LittleEndian.AppendUint32(lens, uint32(len(arr.Value(i))))
					data = append(data, arr.Value(i)...)
				}
			}
			var got colSum
			got.addBinary(arr, arr.ValueOffsets(), arr.ValueBytes())
			if want := crc32.Update(0, castagnoli, lens); got.lengths != want {
				t.Errorf("nulls %v slice %v: lengths %08x, want %08x", nulls, r, got.lengths, want)
			}
			if want := crc32.Update(0, castagnoli, data); got.data != want {
				t.Errorf("nulls %v slice %v: data %08x, want %08x", nulls, r, got.data, want)
			}
			arr.Release()
		}
		whole.Release()
	}
}
