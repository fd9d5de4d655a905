package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// DefaultLoadChunkBytes bounds the staged rows of one load chunk (an
// estimate of their in-memory size). A full chunk is written out as one
// fragment per table it touches and its values are dropped, so a load's
// memory does not grow with the property payload of its input. Encoding a
// chunk takes about four to five times its size again (Arrow builders grow
// by doubling; Parquet keeps a dictionary memo, the column's pages and the
// encoded file), so 16 MiB keeps that working set under ~100 MiB while a
// fragment still holds many thousands of rows.
const DefaultLoadChunkBytes = 16 << 20

// minLoadFragmentRows is the fewest rows a load writes as a fragment of
// its own before its chunk is full: the compaction target, unless a handle
// sets that lower (tests), which would only make loads write many tiny
// fragments.
const minLoadFragmentRows = 1 << 12

// stagedRowOverhead is the estimated in-memory cost of one buffered row
// besides its strings and values: the buffer entry and the record's value
// map (one swiss-table group and its header).
const stagedRowOverhead = 400

// loadStream is one load's input after reading: the row images of all but
// the last chunk are in fragments already (immutable, referenced by nothing
// until the publish), and per type only a compact skeleton of each entity
// is kept for the cross-row and committed-state checks. Ids are fixed while
// reading (keyed nodes from the key, others from data.id or a fresh ULID),
// so a rebase re-validates and re-publishes exactly the same rows without
// re-reading the input.
//
// Memory is O(entities × (id + endpoints + non-key @unique values)) plus one
// chunk, independent of the property payload (docs/write-path.md, Load).
type loadStream struct {
	g    *Graph
	base *snapshot.Snapshot // the load's base: its catalog converted the input
	mode LoadMode
	// chunkBytes and chunkRecords bound the rows buffered before a flush.
	chunkBytes   int64
	chunkRecords int
	types        map[string]*stagedType // by table key
	// nodeNames and edgeNames are types by type name: a record names its
	// type, and building the table key per record would allocate.
	nodeNames, edgeNames map[string]*stagedType
	lastNode, lastEdge   *stagedType // stagedNamed's last answers
	sink                 uint64      // keeps ahead's reads
	slotRefs             []idSlotRef // ahead's scratch
	ids                  *loadIDs    // for rows without one
	pendingBytes         int64
	pendingRecs          int
	res                  *LoadResult
	// own, once the tail chunk is flushed, is each type's fragments with
	// deletion vectors hiding superseded images: computed once, reused by
	// every publish attempt.
	own map[string][]table.Fragment

	// Chunks are encoded and written by up to encoders goroutines while
	// reading goes on (encode is most of a load's CPU). slots bounds the
	// chunks in flight, so memory stays O(encoders × chunk); mu guards
	// the types' frags and encErr, the first encoding error. What the
	// encoders write is recorded in the load's ledger (storage.PutFresh).
	encoders int
	settle   bool // LoadRequest.settleBeforeProgress
	slots    chan struct{}
	inflight sync.WaitGroup
	mu       sync.Mutex
	encErr   error
}

// stagedType is what a load keeps about one type of its input.
type stagedType struct {
	tk     string
	tname  string           // the type's name
	count  int64            // records read, not yet in LoadResult (countTypes)
	nt     *schema.NodeType // nil for an edge type
	et     *schema.EdgeType // nil for a node type
	props  []*schema.Property
	schema table.Schema // the table schema at the load's base
	prefix string

	// skel has one skeleton image per distinct id in first-occurrence
	// order (TypeDelta.RowsChecked), holding the last occurrence's
	// endpoints, and keepValues the values of its non-key @unique columns
	// (keep; TypeDelta.Keep/KeepValues); index maps an id to its position.
	// INVARIANT: len(lines) == len(locs) == skel.len() == index.n, and
	// locs[i] is where the one visible image of skel's i-th is
	// (TestLoadStreamChunkedEqualsSingle).
	//
	// An edge needs no skeleton when nothing can check it later (lean): its
	// id was generated (unique, never committed), its type has no @unique
	// and no @card, and both endpoints are nodes this load stages, which the
	// published result holds whatever the head (TestLoadLeanEdgesChecked).
	// Such edges are only counted; a load's memory is then O(nodes), not
	// O(nodes + edges).
	skel       skelRows
	index      *idTable
	keep       []string
	keepValues []any
	lines      []int    // input line of the last occurrence
	locs       []rowLoc // where the last occurrence's full image is

	frags []table.Fragment // flushed chunks, in input order (guarded by loadStream.mu)
	// hidden lists, per index into frags, the row offsets of images a later
	// occurrence of the same id superseded (merge only).
	hidden map[int][]int64

	buf []bufRow // the current chunk (untyped: types with @embed targets)
	// typed: the current chunk is kept as typed columns in bb instead of
	// row images in buf: each row is converted when read and its values
	// map dropped (the embedding fill of @embed types needs the rows, so
	// those keep buf). tpos is the skel position of each row in bb (-1 for
	// a lean edge) and tdead the offsets of rows a later occurrence
	// superseded within the chunk (merge), filtered out at the flush.
	typed bool
	enc   *loadEncoder
	bb    *table.BatchBuilder
	tpos  []int32
	tdead []int32
	// bytes and recs are this type's share of the stream's pending counts.
	bytes int64
	recs  int
	// lean: edges of this type may skip the skeleton (see skel).
	lean bool
	// from and to are the stagings of the endpoint node types, once staged.
	from, to *stagedType
	// lastSrc is the last source found staged: inputs usually list a
	// node's edges together, so most sources need no lookup.
	lastSrc string
}

// rowLoc locates one row image: frag is an index into stagedType.frags, or
// -1 while the row is still in the chunk buffer at position off.
type rowLoc struct{ frag, off int32 }

type bufRow struct {
	row  Row
	line int
	pos  int   // index of the entity in skel, -1 for a lean edge
	size int64 // its share of pendingBytes
	dead bool  // superseded inside the chunk: never written
}

// newLoadStream prepares an empty stream for a load against base.
func newLoadStream(g *Graph, base *snapshot.Snapshot, req LoadRequest) *loadStream {
	s := &loadStream{g: g, base: base, mode: req.Mode, chunkBytes: req.ChunkBytes, chunkRecords: req.ChunkRecords,
		types: map[string]*stagedType{}, nodeNames: map[string]*stagedType{}, edgeNames: map[string]*stagedType{},
		res: &LoadResult{Mode: req.Mode, Nodes: map[string]int64{}, Edges: map[string]int64{}}}
	if s.chunkBytes <= 0 {
		s.chunkBytes = DefaultLoadChunkBytes
	}
	s.encoders = max(1, runtime.GOMAXPROCS(0))
	s.settle = req.settleBeforeProgress
	s.ids = newLoadIDs()
	s.slots = make(chan struct{}, s.encoders)
	return s
}

// read consumes the whole input, stopping at the first bad line. Full
// chunks are written out as it goes; the last one stays buffered, so that a
// small load whose validation fails writes nothing at all.
func (s *loadStream) read(ctx context.Context, r io.Reader, progress func(int64)) error {
	rd := NewReader(r, s.base.Catalog(), ReaderOptions{})
	defer s.countTypes()
	// Records are dropped once staged (stage keeps copies of what it
	// needs), so the reader recycles their arrays.
	err := rd.eachRecordAhead(ctx, s.encoders, true, s.ahead, func(rec Record) (err error) {
		var t *stagedType
		switch rec := rec.(type) {
		case *NodeRecord:
			if t, err = s.stagedNamed(ctx, rec.Type, false); err != nil {
				return err
			}
			if err := externalBlob(t.props, rec.Values, rec.Line); err != nil {
				return err
			}
			id := rec.ID
			if id == "" {
				id = s.ids.next()
			}
			if err := s.stage(t, Row{ID: id, Values: rec.Values}, rec.Cells, rec.Line, false); err != nil {
				return err
			}
		case *EdgeRecord:
			if t, err = s.stagedNamed(ctx, rec.Type, true); err != nil {
				return err
			}
			if err := externalBlob(t.props, rec.Values, rec.Line); err != nil {
				return err
			}
			id, generated := rec.ID, rec.ID == ""
			if generated {
				// A view of the generator's slab: stage copies it where
				// it is kept.
				id = s.ids.nextView()
			}
			if err := s.stageEdge(t, Row{ID: id, Src: rec.From, Dst: rec.To, Values: rec.Values}, rec.Cells, rec.Line, generated, rec.toStaged); err != nil {
				return err
			}
		}
		t.count++
		s.res.Total++
		if progress != nil && s.res.Total%progressEvery == 0 {
			if s.settle {
				if err := s.wait(); err != nil {
					return err
				}
			}
			progress(s.res.Total)
		}
		if s.pendingBytes >= s.chunkBytes || (s.chunkRecords > 0 && s.pendingRecs >= s.chunkRecords) {
			if err := s.flush(ctx); err != nil {
				return err
			}
		} else if int64(t.recs) >= max(s.g.maint.targetRows, minLoadFragmentRows) {
			// A full fragment: written now, so that a large load leaves no
			// small fragments for the inline compaction to rewrite.
			if err := s.flushType(ctx, t); err != nil {
				return err
			}
			return s.encodeErr()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if progress != nil {
		if s.settle {
			if err := s.wait(); err != nil {
				return err
			}
		}
		progress(s.res.Total)
	}
	return nil
}

// ahead warms, for a parsed block of records about to be staged, the
// id-table slots that the lean-edge endpoint checks of its edges and the
// staging of its nodes' ids will read (idTable.slotRef). Only reads:
// staging decides as before.
func (s *loadStream) ahead(recs []Record) {
	sink := s.sink
	var t, nt *stagedType
	lastType, lastSrc := "", ""
	for _, rec := range recs {
		e, ok := rec.(*EdgeRecord)
		if !ok {
			// A node's id is inserted into its type's table (a miss
			// there, as a rule: the slot where the probe starts).
			if n, ok := rec.(*NodeRecord); ok && n.ID != "" {
				if nt == nil || nt.tname != n.Type {
					nt = s.nodeNames[n.Type]
				}
				if nt != nil {
					s.slotRefs = nt.index.slotRef(s.slotRefs, n.ID, nil)
				}
			}
			continue
		}
		if e.Type != lastType || t == nil {
			t, lastType = s.edgeNames[e.Type], e.Type
			lastSrc = ""
			if t != nil {
				lastSrc = t.lastSrc
			}
		}
		if t == nil || !t.lean {
			continue
		}
		if t.to != nil {
			s.slotRefs = t.to.index.slotRef(s.slotRefs, e.To, e)
		}
		// Edges come in runs of one source: its slot is read once (and
		// staging finds most sources as the last one, srcStaged).
		if t.from != nil && e.From != lastSrc {
			s.slotRefs = t.from.index.slotRef(s.slotRefs, e.From, nil)
			lastSrc = e.From
		}
	}
	// Hashing first and reading the slots in a loop of loads alone keeps
	// many cache misses in flight at once; the destinations are then
	// looked up while their slots are in cache, and staging trusts a hit
	// (a staged node stays staged).
	for i := range s.slotRefs {
		sink += s.slotRefs[i].meta()
	}
	for i := range s.slotRefs {
		if r := &s.slotRefs[i]; r.rec != nil {
			r.rec.toStaged = r.has()
		}
	}
	clear(s.slotRefs) // no record or id kept past the block
	s.slotRefs = s.slotRefs[:0]
	s.sink = sink
}

// countTypes adds the records counted per type to the result.
func (s *loadStream) countTypes() {
	for _, t := range s.types {
		if t.nt != nil {
			s.res.Nodes[t.nt.Name] += t.count
		} else {
			s.res.Edges[t.et.Name] += t.count
		}
		t.count = 0
	}
}

// stagedNamed is staged by type name (the record's exact, interned type
// name; inputs come in runs of one type, so the last one is remembered).
func (s *loadStream) stagedNamed(ctx context.Context, name string, edge bool) (*stagedType, error) {
	last := &s.lastNode
	names, key := s.nodeNames, snapshot.NodeKey
	if edge {
		last, names, key = &s.lastEdge, s.edgeNames, snapshot.EdgeKey
	}
	if *last != nil && (*last).tname == name {
		return *last, nil
	}
	if t, ok := names[name]; ok {
		*last = t
		return t, nil
	}
	t, err := s.staged(ctx, key(name))
	if err != nil {
		return nil, err
	}
	names[name], *last = t, t
	return t, nil
}

// staged returns the staging of a type, creating it on first use.
func (s *loadStream) staged(ctx context.Context, tk string) (*stagedType, error) {
	if t, ok := s.types[tk]; ok {
		return t, nil
	}
	base, err := s.base.State(ctx, tk)
	if err != nil {
		return nil, err
	}
	t := &stagedType{tk: tk, schema: base.Schema(), prefix: snapshot.TablePrefix(tk),
		index: newIDTable(0), hidden: map[int][]int64{}}
	kind, name := snapshot.SplitKey(tk)
	t.tname = name
	var uniques [][]string
	if kind == "node" {
		t.nt, _ = s.base.Catalog().Node(name)
		t.props = t.nt.Props
		for _, u := range t.nt.Uniques {
			// The @key itself needs no values: the id is derived from it,
			// so two holders of one key are one id (caught in stage).
			if !sameCols(u, t.nt.Key) {
				uniques = append(uniques, u)
			}
		}
	} else {
		t.et, _ = s.base.Catalog().Edge(name)
		t.props = t.et.Props
		uniques = t.et.Uniques
		t.lean = len(uniques) == 0 && t.et.Card.Min == 0 && t.et.Card.Unbounded
	}
	if t.et != nil || len(embedTargets(t.nt)) == 0 {
		t.typed = true
		t.enc = newLoadEncoder(t.schema, t.props, t.et != nil)
		if t.bb, err = table.NewBatchBuilder(nil, t.schema); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, u := range uniques {
		for _, c := range u {
			// src and dst are the skeleton's endpoints unless a property
			// shadows them (rowTuple's rule).
			_, isProp := propOf(t.props, c)
			if !seen[c] && (isProp || (c != "src" && c != "dst")) {
				seen[c] = true
				t.keep = append(t.keep, c)
			}
		}
	}
	s.types[tk] = t
	return t, nil
}

func propOf(props []*schema.Property, name string) (*schema.Property, bool) {
	p := snapshot.PropByName(props, name)
	return p, p != nil
}

// stage adds one input row: its full image to the chunk buffer, its
// skeleton to the type's staging. A repeated id is an error (a keyed node:
// @unique violation on the key in every mode; otherwise a KeyConflict in
// append and overwrite) or, in merge, supersedes the earlier image, which
// is then dropped from the buffer or hidden in its fragment.
//
// cells, if not nil, are the row's properties in the typed form
// (NodeRecord.Cells) and row.Values is nil.
func (s *loadStream) stage(t *stagedType, row Row, cells []table.Cell, line int, generated bool) error {
	return s.stageEdge(t, row, cells, line, generated, false)
}

// stageEdge is stage, told whether row.Dst is known to be a staged node of
// the edge's target type (EdgeRecord.toStaged; false: look it up).
func (s *loadStream) stageEdge(t *stagedType, row Row, cells []table.Cell, line int, generated, dstStaged bool) error {
	if cells != nil && (len(t.keep) > 0 || !t.typed || t.enc.lead == 0) {
		// Only the typed columns take cells (the reader gives them for
		// such types only; this keeps any other route exact).
		row.Values, cells = cellValues(t.props, cells), nil
	}
	if generated && t.lean && t.srcStaged(s, row.Src) && (dstStaged || s.stagedNode(&t.to, t.et.To, row.Dst)) {
		return s.buffer(t, row, cells, line, -1)
	}
	// The endpoints may be views of a parse block (lineParser.alias), and
	// a generated id one of the generator's slab (loadIDs.nextView): the
	// skeleton keeps copies of their bytes, so it pins neither (an edge's
	// image is typed, copied into its columns).
	pos, dup := t.index.insert(row.ID, t.skel.len())
	if dup {
		switch {
		case t.nt != nil && len(t.nt.Key) > 0:
			nt := t.nt
			if cells != nil {
				row.Values = cellValues(t.props, cells)
			}
			return lineError(line, uniqueError(nt.Name, nt.Key, nodeTupleTypes(nt, nt.Key), rowTuple(nt.Key, row), row.ID, row.ID))
		case s.mode != LoadMerge:
			return lineError(line, &KeyConflictError{TypeKey: t.tk, EntityID: row.ID})
		}
		// Merge: the last occurrence wins, at its own position in the
		// input, so a chunked load stores rows in the same order as an
		// unchunked one.
		if loc := t.locs[pos]; loc.frag < 0 && t.typed {
			t.tdead = append(t.tdead, loc.off)
		} else if loc.frag < 0 {
			b := &t.buf[loc.off]
			s.pendingBytes -= b.size
			t.bytes -= b.size
			*b = bufRow{dead: true}
		} else {
			t.hidden[int(loc.frag)] = append(t.hidden[int(loc.frag)], int64(loc.off))
		}
		t.skel.set(pos, row.ID, row.Src, row.Dst)
		t.lines[pos] = line
		for k, c := range t.keep {
			t.keepValues[pos*len(t.keep)+k] = row.Values[c]
		}
	} else {
		t.skel.add(row.ID, row.Src, row.Dst)
		t.lines = append(t.lines, line)
		t.locs = append(t.locs, rowLoc{})
		for _, c := range t.keep {
			t.keepValues = append(t.keepValues, row.Values[c])
		}
	}
	return s.buffer(t, row, cells, line, pos)
}

// buffer adds a row to its type's chunk (pos is its skel position, or -1;
// cells as for stage).
func (s *loadStream) buffer(t *stagedType, row Row, cells []table.Cell, line, pos int) error {
	var size int64
	if t.typed {
		if pos >= 0 {
			t.locs[pos] = rowLoc{frag: -1, off: int32(t.bb.Len())}
		}
		var err error
		if cells != nil {
			err = t.enc.appendCells(t.bb, row, cells)
			size = typedCellsSize(row, cells)
		} else {
			err = t.enc.append(t.bb, row)
			size = typedSize(row)
		}
		if err != nil {
			if cells != nil {
				row.Values = cellValues(t.props, cells)
			}
			return t.rowsError(err, []Row{row}, []int{line})
		}
		t.tpos = append(t.tpos, int32(pos))
	} else {
		if pos >= 0 {
			t.locs[pos] = rowLoc{frag: -1, off: int32(len(t.buf))}
		}
		size = stagedSize(row)
		t.buf = append(t.buf, bufRow{row: row, line: line, pos: pos, size: size})
	}
	s.pendingBytes += size
	s.pendingRecs++
	t.bytes += size
	t.recs++
	return nil
}

// srcStaged is stagedNode for an edge's source, remembering the last hit.
func (t *stagedType) srcStaged(s *loadStream, src string) bool {
	if src == t.lastSrc && src != "" {
		return true
	}
	if !s.stagedNode(&t.from, t.et.From, src) {
		return false
	}
	t.lastSrc = strings.Clone(src) // src may be a view of a parse block
	return true
}

// stagedNode reports whether this load stages node id of nodeType; *t
// caches the type's staging once it exists.
func (s *loadStream) stagedNode(t **stagedType, nodeType, id string) bool {
	if *t == nil {
		if *t = s.types[snapshot.NodeKey(nodeType)]; *t == nil {
			return false
		}
	}
	_, ok := (*t).index.get(id)
	return ok
}

// flush hands the buffered rows of every type to the encoders as one new
// fragment per type, in catalog order, and drops them from the buffers.
func (s *loadStream) flush(ctx context.Context) error {
	for _, tk := range s.order() {
		if err := s.flushType(ctx, s.types[tk]); err != nil {
			return err
		}
	}
	s.pendingBytes, s.pendingRecs = 0, 0
	if err := s.encodeErr(); err != nil {
		return err
	}
	return ctx.Err()
}

// encodeErr returns the first error of a chunk encoding, if any.
func (s *loadStream) encodeErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.encErr
}

// wait blocks until every chunk handed to the encoders is written, and
// returns the first encoding error.
func (s *loadStream) wait() error {
	s.inflight.Wait()
	return s.encodeErr()
}

func (s *loadStream) flushType(ctx context.Context, t *stagedType) error {
	s.pendingBytes -= t.bytes
	s.pendingRecs -= t.recs
	t.bytes, t.recs = 0, 0
	if t.typed {
		return s.flushTyped(ctx, t)
	}
	rows := make([]Row, 0, len(t.buf))
	var lines []int
	for _, b := range t.buf {
		if !b.dead {
			rows = append(rows, b.row)
			lines = append(lines, b.line)
		}
	}
	if t.nt != nil && len(rows) > 0 {
		// @embed targets left null are computed here, a chunk at a time.
		n, bad, err := s.g.fillEmbeddings(ctx, t.nt, rows)
		if err != nil {
			if bad >= 0 {
				return lineError(lines[bad], err)
			}
			return err
		}
		s.res.Embedded += int64(n)
	}
	if len(rows) > 0 {
		fi := s.reserve(t)
		off := int32(0)
		for _, b := range t.buf {
			if !b.dead {
				if b.pos >= 0 {
					t.locs[b.pos] = rowLoc{frag: fi, off: off}
				}
				off++
			}
		}
		err := s.encode(ctx, t, fi, func() (table.Fragment, error) {
			frag, err := s.g.writeFragment(ctx, t.prefix, t.schema, rows, t.props, t.et != nil)
			if err != nil {
				return frag, t.rowsError(err, rows, lines)
			}
			return frag, nil
		})
		if err != nil {
			return err
		}
	}
	// Clear, not just truncate: the backing array would otherwise keep
	// the chunk's values reachable until overwritten.
	clear(t.buf)
	t.buf = t.buf[:0]
	return nil
}

// flushTyped hands a typed chunk to an encoder as one fragment, without
// the rows a later occurrence superseded.
func (s *loadStream) flushTyped(ctx context.Context, t *stagedType) error {
	n := t.bb.Len()
	if n == 0 {
		return nil
	}
	rec := t.bb.NewRecord()
	// The next chunk of this type is most likely as large (a load's
	// fragments are of one size): its columns are allocated once.
	t.bb.ReserveLike(rec)
	var dead []bool
	if len(t.tdead) > 0 {
		dead = make([]bool, n)
		for _, off := range t.tdead {
			dead[off] = true
		}
		var err error
		if rec, err = dropRows(ctx, rec, dead); err != nil {
			return err
		}
	}
	pos := t.tpos
	t.tpos, t.tdead = t.tpos[:0], t.tdead[:0]
	if rec.NumRows() == 0 {
		rec.Release()
		return nil
	}
	fi := s.reserve(t)
	off := int32(0)
	for i, p := range pos {
		if dead != nil && dead[i] {
			continue
		}
		if p >= 0 {
			t.locs[p] = rowLoc{frag: fi, off: off}
		}
		off++
	}
	return s.encode(ctx, t, fi, func() (table.Fragment, error) {
		defer rec.Release()
		frag, err := table.WriteFragment(ctx, s.g.st, t.prefix, t.schema, rec, s.g.fragmentOptions())
		if err != nil {
			return frag, fmt.Errorf("exec: %s: %w", t.tk, err)
		}
		return frag, nil
	})
}

// reserve fixes the place of a type's next fragment (input order); an
// encoder fills it in.
func (s *loadStream) reserve(t *stagedType) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.frags = append(t.frags, table.Fragment{})
	return int32(len(t.frags) - 1)
}

// encode runs write on an encoder goroutine once one is free, and records
// its fragment at t.frags[fi] (or the first error).
func (s *loadStream) encode(ctx context.Context, t *stagedType, fi int32, write func() (table.Fragment, error)) error {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.inflight.Add(1)
	go func() {
		defer func() { <-s.slots; s.inflight.Done() }()
		frag, err := write()
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			if s.encErr == nil {
				s.encErr = err
			}
			return
		}
		t.frags[fi] = frag
	}()
	return nil
}

// dropRows returns rec without the rows marked dead (rec is released).
func dropRows(ctx context.Context, rec arrow.RecordBatch, dead []bool) (arrow.RecordBatch, error) {
	defer rec.Release()
	mb := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mb.Release()
	for _, d := range dead {
		mb.Append(!d)
	}
	mask := mb.NewBooleanArray()
	defer mask.Release()
	return compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
}

// rowsError attaches the input line of the chunk row an encoding error
// names (lines is parallel to rows).
func (t *stagedType) rowsError(err error, rows []Row, lines []int) error {
	var ce *ConstraintError
	if errors.As(err, &ce) && ce.ID != "" {
		for i, r := range rows {
			if r.ID == ce.ID {
				return lineError(lines[i], err)
			}
		}
	}
	return fmt.Errorf("exec: %s: %w", t.tk, err)
}

// order returns the staged table keys in catalog order (nodes, then edges):
// the deterministic order of every object write.
func (s *loadStream) order() []string {
	var out []string
	for _, nt := range s.base.Catalog().Nodes {
		if _, ok := s.types[snapshot.NodeKey(nt.Name)]; ok {
			out = append(out, snapshot.NodeKey(nt.Name))
		}
	}
	for _, et := range s.base.Catalog().Edges {
		if _, ok := s.types[snapshot.EdgeKey(et.Name)]; ok {
			out = append(out, snapshot.EdgeKey(et.Name))
		}
	}
	return out
}

// finish flushes the tail chunk and hides superseded images in the load's
// own fragments, once; every publish attempt then reuses the result.
func (s *loadStream) finish(ctx context.Context) (map[string][]table.Fragment, error) {
	if s.own != nil {
		return s.own, nil
	}
	if err := s.flush(ctx); err != nil {
		// Encoders still running would write after a failed write's
		// objects are deleted (its ledger): let them end first.
		_ = s.wait()
		return nil, err
	}
	if err := s.wait(); err != nil {
		return nil, err
	}
	for _, t := range s.types {
		if t.bb != nil {
			t.bb.Release()
			t.bb = nil
		}
	}
	own := make(map[string][]table.Fragment, len(s.types))
	for _, tk := range s.order() {
		t := s.types[tk]
		if len(t.hidden) == 0 {
			own[tk] = t.frags
			continue
		}
		st, err := table.NewState(t.schema)
		if err != nil {
			return nil, err
		}
		if st, err = st.Append(t.frags...); err != nil {
			return nil, err
		}
		rows := make(map[string][]int64, len(t.hidden))
		for fi, offs := range t.hidden {
			rows[t.frags[fi].Key] = offs
		}
		// A fragment whose every image was superseded is dropped here;
		// the object stays unreferenced garbage for cleanup.
		if st, err = table.DeleteRows(ctx, s.g.st, t.prefix, st, rows); err != nil {
			return nil, fmt.Errorf("exec: %s: %w", tk, err)
		}
		own[tk] = st.Fragments()
	}
	s.own = own
	return own, nil
}

// line returns the input line of a staged id, if staged.
func (s *loadStream) line(tk, id string) (int, bool) {
	t, ok := s.types[tk]
	if !ok {
		return 0, false
	}
	i, ok := t.index.get(id)
	if !ok {
		return 0, false
	}
	return t.lines[i], true
}

// stagedSize estimates the memory one buffered row holds; only the sum
// over a chunk matters, to decide when to flush.
func stagedSize(r Row) int64 {
	n := int64(stagedRowOverhead + len(r.ID) + len(r.Src) + len(r.Dst))
	for _, v := range r.Values {
		n += valueSize(v)
	}
	return n
}

// typedRowOverhead is the estimated cost of one row kept as typed columns
// besides its bytes: offsets, validity and the skel position.
const typedRowOverhead = 48

// typedSize estimates the memory one row converted to typed columns holds.
func typedSize(r Row) int64 {
	n := int64(typedRowOverhead + len(r.ID) + len(r.Src) + len(r.Dst))
	for _, v := range r.Values {
		if v != nil {
			n += max(valueSize(v)-16, 8) // no boxed header once in a column
		}
	}
	return n
}

// typedCellsSize is typedSize for a row in the typed form.
func typedCellsSize(r Row, cells []table.Cell) int64 {
	n := int64(typedRowOverhead + len(r.ID) + len(r.Src) + len(r.Dst))
	for _, c := range cells {
		switch c.Kind {
		case table.CellNull:
		case table.CellString:
			n += max(int64(len(c.S))+16, 8) // as valueSize's string, unboxed
		default:
			n += 8
		}
	}
	return n
}

func valueSize(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return 32 + int64(len(x)) // the boxed header, then the bytes
	case []byte:
		return 24 + int64(len(x))
	case value.Blob:
		return 40 + int64(len(x.Data)+len(x.URI))
	case []float32:
		return 24 + 4*int64(len(x))
	case []any:
		n := int64(24)
		for _, e := range x {
			n += 16 + valueSize(e)
		}
		return n
	default:
		return 16
	}
}
