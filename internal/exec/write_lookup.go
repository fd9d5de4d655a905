package exec

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
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
// (perf_image.go), each with an id → offset index built once per fragment
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
func (d *decodedRows) rowOf(id string) (int32, bool) {
	d.idxOnce.Do(func() {
		d.byID = make(map[string]int32, len(d.ids))
		for i, id := range d.ids {
			d.byID[id] = int32(i)
		}
	})
	r, ok := d.byID[id]
	return r, ok
}

// keyCanonical reports whether every row of the fragment image (deleted
// or not) has as id the canonical rendering of its single-property String
// or enum @key, so that the row holding key v is the row with id v.
// Checked once per fragment image (the image is keyed by schema, so nt is
// the same on every call).
func (d *decodedRows) keyCanonical(nt *schema.NodeType) bool {
	d.canonOnce.Do(func() {
		if nt == nil || len(nt.Key) != 1 {
			return
		}
		p, ok := nt.Prop(nt.Key[0])
		if !ok || (p.Type.Kind != schema.KindString && p.Type.Kind != schema.KindEnum) {
			return
		}
		col := d.cols[p.Name]
		if len(col) != len(d.ids) {
			return
		}
		for i, v := range col {
			if s, ok := v.(string); !ok || s != d.ids[i] {
				return
			}
		}
		d.canon = true
	})
	return d.canon
}

// fragSet is a table state seen as the cached images and deletion vectors
// of its fragments, in state order. Immutable once built.
type fragSet struct {
	keys  []string       // fragment object keys
	dvs   []string       // deletion-vector keys ("" for none)
	parts []*decodedRows // whole fragment images (deleted rows included)
	dels  [][]int64      // sorted deleted offsets per fragment (nil: none)
	base  []int          // image row of each fragment's first live row
	live  int            // live rows in all
}

// locate returns the fragment and offset of the live row with this id.
// Ids are unique among a state's live rows (NodeTable's invariant), so the
// first live hit is the only one; newer fragments are tried first because
// a recently written id is the likelier target.
func (fs *fragSet) locate(id string) (part int, off int32, ok bool) {
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

// imageRow converts a live (fragment, offset) to its row in the assembled
// image: the image is the fragments' live rows concatenated in state order.
func (fs *fragSet) imageRow(part int, off int32) int {
	before, _ := slices.BinarySearch(fs.dels[part], int64(off))
	return fs.base[part] + int(off) - before
}

// keyCanonical reports whether every fragment is key-canonical (so, in
// particular, every live row).
func (fs *fragSet) keyCanonical(nt *schema.NodeType) bool {
	for _, p := range fs.parts {
		if !p.keyCanonical(nt) {
			return false
		}
	}
	return true
}

// snapMemo holds what a snapshot derived from its immutable states, for
// the life of the snapshot (one write attempt or one query).
type snapMemo struct {
	mu    sync.Mutex
	frags map[string]*fragSet
}

// fragSet returns (memoized per snapshot) the fragment view of table tk.
func (s *GraphSnapshot) fragSet(ctx context.Context, tk string) (*fragSet, error) {
	s.memo.mu.Lock()
	fs := s.memo.frags[tk]
	s.memo.mu.Unlock()
	if fs != nil {
		return fs, nil
	}
	props, edge, err := s.tableProps(tk)
	if err != nil {
		return nil, err
	}
	st, err := s.state(ctx, tk)
	if err != nil {
		return nil, err
	}
	fs, err = s.buildFragSet(ctx, tk, st, props, edge)
	if err != nil {
		return nil, err
	}
	s.memo.mu.Lock()
	if s.memo.frags == nil {
		s.memo.frags = map[string]*fragSet{}
	}
	s.memo.frags[tk] = fs
	s.memo.mu.Unlock()
	return fs, nil
}

// tableProps returns the declared properties of table tk.
func (s *GraphSnapshot) tableProps(tk string) ([]*schema.Property, bool, error) {
	kind, name := splitTableKey(tk)
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
func (s *GraphSnapshot) buildFragSet(ctx context.Context, tk string, st *table.State, props []*schema.Property, edge bool) (*fragSet, error) {
	frags := st.Fragments()
	fs := &fragSet{keys: make([]string, len(frags)), dvs: make([]string, len(frags)), parts: make([]*decodedRows, len(frags)),
		dels: make([][]int64, len(frags)), base: make([]int, len(frags))}
	for i, f := range frags {
		d, err := s.fragmentImage(ctx, tk, st, f, props, edge)
		if err != nil {
			return nil, err
		}
		fs.keys[i], fs.dvs[i], fs.parts[i], fs.base[i] = f.Key, f.DV, d, fs.live
		if f.DV != "" {
			offs, err := s.deletionVector(ctx, f)
			if err != nil {
				return nil, err
			}
			if int64(len(d.ids)) != f.Rows {
				return nil, fmt.Errorf("exec: deletion vector %s does not match fragment %s", f.DV, f.Key)
			}
			fs.dels[i] = offs
		}
		fs.live += len(d.ids) - len(fs.dels[i])
	}
	return fs, nil
}

// deletionVector reads (cached by its immutable key) the sorted deleted
// offsets of fragment f, checked against f.
func (s *GraphSnapshot) deletionVector(ctx context.Context, f table.Fragment) ([]int64, error) {
	v, err := s.g.cache.GetOrLoad(ctx, "exec/dvlist/"+f.DV, func(ctx context.Context) (any, int64, error) {
		dv, err := table.ReadDeletionVector(ctx, s.g.st, f.DV)
		if err != nil {
			return nil, 0, err
		}
		return dv, int64(len(dv.Offsets))*8 + 128, nil
	})
	if err != nil {
		return nil, err
	}
	dv := v.(table.DeletionVector)
	if dv.Fragment != strings.TrimSuffix(path.Base(f.Key), ".parquet") || dv.Rows != f.Rows ||
		int64(len(dv.Offsets)) != f.Deleted || !slices.IsSorted(dv.Offsets) {
		return nil, fmt.Errorf("exec: deletion vector %s does not match fragment %s", f.DV, f.Key)
	}
	return dv.Offsets, nil
}

// committedRows returns, per fragment key, the offsets of the live rows of
// table tk whose ids are in ids (ids not committed are skipped; a repeated
// id repeats its offset): the input of table.DeleteRows, which dedupes.
func (s *GraphSnapshot) committedRows(ctx context.Context, tk string, ids []string) (map[string][]int64, error) {
	fs, err := s.fragSet(ctx, tk)
	if err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for _, id := range ids {
		if part, off, ok := fs.locate(id); ok {
			out[fs.keys[part]] = append(out[fs.keys[part]], int64(off))
		}
	}
	return out, nil
}
