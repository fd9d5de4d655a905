package snapshot

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Scans that are not anchored. A read with a single node scan and no
// traversal (filters, projection, aggregation, ordering, limits) touches
// the rows its filters keep. On a cold handle such a plan runs on a
// partial snapshot built by one streaming table scan instead of the whole
// table image: only the columns the plan names are fetched, the scan's
// comparisons with constants are pushed into the table scan (fragments and
// row groups pruned by their statistics, the rest evaluated on the typed
// Arrow columns), and only the rows that pass are converted to values.
// Comparisons the table scan cannot apply exactly (floats, whose NaN
// order differs; text predicates, list membership, now()) are left to eval,
// which re-applies every filter on the partial table anyway, so the answer
// is the whole-image answer, row order included (exec
// TestScanReadsMatchFull). When the plan never reads the variable's ids
// (e.g. `count($p)`), they are not read either: the partial table holds
// unique placeholders.

// filteredAnchors gathers the candidates of an unanchored scan in a plan
// with traversals: the live rows passing the filters the table scan
// applies, read with the id column only and their row locations kept for
// build. ok is false when no filter is pushed down or more than
// partialBound rows pass (then whole tables are cheaper). Candidates
// failing a filter left to eval are harmless: eval re-applies every filter
// of the scan, and every row passing them all is a candidate.
func (pp *partialPlan) filteredAnchors(ctx context.Context, o *query.Scan) (bool, error) {
	nt, found := pp.snap.cat.Node(o.Type)
	if !found {
		return false, nil
	}
	st, err := pp.snap.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return false, err
	}
	filters, _ := pp.tableFilters(st.Schema(), o)
	if len(filters) == 0 {
		return false, nil
	}
	ids := pp.vars[o.Var].ids
	if pp.known == nil {
		pp.known = map[string]map[string]table.RowLoc{}
	}
	known := pp.known[nt.Name]
	if known == nil {
		known = map[string]table.RowLoc{}
		pp.known[nt.Name] = known
	}
	// Scalar indexes narrow the rows read (scalar_scan.go).
	err = pp.snap.filteredScan(ctx, st, []string{table.KeyColumn}, filters, true, func(rec arrow.RecordBatch, frag string, offs []int64) error {
		arr := rec.Column(0)
		for i := range int(rec.NumRows()) {
			id := table.Value(arr, i).(string)
			ids[id] = true
			known[id] = table.RowLoc{ID: id, Fragment: frag, Offset: offs[i]}
		}
		if len(ids) > partialBound(st.Rows()) {
			return errTooMany
		}
		return nil
	}, func(int) {})
	if errors.Is(err, errTooMany) {
		return false, nil
	}
	return err == nil, err
}

// scanOnly plans the table of the plan's only scan o (no traversal): the
// live rows passing its pushed-down filters, with the properties the rest
// of the plan names, read when first asked for (lazyScan) unless a typed
// column scan answers the plan without it. The filters the table scan
// applies are dropped from the returned plan (they hold for every row
// read), so their columns are not read unless something else names them.
func (pp *partialPlan) scanOnly(ctx context.Context, o *query.Scan) (*lazyScan, query.Op, error) {
	nt, _ := pp.snap.cat.Node(o.Type)
	st, err := pp.snap.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return nil, nil, err
	}
	filters, pushed := pp.tableFilters(st.Schema(), o)
	root := pp.root
	if len(pushed) > 0 {
		rest := *o
		rest.Filters = nil
		for i, f := range o.Filters {
			if !slices.Contains(pushed, i) {
				rest.Filters = append(rest.Filters, f)
			}
		}
		if r := replaceScan(pp.root, o, &rest); r != nil {
			root = r
		}
	}
	// The properties and ids the plan still reads.
	need := &partialPlan{vars: map[string]*partialVar{}, edgeRows: map[string]bool{}, idRead: map[string]bool{}}
	if !need.shape(root) || need.vars[o.Var] == nil {
		return nil, nil, fmt.Errorf("snapshot: rewritten scan plan lost its shape")
	}
	lz := &lazyScan{pp: pp, nt: nt, st: st, filters: filters, want: need.vars[o.Var].props,
		realIDs: need.idRead[o.Var], top: scanTop(root, o.Var)}
	return lz, root, nil
}

// topK describes `order … limit N` directly over a plan's only scan, with
// nothing left to filter: only the first N rows of that order can reach
// the output, so the table scan keeps just those (a bounded heap) instead
// of every row. The order is total (ties break by id), so the kept rows
// are exactly the ones eval returns.
type topK struct {
	keys []query.SortKey
	n    int
}

// scanTop returns the top-k bound of root, or nil: root must be
// Limit(Project(Sort(Scan))) with every sort key a property or the id of
// the scan's variable, ties broken by that variable alone, and no filter
// left on the scan (eval would drop rows the heap kept).
func scanTop(root query.Op, v string) *topK {
	l, ok := root.(*query.Limit)
	if !ok {
		return nil
	}
	pr, ok := l.Input.(*query.Project)
	if !ok {
		return nil
	}
	so, ok := pr.Input.(*query.Sort)
	if !ok {
		return nil
	}
	sc, ok := so.Input.(*query.Scan)
	if !ok || sc.Var != v || len(sc.Filters) > 0 || sc.Rank != nil || len(so.TieBreak) != 1 || so.TieBreak[0] != v {
		return nil
	}
	for _, k := range so.Keys {
		if k.Column != "" || k.Value.Var != v || (k.Value.Kind != query.OpdProp && k.Value.Kind != query.OpdID) {
			return nil
		}
	}
	if l.N <= 0 || l.N > int64(maxPartialNodes) {
		return nil
	}
	return &topK{keys: so.Keys, n: int(l.N)}
}

// topRow is one row a top-k scan keeps: its sort keys, id, storage
// sequence and wanted property values.
type topRow struct {
	keys []any
	id   string
	seq  int
	vals []any
}

// topHeap is a max-heap by the query's order: its root is the row that
// would be cut first.
type topHeap struct {
	rows []*topRow
	keys []query.SortKey
}

// before reports whether a sorts before b in the query's order (eval's
// sortRows: compareKey per key, then the id ascending).
func (h *topHeap) before(a, b *topRow) bool {
	for k, sk := range h.keys {
		c := value.Compare(a.keys[k], b.keys[k])
		if sk.Desc {
			c = -c
		}
		if c != 0 {
			return c < 0
		}
	}
	return strings.Compare(a.id, b.id) < 0
}

func (h *topHeap) Len() int           { return len(h.rows) }
func (h *topHeap) Less(i, j int) bool { return h.before(h.rows[j], h.rows[i]) }
func (h *topHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *topHeap) Push(x any)         { h.rows = append(h.rows, x.(*topRow)) }
func (h *topHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

// replaceScan returns a copy of the operators from root down to old with
// old replaced by repl, or nil when the path holds an operator a single-scan
// plan cannot have.
func replaceScan(root query.Op, old, repl *query.Scan) query.Op {
	// Each single-input operator is copied; input points at the copy's
	// Input, which is then pointed at the rebuilt path below it.
	var (
		c     query.Op
		input *query.Op
	)
	switch o := root.(type) {
	case *query.Scan:
		if o == old {
			return repl
		}
		return nil
	case *query.Filter:
		cp := *o
		c, input = &cp, &cp.Input
	case *query.Project:
		cp := *o
		c, input = &cp, &cp.Input
	case *query.Aggregate:
		cp := *o
		c, input = &cp, &cp.Input
	case *query.Sort:
		cp := *o
		c, input = &cp, &cp.Input
	case *query.Limit:
		cp := *o
		c, input = &cp, &cp.Input
	default:
		return nil
	}
	if *input = replaceScan(*input, old, repl); *input == nil {
		return nil
	}
	return c
}

// scanRows reads the live rows of nt (state st) that pass filters, in
// storage order, with the wanted properties; realIDs false fills IDs with
// placeholders.
//
// With top set (realIDs must be), only the first top.n rows of its order
// are kept, in storage order.
func (pp *partialPlan) scanRows(ctx context.Context, nt *schema.NodeType, st *table.State, filters []table.Filter, want map[string]bool, realIDs bool, top *topK) (*NodeTable, error) {
	cols := propsToRead(st, nt.Props, want)
	if top != nil && !realIDs {
		top = nil
	}
	var th *topHeap
	var keyCol []int // per sort key: its index in cols, -1 for the id (or a property the table lacks: -2)
	if top != nil {
		th = &topHeap{keys: top.keys}
		for _, k := range top.keys {
			switch {
			case k.Value.Kind == query.OpdID:
				keyCol = append(keyCol, -1)
			case slices.Contains(cols, k.Value.Prop):
				keyCol = append(keyCol, slices.Index(cols, k.Value.Prop))
			default:
				keyCol = append(keyCol, -2) // reads as null in every row
			}
		}
	}
	var read []string
	if realIDs {
		read = append(read, table.KeyColumn)
	}
	read = append(read, cols...)
	t := &NodeTable{Type: nt, Cols: map[string][]any{}}
	for _, p := range cols {
		t.Cols[p] = []any{}
	}
	n := 0
	switch {
	case len(read) == 0 && len(filters) == 0:
		// Nothing to read: every live row counts.
		n = int(st.Rows())
	default:
		props := make([]*schema.Property, len(cols))
		for k, c := range cols {
			props[k] = PropByName(nt.Props, c)
		}
		// Scalar indexes narrow the rows read, and a count of rows
		// they decide reads none (scalar_scan.go).
		err := pp.snap.filteredScan(ctx, st, read, filters, false, func(rec arrow.RecordBatch, _ string, _ []int64) error {
			rows := int(rec.NumRows())
			if th != nil {
				pp.keepTop(th, top.n, rec, cols, props, keyCol, n)
				n += rows
				return nil
			}
			j := 0
			if realIDs {
				arr := rec.Column(0)
				for i := range rows {
					t.IDs = append(t.IDs, table.Value(arr, i).(string))
				}
				j = 1
			}
			for k, c := range cols {
				arr, p := rec.Column(j+k), props[k]
				col := t.Cols[c]
				for i := range rows {
					col = append(col, value.FromColumn(p.Type, table.Value(arr, i)))
				}
				t.Cols[c] = col
			}
			n += rows
			return nil
		}, func(k int) { n += k })
		if err != nil {
			return nil, err
		}
	}
	if th != nil {
		kept := th.rows
		slices.SortFunc(kept, func(a, b *topRow) int { return a.seq - b.seq })
		for _, r := range kept {
			t.IDs = append(t.IDs, r.id)
			for k, c := range cols {
				t.Cols[c] = append(t.Cols[c], r.vals[k])
			}
		}
	}
	if !realIDs {
		t.IDs = placeholderIDs(n)
	}
	// Wanted properties the stored table lacks read as null.
	for _, p := range nt.Props {
		if want[p.Name] && len(t.Cols[p.Name]) != len(t.IDs) {
			t.Cols[p.Name] = make([]any, len(t.IDs))
		}
	}
	return t, nil
}

// keepTop offers the rows of rec (the id column first, then cols; seq0
// the storage sequence of its first row) to the top-k heap th of n rows.
// A row's values are converted only when it enters the heap.
func (pp *partialPlan) keepTop(th *topHeap, n int, rec arrow.RecordBatch, cols []string, props []*schema.Property, keyCol []int, seq0 int) {
	rows := int(rec.NumRows())
	ids := rec.Column(0)
	cand := &topRow{keys: make([]any, len(keyCol))}
	for i := range rows {
		cand.id = table.Value(ids, i).(string)
		for k, c := range keyCol {
			switch c {
			case -1:
				cand.keys[k] = cand.id
			case -2:
				cand.keys[k] = nil
			default:
				cand.keys[k] = value.FromColumn(props[c].Type, table.Value(rec.Column(1+c), i))
			}
		}
		if th.Len() == n && !th.before(cand, th.rows[0]) {
			continue
		}
		cand.seq = seq0 + i
		cand.vals = make([]any, len(cols))
		for k := range cols {
			cand.vals[k] = value.FromColumn(props[k].Type, table.Value(rec.Column(1+k), i))
		}
		heap.Push(th, cand)
		if th.Len() > n {
			heap.Pop(th)
		}
		cand = &topRow{keys: make([]any, len(keyCol))}
	}
}

// placeholderIDs returns n distinct ids no node can have (ids never start
// with a NUL byte), sharing one backing string.
func placeholderIDs(n int) []string {
	buf := make([]byte, 0, n*8)
	ends := make([]int, n)
	for i := range n {
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, int64(i), 36)
		ends[i] = len(buf)
	}
	s := string(buf)
	ids := make([]string, n)
	start := 0
	for i, e := range ends {
		ids[i], start = s[start:e], e
	}
	return ids
}

// tableFilters translates the scan's comparisons of one of its variable's
// stored scalar columns (or its id) with a constant into table filters the
// table scan applies exactly as eval would (§5.4: a null never compares);
// pushed are the indices in o.Filters of the translated ones. Filters it
// cannot translate are simply not pushed down.
func (pp *partialPlan) tableFilters(sch table.Schema, o *query.Scan) (out []table.Filter, pushed []int) {
	for i := range o.Filters {
		// now() is constant too, but constant() does not evaluate it: such
		// a comparison is not pushed down.
		vs, ks, op, ok := o.Filters[i].ConstCmp()
		if !ok || vs.Var != o.Var {
			continue
		}
		var col string
		switch vs.Kind {
		case query.OpdProp:
			col = vs.Prop
		case query.OpdID:
			col = table.KeyColumn
		default:
			continue
		}
		top, ok := tableOp(op)
		ci := sch.Index(col)
		if !ok || ci < 0 {
			continue
		}
		c, ok := pp.constant(ks)
		if !ok || !sameDomain(sch.Columns[ci].Type.Kind, c) {
			continue
		}
		f := table.Filter{Column: col, Op: top, Value: c}
		if table.ValidFilter(sch, f) {
			out = append(out, f)
			pushed = append(pushed, i)
		}
	}
	return out, pushed
}

func tableOp(op query.CmpOp) (table.Op, bool) {
	switch op {
	case query.OpEq:
		return table.OpEq, true
	case query.OpNe:
		return table.OpNe, true
	case query.OpLt:
		return table.OpLt, true
	case query.OpLe:
		return table.OpLe, true
	case query.OpGt:
		return table.OpGt, true
	case query.OpGe:
		return table.OpGe, true
	}
	return 0, false
}

// constant evaluates a parameter or literal operand in the value model;
// ok is false for null and for literals not translated (floats, lists).
func (pp *partialPlan) constant(o query.Operand) (any, bool) {
	if o.Kind == query.OpdParam {
		v := pp.params[o.Param]
		return v, v != nil
	}
	l := o.Lit
	if l == nil {
		return nil, false
	}
	switch l.Kind {
	case query.LitString:
		return l.Str, true
	case query.LitInt:
		return l.Int, true
	case query.LitBool:
		return l.Bool, true
	case query.LitDate:
		d, ok := value.ParseDate(l.Str)
		return d, ok
	case query.LitDateTime:
		ms, ok := value.ParseDateTime(l.Str)
		return ms, ok
	}
	return nil, false
}

// sameDomain reports whether a table comparison of a column of kind k with
// constant c orders exactly as value.Compare does: strings bytewise, bools
// false < true, integers by exact value. Float columns are left out (a
// table filter never matches NaN, value.Compare orders it last).
func sameDomain(k table.Kind, c any) bool {
	switch k {
	case table.String, table.Enum:
		_, ok := c.(string)
		return ok
	case table.Bool:
		_, ok := c.(bool)
		return ok
	case table.I32, table.I64, table.U32, table.U64, table.Date, table.DateTime:
		switch c.(type) {
		case int64, int32, uint64, uint32:
			return true
		}
	}
	return false
}
