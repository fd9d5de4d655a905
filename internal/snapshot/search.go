package snapshot

import (
	"context"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/index"
)

// Search indexes of a node image. A table image is its fragments' live
// rows in state order (layout.go); the full-text index of a String column
// is one index.TextIndex per fragment: the persisted object the table
// state names for that (fragment, column) when there is one (written by
// optimize or compaction), otherwise one built in memory from the decoded
// fragment and cached with it. Either way it covers every row of the
// fragment; TextPart maps its offsets to image rows and hides the rows the
// fragment's deletion vector deletes, so statistics summed over the parts
// are exactly those of the live rows (eval TestTextIndexMatchesExact).

// FragPos places one fragment in a node image.
type FragPos struct {
	base int     // image row of the fragment's first live row
	dels []int64 // sorted deleted offsets
}

// ImageRow maps a fragment offset to its image row; ok is false for a
// deleted row.
func (p *FragPos) ImageRow(off int32) (int32, bool) {
	if len(p.dels) == 0 {
		return int32(p.base) + off, true
	}
	before, gone := slices.BinarySearch(p.dels, int64(off))
	if gone {
		return 0, false
	}
	return int32(p.base + int(off) - before), true
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
	fs := t.layout
	if fs == nil {
		return nil, false, nil
	}
	st, err := s.State(ctx, NodeKey(t.Type.Name))
	if err != nil {
		return nil, false, err
	}
	refs := st.Indexes()
	parts := make([]TextPart, len(fs.keys))
	for i, fk := range fs.keys {
		p := TextPart{FragPos: FragPos{base: fs.base[i], dels: fs.dels[i]}}
		if ref, ok := index.RefFor(refs, index.KindText, field, fk); ok {
			v, err := s.l.cache.GetOrLoad(ctx, "search/fts/"+ref.Key, func(ctx context.Context) (any, int64, error) {
				x, err := index.ReadText(ctx, s.l.st, ref.Key)
				if err != nil {
					return nil, 0, err
				}
				return x, x.Size(), nil
			})
			if err != nil {
				return nil, false, err
			}
			p.Index, p.Persisted = v.(*index.TextIndex), true
		} else {
			rows := fs.parts[i]
			v, err := s.l.cache.GetOrLoad(ctx, "search/fts-mem/"+s.c.Schema+"/"+fk+"/"+field, func(context.Context) (any, int64, error) {
				col := rows.Cols[field]
				x := index.BuildText(len(rows.IDs), func(r int) (string, bool) {
					if col == nil {
						return "", false
					}
					v, ok := col[r].(string)
					return v, ok
				})
				return x, x.Size(), nil
			})
			if err != nil {
				return nil, false, err
			}
			p.Index = v.(*index.TextIndex)
		}
		parts[i] = p
	}
	return parts, true, nil
}

// VectorParts is TextParts for a Vector property: persisted IVF indexes
// where the state names them, flat in-memory ones (every vector of the
// fragment, contiguous) elsewhere.
func (s *Snapshot) VectorParts(ctx context.Context, t *NodeTable, field string) ([]VectorPart, bool, error) {
	fs := t.layout
	prop, ok := t.Type.Prop(field)
	if fs == nil || !ok {
		return nil, false, nil
	}
	st, err := s.State(ctx, NodeKey(t.Type.Name))
	if err != nil {
		return nil, false, err
	}
	refs := st.Indexes()
	parts := make([]VectorPart, len(fs.keys))
	for i, fk := range fs.keys {
		p := VectorPart{FragPos: FragPos{base: fs.base[i], dels: fs.dels[i]}}
		if ref, ok := index.RefFor(refs, index.KindVector, field, fk); ok {
			v, err := s.l.cache.GetOrLoad(ctx, "search/ivf/"+ref.Key, func(ctx context.Context) (any, int64, error) {
				x, err := index.ReadVector(ctx, s.l.st, ref.Key)
				if err != nil {
					return nil, 0, err
				}
				return x, x.Size(), nil
			})
			if err != nil {
				return nil, false, err
			}
			p.Index, p.Persisted = v.(*index.VectorIndex), true
		} else {
			rows := fs.parts[i]
			v, err := s.l.cache.GetOrLoad(ctx, "search/flat/"+s.c.Schema+"/"+fk+"/"+field, func(context.Context) (any, int64, error) {
				col := rows.Cols[field]
				vecs := make([][]float32, len(rows.IDs))
				for r := range vecs {
					if col != nil {
						vecs[r], _ = col[r].([]float32)
					}
				}
				x := index.BuildVector(vecs, prop.Type.Dim, 1)
				return x, x.Size(), nil
			})
			if err != nil {
				return nil, false, err
			}
			p.Index = v.(*index.VectorIndex)
		}
		parts[i] = p
	}
	return parts, true, nil
}
