package table

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// strView reads the values of an Arrow string array straight from its
// offsets and bytes. (*array.String).Value checks the row against the
// array's length and adds the array's offset on every call, and is not
// inlined; at is, and the fragment index encoder reads every key of a
// fragment two or three times (sort, blocks, Bloom filter).
type strView struct {
	offs []int32 // the array's Len()+1 offsets, its slice applied
	data string  // the whole value buffer the offsets point into
}

// newStrView returns the view of a (which must outlive it).
func newStrView(a *array.String) strView {
	if a.Len() == 0 {
		return strView{offs: []int32{0}}
	}
	v := strView{offs: a.ValueOffsets()}
	if buf := a.Data().Buffers()[2]; buf != nil && buf.Len() > 0 {
		b := buf.Bytes()
		v.data = unsafe.String(&b[0], len(b))
	}
	return v
}

// len is the number of values.
func (v strView) len() int { return len(v.offs) - 1 }

// at is value i (a.Value(i)).
func (v strView) at(i int) string { return v.data[v.offs[i]:v.offs[i+1]] }

// equal reports whether v and w hold the same values row by row. That is
// the same bytes end to end and the same offsets once each is taken from
// its first: two comparisons of memory, not one of strings per row (a
// node's key column is its id in every row, and every fragment asks).
func (v strView) equal(w strView) bool {
	n := v.len()
	if n != w.len() {
		return false
	}
	if n == 0 {
		return true
	}
	if v.at(0) != w.at(0) {
		return false // most columns that are not the id: at once
	}
	if unsafe.SliceData(v.offs) == unsafe.SliceData(w.offs) && unsafe.StringData(v.data) == unsafe.StringData(w.data) {
		return true // one array (the id column itself)
	}
	vb, wb := v.offs[0], w.offs[0]
	if v.data[vb:v.offs[n]] != w.data[wb:w.offs[n]] {
		return false
	}
	if vb == wb {
		return int32Bytes(v.offs) == int32Bytes(w.offs)
	}
	for i, o := range v.offs {
		if o-vb != w.offs[i]-wb {
			return false
		}
	}
	return true
}

// int32Bytes is the memory of s as a string, for comparing two slices
// of offsets with one memory comparison.
func int32Bytes(s []int32) string {
	if len(s) == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}
