package table

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// strColumn builds one String or Enum column of a BatchBuilder in plain
// Go slices (offsets, bytes, validity) and makes the Arrow array once per
// record (newArray). A load appends millions of short strings;
// (*array.StringBuilder).Append reserves, appends an offset and the bytes
// through two buffer builders and sets a validity bit for each, several
// calls a string where this is two appends. The arrays are equal to the
// StringBuilder's (TestStrColumnMatchesStringBuilder).
//
// INVARIANT: len(offs) == rows+1, offs[0] == 0, offs[i+1] == len(data)
// after row i; valid is nil while no row is null (then nulls == 0),
// else the validity bitmap of the rows so far; each slice keeps
// strColumnPad bytes of capacity past its end, zeroed, as Arrow's own
// buffers do (64-byte padding), for readers that load a word at a time.
type strColumn struct {
	offs  []int32
	data  []byte
	valid []byte
	nulls int
}

// strColumnPad is the spare capacity, in bytes, each buffer keeps.
const strColumnPad = 64

// maxStrColumnBytes is the most value bytes one record's string column
// holds: its offsets are int32. (A variable for a test to lower.)
var maxStrColumnBytes = math.MaxInt32

func newStrColumn() *strColumn {
	return &strColumn{offs: make([]int32, 1, 1+strColumnPad/4), data: make([]byte, 0, strColumnPad)}
}

// rows is the number of values appended.
func (c *strColumn) rows() int { return len(c.offs) - 1 }

// room makes room for s in the column's bytes, or returns the error for
// a value that would take them past maxStrColumnBytes. Every row's check
// calls it for each string before anything is appended (a refused row
// leaves the column's values as they were), so append never grows the
// bytes. Capacity stays within maxStrColumnBytes+strColumnPad, so a value
// that finds room here fits the offsets.
func (c *strColumn) room(s string) error {
	if len(c.data)+len(s)+strColumnPad <= cap(c.data) {
		return nil
	}
	return c.grow(len(s))
}

// grow is room's slow path: more capacity for n more bytes.
func (c *strColumn) grow(n int) error {
	if n > maxStrColumnBytes-len(c.data) {
		return fmt.Errorf("%w: string column holds over %d bytes in one record", ErrValue, maxStrColumnBytes)
	}
	c.data = grown(c.data, n+strColumnPad, maxStrColumnBytes+strColumnPad)
	return nil
}

// append appends s, for which room was made.
func (c *strColumn) append(s string) {
	c.data = append(c.data, s...)
	if len(c.offs)+strColumnPad/4 >= cap(c.offs) {
		c.offs = grown(c.offs, 1+strColumnPad/4, math.MaxInt)
	}
	c.offs = append(c.offs, int32(len(c.data)))
	if c.valid != nil {
		c.setValid(c.rows() - 1)
	}
}

// appendNull appends a null (an empty value, its validity bit clear).
func (c *strColumn) appendNull() {
	if c.valid == nil {
		// The first null: every row before it was valid.
		n := c.rows()
		c.valid = make([]byte, (n+7)/8, (n+7)/8+strColumnPad)
		for i := range n / 8 {
			c.valid[i] = 0xff
		}
		if n%8 != 0 {
			c.valid[n/8] = 1<<(n%8) - 1
		}
	}
	if len(c.offs)+strColumnPad/4 >= cap(c.offs) {
		c.offs = grown(c.offs, 1+strColumnPad/4, math.MaxInt)
	}
	c.offs = append(c.offs, int32(len(c.data)))
	c.nulls++
	c.growValid(c.rows())
}

// setValid sets the validity bit of row i (the last row).
func (c *strColumn) setValid(i int) {
	c.growValid(i + 1)
	c.valid[i/8] |= 1 << (i % 8)
}

// growValid extends the bitmap to n rows, the new bits clear.
func (c *strColumn) growValid(n int) {
	for len(c.valid) < (n+7)/8 {
		if len(c.valid)+strColumnPad >= cap(c.valid) {
			c.valid = grown(c.valid, 1+strColumnPad, math.MaxInt)
		}
		c.valid = append(c.valid, 0)
	}
}

// grown returns s with room for at least n more elements: twice its
// capacity or more but at most limit (unless len(s)+n is more), the
// extra zeroed.
func grown[T any](s []T, n, limit int) []T {
	out := make([]T, len(s), max(min(2*cap(s), limit), len(s)+n))
	copy(out, s)
	return out
}

// reserve makes room for rows rows of bytes value bytes, for a record
// about as large as the last (BatchBuilder.ReserveLike).
func (c *strColumn) reserve(rows, bytes int) {
	if cap(c.offs) < len(c.offs)+rows+strColumnPad/4 {
		c.offs = grown(c.offs, rows+strColumnPad/4, math.MaxInt)
	}
	bytes = min(bytes, maxStrColumnBytes-len(c.data))
	if cap(c.data) < len(c.data)+bytes+strColumnPad {
		c.data = grown(c.data, bytes+strColumnPad, maxStrColumnBytes+strColumnPad)
	}
}

// newArray returns the rows appended as an Arrow string array (the
// caller releases it) and empties c. The array owns the slices: c starts
// new ones.
func (c *strColumn) newArray() arrow.Array {
	n := c.rows()
	var valid *memory.Buffer
	if c.nulls > 0 {
		valid = memory.NewBufferBytes(c.valid)
	}
	offs := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.offs))), 4*len(c.offs))
	data := array.NewData(arrow.BinaryTypes.String, n,
		[]*memory.Buffer{valid, memory.NewBufferBytes(offs), memory.NewBufferBytes(c.data)}, nil, c.nulls, 0)
	defer data.Release()
	*c = *newStrColumn()
	return array.MakeFromData(data)
}
