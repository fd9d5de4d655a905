package snapshot

import (
	"context"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Dense views: what an unanchored traversal needs of its tables, without
// their images. A traversal from an unfiltered scan, or from more anchors
// than partialBound, touches every edge; its boxed images (ids, ends and
// columns as []any and []string) take ~400 B per edge, several times the
// cache budget of a large graph. What the walk actually needs is far less:
//
//   - per node type, the live rows in storage order (the image's row order)
//     and an exact id → row map built from the id column alone: the ids in
//     one byte arena, an open-addressing table of row numbers (DenseNodes,
//     ~12 B a row plus the id bytes);
//   - per variable, which rows pass its filters: a bitmap, computed by a
//     table scan with the filters pushed down (DenseMask);
//   - per edge type, the edges as int32 rows of their ends: a CSR by source
//     and one by destination, streamed from the src and dst columns
//     (DenseAdjacency, 4 B per edge and direction plus 4 B per node).
//
// Each is built for a query, charged to its working-memory budget
// (internal/limits) before it is allocated; the node maps and CSRs (not the
// bitmaps, which depend on parameters) are then kept in the handle's cache
// when one takes at most a quarter of its budget (keepDense), keyed by the
// table states they were read from. internal/eval (dense.go) walks them.

// DenseNodes is the live rows of a node table in storage order, with an
// exact id → row map.
type DenseNodes struct {
	Type  string
	arena []byte   // the ids, concatenated in row order
	ends  []uint32 // ends[i] is the end of row i's id in arena
	slots []int32  // open addressing: row+1, 0 = empty
	seed  maphash.Seed
	// frags locates a row from its fragment and physical offset
	// (DenseMask's scans report those).
	frags map[string]*denseFrag
}

// denseFrag is one fragment's rows: base is the row of its first live row;
// offs, when set, lists its live offsets (the fragment has deletions),
// else they are first, first+1, ….
type denseFrag struct {
	base  int32
	first int64
	offs  []int64
}

// Len returns the number of rows.
func (d *DenseNodes) Len() int { return len(d.ends) }

// ID returns the id of row i.
func (d *DenseNodes) ID(i int32) string {
	return string(d.idBytes(i))
}

func (d *DenseNodes) idBytes(i int32) []byte {
	lo := uint32(0)
	if i > 0 {
		lo = d.ends[i-1]
	}
	return d.arena[lo:d.ends[i]]
}

// Row returns the row of node id.
func (d *DenseNodes) Row(id string) (int32, bool) {
	if len(d.slots) == 0 {
		return 0, false
	}
	return d.rowFrom(maphash.String(d.seed, id)&uint64(len(d.slots)-1), id)
}

// lookupChunk is how many ids RowsOf resolves per pass: small enough that
// the slots, ends and id bytes a chunk touches stay in cache between its
// passes, large enough to keep many cache misses in flight.
const lookupChunk = 512

// RowsOf sets rows[i], found[i] to Row(ids[i]) for every i. It answers
// the same as Row, faster for many random ids: each chunk is resolved in
// passes — hash every id, load each one's first slot, then each slot's
// id bounds, then the id bytes — so the cache misses of one pass are
// independent loads that overlap instead of one chain per id
// (TestDenseRowsOfMatchesRow).
func (d *DenseNodes) RowsOf(ids []string, rows []int32, found []bool) {
	if len(d.slots) == 0 {
		clear(found[:len(ids)])
		return
	}
	mask := uint64(len(d.slots) - 1)
	var hs [lookupChunk]uint64
	var first [lookupChunk]int32
	for lo := 0; lo < len(ids); lo += lookupChunk {
		chunk := ids[lo:min(lo+lookupChunk, len(ids))]
		for i, id := range chunk {
			hs[i] = maphash.String(d.seed, id) & mask
		}
		for i := range chunk {
			first[i] = d.slots[hs[i]]
		}
		var sink uint32
		for i := range chunk {
			if s := first[i]; s > 0 {
				sink += d.ends[s-1]
			}
		}
		for i := range chunk {
			if s := first[i]; s > 0 {
				if e := d.ends[s-1]; e > 0 {
					sink += uint32(d.arena[e-1])
				}
			}
		}
		_ = sink
		for i, id := range chunk {
			rows[lo+i], found[lo+i] = d.rowFrom(hs[i], id)
		}
	}
}

// rowFrom is Row(id) given id's hash h (masked).
func (d *DenseNodes) rowFrom(h uint64, id string) (int32, bool) {
	mask := uint64(len(d.slots) - 1)
	for ; ; h = (h + 1) & mask {
		s := d.slots[h]
		if s == 0 {
			return 0, false
		}
		if string(d.idBytes(s-1)) == id {
			return s - 1, true
		}
	}
}

// bytes is what d holds.
func (d *DenseNodes) bytes() int64 {
	return int64(cap(d.arena)) + 4*int64(cap(d.ends)) + 4*int64(len(d.slots))
}

// rowAt returns the row at physical offset off of fragment frag.
func (d *DenseNodes) rowAt(frag string, off int64) (int32, bool) {
	f := d.frags[frag]
	if f == nil {
		return 0, false
	}
	if f.offs == nil {
		return f.base + int32(off-f.first), true
	}
	k, found := slices.BinarySearch(f.offs, off)
	return f.base + int32(k), found
}

// DenseNodes reads the id column of node type typ into a DenseNodes,
// charging mem as it grows.
func (s *Snapshot) DenseNodes(ctx context.Context, typ string, mem *limits.Budget) (*DenseNodes, error) {
	nt, ok := s.cat.Node(typ)
	if !ok {
		return nil, &UnknownTypeError{Kind: "node", Name: typ}
	}
	st, err := s.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return nil, err
	}
	key := s.denseKey("nodes", NodeKey(nt.Name))
	if v, ok := s.l.cache.Get(key); ok {
		return v.(*DenseNodes), nil
	}
	n := int(st.Rows())
	d := &DenseNodes{Type: nt.Name, seed: maphash.MakeSeed(), frags: map[string]*denseFrag{}}
	nslots := 1 << bits.Len(uint(2*n)) // load factor ≤ 1/2
	if err := mem.Charge(int64(4*n + 4*nslots)); err != nil {
		return nil, err
	}
	d.ends = make([]uint32, 0, n)
	arenaCharged := 0
	sc, err := s.l.tr.Scan(ctx, st, table.ScanOptions{Columns: []string{table.KeyColumn}, RowOffsets: true})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	for sc.Next() {
		rec := sc.Record()
		err := eachString(rec.Column(0), func(id string) error {
			if len(d.arena)+len(id) > 1<<32-1 {
				return fmt.Errorf("snapshot: %s: ids over 4 GiB", typ)
			}
			if len(d.arena)+len(id) > arenaCharged {
				// Grow by doubling, charged before it is made.
				grow := max(2*arenaCharged, len(d.arena)+len(id), 1<<16)
				if err := mem.Charge(int64(grow - arenaCharged)); err != nil {
					return err
				}
				d.arena = slices.Grow(d.arena, grow-len(d.arena))
				arenaCharged = cap(d.arena)
			}
			d.arena = append(d.arena, id...)
			d.ends = append(d.ends, uint32(len(d.arena)))
			return nil
		})
		if err != nil {
			return nil, err
		}
		d.noteOffsets(sc.Fragment(), sc.Offsets(), int32(len(d.ends)-int(rec.NumRows())))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(d.ends) > 1<<31-2 {
		return nil, fmt.Errorf("snapshot: %s: %d rows over the dense limit", typ, len(d.ends))
	}
	d.index(nslots)
	s.keepDense(key, d, d.bytes())
	return d, nil
}

// denseKey names a cached dense view of table tk (one kind per name): its
// rows follow the table state, so the state key identifies it.
func (s *Snapshot) denseKey(kind, tk string, more ...string) string {
	k := "exec/dense/" + kind + "/" + s.c.Schema + "/" + s.stateName(tk)
	for _, m := range more {
		k += "/" + m
	}
	return k
}

// keepDense caches a dense view that takes at most a quarter of the cache
// budget: a warm handle (a server) then answers the next traversal count
// over the same states without rebuilding it. A view over that stays the
// query's own, dropped with it.
func (s *Snapshot) keepDense(key string, v any, size int64) {
	if size*4 <= s.l.cache.Budget() {
		s.l.cache.Add(key, v, size)
	}
}

// index builds the id → row table, of nslots slots unless the rows need
// more.
func (d *DenseNodes) index(nslots int) {
	if len(d.ends) > nslots/2 {
		nslots = 1 << bits.Len(uint(2*len(d.ends)))
	}
	d.slots = make([]int32, nslots)
	mask := uint64(len(d.slots) - 1)
	for i := range d.ends {
		h := maphash.Bytes(d.seed, d.idBytes(int32(i))) & mask
		for d.slots[h] != 0 {
			h = (h + 1) & mask
		}
		d.slots[h] = int32(i) + 1
	}
}

// NewDenseNodes returns the dense view of a node table held in memory
// (ids in row order, unique).
func NewDenseNodes(typ string, ids []string) *DenseNodes {
	d := &DenseNodes{Type: typ, seed: maphash.MakeSeed(), ends: make([]uint32, 0, len(ids))}
	for _, id := range ids {
		d.arena = append(d.arena, id...)
		d.ends = append(d.ends, uint32(len(d.arena)))
	}
	d.index(0)
	return d
}

// NewDenseAdjacency is DenseAdjacency over edge ends held in memory.
func NewDenseAdjacency(src, dst []string, from, to *DenseNodes, wantOut, wantIn bool, mem *limits.Budget) (out, in *DenseCSR, err error) {
	b, err := newCSRBuilder(from.Len(), to.Len(), int64(len(src)), wantOut, wantIn, mem)
	if err != nil {
		return nil, nil, err
	}
	for i := range src {
		if s, d, ok := resolveEdge(from, to, src[i], dst[i]); ok {
			b.count(s, d, mem)
		}
	}
	again, err := b.grow(mem)
	if err != nil {
		return nil, nil, err
	}
	for i := range src {
		if !again {
			break
		}
		if s, d, ok := resolveEdge(from, to, src[i], dst[i]); ok {
			if err := b.place(s, d); err != nil {
				return nil, nil, err
			}
		}
	}
	return b.finish()
}

// resolveEdge returns the rows of the edge from id a to id b when both are
// live rows.
func resolveEdge(from, to *DenseNodes, a, b string) (s, d int32, ok bool) {
	if s, ok = from.Row(a); !ok {
		return 0, 0, false
	}
	d, ok = to.Row(b)
	return s, d, ok
}

// noteOffsets records the physical offsets of a batch of rows starting at
// row base, read from fragment frag.
func (d *DenseNodes) noteOffsets(frag string, offs []int64, base int32) {
	if len(offs) == 0 {
		return
	}
	f := d.frags[frag]
	if f == nil {
		f = &denseFrag{base: base, first: offs[0]}
		d.frags[frag] = f
	}
	next := int(base - f.base) // rows of f seen before this batch
	contiguous := f.offs == nil && offs[0] == f.first+int64(next) && offs[len(offs)-1] == offs[0]+int64(len(offs)-1)
	if contiguous {
		return
	}
	if f.offs == nil {
		f.offs = make([]int64, next, next+len(offs))
		for k := range next {
			f.offs[k] = f.first + int64(k)
		}
	}
	f.offs = append(f.offs, offs...)
}

// eachString calls fn with every value of a non-null string column.
func eachString(arr arrow.Array, fn func(string) error) error {
	switch a := arr.(type) {
	case *array.String:
		for i := range a.Len() {
			if err := fn(a.Value(i)); err != nil {
				return err
			}
		}
	case *array.LargeString:
		for i := range a.Len() {
			if err := fn(a.Value(i)); err != nil {
				return err
			}
		}
	default:
		for i := range arr.Len() {
			v, _ := table.Value(arr, i).(string)
			if err := fn(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// DenseMask returns the rows of d (node type o.Type) that pass every
// filter of o, as a bitmap (nil when o has no filters: every row). ok is
// false when a filter cannot be pushed into the table scan exactly (floats,
// text predicates, lists, now(), comparisons between variables): the
// caller then takes another path. params are converted parameter values.
func (s *Snapshot) DenseMask(ctx context.Context, d *DenseNodes, o *query.Scan, params map[string]any, mem *limits.Budget) (mask []uint64, ok bool, err error) {
	if len(o.Filters) == 0 {
		return nil, true, nil
	}
	st, err := s.State(ctx, NodeKey(d.Type))
	if err != nil {
		return nil, false, err
	}
	pp := &partialPlan{snap: s, params: params}
	filters, pushed := pp.tableFilters(st.Schema(), o)
	if len(pushed) != len(o.Filters) {
		return nil, false, nil
	}
	words := (d.Len() + 63) / 64
	if err := mem.Charge(8 * int64(words)); err != nil {
		return nil, false, err
	}
	mask = make([]uint64, words)
	// Scalar indexes answer the filters of indexed fragments without a
	// column read (scalar_scan.go).
	err = s.filteredScan(ctx, st, nil, filters, true, func(_ arrow.RecordBatch, frag string, offs []int64) error {
		for _, off := range offs {
			r, found := d.rowAt(frag, off)
			if !found {
				return fmt.Errorf("snapshot: %s: fragment %s offset %d is not a live row", d.Type, frag, off)
			}
			mask[r>>6] |= 1 << (r & 63)
		}
		return nil
	}, func(int) {})
	if err != nil {
		return nil, false, err
	}
	return mask, true, nil
}

// DenseCSR is one direction of an edge table over dense rows: the far rows
// of near row k are far[off[k]:off[k+1]], in edge storage order (the order
// of the image's EdgeTable.Out/In, which the row executor walks; a dense
// projection emits rows in that order). Edges
// with an end that is not a live row are left out (a walk skips them).
type DenseCSR struct {
	off []int32
	far []int32
}

func (c *DenseCSR) bytes() int64 { return 4 * int64(cap(c.off)+cap(c.far)) }

// At returns the far rows of near row k.
func (c *DenseCSR) At(k int32) []int32 { return c.far[c.off[k]:c.off[k+1]] }

// DenseAdjacency streams the src and dst columns of edge type edge (ends
// resolved in from and to, the node types of its ends) into the CSRs by
// source (out) and by destination (in) that are asked for.
func (s *Snapshot) DenseAdjacency(ctx context.Context, edge string, from, to *DenseNodes, wantOut, wantIn bool, mem *limits.Budget) (out, in *DenseCSR, err error) {
	et, ok := s.cat.Edge(edge)
	if !ok {
		return nil, nil, &UnknownTypeError{Kind: "edge", Name: edge}
	}
	st, err := s.State(ctx, EdgeKey(et.Name))
	if err != nil {
		return nil, nil, err
	}
	// Rows of the CSRs are rows of from and to: keyed by their states too.
	ends := []string{s.stateName(NodeKey(et.From)), s.stateName(NodeKey(et.To))}
	outKey := s.denseKey("out", EdgeKey(et.Name), append(ends, "out")...)
	inKey := s.denseKey("in", EdgeKey(et.Name), append(ends, "in")...)
	if wantOut {
		if v, ok := s.l.cache.Get(outKey); ok {
			out, wantOut = v.(*DenseCSR), false
		}
	}
	if wantIn {
		if v, ok := s.l.cache.Get(inKey); ok {
			in, wantIn = v.(*DenseCSR), false
		}
	}
	if !wantOut && !wantIn {
		return out, in, nil
	}
	defer func() {
		if err == nil {
			if wantOut {
				s.keepDense(outKey, out, out.bytes())
			}
			if wantIn {
				s.keepDense(inKey, in, in.bytes())
			}
		}
	}()
	b, err := newCSRBuilder(from.Len(), to.Len(), st.Rows(), wantOut, wantIn, mem)
	if err != nil {
		return nil, nil, err
	}
	// One pass over the src and dst columns, and a second for a direction
	// whose edges are not stored in its near rows' order (dense_csr.go).
	if err := s.eachEdge(ctx, st, from, to, func(s, d int32) error { b.count(s, d, mem); return nil }); err != nil {
		return nil, nil, err
	}
	again, err := b.grow(mem)
	if err != nil {
		return nil, nil, err
	}
	if again {
		if err := s.eachEdge(ctx, st, from, to, b.place); err != nil {
			return nil, nil, err
		}
	}
	o, i, err := b.finish()
	if err != nil {
		return nil, nil, err
	}
	if wantOut {
		out = o
	}
	if wantIn {
		in = i
	}
	return out, in, nil
}

// eachEdge calls fn with the rows of both ends of every live edge of table
// state st whose ends are live rows of from and to, in storage order, read
// by one scan of the src and dst columns.
func (s *Snapshot) eachEdge(ctx context.Context, st *table.State, from, to *DenseNodes, fn func(s, d int32) error) error {
	sc, err := s.l.tr.Scan(ctx, st, table.ScanOptions{Columns: []string{"src", "dst"}})
	if err != nil {
		return err
	}
	defer sc.Close()
	var ids []string
	var rows []int32
	var found []bool
	for sc.Next() {
		rec := sc.Record()
		n := int(rec.NumRows())
		ids, rows, found = ids[:0], slices.Grow(rows[:0], 2*n)[:2*n], slices.Grow(found[:0], 2*n)[:2*n]
		for c := range 2 {
			if err := eachString(rec.Column(c), func(id string) error {
				ids = append(ids, id)
				return nil
			}); err != nil {
				return err
			}
		}
		// A node's edges are mostly stored together (a load groups them
		// by source): the previous source's row answers most of those
		// lookups; destinations are resolved in bulk.
		prev := -1
		for i, a := range ids[:n] {
			if prev >= 0 && a == ids[prev] {
				rows[i], found[i] = rows[prev], found[prev]
				continue
			}
			rows[i], found[i] = from.Row(a)
			prev = i
		}
		to.RowsOf(ids[n:], rows[n:], found[n:])
		for i := range n {
			if found[i] && found[n+i] {
				if err := fn(rows[i], rows[n+i]); err != nil {
					return err
				}
			}
		}
	}
	return sc.Err()
}

// PreferDense reports whether a traversal plan that the partial paths
// could not bound should walk dense views (above) rather than decode its
// tables' images: every filter of the variables' scans (one per variable,
// its filters gathered) must push down into a table scan exactly
// (DenseMask), and an image of a table the plan reads would take more than
// half the cache budget (memory follows the budget, not the graph), or the
// handle is cold (no image of those tables decoded yet, fewer than
// partialBeforeImages partial reads served: a CLI process reads once).
// A true answer counts as a partial read. params are converted parameter
// values.
func (s *Snapshot) PreferDense(ctx context.Context, plan *query.Plan, vars []*query.Scan, params map[string]any) (bool, error) {
	if s.l.noIndexPath || plan == nil {
		return false, nil
	}
	oversized, err := s.oversized(ctx, plan.Reads)
	if err != nil {
		return false, err
	}
	if !oversized {
		if s.l.partials.Load() >= partialBeforeImages {
			return false, nil
		}
		for _, r := range plan.Reads {
			tk := NodeKey(r.Name)
			if r.Edge {
				tk = EdgeKey(r.Name)
			}
			if _, hit := s.l.cache.Get(s.ImageKey(tk)); hit {
				return false, nil
			}
		}
	}
	pp := &partialPlan{snap: s, params: params}
	for _, o := range vars {
		st, err := s.State(ctx, NodeKey(o.Type))
		if err != nil {
			return false, err
		}
		if _, pushed := pp.tableFilters(st.Schema(), o); len(pushed) != len(o.Filters) {
			return false, nil
		}
	}
	s.l.partials.Add(1)
	s.l.denseReads.Add(1)
	return true, nil
}

// DenseReads returns how many reads PreferDense sent to dense views.
func (l *Loader) DenseReads() int64 { return l.denseReads.Load() }

// DenseColumns calls fn for every row of d, in row order, with the values
// of props in the value model (nil for null, and for a property the stored
// table lacks), read by one table scan of just those columns. vals is
// reused between calls.
func (s *Snapshot) DenseColumns(ctx context.Context, d *DenseNodes, props []string, fn func(row int32, vals []any) error) error {
	nt, ok := s.cat.Node(d.Type)
	if !ok {
		return &UnknownTypeError{Kind: "node", Name: d.Type}
	}
	types := make([]*schema.Property, len(props))
	for i, p := range props {
		types[i] = PropByName(nt.Props, p)
	}
	vals := make([]any, len(props))
	x := int32(0)
	return s.DenseScanColumns(ctx, d, props, func(n int, cols []arrow.Array) error {
		for i := range n {
			for k, c := range cols {
				vals[k] = nil
				if c != nil {
					vals[k] = value.FromColumn(types[k].Type, table.Value(c, i))
				}
			}
			if err := fn(x, vals); err != nil {
				return err
			}
			x++
		}
		return nil
	})
}

// DenseScanColumns streams the rows of d, in row order, to fn as typed
// Arrow columns, one call per batch of n rows: cols[k] is the stored
// column of props[k] (nil: a property the stored table lacks, null in
// every row; all nil when no property is stored). One table scan of just
// those columns; nothing is boxed. The columns are valid only during the
// call.
func (s *Snapshot) DenseScanColumns(ctx context.Context, d *DenseNodes, props []string, fn func(n int, cols []arrow.Array) error) error {
	nt, ok := s.cat.Node(d.Type)
	if !ok {
		return &UnknownTypeError{Kind: "node", Name: d.Type}
	}
	st, err := s.State(ctx, NodeKey(nt.Name))
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, p := range props {
		want[p] = true
	}
	read := propsToRead(st, nt.Props, want)
	cols := make([]arrow.Array, len(props))
	if len(read) == 0 {
		for lo := 0; lo < d.Len(); lo += 1 << 16 {
			if err := fn(min(1<<16, d.Len()-lo), cols); err != nil {
				return err
			}
		}
		return nil
	}
	at := make([]int, len(props)) // column of each prop in the records, -1 if absent
	for i, p := range props {
		at[i] = slices.Index(read, p)
	}
	sc, err := s.l.tr.Scan(ctx, st, table.ScanOptions{Columns: read})
	if err != nil {
		return err
	}
	defer sc.Close()
	rows := 0
	for sc.Next() {
		rec := sc.Record()
		for k, c := range at {
			cols[k] = nil
			if c >= 0 {
				cols[k] = rec.Column(c)
			}
		}
		if err := fn(int(rec.NumRows()), cols); err != nil {
			return err
		}
		rows += int(rec.NumRows())
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if rows != d.Len() {
		return fmt.Errorf("snapshot: %s: %d rows scanned, %d in its dense view", d.Type, rows, d.Len())
	}
	return nil
}
