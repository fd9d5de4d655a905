package snapshot

import (
	"context"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Incremental table images. A write adds one fragment per touched table and
// hides replaced rows with deletion vectors, leaving every other fragment
// of the table as it was. Decoding the new state from scratch would make
// the first read after a one-row write cost a decode of the whole table, so
// images are assembled from per-fragment images instead: each Parquet
// fragment is decoded once, whole (its deletion vector ignored), and cached
// by its immutable object key; the first image of a table is the
// concatenation of its fragments' live rows, in state order — exactly the
// rows and order a scan of the state returns (TestImageAssemblyMatchesScan)
// — and later ones are derived from it without a copy (derive.go), their
// live rows in the same order.

// Rows is the decoded content of a fragment or a table state: row i is
// IDs[i] (with Src[i], Dst[i] for edges) and property values Cols[p][i].
//
// Images are immutable once built; the slices must not be modified.
type Rows struct {
	IDs, Src, Dst []string
	Cols          map[string][]any

	// Lazily built lookups of a fragment image (layout.go).
	idxOnce   sync.Once
	byID      map[string]int32
	canonOnce sync.Once
	canon     bool

	// from is set on the image of a fragment a compaction wrote from
	// cached fragment images (moved.go): where its rows came from.
	from *movedFrom
}

// newRows returns empty Rows with room for n rows of props (and of the
// edge ends when edge).
func newRows(n int, props []*schema.Property, edge bool) *Rows {
	r := &Rows{IDs: make([]string, 0, n), Cols: make(map[string][]any, len(props))}
	if edge {
		r.Src = make([]string, 0, n)
		r.Dst = make([]string, 0, n)
	}
	for _, p := range props {
		r.Cols[p.Name] = make([]any, 0, n)
	}
	return r
}

// assembleFrom concatenates the live rows of fs's fragments: a dense
// image (no dead row), with spare room for the images derived from it
// when room (a table being written).
func assembleFrom(fs *Layout, props []*schema.Property, edge, room bool) (*Rows, rowSpace) {
	parts, dels, live := fs.parts, fs.dels, fs.live
	rs := rowSpace{layout: fs, place: densePlacement(fs), live: live}
	// One fragment without deletions: share its image (both are immutable).
	if len(parts) == 1 && dels[0] == nil {
		return parts[0], rs
	}
	n := live
	if room {
		n, rs.grow = roomFor(live), &growToken{}
	}
	out := newRows(n, props, edge)
	for i, d := range parts {
		appendLive(out, d, dels[i], props, edge)
	}
	return out, rs
}

// roomFor is the capacity an image of n rows is allocated with: spare room
// for the rows of the writes derived from it (derive.go).
func roomFor(n int) int { return n + n/8 + 1024 }

// FragmentImage decodes (cached by schema and fragment key) every row of
// fragment f, deleted or not.
func (s *Snapshot) FragmentImage(ctx context.Context, tk string, st *table.State, f table.Fragment, props []*schema.Property, edge bool) (*Rows, error) {
	key := s.fragImageKey(tk, f)
	v, err := s.l.cache.GetOrLoad(ctx, key, func(ctx context.Context) (any, int64, error) {
		empty, err := table.NewState(st.Schema())
		if err != nil {
			return nil, 0, err
		}
		whole := f
		whole.DV, whole.Deleted = "", 0
		one, err := empty.Append(whole)
		if err != nil {
			return nil, 0, err
		}
		d, err := s.decodeState(ctx, one, props, edge)
		if err != nil {
			return nil, 0, err
		}
		return d, imageSize(len(d.IDs), len(props), edge), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Rows), nil
}

// fragImageKey names the cached image of fragment f of table tk.
func (s *Snapshot) fragImageKey(tk string, f table.Fragment) string {
	return "exec/frag/" + s.c.Schema + "/" + tk + "/" + f.Key
}

// CachedFragmentImage returns fragment f's image if this handle has it
// cached, without loading it.
// INVARIANT: the key is the one FragmentImage caches under
// (TestCachedFragmentImageKey).
func (s *Snapshot) CachedFragmentImage(tk string, f table.Fragment) (*Rows, bool) {
	v, ok := s.l.cache.Get(s.fragImageKey(tk, f))
	if !ok {
		return nil, false
	}
	d, ok := v.(*Rows)
	return d, ok
}
