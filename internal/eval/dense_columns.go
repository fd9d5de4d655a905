package eval

import (
	"cmp"
	"context"
	"errors"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// denseColumn is one property of a node type over its dense rows (row
// order of snapshot.DenseNodes), held typed rather than boxed: a fixed
// width value per row in words (int64, int32, uint64, float64, bool by
// their bits), or strings in one byte arena, with a validity bitmap; only
// values of another dynamic type (blobs, lists) are kept boxed. A dense
// projection reads the cells of the rows it emits from it; every byte is
// charged to the query's budget before it is allocated.
type denseColumn struct {
	kind  cellKind
	valid []uint64 // bit i set: row i is not null
	words []uint64
	arena []byte
	ends  []uint32 // ends[i] is the end of row i's string in arena
	boxed []any
	mem   *limits.Budget
	rows  int // rows of the node type
	n     int // rows appended
	// arenaCharged is the arena capacity charged so far.
	arenaCharged int
}

// cellKind is the dynamic type of a denseColumn's values.
type cellKind uint8

const (
	cellNone cellKind = iota // no non-null value yet
	cellInt64
	cellInt32
	cellUint64
	cellFloat64
	cellBool
	cellString
	cellBoxed
)

// boxedCellBytes is what a boxed cell is charged: the interface value and
// a small payload.
const boxedCellBytes = 48

func kindOf(v any) cellKind {
	switch v.(type) {
	case int64:
		return cellInt64
	case int32:
		return cellInt32
	case uint64:
		return cellUint64
	case float64:
		return cellFloat64
	case bool:
		return cellBool
	case string:
		return cellString
	}
	return cellBoxed
}

// newDenseColumn returns an empty column for rows rows, its validity
// bitmap charged.
func newDenseColumn(rows int, mem *limits.Budget) *denseColumn {
	charge(mem, 8*int64((rows+63)/64))
	return &denseColumn{valid: make([]uint64, (rows+63)/64), mem: mem, rows: rows}
}

// append adds the value of the next row (nil for null).
func (c *denseColumn) append(v any) {
	i := c.n
	c.n++
	if v == nil {
		switch c.kind {
		case cellNone: // nothing held until the first value
		case cellString:
			c.ends = append(c.ends, uint32(len(c.arena)))
		case cellBoxed:
			c.boxed = append(c.boxed, nil)
		default:
			c.words = append(c.words, 0)
		}
		return
	}
	k := kindOf(v)
	if c.kind == cellNone {
		c.start(k, i)
	} else if k != c.kind && c.kind != cellBoxed {
		c.toBoxed(i)
	}
	c.valid[i>>6] |= 1 << (i & 63)
	switch c.kind {
	case cellString:
		c.appendString(v.(string))
	case cellBoxed:
		c.boxed = append(c.boxed, v)
	default:
		c.words = append(c.words, wordOf(v))
	}
}

// appendString adds string s as the next row's cell (its validity set by
// the caller), growing the arena under the budget.
func (c *denseColumn) appendString(s string) {
	if need := len(c.arena) + len(s); need > c.arenaCharged {
		grow := max(2*c.arenaCharged, need, 1<<16)
		charge(c.mem, int64(grow-c.arenaCharged))
		c.arena = append(make([]byte, 0, grow), c.arena...)
		c.arenaCharged = grow
	}
	c.arena = append(c.arena, s...)
	c.ends = append(c.ends, uint32(len(c.arena)))
}

// cellKindOf returns the kind of the value-model cells of a typed column
// of class cl and property kind k (typedCol.box's types).
func cellKindOf(cl cellClass, k schema.Kind) cellKind {
	switch cl {
	case classInt:
		if k == schema.KindDate {
			return cellInt32
		}
		return cellInt64
	case classUint:
		return cellUint64
	case classFloat:
		return cellFloat64
	case classString:
		return cellString
	}
	return cellBool
}

// appendTyped adds cell i of tc as the next row, unboxed: the column's
// kind is cellKindOf(tc's class and kind), fixed before the first row
// (startTyped). It holds what append(tc.box(i)) would.
func (c *denseColumn) appendTyped(tc *typedCol, i int) {
	r := c.n
	c.n++
	null := tc.null(i)
	if !null {
		c.valid[r>>6] |= 1 << (r & 63)
	}
	if c.kind == cellString {
		if null {
			c.ends = append(c.ends, uint32(len(c.arena)))
			return
		}
		c.appendString(tc.str.Value(i))
		return
	}
	var w uint64
	if !null {
		switch c.kind {
		case cellInt64, cellInt32:
			w = uint64(tc.int(i))
		case cellUint64:
			w = tc.uint(i)
		case cellFloat64:
			w = math.Float64bits(tc.float(i))
		case cellBool:
			if tc.bl.Value(i) {
				w = 1
			}
		}
	}
	c.words = append(c.words, w)
}

// start fixes the column's kind at its first value, of row i (the rows
// before it were null), and charges and makes what it holds for every row.
func (c *denseColumn) start(k cellKind, i int) {
	switch k {
	case cellString:
		charge(c.mem, 4*int64(c.rows))
		c.ends = make([]uint32, i, c.rows)
	case cellBoxed:
		charge(c.mem, boxedCellBytes*int64(c.rows))
		c.boxed = make([]any, i, c.rows)
	default:
		charge(c.mem, 8*int64(c.rows))
		c.words = make([]uint64, i, c.rows)
	}
	c.kind = k
}

// toBoxed turns a column whose values turned out to be of several dynamic
// types into boxed cells, before row i.
func (c *denseColumn) toBoxed(i int) {
	charge(c.mem, boxedCellBytes*int64(c.rows))
	boxed := make([]any, i, c.rows)
	for r := range i {
		boxed[r] = c.value(int32(r))
	}
	c.mem.Release(8*int64(cap(c.words)) + 4*int64(cap(c.ends)) + int64(c.arenaCharged))
	c.words, c.ends, c.arena, c.arenaCharged = nil, nil, nil, 0
	c.boxed, c.kind = boxed, cellBoxed
}

func wordOf(v any) uint64 {
	switch x := v.(type) {
	case int64:
		return uint64(x)
	case int32:
		return uint64(int64(x))
	case uint64:
		return x
	case float64:
		return math.Float64bits(x)
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

// value returns row i's value in the value model (nil for null).
func (c *denseColumn) value(i int32) any {
	if c.valid[i>>6]&(1<<(i&63)) == 0 {
		return nil
	}
	switch c.kind {
	case cellString:
		lo := uint32(0)
		if i > 0 {
			lo = c.ends[i-1]
		}
		return string(c.arena[lo:c.ends[i]])
	case cellBoxed:
		return c.boxed[i]
	case cellInt64:
		return int64(c.words[i])
	case cellInt32:
		return int32(int64(c.words[i]))
	case cellUint64:
		return c.words[i]
	case cellFloat64:
		return math.Float64frombits(c.words[i])
	case cellBool:
		return c.words[i] != 0
	}
	return nil
}

// denseTypedSource is a DenseSource that also streams the rows of a dense
// view as typed Arrow columns (*snapshot.Snapshot).
type denseTypedSource interface {
	DenseScanColumns(ctx context.Context, d *snapshot.DenseNodes, props []string, fn func(n int, cols []arrow.Array) error) error
}

// fillColumns reads properties props of every row of d into cols (empty
// columns, one per property): unboxed from the source's typed scan when it
// has one and every property is flat (typed_cells.go's classes), else one
// boxed value per cell (DenseColumns). Both hold the same cells
// (TestDenseColumnsTypedMatchBoxed).
func (dr *denseRun) fillColumns(d *snapshot.DenseNodes, props []string, cols []*denseColumn) error {
	if ts, ok := dr.ds.(denseTypedSource); ok {
		if tcs := flatCols(dr.r.snap.Catalog(), d.Type, props); tcs != nil {
			for k, c := range cols {
				c.start(cellKindOf(tcs[k].class, tcs[k].kind), 0)
			}
			err := ts.DenseScanColumns(dr.ctx, d, props, func(n int, arrs []arrow.Array) error {
				for k, tc := range tcs {
					if err := tc.bind(arrs[k]); err != nil {
						return err
					}
					c := cols[k]
					for i := range n {
						c.appendTyped(tc, i)
					}
				}
				return nil
			})
			if !errors.Is(err, errTypedFallback) {
				return err
			}
			// A stored column of an unexpected physical type: start over
			// boxed (what the typed columns held stays charged).
			for _, c := range cols {
				*c = *newDenseColumn(d.Len(), dr.r.mem)
			}
		}
	}
	return dr.ds.DenseColumns(dr.ctx, d, props, func(_ int32, vals []any) error {
		for k, v := range vals {
			cols[k].append(v)
		}
		return nil
	})
}

// flatCols returns an unbound typed column per property of node type typ,
// or nil when one is not a flat property.
func flatCols(cat *schema.Catalog, typ string, props []string) []*typedCol {
	nt, ok := cat.Node(typ)
	if !ok {
		return nil
	}
	tcs := make([]*typedCol, len(props))
	for k, p := range props {
		pr, ok := nt.Prop(p)
		if !ok {
			return nil
		}
		cl, ok := classOf(pr.Type.Kind)
		if !ok {
			return nil
		}
		tcs[k] = &typedCol{class: cl, kind: pr.Type.Kind}
	}
	return tcs
}

// null reports whether row x's cell is null.
func (c *denseColumn) null(x int32) bool { return c.valid[x>>6]&(1<<(x&63)) == 0 }

// view returns row x's string without copying it: valid until the
// column changes, never to be kept.
func (c *denseColumn) view(x int32) string {
	lo := uint32(0)
	if x > 0 {
		lo = c.ends[x-1]
	}
	b := c.arena[lo:c.ends[x]]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendKey appends row x's TupleKey member (a column of typed cells).
func (c *denseColumn) appendKey(b []byte, x int32) []byte {
	if c.null(x) {
		return value.AppendNullKey(b)
	}
	switch c.kind {
	case cellInt64, cellInt32:
		return value.AppendIntKey(b, int64(c.words[x]))
	case cellUint64:
		return value.AppendUintKey(b, c.words[x])
	case cellFloat64:
		return value.AppendFloatKey(b, math.Float64frombits(c.words[x]))
	case cellString:
		return value.AppendStringKey(b, c.view(x))
	}
	return value.AppendBoolKey(b, c.words[x] != 0)
}

// fold adds row x's cell to st as st.add(fn, c.value(x), 1) does, without
// boxing it (an extreme is boxed when it replaces the one held).
func (c *denseColumn) fold(st *aggState, fn aggFunc, x int32) {
	if c.null(x) {
		return
	}
	st.n++
	switch fn {
	case aggCount:
		return
	case aggSum:
		var f float64
		switch c.kind {
		case cellInt64, cellInt32:
			f = float64(int64(c.words[x]))
		case cellUint64:
			f = float64(c.words[x])
		case cellFloat64:
			f = math.Float64frombits(c.words[x])
		}
		st.sum = addFloat(st.sum, f)
		return
	}
	if st.ext != nil {
		var d int
		switch c.kind {
		case cellInt64:
			d = cmp.Compare(int64(c.words[x]), st.ext.(int64))
		case cellInt32:
			d = cmp.Compare(int32(int64(c.words[x])), st.ext.(int32))
		case cellUint64:
			d = cmp.Compare(c.words[x], st.ext.(uint64))
		case cellFloat64:
			d = value.CompareFloats(math.Float64frombits(c.words[x]), st.ext.(float64))
		case cellString:
			d = strings.Compare(c.view(x), st.ext.(string))
		case cellBool:
			d = value.CompareBools(c.words[x] != 0, st.ext.(bool))
		}
		if fn == aggMin && d >= 0 || fn == aggMax && d <= 0 {
			return
		}
	}
	st.ext = c.value(x)
}
