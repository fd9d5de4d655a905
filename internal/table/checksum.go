package table

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Content checksums of fragments.
//
// Every fragment written by this build records, in its Parquet footer under
// checksumKey, one CRC-32C per row group and column of the values the writer
// was handed. A scan that decodes a row group recomputes the checksum of
// every column it decoded and fails with a CorruptError on a mismatch. This is
// what turns a bug of the class that once stored other rows' vectors in the
// second row group of a fragment (the encoder lost a slice offset; value
// counts and statistics were all plausible) into a typed error instead of
// wrong answers. Fragments written before the checksums existed have no
// footer entry and are read unchecked.
//
// The checksum is over a canonical form of the logical values, independent of
// how the rows are split into batches: per column three byte streams — a
// validity byte per row, the lengths of variable-length values and the
// values' bytes (nulls contribute only their validity byte) — each fed to its
// own running CRC; lists and vectors add their element column recursively.
// The result combines the stream CRCs of the column and its children.
const checksumKey = "omnigraph.checksums"

// checksumVersion is the layout of the footer entry and of the canonical form.
const checksumVersion = 1

// fileChecksums is the footer entry: Sums[rowGroup][column], columns in the
// order of the file schema.
type fileChecksums struct {
	V    int        `json:"v"`
	Sums [][]uint32 `json:"rg"`
}

func parseChecksums(key, raw string, rowGroups, columns int) (*fileChecksums, error) {
	var fc fileChecksums
	if err := json.Unmarshal([]byte(raw), &fc); err != nil {
		return nil, corrupt(key, -1, "unreadable content checksums in the footer", err)
	}
	if fc.V != checksumVersion {
		return nil, corrupt(key, -1, fmt.Sprintf("content checksums have version %d, this build reads %d", fc.V, checksumVersion), nil)
	}
	if len(fc.Sums) != rowGroups {
		return nil, corrupt(key, -1, fmt.Sprintf("footer has checksums for %d row groups, file has %d", len(fc.Sums), rowGroups), nil)
	}
	for rg, s := range fc.Sums {
		if len(s) != columns {
			return nil, corrupt(key, -1, fmt.Sprintf("footer has %d column checksums for row group %d, file has %d columns", len(s), rg, columns), nil)
		}
	}
	return &fc, nil
}

// colSum accumulates the canonical checksum of one column over batches.
type colSum struct {
	valid, lengths, data uint32
	child                *colSum
	scratch              []byte
}

func (s *colSum) sum() uint32 {
	var b [12]byte
	binary.LittleEndian.PutUint32(b[0:], s.valid)
	binary.LittleEndian.PutUint32(b[4:], s.lengths)
	binary.LittleEndian.PutUint32(b[8:], s.data)
	out := crc32.Update(0, castagnoli, b[:])
	if s.child != nil {
		binary.LittleEndian.PutUint32(b[0:], s.child.sum())
		out = crc32.Update(out, castagnoli, b[:4])
	}
	return out
}

func (s *colSum) childSum() *colSum {
	if s.child == nil {
		s.child = &colSum{}
	}
	return s.child
}

var validOnes = func() []byte {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = 1
	}
	return b
}()

// addValidity feeds one byte per row: 1 valid, 0 null.
func (s *colSum) addValidity(arr arrow.Array) {
	n := arr.Len()
	if arr.NullN() == 0 {
		for n > 0 {
			k := min(n, len(validOnes))
			s.valid = crc32.Update(s.valid, castagnoli, validOnes[:k])
			n -= k
		}
		return
	}
	buf := s.scratch[:0]
	for i := 0; i < n; i++ {
		if arr.IsValid(i) {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	s.valid = crc32.Update(s.valid, castagnoli, buf)
	s.scratch = buf[:0]
}

// add feeds every row of arr.
func (s *colSum) add(arr arrow.Array) error {
	s.addValidity(arr)
	switch a := arr.(type) {
	case *array.Boolean:
		buf := s.scratch[:0]
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				if a.Value(i) {
					buf = append(buf, 2)
				} else {
					buf = append(buf, 1)
				}
			}
		}
		s.data = crc32.Update(s.data, castagnoli, buf)
		s.scratch = buf[:0]
	case *array.Dictionary:
		return s.addDict(a)
	case *array.String:
		s.addBinary(a, a.ValueOffsets(), a.ValueBytes())
	case *array.Binary:
		s.addBinary(a, a.ValueOffsets(), a.ValueBytes())
	case *array.LargeBinary:
		s.addLargeBinary(a)
	case *array.List:
		buf := s.scratch[:0]
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) {
				lo, hi := a.ValueOffsets(i)
				buf = binary.LittleEndian.AppendUint32(buf, uint32(hi-lo))
			}
		}
		s.lengths = crc32.Update(s.lengths, castagnoli, buf)
		s.scratch = buf[:0]
		return s.addRuns(a, a.ListValues(), a.ValueOffsets)
	case *array.FixedSizeList:
		n := int64(a.DataType().(*arrow.FixedSizeListType).Len())
		base := int64(a.Offset()) * n
		return s.addRuns(a, a.ListValues(), func(i int) (int64, int64) { return base + int64(i)*n, base + int64(i+1)*n })
	default:
		fw, ok := arr.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 || len(arr.Data().Buffers()) < 2 {
			return fmt.Errorf("%w: no content checksum for Arrow type %v", ErrSchema, arr.DataType())
		}
		if arr.Len() == 0 {
			return nil
		}
		w := fw.BitWidth() / 8
		raw := arr.Data().Buffers()[1].Bytes()[arr.Data().Offset()*w:]
		raw = raw[:arr.Len()*w]
		if arr.NullN() == 0 {
			s.data = crc32.Update(s.data, castagnoli, raw)
			return nil
		}
		buf := s.scratch[:0]
		for i := 0; i < arr.Len(); i++ {
			if arr.IsValid(i) {
				buf = append(buf, raw[i*w:(i+1)*w]...)
			}
		}
		s.data = crc32.Update(s.data, castagnoli, buf)
		s.scratch = buf[:0]
	}
	return nil
}

// addBinary feeds a variable-length column: offs are its len+1 value
// offsets into data (both as the array exposes them). The data stream is
// the valid values' bytes back to back, so each run of valid rows is one
// contiguous range of data and one CRC update.
func (s *colSum) addBinary(arr arrow.Array, offs []int32, data []byte) {
	n := arr.Len()
	if arr.NullN() == 0 && n > 0 {
		// Every row valid (a load's id, src and dst, most strings): the
		// same streams without a validity test per row, the lengths
		// through a fixed buffer (the CRC is the same in any pieces).
		var buf [1024]byte
		for lo := 0; lo < n; lo += len(buf) / 4 {
			hi := min(lo+len(buf)/4, n)
			for i := lo; i < hi; i++ {
				binary.LittleEndian.PutUint32(buf[4*(i-lo):], uint32(offs[i+1]-offs[i]))
			}
			s.lengths = crc32.Update(s.lengths, castagnoli, buf[:4*(hi-lo)])
		}
		s.data = crc32.Update(s.data, castagnoli, data[:offs[n]-offs[0]])
		return
	}
	buf := s.scratch[:0]
	for i := 0; i < n; i++ {
		if arr.IsValid(i) {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(offs[i+1]-offs[i]))
		}
	}
	s.lengths = crc32.Update(s.lengths, castagnoli, buf)
	s.scratch = buf[:0]
	if n == 0 {
		return
	}
	base := offs[0] // data is already sliced to the array's first value
	for i := 0; i < n; {
		if arr.IsNull(i) {
			i++
			continue
		}
		j := i
		for j < n && arr.IsValid(j) {
			j++
		}
		s.data = crc32.Update(s.data, castagnoli, data[offs[i]-base:offs[j]-base])
		i = j
	}
}

func (s *colSum) addLargeBinary(a *array.LargeBinary) {
	offs := a.ValueOffsets()
	buf := s.scratch[:0]
	for i := 0; i < a.Len(); i++ {
		if a.IsValid(i) {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(offs[i+1]-offs[i]))
		}
	}
	s.lengths = crc32.Update(s.lengths, castagnoli, buf)
	s.scratch = buf[:0]
	for i := 0; i < a.Len(); i++ {
		if a.IsValid(i) {
			s.data = crc32.Update(s.data, castagnoli, a.Value(i))
		}
	}
}

// addRuns feeds the child elements of every valid row of a list-like array,
// slicing the child once per run of consecutive valid rows.
func (s *colSum) addRuns(parent, child arrow.Array, bounds func(int) (int64, int64)) error {
	c := s.childSum()
	n := parent.Len()
	for i := 0; i < n; {
		if parent.IsNull(i) {
			i++
			continue
		}
		j := i
		for j < n && parent.IsValid(j) {
			j++
		}
		lo, _ := bounds(i)
		_, hi := bounds(j - 1)
		part := array.NewSlice(child, lo, hi)
		err := c.add(part)
		part.Release()
		if err != nil {
			return err
		}
		i = j
	}
	return nil
}

// recordChecksums returns the checksum of every column of rec.
func recordChecksums(rec arrow.RecordBatch) ([]uint32, error) {
	out := make([]uint32, rec.NumCols())
	for i, c := range rec.Columns() {
		var s colSum
		if err := s.add(c); err != nil {
			return nil, err
		}
		out[i] = s.sum()
	}
	return out, nil
}

// addDict feeds a dictionary-encoded String or Binary column exactly as its
// decoded values would be fed: each valid row's entry length and bytes.
func (s *colSum) addDict(a *array.Dictionary) error {
	type varWidth interface {
		ValueOffsets() []int32
		ValueBytes() []byte
	}
	vals, ok := a.Dictionary().(varWidth)
	if !ok {
		return fmt.Errorf("%w: no content checksum for dictionary of %v", ErrSchema, a.Dictionary().DataType())
	}
	offs, data := vals.ValueOffsets(), vals.ValueBytes()
	var base int32
	if len(offs) > 0 {
		base = offs[0]
	}
	n := a.Len()
	idx := make([]int32, 0, n) // entry of every valid row
	raw, fast := a.Indices().(*array.Int32)
	for i := 0; i < n; i++ {
		if !a.IsValid(i) {
			continue
		}
		if fast {
			idx = append(idx, raw.Value(i))
		} else {
			idx = append(idx, int32(a.GetValueIndex(i)))
		}
	}
	buf := s.scratch[:0]
	for _, k := range idx {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(offs[k+1]-offs[k]))
	}
	s.lengths = crc32.Update(s.lengths, castagnoli, buf)
	buf = buf[:0]
	for _, k := range idx {
		buf = append(buf, data[offs[k]-base:offs[k+1]-base]...)
	}
	s.data = crc32.Update(s.data, castagnoli, buf)
	s.scratch = buf[:0]
	return nil
}
