package snapshot

import (
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Search indexes of a node image. A table image is its fragments' live
// rows in state order (rowspace.go); the full-text index of a String column
// is one index.TextIndex per fragment: the persisted object the table
// state names for that (fragment, column) when there is one (written by
// optimize or compaction), otherwise one built in memory from the decoded
// fragment and cached with it. Either way it covers every row of the
// fragment; TextPart maps its offsets to image rows and hides the rows the
// fragment's deletion vector deletes, so statistics summed over the parts
// are exactly those of the live rows (eval TestTextIndexMatchesExact).

// FragPos places one fragment in a node image (rowspace.go).
type FragPos struct {
	start int     // image row of the fragment's first present offset
	skip  []int64 // sorted offsets the image does not hold (⊆ dels)
	dels  []int64 // sorted deleted offsets
	at    []int32 // offset → image row of a moved fragment (rowspace.go); nil otherwise
}

// ImageRow maps a fragment offset to its image row; ok is false for a
// deleted row.
func (p *FragPos) ImageRow(off int32) (int32, bool) {
	if p.at != nil {
		if _, gone := slices.BinarySearch(p.dels, int64(off)); gone {
			return 0, false
		}
		return p.at[off], true
	}
	if len(p.dels) == 0 {
		return int32(p.start) + off, true
	}
	if _, gone := slices.BinarySearch(p.dels, int64(off)); gone {
		return 0, false
	}
	before, _ := slices.BinarySearch(p.skip, int64(off))
	return int32(p.start + int(off) - before), true
}

// Deleted returns the fragment's deleted offsets (sorted; must not be
// modified).
func (p *FragPos) Deleted() []int64 { return p.dels }

// TextPart is one fragment of a node image with its full-text index.
type TextPart struct {
	FragPos
	Index     *index.TextIndex
	Persisted bool // read from a persisted index object
	// Stats, set only on the one part of a SearchMem, replaces the
	// statistics summed over parts with the whole table's.
	Stats *CorpusStats
}

// VectorPart is one fragment of a node image with its vector index.
type VectorPart struct {
	FragPos
	Index     *index.VectorIndex
	Persisted bool
}

// TextParts returns the full-text view of String property field of t, an
// image of this snapshot: one part per fragment, in image order. ok is
// false when t carries no fragment layout (an in-memory table); callers
// then analyze the column themselves.
func (s *Snapshot) TextParts(ctx context.Context, t *NodeTable, field string) ([]TextPart, bool, error) {
	if t.layout == nil {
		return nil, false, nil
	}
	parts := make([]TextPart, 0, len(t.layout.keys))
	err := fragIndexes(ctx, s, t, index.KindText, field, "search/fts/", "search/fts-mem/", index.ReadText,
		func(rows *Rows) *index.TextIndex {
			col := rows.Cols[field]
			return index.BuildText(len(rows.IDs), func(r int) (string, bool) {
				if col == nil {
					return "", false
				}
				v, ok := col[r].(string)
				return v, ok
			})
		},
		func(pos FragPos, x *index.TextIndex, persisted bool) {
			parts = append(parts, TextPart{FragPos: pos, Index: x, Persisted: persisted})
		})
	if err != nil {
		return nil, false, err
	}
	return parts, true, nil
}

// VectorParts is TextParts for a Vector property: persisted IVF indexes
// where the state names them, flat in-memory ones (every vector of the
// fragment, contiguous) elsewhere.
func (s *Snapshot) VectorParts(ctx context.Context, t *NodeTable, field string) ([]VectorPart, bool, error) {
	prop, ok := t.Type.Prop(field)
	if t.layout == nil || !ok {
		return nil, false, nil
	}
	parts := make([]VectorPart, 0, len(t.layout.keys))
	err := fragIndexes(ctx, s, t, index.KindVector, field, "search/ivf/", "search/flat/", index.ReadVector,
		func(rows *Rows) *index.VectorIndex {
			col := rows.Cols[field]
			vecs := make([][]float32, len(rows.IDs))
			for r := range vecs {
				if col != nil {
					vecs[r], _ = col[r].([]float32)
				}
			}
			return index.BuildVector(vecs, prop.Type.Dim, 1)
		},
		func(pos FragPos, x *index.VectorIndex, persisted bool) {
			parts = append(parts, VectorPart{FragPos: pos, Index: x, Persisted: persisted})
		})
	if err != nil {
		return nil, false, err
	}
	return parts, true, nil
}

// fragIndexes calls emit, for each fragment of t's layout (not nil) in
// image order, with its place in the image and its index of kind over
// field: the persisted object t's state names (read, cached under
// persisted+object key), else one built from the decoded fragment (cached
// under mem+schema/fragment/field). Both stay in the read cache, sized by
// the index.
func fragIndexes[X interface{ Size() int64 }](ctx context.Context, s *Snapshot, t *NodeTable, kind, field, persisted, mem string,
	read func(context.Context, storage.Store, string) (X, error), build func(*Rows) X, emit func(FragPos, X, bool)) error {
	fs := t.layout
	st, err := s.State(ctx, NodeKey(t.Type.Name))
	if err != nil {
		return err
	}
	refs := st.Indexes()
	for i, fk := range fs.keys {
		var v any
		ref, stored := index.RefFor(refs, kind, field, fk)
		if stored {
			v, err = s.l.cache.GetOrLoad(ctx, persisted+ref.Key, func(ctx context.Context) (any, int64, error) {
				x, err := read(ctx, s.l.st, ref.Key)
				if err != nil {
					return nil, 0, err
				}
				return x, x.Size(), nil
			})
		} else {
			rows := fs.parts[i]
			v, err = s.l.cache.GetOrLoad(ctx, mem+s.c.Schema+"/"+fk+"/"+field, func(context.Context) (any, int64, error) {
				x := build(rows)
				return x, x.Size(), nil
			})
		}
		if err != nil {
			return err
		}
		pos := FragPos{start: t.place.start[i], skip: t.place.skip[i], dels: fs.dels[i]}
		if t.place.at != nil {
			pos.at = t.place.at[i]
		}
		emit(pos, v.(X), stored)
	}
	return nil
}
