package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"golang.org/x/sync/errgroup"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Reader reads tables of one store through a byte-budgeted cache of the
// immutable pieces a read needs again: Parquet footers, deletion vectors,
// and the headers, Bloom blocks, directories and blocks of fragment
// indexes. Keys are object names, so entries never go stale and a Reader
// may be shared by every snapshot of a handle. Safe for concurrent use.
type Reader struct {
	st    storage.Store
	cache *cache.Cache[any]
}

// NewReader returns a reader over st caching in c (shared with other users
// of c under "table/…" keys). A nil c caches nothing.
func NewReader(st storage.Store, c *cache.Cache[any]) *Reader {
	if c == nil {
		c = cache.New[any](0)
	}
	return &Reader{st: st, cache: c}
}

// Store is the store the reader reads.
func (r *Reader) Store() storage.Store { return r.st }

// Scan is Scan through the reader's caches (footers, deletion vectors).
func (r *Reader) Scan(ctx context.Context, s *State, opts ScanOptions) (*Scanner, error) {
	sc, err := Scan(ctx, r.st, s, opts)
	if err != nil {
		return nil, err
	}
	sc.rd = r
	return sc, nil
}

// footer returns the cached Parquet metadata of f, or nil.
func (r *Reader) footer(f Fragment) *metadata.FileMetaData {
	if v, ok := r.cache.Get("table/footer/" + f.Key); ok {
		return v.(*metadata.FileMetaData)
	}
	return nil
}

func (r *Reader) keepFooter(f Fragment, md *metadata.FileMetaData) {
	r.cache.Add("table/footer/"+f.Key, md, int64(md.Size())*4+1024)
}

// deleted returns the deletion bitmap of f (nil when f has no vector).
func (r *Reader) deleted(ctx context.Context, f Fragment) (rowBitmap, error) {
	if f.DV == "" {
		return nil, nil
	}
	v, err := r.cache.GetOrLoad(ctx, "table/dv/"+f.DV+"/"+f.Key, func(ctx context.Context) (any, int64, error) {
		dv, err := loadDV(ctx, r.st, f)
		if err != nil {
			return nil, 0, err
		}
		bm := newRowBitmap(f.Rows, dv.Offsets)
		return bm, int64(len(bm))*8 + 128, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(rowBitmap), nil
}

// --- fragment indexes ---

func (r *Reader) fidxHeader(ctx context.Context, f Fragment) (*fidxHeader, error) {
	return r.fidxHeaderBy(ctx, f, r.getRange)
}

// fidxHeaderAlone is fidxHeader for a fragment whose index the caller
// will not probe: the header alone is read by range, never the object
// whole (ColumnEqualsID's fragments that cannot hold a probed key).
func (r *Reader) fidxHeaderAlone(ctx context.Context, f Fragment) (*fidxHeader, error) {
	return r.fidxHeaderBy(ctx, f, func(ctx context.Context, key string, off, n, size int64) ([]byte, error) {
		if IsInlineIndex(key) {
			return inlineIndexRange(key, off, n, size)
		}
		b, err := r.st.GetRange(ctx, key, off, n)
		if err != nil {
			return nil, fmt.Errorf("table: read fragment index %s: %w", key, err)
		}
		if int64(len(b)) != n {
			return nil, corrupt(key, off+int64(len(b)), fmt.Sprintf("object shorter than the %d bytes recorded in the table state", size), nil)
		}
		return b, nil
	})
}

func (r *Reader) fidxHeaderBy(ctx context.Context, f Fragment, read func(ctx context.Context, key string, off, n, size int64) ([]byte, error)) (*fidxHeader, error) {
	v, err := r.cache.GetOrLoad(ctx, "table/fidx/"+f.Index, func(ctx context.Context) (any, int64, error) {
		b, err := read(ctx, f.Index, 0, min(fidxHeadRead, f.IndexBytes), f.IndexBytes)
		if err != nil {
			return nil, 0, err
		}
		h, err := decodeFidxHeader(indexName(f.Index), b, f.IndexBytes)
		if err != nil {
			return nil, 0, err
		}
		if h.rows != f.Rows {
			return nil, 0, corrupt(indexName(f.Index), 8, fmt.Sprintf("index covers %d rows, fragment %s has %d", h.rows, f.Key, f.Rows), nil)
		}
		return h, 256, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*fidxHeader), nil
}

// getRange reads [off, off+n) of an index object whose size the state
// records as size; a short read means truncation (corruption), and so
// does an object whose real size, when the store knows it, differs.
//
// The read goes through a sized open, so the store decides how to fetch:
// a local directory reads the range, while a remote store's object cache
// fetches a small index whole with its first read and serves every later
// unit (Bloom block, directory, blocks) from memory — one round trip for a
// cold probe instead of four dependent ones (header, Bloom block,
// directory, block). Every unit is still checked by its own CRC.
func (r *Reader) getRange(ctx context.Context, key string, off, n, size int64) ([]byte, error) {
	if IsInlineIndex(key) {
		return inlineIndexRange(key, off, n, size)
	}
	rd, err := storage.OpenReadAtSize(ctx, r.st, key, size)
	if err != nil {
		return nil, fmt.Errorf("table: read fragment index %s: %w", key, err)
	}
	defer rd.Close()
	if got := rd.Size(); got != size {
		return nil, corrupt(key, min(got, size), fmt.Sprintf("object is %d bytes, the table state records %d", got, size), nil)
	}
	b := make([]byte, n)
	m, err := rd.ReadAt(b, off)
	if int64(m) == n {
		return b, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("table: read fragment index %s: %w", key, err)
	}
	return nil, corrupt(key, off+int64(m), fmt.Sprintf("object shorter than the %d bytes recorded in the table state", size), nil)
}

// inlineIndexRange is the range [off, off+n) of an inline index of size
// bytes: the reads of an index object, answered from its reference.
func inlineIndexRange(ref string, off, n, size int64) ([]byte, error) {
	b, err := inlineIndexBytes(ref, size)
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || off+n > size {
		return nil, corrupt(inlineIndexName, off, fmt.Sprintf("range of %d bytes past the %d the table state records", n, size), nil)
	}
	return b[off : off+n], nil
}

func (r *Reader) mayHold(ctx context.Context, f Fragment, s *fidxSection, key string) (bool, error) {
	blk, bits := bloomBits(key, s.bloomBlocks)
	off := s.bloomOff + int64(blk)*fidxBloomUnit
	v, err := r.cache.GetOrLoad(ctx, bloomCacheKey(f, off), func(ctx context.Context) (any, int64, error) {
		b, err := r.getRange(ctx, f.Index, off, fidxBloomUnit, f.IndexBytes)
		if err != nil {
			return nil, 0, err
		}
		return checkBloomUnit(f, off, b)
	})
	if err != nil {
		return false, err
	}
	b := v.([]byte)
	for _, bit := range bits {
		if b[bit/8]&(1<<(bit%8)) == 0 {
			return false, nil
		}
	}
	return true, nil
}

func (r *Reader) fidxDir(ctx context.Context, f Fragment, s *fidxSection) (*fidxDir, error) {
	v, err := r.cache.GetOrLoad(ctx, "table/fidxd/"+f.Index+"/"+strconv.Itoa(int(s.kind)), func(ctx context.Context) (any, int64, error) {
		b, err := r.getRange(ctx, f.Index, s.dirOff, s.dirLen, f.IndexBytes)
		if err != nil {
			return nil, 0, err
		}
		d, err := decodeFidxDir(indexName(f.Index), s.dirOff, b, f.IndexBytes)
		if err != nil {
			return nil, 0, err
		}
		return d, s.dirLen*3 + int64(len(d.first))*48 + 128, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*fidxDir), nil
}

func (r *Reader) fidxBlock(ctx context.Context, f Fragment, s *fidxSection, d *fidxDir, i int) ([]fidxEntry, error) {
	v, err := r.cache.GetOrLoad(ctx, blockCacheKey(f, d.off[i]), func(ctx context.Context) (any, int64, error) {
		b, err := r.getRange(ctx, f.Index, d.off[i], d.len[i], f.IndexBytes)
		if err != nil {
			return nil, 0, err
		}
		return decodeBlockUnit(f, s, d, i, b)
	})
	if err != nil {
		return nil, err
	}
	return v.([]fidxEntry), nil
}

func bloomCacheKey(f Fragment, off int64) string {
	return "table/fidxb/" + f.Index + "/" + strconv.FormatInt(off, 10)
}

func blockCacheKey(f Fragment, off int64) string {
	return "table/fidxk/" + f.Index + "/" + strconv.FormatInt(off, 10)
}

// checkBloomUnit verifies one Bloom unit (block + CRC) read at off and
// returns the block and its cache size.
func checkBloomUnit(f Fragment, off int64, b []byte) (any, int64, error) {
	if crc32Castagnoli(b[:fidxBloomBlock]) != leUint32(b[fidxBloomBlock:]) {
		return nil, 0, corrupt(indexName(f.Index), off, "fragment index Bloom block checksum mismatch", nil)
	}
	return b[:fidxBloomBlock:fidxBloomBlock], 160, nil
}

// decodeBlockUnit decodes block i of section s (bytes b) and returns its
// entries and cache size.
func decodeBlockUnit(f Fragment, s *fidxSection, d *fidxDir, i int, b []byte) (any, int64, error) {
	ents, err := decodeFidxBlock(indexName(f.Index), d.off[i], b, s, f.Rows)
	if err != nil {
		return nil, 0, err
	}
	if len(ents) > 0 && ents[0].key != d.first[i] {
		return nil, 0, corrupt(indexName(f.Index), d.off[i], "fragment index block disagrees with its directory", nil)
	}
	return ents, d.len[i]*3 + int64(len(ents))*48 + 128, nil
}

// prefetchSection reads section sec of f's index whole — its Bloom units in
// one ranged read, its blocks in another — and caches every unit under the
// key a probe would load it by, when probing keys keys would touch most of
// them anyway (at least as many keys as units): a large probe set then
// costs two requests per fragment instead of two per key. Units already
// cached are kept. It does nothing for smaller probe sets or a section the
// index lacks.
func (r *Reader) prefetchSection(ctx context.Context, f Fragment, sec Section, keys int) error {
	if keys < 2 {
		return nil // not even a probe: read nothing
	}
	h, err := r.fidxHeader(ctx, f)
	if err != nil {
		return err
	}
	s := h.section(sec)
	if s == nil {
		return nil
	}
	if n := int64(s.bloomBlocks); n > 1 && int64(keys) >= n {
		b, err := r.getRange(ctx, f.Index, s.bloomOff, n*fidxBloomUnit, f.IndexBytes)
		if err != nil {
			return err
		}
		for k := range n {
			off := s.bloomOff + k*fidxBloomUnit
			if _, hit := r.cache.Get(bloomCacheKey(f, off)); hit {
				continue
			}
			v, size, err := checkBloomUnit(f, off, b[k*fidxBloomUnit:(k+1)*fidxBloomUnit])
			if err != nil {
				return err
			}
			r.cache.Add(bloomCacheKey(f, off), v, size)
		}
	}
	if int64(keys)*int64(s.blockRows) < int64(s.entries) {
		return nil // fewer keys than blocks: probe (the directory is not needed yet)
	}
	d, err := r.fidxDir(ctx, f, s)
	if err != nil {
		return err
	}
	nb := len(d.off)
	if nb < 2 || keys < nb {
		return nil
	}
	lo, hi := d.off[0], d.off[nb-1]+d.len[nb-1]
	for i := range nb {
		if d.off[i] < lo || d.off[i]+d.len[i] > hi {
			return corrupt(indexName(f.Index), d.off[i], "fragment index blocks out of order", nil)
		}
	}
	b, err := r.getRange(ctx, f.Index, lo, hi-lo, f.IndexBytes)
	if err != nil {
		return err
	}
	for i := range nb {
		key := blockCacheKey(f, d.off[i])
		if _, hit := r.cache.Get(key); hit {
			continue
		}
		v, size, err := decodeBlockUnit(f, s, d, i, b[d.off[i]-lo:d.off[i]-lo+d.len[i]])
		if err != nil {
			return err
		}
		r.cache.Add(key, v, size)
	}
	return nil
}

// probe returns every entry of section sec of f's index whose key is key,
// deleted rows included, in offset order. ok is false when f has no index
// (or no such section): the caller must fall back to reading the fragment.
func (r *Reader) probe(ctx context.Context, f Fragment, sec Section, key string) (ents []IndexEntry, ok bool, err error) {
	if f.Index == "" {
		return nil, false, nil
	}
	h, err := r.fidxHeader(ctx, f)
	if err != nil {
		return nil, false, err
	}
	s := h.section(sec)
	if s == nil {
		return nil, false, nil
	}
	if maybe, err := r.mayHold(ctx, f, s, key); err != nil || !maybe {
		return nil, err == nil, err
	}
	d, err := r.fidxDir(ctx, f, s)
	if err != nil {
		return nil, false, err
	}
	// Equal keys may span blocks: start at the last block whose first key
	// is below key, continue while blocks start at or below it.
	i := max(0, sort.SearchStrings(d.first, key)-1)
	for ; i < len(d.first) && d.first[i] <= key; i++ {
		blk, err := r.fidxBlock(ctx, f, s, d, i)
		if err != nil {
			return nil, false, err
		}
		for _, e := range blk {
			if e.key == key {
				ents = append(ents, IndexEntry{Offset: e.off, Far: e.far})
			}
		}
	}
	return ents, true, nil
}

// ColumnEqualsID reports whether column holds the row's id in every row of
// every fragment of s (known only from fragment indexes: false when a
// fragment has none). Then the row whose column value is v is the row with
// id v, found through Locate.
//
// probe names the ids the caller will Locate next, if any: the indexes of
// the fragments whose statistics admit one of them are read in the way
// that serves that probe too (whole, on a remote store's object cache), so
// the check and the probe cost one round trip together; the other
// fragments' headers are read alone.
func (r *Reader) ColumnEqualsID(ctx context.Context, s *State, column string, probe ...string) (bool, error) {
	bit, ok := idEqualBit(s, column)
	if !ok {
		return false, nil
	}
	if slices.ContainsFunc(s.fragments, func(f Fragment) bool { return f.Index == "" }) {
		return false, nil
	}
	// Every header is needed: fetch them side by side.
	if _, err := perFragment(ctx, s.fragments, func(ctx context.Context, f Fragment) ([]struct{}, error) {
		if useIndex(f) && slices.ContainsFunc(probe, func(id string) bool { return mayHoldString(f.Stats[0], id) }) {
			_, err := r.fidxHeader(ctx, f)
			return nil, err
		}
		_, err := r.fidxHeaderAlone(ctx, f)
		return nil, err
	}); err != nil {
		return false, err
	}
	for _, f := range s.fragments {
		h, err := r.fidxHeader(ctx, f)
		if err != nil {
			return false, err
		}
		if h.idEqual&bit == 0 {
			return false, nil
		}
	}
	return true, nil
}

// FragmentColumnEqualsID reports whether column holds the row's id in
// every row of the fragment of s named fragKey, from that fragment's
// index header (false without an index). A reader that found the rows
// through a key (ColumnEqualsID, Locate) has the header cached: the
// answer costs no read, and the column's values need not be read either.
func (r *Reader) FragmentColumnEqualsID(ctx context.Context, s *State, fragKey, column string) (bool, error) {
	bit, ok := idEqualBit(s, column)
	i := slices.IndexFunc(s.fragments, func(f Fragment) bool { return f.Key == fragKey })
	if !ok || i < 0 || s.fragments[i].Index == "" {
		return false, nil
	}
	h, err := r.fidxHeader(ctx, s.fragments[i])
	if err != nil {
		return false, err
	}
	return h.idEqual&bit != 0, nil
}

// idEqualBit is column's bit in the index headers' id-equal mask (ok
// false for a column the mask cannot hold).
func idEqualBit(s *State, column string) (uint64, bool) {
	ci := s.schema.Index(column)
	if ci < 0 || ci >= 64 {
		return 0, false
	}
	return 1 << ci, true
}

// RowLoc is a live row found by id: its fragment and offset.
type RowLoc struct {
	ID       string
	Fragment string
	Offset   int64
}

// Locate returns the live rows of s whose id is one of ids, in state
// (fragment) order and offset order within a fragment. Fragments with an
// index are answered by it (a Bloom block per id, then one directory and
// block on a hit); fragments without one have their id column scanned,
// pruned by statistics.
func (r *Reader) Locate(ctx context.Context, s *State, ids []string) ([]RowLoc, error) {
	ki := s.schema.Index(KeyColumn)
	if ki < 0 {
		return nil, fmt.Errorf("%w: table has no %q column", ErrSchema, KeyColumn)
	}
	uniq := slices.Clone(ids)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	return perFragment(ctx, s.fragments, func(ctx context.Context, f Fragment) ([]RowLoc, error) {
		// The state's id statistics rule most fragments out before any
		// read or scan set-up (a group commit's chain holds many one-row
		// fragments, and each keyed write of it locates its rows in all).
		in := slices.DeleteFunc(slices.Clone(uniq), func(id string) bool { return !mayHoldString(f.Stats[ki], id) })
		if len(in) == 0 {
			return nil, nil
		}
		if !useIndex(f) {
			if f.Rows <= smallIDRows {
				return r.smallLocate(ctx, s, f, in)
			}
			return r.scanLocate(ctx, s, f, in)
		}
		var locs []RowLoc
		if err := r.prefetchSection(ctx, f, SectionID, len(in)); err != nil {
			return nil, err
		}
		for _, id := range in {
			ents, _, err := r.probe(ctx, f, SectionID, id)
			if err != nil {
				return nil, err
			}
			for _, e := range ents {
				locs = append(locs, RowLoc{ID: id, Fragment: f.Key, Offset: e.Offset})
			}
		}
		return r.liveInOrder(ctx, f, locs)
	})
}

// fetchConcurrency bounds the fragments one lookup reads at once. On a
// remote store each fragment's probe is a chain of dependent ranged reads
// (index header, Bloom block, directory, block); running the chains of all
// fragments side by side makes a lookup cost the longest chain, not their
// sum.
const fetchConcurrency = 16

// perFragment runs fn for every fragment, up to fetchConcurrency at once,
// and concatenates the results in fragment order. The first error cancels
// the others and is returned.
func perFragment[T any](ctx context.Context, frags []Fragment, fn func(context.Context, Fragment) ([]T, error)) ([]T, error) {
	if len(frags) == 1 {
		return fn(ctx, frags[0])
	}
	parts := make([][]T, len(frags))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchConcurrency)
	for i, f := range frags {
		g.Go(func() error {
			part, err := fn(gctx, f)
			parts[i] = part
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

// useIndex: probe f's index rather than read f. A fragment that fits in
// the first (tail) read of a scan costs one request read whole, fewer than
// an index probe.
func useIndex(f Fragment) bool { return f.Index != "" && f.Bytes > tailPrefetch }

// mayHoldString applies a fragment's id statistics to one id.
func mayHoldString(cs ColumnStats, id string) bool {
	if lo, ok := cs.Min.(string); ok && id < lo {
		return false
	}
	if hi, ok := cs.Max.(string); ok && id > hi {
		return false
	}
	return true
}

// scanLocate is Locate for one unindexed fragment.
func (r *Reader) scanLocate(ctx context.Context, s *State, f Fragment, ids []string) ([]RowLoc, error) {
	one := &State{schema: s.schema, fragments: []Fragment{f}}
	sc, err := r.Scan(ctx, one, ScanOptions{Columns: []string{KeyColumn}, Filters: []Filter{In(KeyColumn, ids...)}, RowOffsets: true})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	var out []RowLoc
	for sc.Next() {
		arr := sc.Record().Column(0)
		for i, off := range sc.Offsets() {
			out = append(out, RowLoc{ID: Value(arr, i).(string), Fragment: f.Key, Offset: off})
		}
	}
	return out, sc.Err()
}

// Edge is one live edge found through an endpoint: the edge row's
// fragment and offset, its endpoint on the probed side (Near) and the
// other one (Far).
type Edge struct {
	Fragment string
	Offset   int64
	Near     string
	Far      string
}

// Adjacent returns the live edges of edge table s whose src (SectionSrc)
// or dst (SectionDst) is one of nodes, in state order and offset order
// within a fragment. Indexed fragments are answered from their adjacency
// sections without reading the fragment; others are scanned.
func (r *Reader) Adjacent(ctx context.Context, s *State, end Section, nodes []string) ([]Edge, error) {
	if end != SectionSrc && end != SectionDst {
		return nil, fmt.Errorf("%w: Adjacent takes SectionSrc or SectionDst", ErrValue)
	}
	if !isEdgeSchema(s.schema) {
		return nil, fmt.Errorf("%w: not an edge table (id, src, dst)", ErrSchema)
	}
	uniq := slices.Clone(nodes)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	col := 1
	if end == SectionDst {
		col = 2
	}
	return perFragment(ctx, s.fragments, func(ctx context.Context, f Fragment) ([]Edge, error) {
		if !useIndex(f) {
			return r.scanAdjacent(ctx, s, f, col, uniq)
		}
		var es []Edge
		in := slices.DeleteFunc(slices.Clone(uniq), func(n string) bool { return !mayHoldString(f.Stats[col], n) })
		if err := r.prefetchSection(ctx, f, end, len(in)); err != nil {
			return nil, err
		}
		for _, n := range in {
			ents, ok, err := r.probe(ctx, f, end, n)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, corrupt(indexName(f.Index), -1, "edge fragment index has no adjacency section", nil)
			}
			for _, e := range ents {
				es = append(es, Edge{Fragment: f.Key, Offset: e.Offset, Near: n, Far: e.Far})
			}
		}
		if len(es) == 0 {
			return nil, nil
		}
		del, err := r.deleted(ctx, f)
		if err != nil {
			return nil, err
		}
		if del != nil {
			es = slices.DeleteFunc(es, func(e Edge) bool { return del.has(e.Offset) })
		}
		slices.SortFunc(es, func(a, b Edge) int { return int(a.Offset - b.Offset) })
		return es, nil
	})
}

func (r *Reader) scanAdjacent(ctx context.Context, s *State, f Fragment, col int, nodes []string) ([]Edge, error) {
	one := &State{schema: s.schema, fragments: []Fragment{f}}
	near, far := s.schema.Columns[col].Name, "dst"
	if col == 2 {
		far = "src"
	}
	sc, err := r.Scan(ctx, one, ScanOptions{Columns: []string{near, far}, Filters: []Filter{In(near, nodes...)}, RowOffsets: true})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	var out []Edge
	for sc.Next() {
		rec := sc.Record()
		for i, off := range sc.Offsets() {
			out = append(out, Edge{Fragment: f.Key, Offset: off, Near: Value(rec.Column(0), i).(string), Far: Value(rec.Column(1), i).(string)})
		}
	}
	return out, sc.Err()
}

// LookupIDs returns the live rows whose id is one of ids with the given
// columns (nil = all) as one record the caller releases, in state order.
// Indexed fragments are probed and only the pages holding the hits are
// read (ReadRows); unindexed ones are scanned with statistics pruning.
func (r *Reader) LookupIDs(ctx context.Context, s *State, ids []string, columns []string, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if s.schema.Index(KeyColumn) < 0 {
		return nil, fmt.Errorf("%w: table has no %q column", ErrSchema, KeyColumn)
	}
	uniq := slices.Clone(ids)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for _, f := range s.fragments {
		one := &State{schema: s.schema, fragments: []Fragment{f}}
		if !useIndex(f) {
			if !mayHoldAny(f.Stats[0], uniq) {
				continue
			}
			rec, err := r.collect(ctx, one, ScanOptions{Columns: columns, Filters: []Filter{In(KeyColumn, uniq...)}, Alloc: mem})
			if err != nil {
				return nil, err
			}
			recs = append(recs, rec)
			continue
		}
		locs, err := r.Locate(ctx, one, uniq)
		if err != nil {
			return nil, err
		}
		if len(locs) == 0 {
			continue
		}
		offs := make([]int64, len(locs))
		for i, l := range locs {
			offs[i] = l.Offset
		}
		rec, err := r.ReadRows(ctx, s, f.Key, offs, columns, mem)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return concatRecords(recs, s.schema, columns, mem)
}

func mayHoldAny(cs ColumnStats, ids []string) bool {
	return slices.ContainsFunc(ids, func(id string) bool { return mayHoldString(cs, id) })
}

// collect is Collect through the reader.
func (r *Reader) collect(ctx context.Context, s *State, opts ScanOptions) (arrow.RecordBatch, error) {
	sc, err := r.Scan(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	return collect(sc, opts.Alloc)
}
