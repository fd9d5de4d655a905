package eval

import (
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// A binding row is a fixed-width []int32: slot s holds the row index of the
// entity bound to the layout's s-th variable in that variable's table (a
// node row of slot.nodes or an edge row of slot.edges), or -1 while
// unbound. Rows of one operator share a layout, so a row set is one flat
// slice and rows are never maps.

// originSlot is slot 0 of an anti-join sub-plan's layout: the index of the
// outer row an inner row derives from.
const originSlot = 0

// slot is one variable of a layout.
type slot struct {
	name  string
	edge  bool
	typ   string
	nodes *snapshot.NodeTable // node variables
	edges *snapshot.EdgeTable // edge variables
}

// columns returns the ids and the property columns of the slot's table.
func (sl *slot) columns() ([]string, map[string][]any) {
	if sl.edge {
		return sl.edges.IDs, sl.edges.Cols
	}
	return sl.nodes.IDs, sl.nodes.Cols
}

// layout assigns slots to the variables of one match scope (the query's,
// or one anti-join sub-plan's). A scope binds a handful of variables, so
// a slot is found by name in a linear search (no map to build per query).
type layout struct {
	slots []slot
}

func newLayout(withOrigin bool) *layout {
	l := &layout{}
	l.init(withOrigin)
	return l
}

// init empties l for a new scope (the runner keeps its top layout inline).
func (l *layout) init(withOrigin bool) {
	l.slots = l.slots[:0]
	if withOrigin {
		l.slots = append(l.slots, slot{name: "#origin"})
	}
}

func (l *layout) width() int { return len(l.slots) }

// idx returns the slot of variable name, or -1.
func (l *layout) idx(name string) int {
	for i := range l.slots {
		if l.slots[i].name == name {
			return i
		}
	}
	return -1
}

func (l *layout) add(s slot) int {
	if i := l.idx(s.name); i >= 0 {
		return i
	}
	l.slots = append(l.slots, s)
	return len(l.slots) - 1
}

// declare walks the binding tree once before evaluation, giving every
// variable a slot and resolving its table, so that row widths are fixed
// before the first row is built.
func (r *runner) declare(ctx context.Context, op query.Op, l *layout) error {
	addNode := func(name, typ string) error {
		if l.idx(name) >= 0 {
			return nil
		}
		t, err := r.snap.Nodes(ctx, typ)
		if err != nil {
			return err
		}
		l.add(slot{name: name, typ: typ, nodes: t})
		return nil
	}
	switch o := op.(type) {
	case *query.Scan:
		return addNode(o.Var, o.Type)
	case *query.Argument:
		return nil // the anti-join declared the outer variables
	case *query.Expand:
		if err := r.declare(ctx, o.Input, l); err != nil {
			return err
		}
		if err := addNode(o.Dst, o.DstType); err != nil {
			return err
		}
		if o.EdgeVar != "" && l.idx(o.EdgeVar) < 0 {
			t, err := r.snap.Edges(ctx, o.Edge)
			if err != nil {
				return err
			}
			l.add(slot{name: o.EdgeVar, edge: true, typ: o.Edge, edges: t})
		}
		return nil
	case *query.AntiJoin:
		if err := r.declare(ctx, o.Input, l); err != nil {
			return err
		}
		arg := findArgument(o.Sub)
		if arg == nil {
			return runErrorf("anti-join sub-plan has no argument")
		}
		inner := newLayout(true)
		for _, v := range arg.Vars {
			i := l.idx(v)
			if i < 0 {
				return runErrorf("anti-join references unbound variable $%s", v)
			}
			inner.add(l.slots[i])
		}
		put(&r.inner, o, inner)
		put(&r.argOf, o, arg)
		return r.declare(ctx, o.Sub, inner)
	}
	for _, c := range op.Children() {
		if err := r.declare(ctx, c, l); err != nil {
			return err
		}
	}
	return nil
}

// findArgument returns the Argument leaf of an anti-join sub-plan (not
// descending into nested anti-joins' sub-plans).
func findArgument(op query.Op) *query.Argument {
	switch o := op.(type) {
	case *query.Argument:
		return o
	case *query.AntiJoin:
		return findArgument(o.Input)
	}
	for _, c := range op.Children() {
		if a := findArgument(c); a != nil {
			return a
		}
	}
	return nil
}

// rowSet is a bag of binding rows of one layout, stored flat. Its memory
// is charged to the query's budget before it is allocated (budget.go).
type rowSet struct {
	w    int
	data []int32
	mem  *limits.Budget
}

// newRowSet returns an empty set with room for capRows rows, charged to
// mem. Over budget it stops the query (budget.go) before allocating.
func newRowSet(mem *limits.Budget, w, capRows int) *rowSet {
	n := int64(w) * int64(capRows)
	charge(mem, n*4)
	return &rowSet{w: w, data: make([]int32, 0, n), mem: mem}
}

// grow makes room for one more row, charging the new capacity.
func (rs *rowSet) grow() {
	if len(rs.data)+rs.w <= cap(rs.data) {
		return
	}
	more := max(cap(rs.data), 64*rs.w, rs.w)
	charge(rs.mem, int64(more)*4)
	rs.data = slices.Grow(rs.data, more)
}

func (rs *rowSet) n() int {
	if rs.w == 0 {
		return 0
	}
	return len(rs.data) / rs.w
}

// row returns row i; the slice aliases the set and must not be retained
// across pushes.
func (rs *rowSet) row(i int) []int32 { return rs.data[i*rs.w : (i+1)*rs.w : (i+1)*rs.w] }

// push appends a copy of row and returns the stored copy.
func (rs *rowSet) push(row []int32) []int32 {
	rs.grow()
	rs.data = append(rs.data, row...)
	return rs.data[len(rs.data)-rs.w:]
}

// pushEmpty appends an all-unbound row and returns it.
func (rs *rowSet) pushEmpty() []int32 {
	rs.grow()
	for range rs.w {
		rs.data = append(rs.data, -1)
	}
	return rs.data[len(rs.data)-rs.w:]
}

// filter returns the rows for which keep is true, in order.
func (rs *rowSet) filter(keep func(row []int32) bool) *rowSet {
	out := newRowSet(rs.mem, rs.w, 0)
	for i := 0; i < rs.n(); i++ {
		if row := rs.row(i); keep(row) {
			out.push(row)
		}
	}
	return out
}

// entityID returns the id of the entity bound in slot s of row.
func (l *layout) entityID(row []int32, s int) string {
	v := row[s]
	if v < 0 {
		return ""
	}
	if sl := &l.slots[s]; sl.edge {
		return sl.edges.IDs[v]
	} else if sl.nodes != nil {
		return sl.nodes.IDs[v]
	}
	return ""
}
