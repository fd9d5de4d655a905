package snapshot

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Point lookups without the table image. A single-row write needs to know
// whether an id is committed, and where (fragment, offset) so that a
// deletion vector can hide it, and a keyed `update … where key = v` needs
// the one committed row holding v. Assembling the whole table image (a
// copy of every live row) and hashing its ids for that made every write
// O(table). Instead a table state is seen as its fragments' cached images
// (image.go), each with an id → offset index built once per fragment
// and kept with its image, plus the fragments' deletion vectors (cached by
// their immutable keys). A write adds one fragment, so every lookup after
// it reuses every index but the new fragment's, which is tiny.
//
// The same view backs NodeTable.Row of an assembled image until the image
// has served enough lookups to be worth its own flat index (graph.go), so
// the first read after a write does not rehash the table either.
//
// TestFragSetMatchesImage compares every lookup with the image.

// rowOf returns the offset of id in the fragment image (deleted or not).
//
// INVARIANT: ids are unique within a fragment (every writer stages at most
// one image per id), so the index is a function.
func (d *Rows) rowOf(id string) (int32, bool) {
	d.idxOnce.Do(func() {
		d.byID = make(map[string]int32, len(d.IDs))
		for i, id := range d.IDs {
			d.byID[id] = int32(i)
		}
	})
	r, ok := d.byID[id]
	return r, ok
}

// KeyCanonical reports whether every row of the fragment image (deleted
// or not) has as id the canonical rendering of its single-property String
// or enum @key, so that the row holding key v is the row with id v.
// Checked once per fragment image (the image is keyed by schema, so nt is
// the same on every call).
func (d *Rows) KeyCanonical(nt *schema.NodeType) bool {
	d.canonOnce.Do(func() {
		if nt == nil || len(nt.Key) != 1 {
			return
		}
		p, ok := nt.Prop(nt.Key[0])
		if !ok || (p.Type.Kind != schema.KindString && p.Type.Kind != schema.KindEnum) {
			return
		}
		col := d.Cols[p.Name]
		if len(col) != len(d.IDs) {
			return
		}
		for i, v := range col {
			if s, ok := v.(string); !ok || s != d.IDs[i] {
				return
			}
		}
		d.canon = true
	})
	return d.canon
}

// Layout is a table state seen as the cached images and deletion vectors
// of its fragments, in state order. Immutable once built.
type Layout struct {
	keys  []string  // fragment object keys
	dvs   []string  // deletion-vector keys ("" for none)
	parts []*Rows   // whole fragment images (deleted rows included)
	dels  [][]int64 // sorted deleted offsets per fragment (nil: none)
	base  []int     // live rows before each fragment (its first live row in a dense image)
	live  int       // live rows in all
}

// locate returns the fragment and offset of the live row with this id.
// Ids are unique among a state's live rows (NodeTable's invariant), so the
// first live hit is the only one; newer fragments are tried first because
// a recently written id is the likelier target.
func (fs *Layout) Locate(id string) (part int, off int32, ok bool) {
	for i := len(fs.parts) - 1; i >= 0; i-- {
		o, hit := fs.parts[i].rowOf(id)
		if !hit {
			continue
		}
		if _, gone := slices.BinarySearch(fs.dels[i], int64(o)); gone {
			continue
		}
		return i, o, true
	}
	return 0, 0, false
}

// KeyCanonical reports whether every fragment is key-canonical (so, in
// particular, every live row).
func (fs *Layout) KeyCanonical(nt *schema.NodeType) bool {
	for _, p := range fs.parts {
		if !p.KeyCanonical(nt) {
			return false
		}
	}
	return true
}

// snapMemo holds what a snapshot derived from its immutable states, for
// the life of the snapshot (one write attempt or one query).
type snapMemo struct {
	mu    sync.Mutex
	frags map[string]*Layout
}

// Layout returns (memoized per snapshot) the fragment view of table tk.
func (s *Snapshot) Layout(ctx context.Context, tk string) (*Layout, error) {
	s.memo.mu.Lock()
	fs := s.memo.frags[tk]
	s.memo.mu.Unlock()
	if fs != nil {
		return fs, nil
	}
	st, props, edge, err := s.stateProps(ctx, tk)
	if err != nil {
		return nil, err
	}
	fs, err = s.buildFragSet(ctx, tk, st, props, edge)
	if err != nil {
		return nil, err
	}
	s.memo.mu.Lock()
	if s.memo.frags == nil {
		s.memo.frags = map[string]*Layout{}
	}
	s.memo.frags[tk] = fs
	s.memo.mu.Unlock()
	return fs, nil
}

// stateProps returns table tk's state with its user properties and whether
// it is an edge table (tableProps).
func (s *Snapshot) stateProps(ctx context.Context, tk string) (*table.State, []*schema.Property, bool, error) {
	props, edge, err := s.tableProps(tk)
	if err != nil {
		return nil, nil, false, err
	}
	st, err := s.State(ctx, tk)
	return st, props, edge, err
}

// tableProps returns the declared properties of table tk.
func (s *Snapshot) tableProps(tk string) ([]*schema.Property, bool, error) {
	kind, name := SplitKey(tk)
	if kind == "node" {
		nt, ok := s.cat.Node(name)
		if !ok {
			return nil, false, &UnknownTypeError{Kind: "node", Name: name}
		}
		return nt.Props, false, nil
	}
	et, ok := s.cat.Edge(name)
	if !ok {
		return nil, true, &UnknownTypeError{Kind: "edge", Name: name}
	}
	return et.Props, true, nil
}

// buildFragSet loads (through the cache) every fragment image and deletion
// vector of st.
func (s *Snapshot) buildFragSet(ctx context.Context, tk string, st *table.State, props []*schema.Property, edge bool) (*Layout, error) {
	frags := st.Fragments()
	fs := &Layout{keys: make([]string, len(frags)), dvs: make([]string, len(frags)), parts: make([]*Rows, len(frags)),
		dels: make([][]int64, len(frags)), base: make([]int, len(frags))}
	for i, f := range frags {
		d, err := s.FragmentImage(ctx, tk, st, f, props, edge)
		if err != nil {
			return nil, err
		}
		fs.keys[i], fs.dvs[i], fs.parts[i], fs.base[i] = f.Key, f.DV, d, fs.live
		if f.DV != "" {
			offs, err := s.deletionVector(ctx, f)
			if err != nil {
				return nil, err
			}
			if int64(len(d.IDs)) != f.Rows {
				return nil, &table.CorruptError{Key: f.Key, Offset: -1,
					Reason: fmt.Sprintf("fragment decodes to %d rows, its table state says %d", len(d.IDs), f.Rows)}
			}
			fs.dels[i] = offs
		}
		fs.live += len(d.IDs) - len(fs.dels[i])
	}
	return fs, nil
}

// dvListKey names the cached decoding of deletion vector dv.
func dvListKey(dv string) string { return "exec/dvlist/" + dv }

// deletionVector reads (cached by its immutable key, checked against f by
// table.LoadDeletionVector) the sorted deleted offsets of fragment f.
func (s *Snapshot) deletionVector(ctx context.Context, f table.Fragment) ([]int64, error) {
	v, err := s.l.cache.GetOrLoad(ctx, dvListKey(f.DV), func(ctx context.Context) (any, int64, error) {
		dv, err := table.LoadDeletionVector(ctx, s.l.st, f)
		if err != nil {
			return nil, 0, err
		}
		return dv, int64(len(dv.Offsets))*8 + 128, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(table.DeletionVector).Offsets, nil
}

// CommittedRows returns, per fragment key, the offsets of the live rows of
// table tk whose ids are in ids (ids not committed are skipped; a repeated
// id repeats its offset): the input of table.DeleteRows, which dedupes.
func (s *Snapshot) CommittedRows(ctx context.Context, tk string, ids []string) (map[string][]int64, error) {
	if locs, ok, err := s.indexLocate(ctx, tk, ids); ok || err != nil {
		out := map[string][]int64{}
		for _, l := range locs {
			out[l.Fragment] = append(out[l.Fragment], l.Offset)
		}
		return out, err
	}
	fs, err := s.Layout(ctx, tk)
	if err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for _, id := range ids {
		if part, off, ok := fs.Locate(id); ok {
			out[fs.keys[part]] = append(out[fs.keys[part]], int64(off))
		}
	}
	return out, nil
}

// Part returns the image of the i-th fragment (deleted rows included), as
// numbered by Locate.
func (fs *Layout) Part(i int) *Rows { return fs.parts[i] }

// DeletedOffsets returns the sorted offsets f's deletion vector hides (nil
// without one), cached by the vector's immutable key.
func (s *Snapshot) DeletedOffsets(ctx context.Context, f table.Fragment) ([]int64, error) {
	if f.DV == "" {
		return nil, nil
	}
	return s.deletionVector(ctx, f)
}
