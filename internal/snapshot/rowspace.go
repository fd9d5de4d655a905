package snapshot

import (
	"math/bits"
	"slices"
)

// The row space of a table image. An image holds physical rows: row r of
// a NodeTable or EdgeTable is IDs[r] (Cols[p][r], …) whether or not the
// table state still has it. A row that an update or delete hid after the
// image's rows were laid out stays where it is and is marked in a dead
// bitmap, so a write that hides k rows derives the next image by copying
// the bitmap (n/8 bytes) and appending its new rows, never by copying the
// live rows again (derive.go). Consumers that iterate or count rows
// honour the bitmap (Alive, Live); Row and the adjacency and scan indexes
// never return a dead row. Live rows in row order are exactly the state's
// live rows in state order, the order a scan of the state returns.
//
// A placement says where each fragment of the image's layout sits: the
// fragment's present offsets (every offset but the sorted skip list, the
// rows already deleted when its rows were copied) occupy count
// consecutive rows from start, in offset order — or, for a fragment a
// compaction wrote from rows the image already held (derive.go, "moved
// rows"), offset o sits at row at[o], every offset present, the rows
// ascending but not consecutive (the dead rows of the fragments it
// replaced lie between them).

// placement maps each fragment of a layout (same indexes as Layout.parts)
// to its rows in an image.
type placement struct {
	start []int     // image row of the fragment's first present offset
	skip  [][]int64 // sorted offsets not present in the image (nil: none)
	count []int     // present offsets
	// at maps every offset of a moved fragment to its image row (nil per
	// fragment otherwise, and nil when no fragment is moved).
	at [][]int32
}

// densePlacement is the placement of an image holding exactly the live
// rows of fs in state order (assembleFrom).
func densePlacement(fs *Layout) *placement {
	pl := &placement{start: slices.Clone(fs.base), skip: slices.Clone(fs.dels), count: make([]int, len(fs.parts))}
	for i, d := range fs.parts {
		pl.count[i] = len(d.IDs) - len(fs.dels[i])
	}
	return pl
}

// row returns the image row of offset off of fragment part; ok is false
// when the offset is not present in the image.
func (pl *placement) row(part int, off int32) (int, bool) {
	if pl.at != nil && pl.at[part] != nil {
		return int(pl.at[part][off]), true
	}
	before, gone := slices.BinarySearch(pl.skip[part], int64(off))
	if gone {
		return 0, false
	}
	return pl.start[part] + int(off) - before, true
}

// deadBits is a bitmap over image rows; a nil bitmap has no dead row.
type deadBits []uint64

func newDeadBits(n int) deadBits { return make(deadBits, (n+63)/64) }

func (d deadBits) has(r int) bool { return d != nil && d[r>>6]&(1<<(uint(r)&63)) != 0 }

func (d deadBits) set(r int) { d[r>>6] |= 1 << (uint(r) & 63) }

// setRange marks rows [lo, hi) (dead when on, alive when not).
func (d deadBits) setRange(lo, hi int, on bool) {
	for r := lo; r < hi; {
		w, b := r>>6, uint(r)&63
		n := min(64-int(b), hi-r)
		mask := ^uint64(0)
		if n < 64 {
			mask = (1<<uint(n) - 1) << b
		}
		if on {
			d[w] |= mask
		} else {
			d[w] &^= mask
		}
		r += n
	}
}

func (d deadBits) count() int {
	n := 0
	for _, w := range d {
		n += bits.OnesCount64(w)
	}
	return n
}

// rowSpace is what a table image knows about its rows beyond their
// values: the layout it was built from, where that layout's fragments
// sit (nil for an in-memory table without a layout), the dead rows and
// the grow token of its backing arrays (derive.go).
type rowSpace struct {
	layout *Layout
	place  *placement
	dead   deadBits // nil: every row is alive
	live   int      // rows not dead
	grow   *growToken
	// derived is set on an image derived from an older one (derive.go).
	derived bool
}

// Alive reports whether row r is a row of the table's state: false for a
// row an update or delete hid after the image's rows were laid out.
// Every consumer that iterates rows skips the rows that are not alive.
func (rs *rowSpace) Alive(r int) bool { return !rs.dead.has(r) }

// HasDead reports whether some row of the image is not alive.
func (rs *rowSpace) HasDead() bool { return rs.dead != nil }

// liveOf is the live row count of an image of n rows.
func (rs *rowSpace) liveOf(n int) int {
	if rs.dead == nil {
		return n
	}
	return rs.live
}

// Live returns the number of live nodes (Len minus the dead rows).
func (t *NodeTable) Live() int { return t.liveOf(len(t.IDs)) }

// Live returns the number of live edges.
func (t *EdgeTable) Live() int { return t.liveOf(len(t.IDs)) }

// liveRows returns the image rows that are alive, in row order (the
// state's live rows in state order).
func (rs *rowSpace) liveRows(n int) []int32 {
	out := make([]int32, 0, n)
	for r := range n {
		if rs.Alive(r) {
			out = append(out, int32(r))
		}
	}
	return out
}

// LiveRows lists the live rows of the image in row order.
func (t *NodeTable) LiveRows() []int32 { return t.liveRows(len(t.IDs)) }

// compactRows returns the live rows of r (an image with row space rs) as
// dense Rows: the content a from-scratch decode of the state has.
func compactRows(r *Rows, rs *rowSpace) *Rows {
	if rs.dead == nil {
		return r
	}
	live := rs.liveRows(len(r.IDs))
	out := &Rows{IDs: make([]string, len(live)), Cols: make(map[string][]any, len(r.Cols))}
	for i, x := range live {
		out.IDs[i] = r.IDs[x]
	}
	if r.Src != nil {
		out.Src, out.Dst = make([]string, len(live)), make([]string, len(live))
		for i, x := range live {
			out.Src[i], out.Dst[i] = r.Src[x], r.Dst[x]
		}
	}
	for p, c := range r.Cols {
		col := make([]any, len(live))
		for i, x := range live {
			col[i] = c[x]
		}
		out.Cols[p] = col
	}
	return out
}

// Compact returns the live rows of the image as dense rows (tests and
// Check compare them with a decode).
func (t *NodeTable) Compact() *Rows { return compactRows(&Rows{IDs: t.IDs, Cols: t.Cols}, &t.rowSpace) }

// Compact: see NodeTable.Compact.
func (t *EdgeTable) Compact() *Rows {
	return compactRows(&Rows{IDs: t.IDs, Src: t.Src, Dst: t.Dst, Cols: t.Cols}, &t.rowSpace)
}
