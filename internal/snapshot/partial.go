package snapshot

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Anchored reads through persisted indexes. A read whose every scan is
// pinned to one node by its @key (or id) and whose traversals have finite
// hop bounds can only ever touch the anchors, the edges walked within the
// hop bounds and the nodes they reach. When the tables' images are not
// decoded yet (a fresh process: a CLI query) such a plan runs against a
// partial snapshot holding exactly those rows, fetched through the
// fragments' id and adjacency indexes (table.Reader): the anchors and the
// reached nodes are located by id, edges come from the adjacency sections,
// and only the properties the plan names are read, page by page. Rows keep
// storage order, so the answer is the one the whole-table images give,
// row order included (exec TestPartialReadsMatchFull).

// partialVar is one plan variable: its table and the properties the plan
// reads from it.
type partialVar struct {
	edge  bool
	typ   string
	ids   map[string]bool // node variables: the ids it may bind
	props map[string]bool
}

type partialPlan struct {
	snap   *Snapshot
	params map[string]any
	vars   map[string]*partialVar
	// edges per edge type: the rows walked, keyed by (fragment, offset),
	// with their (src, dst).
	edges map[string]map[table.RowLoc][2]string
	// edgeRows: edge types whose real rows (ids, properties) are needed.
	edgeRows map[string]bool
	// scans counts the plan's Scan operators; traversal is set when it
	// has any other binding operator than scans and filters.
	scans     int
	traversal bool
	// idRead: variables whose ids the plan reads (beyond count($v)).
	idRead map[string]bool
	// scan is the plan's one unanchored scan, read by a table scan
	// (scan.go); nil when every scan is anchored.
	scan *query.Scan
	// known: node rows already located by a filtered scan (scan.go), by
	// type and id, so building them needs no index probe.
	known map[string]map[string]table.RowLoc
	// root is the plan's read tree; build may replace it (scanOnly).
	root query.Op
	// chunkRoot, when set, is the plan's unanchored root scan, bound to
	// the ids its variable already holds (root_chunks.go).
	chunkRoot *query.Scan
}

// partialBeforeImages is how many reads a loader answers from partial
// snapshots before it decodes whole images instead: a process that reads
// a few times (a CLI command) never pays for whole tables, a long-lived
// handle (a server) gets the warm in-memory path after its first reads.
const partialBeforeImages = 8

// maxPartialNodes bounds the rows a partial snapshot gathers from a table
// of up to partialShare × maxPartialNodes rows; past it the whole tables
// are cheaper than per-row index probes. Larger tables allow 1/partialShare
// of their rows (decoding them costs in proportion).
const (
	maxPartialNodes = 4096
	partialShare    = 32
)

// partialBound is the most rows a partial snapshot gathers from a node
// table of rows live rows.
func partialBound(rows int64) int {
	return max(maxPartialNodes, int(rows/partialShare))
}

// Partial returns the partial snapshot of read plan over s: the rows the
// plan can touch, or ok false when the plan cannot be bounded so (only
// matching, filtering, projection, aggregation, ordering and limits; every
// scan pinned by a key or id equality with a constant, or by pushed-down
// filters that keep at most partialBound rows, or the plan's only scan
// with no traversal, read by a streaming table scan — scan.go), when a
// table it needs already has a decoded image (the warm path is faster) or
// the handle has served partialBeforeImages reads — unless an image would
// not fit half the cache budget — or when it would gather too many rows.
// params are the caller's raw parameters. The returned plan is the one to
// run on the partial snapshot: plan itself, or a copy without the filters
// the partial snapshot's rows already satisfy (scan.go).
func (s *Snapshot) Partial(ctx context.Context, plan *query.Plan, params map[string]any) (*Mem, *query.Plan, bool, error) {
	if s.l.noIndexPath || plan == nil || plan.Read == nil {
		return nil, nil, false, nil
	}
	// A handle serving many reads decodes images (the warm path), unless
	// an image would not fit the cache budget: then every read stays on
	// the rows it touches, and memory on the budget.
	oversized, err := s.oversized(ctx, plan.Reads)
	if err != nil {
		return nil, nil, false, err
	}
	if !oversized && s.l.partials.Load() >= partialBeforeImages {
		return nil, nil, false, nil
	}
	pp := &partialPlan{snap: s, params: map[string]any{}, vars: map[string]*partialVar{},
		edges: map[string]map[table.RowLoc][2]string{}, edgeRows: map[string]bool{}, idRead: map[string]bool{},
		root: plan.Read}
	for _, ps := range plan.Params {
		raw, present := params[ps.Name]
		v, err := value.ConvertParam(ps.Name, ps.Type, raw, present)
		if err != nil {
			return nil, nil, false, nil // RunRead reports it
		}
		pp.params[ps.Name] = v
	}
	if !pp.shape(plan.Read) || !oversized && !pp.cold() {
		return nil, nil, false, nil
	}
	ok, err := pp.gather(ctx, plan.Read)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	ms, err := pp.build(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	s.l.partials.Add(1)
	if pp.root != plan.Read {
		p := *plan
		p.Read = pp.root
		plan = &p
	}
	return ms, plan, true, nil
}

// shape checks the plan's operators and records variables and the
// properties every operand names.
func (pp *partialPlan) shape(op query.Op) bool {
	ok := true
	var walk func(op query.Op)
	see := func(o query.Operand) {
		switch o.Kind {
		case query.OpdRank:
			ok = false
		case query.OpdProp:
			if v := pp.vars[o.Var]; v != nil {
				v.props[o.Prop] = true
			}
		case query.OpdID:
			pp.idRead[o.Var] = true
		}
	}
	pred := func(p *query.Pred) {
		see(p.Left)
		see(p.Right)
		if p.MaxEdits != nil {
			see(*p.MaxEdits)
		}
	}
	walk = func(op query.Op) {
		if !ok {
			return
		}
		switch o := op.(type) {
		case *query.Scan:
			if o.Rank != nil {
				ok = false
				return
			}
			pp.scans++
			pp.vars[o.Var] = &partialVar{typ: o.Type, ids: map[string]bool{}, props: map[string]bool{}}
			for i := range o.Filters {
				pred(&o.Filters[i])
			}
		case *query.Expand:
			pp.traversal = true
			walk(o.Input)
			if !o.DstBound {
				pp.vars[o.Dst] = &partialVar{typ: o.DstType, ids: map[string]bool{}, props: map[string]bool{}}
			}
			if o.EdgeVar != "" {
				pp.vars[o.EdgeVar] = &partialVar{edge: true, typ: o.Edge, props: map[string]bool{}}
				pp.edgeRows[o.Edge] = true
			}
		case *query.Filter:
			walk(o.Input)
			pred(&o.Pred)
		case *query.CrossJoin:
			pp.traversal = true
			walk(o.Left)
			walk(o.Right)
		case *query.AntiJoin:
			pp.traversal = true
			walk(o.Input)
			walk(o.Sub)
		case *query.Argument:
			pp.traversal = true
		case *query.Project:
			walk(o.Input)
			for _, c := range o.Cols {
				see(c.Value)
			}
		case *query.Aggregate:
			walk(o.Input)
			for _, c := range o.Keys {
				see(c.Value)
			}
			for _, a := range o.Aggs {
				if a.Func == "count" && a.Arg.Kind == query.OpdID {
					continue // counts rows: the id's value is never read
				}
				see(a.Arg)
			}
		case *query.Sort:
			walk(o.Input)
			for _, k := range o.Keys {
				see(k.Value)
			}
			for _, v := range o.TieBreak {
				pp.idRead[v] = true
			}
		case *query.Limit:
			walk(o.Input)
		default:
			ok = false
		}
	}
	walk(op)
	return ok
}

// oversized reports whether the image of a table among reads would take
// more than half the cache budget.
func (s *Snapshot) oversized(ctx context.Context, reads []query.TableRef) (bool, error) {
	budget := s.l.cache.Budget()
	for _, r := range reads {
		var tk string
		props := 0
		if r.Edge {
			et, ok := s.cat.Edge(r.Name)
			if !ok {
				continue
			}
			tk, props = s.edgeKey(et.Name), len(et.Props)
		} else {
			tk = s.nodeKey(r.Name)
			if nt, ok := s.cat.Node(r.Name); ok {
				props = len(nt.Props)
			}
		}
		if s.StateKey(tk) == "" {
			continue
		}
		st, err := s.State(ctx, tk) // cached by key
		if err != nil {
			return false, err
		}
		if imageSize(int(st.Rows()), props, r.Edge)*2 > budget {
			return true, nil
		}
	}
	return false, nil
}

// cold reports whether none of the plan's tables has a decoded image: then
// per-row index reads beat decoding whole tables.
func (pp *partialPlan) cold() bool {
	for _, v := range pp.vars {
		tk := NodeKey(v.typ)
		if v.edge {
			tk = EdgeKey(v.typ)
		}
		if _, hit := pp.snap.l.cache.Get(pp.snap.ImageKey(tk)); hit {
			return false
		}
	}
	return true
}

// gather fills the variables' id sets and the walked edges, children
// first (a traversal needs its source's ids).
func (pp *partialPlan) gather(ctx context.Context, op query.Op) (bool, error) {
	switch o := op.(type) {
	case *query.Scan:
		if o == pp.chunkRoot {
			return true, nil // one chunk of root rows (root_chunks.go)
		}
		id, ok, err := pp.anchor(ctx, o)
		if err != nil {
			return false, err
		}
		if !ok {
			// One scan and no traversal: a table scan reads what its
			// filters keep (scan.go).
			if pp.scans == 1 && !pp.traversal {
				pp.scan = o
				return true, nil
			}
			// Otherwise the scan's filters must pin few enough nodes to
			// start traversals from.
			return pp.filteredAnchors(ctx, o)
		}
		if id != "" {
			pp.vars[o.Var].ids[id] = true
		}
		return true, nil
	case *query.Expand:
		if ok, err := pp.gather(ctx, o.Input); err != nil || !ok {
			return false, err
		}
		return pp.expand(ctx, o)
	case *query.CrossJoin:
		if ok, err := pp.gather(ctx, o.Left); err != nil || !ok {
			return false, err
		}
		return pp.gather(ctx, o.Right)
	case *query.AntiJoin:
		if ok, err := pp.gather(ctx, o.Input); err != nil || !ok {
			return false, err
		}
		return pp.gather(ctx, o.Sub)
	case *query.Argument:
		return true, nil
	case *query.Filter:
		return pp.gather(ctx, o.Input)
	case *query.Project:
		return pp.gather(ctx, o.Input)
	case *query.Aggregate:
		return pp.gather(ctx, o.Input)
	case *query.Sort:
		return pp.gather(ctx, o.Input)
	case *query.Limit:
		return pp.gather(ctx, o.Input)
	}
	return false, nil
}

// anchor returns the id a scan is pinned to ("" when it can match no
// node); ok is false when the scan has no key or id equality with a
// constant, or the table's key column is not known to equal the id.
func (pp *partialPlan) anchor(ctx context.Context, o *query.Scan) (string, bool, error) {
	nt, found := pp.snap.cat.Node(o.Type)
	if !found {
		return "", false, nil
	}
	for i := range o.Filters {
		p := &o.Filters[i]
		if p.Func != "" || p.Op != query.OpEq {
			continue
		}
		vs, ks := p.Left, p.Right
		if vs.Kind == query.OpdParam || vs.Kind == query.OpdLit {
			vs, ks = ks, vs
		}
		if vs.Var != o.Var || (ks.Kind != query.OpdParam && ks.Kind != query.OpdLit) {
			continue
		}
		var c any
		if ks.Kind == query.OpdParam {
			c = pp.params[ks.Param]
		} else {
			if ks.Lit == nil || ks.Lit.Kind != query.LitString {
				return "", false, nil // ids and keys are strings
			}
			c = ks.Lit.Str
		}
		switch {
		case vs.Kind == query.OpdID:
			s, isStr := c.(string)
			if !isStr {
				return "", true, nil
			}
			return s, true, nil
		case vs.Kind == query.OpdProp && len(nt.Key) == 1 && nt.Key[0] == vs.Prop:
			p, _ := nt.Prop(vs.Prop)
			s, isStr := c.(string)
			if p == nil || !isStr || (p.Type.Kind != schema.KindString && p.Type.Kind != schema.KindEnum) {
				continue
			}
			st, err := pp.snap.State(ctx, NodeKey(nt.Name))
			if err != nil {
				return "", false, err
			}
			if canon, err := pp.snap.l.tr.ColumnEqualsID(ctx, st, vs.Prop, s); err != nil || !canon {
				return "", false, err
			}
			return s, true, nil
		}
	}
	return "", false, nil
}

// expand walks o's edge table from its source's ids up to o.Max hops.
func (pp *partialPlan) expand(ctx context.Context, o *query.Expand) (bool, error) {
	src := pp.vars[o.Src]
	if src == nil || src.edge {
		return false, nil
	}
	et, found := pp.snap.cat.Edge(o.Edge)
	if !found {
		return false, nil
	}
	st, err := pp.snap.State(ctx, EdgeKey(et.Name))
	if err != nil {
		return false, err
	}
	walked := pp.edges[et.Name]
	if walked == nil {
		walked = map[table.RowLoc][2]string{}
		pp.edges[et.Name] = walked
	}
	var dst map[string]bool
	if d := pp.vars[o.Dst]; d != nil && !o.DstBound {
		dst = d.ids
	}
	bound := maxPartialNodes
	// Edges per near node, on average: a frontier expected to reach past
	// the bound is not read at all (reading the adjacency of a large
	// frontier fetches whole index sections, only to give up after).
	avgDegree, dstRows := 0.0, int64(0)
	if nt, ok := pp.snap.cat.Node(o.DstType); ok {
		dst, err := pp.snap.State(ctx, NodeKey(nt.Name))
		if err != nil {
			return false, err
		}
		bound = partialBound(dst.Rows())
		dstRows = dst.Rows()
	}
	// Per near node: the edges over the rows of the near end's type (of
	// a Person → City edge, the persons').
	near := et.From
	if o.Dir == query.DirIn {
		near = et.To
	}
	if nt, ok := pp.snap.cat.Node(near); ok {
		ns, err := pp.snap.State(ctx, NodeKey(nt.Name))
		if err != nil {
			return false, err
		}
		if ns.Rows() > 0 {
			avgDegree = float64(st.Rows()) / float64(ns.Rows())
		}
	}
	seen := map[string]bool{}
	var frontier []string
	for id := range src.ids {
		frontier = append(frontier, id)
		seen[id] = true
	}
	slices.Sort(frontier)
	sections := []table.Section{table.SectionSrc}
	switch o.Dir {
	case query.DirIn:
		sections = []table.Section{table.SectionDst}
	case query.DirBoth:
		sections = []table.Section{table.SectionSrc, table.SectionDst}
	}
	for hop := int64(1); hop <= o.Max && len(frontier) > 0; hop++ {
		if expect := float64(len(frontier)) * avgDegree * float64(len(sections)); expect > float64(4*bound) ||
			float64(len(seen))+min(expect, float64(max(0, dstRows-int64(len(seen))))) > float64(2*bound) {
			return false, nil
		}
		var next []string
		for _, sec := range sections {
			es, err := pp.snap.l.tr.Adjacent(ctx, st, sec, frontier)
			if err != nil {
				return false, err
			}
			for _, e := range es {
				ends := [2]string{e.Near, e.Far}
				if sec == table.SectionDst {
					ends = [2]string{e.Far, e.Near}
				}
				walked[table.RowLoc{Fragment: e.Fragment, Offset: e.Offset}] = ends
				if dst != nil {
					dst[e.Far] = true
				}
				if !seen[e.Far] {
					seen[e.Far] = true
					next = append(next, e.Far)
				}
			}
		}
		if len(seen) > bound || len(walked) > 4*bound {
			return false, nil
		}
		slices.Sort(next)
		frontier = next
	}
	// Every node seen may bind the destination at some hop (extra rows are
	// harmless: only anchored scans iterate a table, and they filter).
	if dst != nil {
		for id := range seen {
			dst[id] = true
		}
	}
	return true, nil
}

// build reads the gathered rows into a MemSnapshot.
func (pp *partialPlan) build(ctx context.Context) (*Mem, error) {
	ms := &Mem{Cat: pp.snap.cat, NodeT: map[string]*NodeTable{}, EdgeT: map[string]*EdgeTable{}}
	ids := map[string]map[string]bool{}
	props := map[string]map[string]bool{}
	eprops := map[string]map[string]bool{}
	for _, v := range pp.vars {
		if v.edge {
			if eprops[v.typ] == nil {
				eprops[v.typ] = map[string]bool{}
			}
			for p := range v.props {
				eprops[v.typ][p] = true
			}
			continue
		}
		if ids[v.typ] == nil {
			ids[v.typ], props[v.typ] = map[string]bool{}, map[string]bool{}
		}
		for id := range v.ids {
			ids[v.typ][id] = true
		}
		for p := range v.props {
			props[v.typ][p] = true
		}
	}
	if o := pp.scan; o != nil {
		// The plan's only variable (no traversal, one scan).
		lz, root, err := pp.scanOnly(ctx, o)
		if err != nil {
			return nil, err
		}
		ms.lazy = lz
		pp.root = root
		return ms, nil
	}
	for typ, set := range ids {
		nt, _ := pp.snap.cat.Node(typ)
		t, err := pp.nodeRows(ctx, nt, set, props[typ])
		if err != nil {
			return nil, err
		}
		ms.NodeT[nt.Name] = t
	}
	for name, walked := range pp.edges {
		et, _ := pp.snap.cat.Edge(name)
		t, err := pp.edgeTable(ctx, et, walked, pp.edgeRows[name], eprops[name])
		if err != nil {
			return nil, err
		}
		ms.EdgeT[et.Name] = t
	}
	return ms, nil
}

// propsToRead lists the stored columns of st among the wanted properties.
func propsToRead(st *table.State, all []*schema.Property, want map[string]bool) []string {
	sch := st.Schema()
	var cols []string
	for _, p := range all {
		if want[p.Name] && sch.Index(p.Name) >= 0 {
			cols = append(cols, p.Name)
		}
	}
	return cols
}

// nodeRows reads the live nodes with the given ids, in storage order.
func (pp *partialPlan) nodeRows(ctx context.Context, nt *schema.NodeType, set map[string]bool, want map[string]bool) (*NodeTable, error) {
	t := &NodeTable{Type: nt, Cols: map[string][]any{}}
	st, err := pp.snap.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return nil, err
	}
	idList := make([]string, 0, len(set))
	var locs []table.RowLoc
	known := pp.known[nt.Name]
	for id := range set {
		if l, ok := known[id]; ok {
			locs = append(locs, l)
		} else {
			idList = append(idList, id)
		}
	}
	if len(idList) > 0 {
		found, err := pp.snap.l.tr.Locate(ctx, st, idList)
		if err != nil {
			return nil, err
		}
		locs = append(locs, found...)
	}
	if len(known) > 0 {
		pos := map[string]int{}
		for i, f := range st.Fragments() {
			pos[f.Key] = i
		}
		slices.SortFunc(locs, func(a, b table.RowLoc) int {
			if pa, pb := pos[a.Fragment], pos[b.Fragment]; pa != pb {
				return pa - pb
			}
			return int(a.Offset - b.Offset)
		})
	}
	cols := propsToRead(st, nt.Props, want)
	for _, p := range nt.Props {
		if want[p.Name] {
			t.Cols[p.Name] = make([]any, 0, len(locs))
		}
	}
	err = pp.readByFragmentKeyed(ctx, st, locs, cols, idColumn(nt), func(k int, get func(col string) any) {
		t.IDs = append(t.IDs, locs[k].ID)
		for _, p := range nt.Props {
			if want[p.Name] {
				t.Cols[p.Name] = append(t.Cols[p.Name], value.FromColumn(p.Type, get(p.Name)))
			}
		}
	})
	return t, err
}

// readByFragment reads cols of the rows at locs (in state order, grouped
// by fragment) and calls fn for each in that order; get returns the
// table value of a column (nil when not read).
func (pp *partialPlan) readByFragment(ctx context.Context, st *table.State, locs []table.RowLoc, cols []string, fn func(k int, get func(col string) any)) error {
	return pp.readByFragmentKeyed(ctx, st, locs, cols, "", fn)
}

// idColumn is the column of nt's single String (or enum) @key: the id of
// a keyed node is its key, and a fragment's index says whether the
// column holds the id in every row (FragmentColumnEqualsID).
func idColumn(nt *schema.NodeType) string {
	if len(nt.Key) != 1 {
		return ""
	}
	return nt.Key[0]
}

// readByFragmentKeyed is readByFragment where column idCol, if set and
// among cols, is not read from a fragment whose index says it equals the
// id in every row: get returns the row's id for it, the value a read
// would give. A query that finds a node by its key wants the key column of
// every node of the type it reaches; this spares reading those rows at
// all when no other column is wanted.
func (pp *partialPlan) readByFragmentKeyed(ctx context.Context, st *table.State, locs []table.RowLoc, cols []string, idCol string, fn func(k int, get func(col string) any)) error {
	if !slices.Contains(cols, idCol) {
		idCol = ""
	}
	for lo := 0; lo < len(locs); {
		hi := lo
		for hi < len(locs) && locs[hi].Fragment == locs[lo].Fragment {
			hi++
		}
		read, fromID := cols, ""
		if idCol != "" {
			same, err := pp.snap.l.tr.FragmentColumnEqualsID(ctx, st, locs[lo].Fragment, idCol)
			if err != nil {
				return err
			}
			if same {
				read = slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return c == idCol })
				fromID = idCol
			}
		}
		if err := pp.readGroup(ctx, st, locs[lo:hi], lo, read, fromID, fn); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// readGroup reads cols of the rows group (locs[base:base+len(group)], all
// of one fragment) and calls fn for each; column fromID, if set, is the
// row's id.
func (pp *partialPlan) readGroup(ctx context.Context, st *table.State, group []table.RowLoc, base int, cols []string, fromID string, fn func(k int, get func(col string) any)) error {
	var rec arrow.RecordBatch
	if len(cols) > 0 {
		offs := make([]int64, 0, len(group))
		for _, l := range group {
			offs = append(offs, l.Offset)
		}
		var err error
		rec, err = pp.snap.l.tr.ReadRows(ctx, st, group[0].Fragment, offs, cols, nil)
		if err != nil {
			return err
		}
		defer rec.Release()
		if int(rec.NumRows()) != len(group) {
			return fmt.Errorf("exec: fragment %s: read %d of %d rows", group[0].Fragment, rec.NumRows(), len(group))
		}
	}
	for i, l := range group {
		fn(base+i, func(col string) any {
			if fromID != "" && col == fromID {
				return l.ID
			}
			j := slices.Index(cols, col)
			if j < 0 || rec == nil {
				return nil
			}
			return table.Value(rec.Column(j), i)
		})
	}
	return nil
}

// edgeTable builds the table of the walked edges of et, in storage order.
// Without real rows (no edge variable) ids are placeholders: traversal
// reads only the ends.
func (pp *partialPlan) edgeTable(ctx context.Context, et *schema.EdgeType, walked map[table.RowLoc][2]string, real bool, want map[string]bool) (*EdgeTable, error) {
	st, err := pp.snap.State(ctx, EdgeKey(et.Name))
	if err != nil {
		return nil, err
	}
	pos := map[string]int{}
	for i, f := range st.Fragments() {
		pos[f.Key] = i
	}
	locs := make([]table.RowLoc, 0, len(walked))
	for l := range walked {
		locs = append(locs, l)
	}
	slices.SortFunc(locs, func(a, b table.RowLoc) int {
		if pa, pb := pos[a.Fragment], pos[b.Fragment]; pa != pb {
			return pa - pb
		}
		return int(a.Offset - b.Offset)
	})
	t := &EdgeTable{Type: et, Cols: map[string][]any{}}
	var cols []string
	if real {
		cols = append([]string{table.KeyColumn}, propsToRead(st, et.Props, want)...)
		for _, p := range et.Props {
			if want[p.Name] {
				t.Cols[p.Name] = make([]any, 0, len(locs))
			}
		}
	}
	err = pp.readByFragment(ctx, st, locs, cols, func(k int, get func(string) any) {
		ends := walked[locs[k]]
		t.Src = append(t.Src, ends[0])
		t.Dst = append(t.Dst, ends[1])
		if !real {
			t.IDs = append(t.IDs, fmt.Sprintf("\x00%s#%d", locs[k].Fragment, locs[k].Offset))
			return
		}
		t.IDs = append(t.IDs, get(table.KeyColumn).(string))
		for _, p := range et.Props {
			if want[p.Name] {
				t.Cols[p.Name] = append(t.Cols[p.Name], value.FromColumn(p.Type, get(p.Name)))
			}
		}
	})
	return t, err
}
