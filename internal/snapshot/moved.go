package snapshot

import (
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Moved rows. A compaction rewrites a run of fragments into new ones
// holding exactly their live rows, in order; it changes no row. The
// compacting handle has the run's fragment images cached (the writes and
// reads before it decoded them), so it reads the run from them instead of
// decoding its Parquet again (RunRows), and the images of the fragments
// it writes are those rows, cached under the new fragments' keys
// (SeedFragmentImage) so that nobody decodes them either. Such an image
// remembers where its rows came from (movedFrom), and an image derived
// across the compaction maps the new fragment onto the rows the old image
// already holds for the run (derive.go) instead of appending them again
// and marking the old ones dead: the rows a compaction moves cost the
// image nothing. A handle that decodes the new fragment from storage
// (another process, an evicted image) has no lineage and appends, as
// before. TestDerivedImageMatchesAssembly and TestCompactedImageMatchesDecode
// compare both with from-scratch decodes.

// movedFrom says that the rows of a fragment image are live rows
// [first, first+len) of the concatenation, in order, of the live rows of
// fragments keys without the sorted offsets dels (the run a compaction
// rewrote, as it stood then).
type movedFrom struct {
	keys  []string
	dels  [][]int64
	first int
}

// RunRows are the live rows of a run of fragments of one table, in state
// order, read from the fragments' images.
type RunRows struct {
	rows  *Rows
	keys  []string
	dels  [][]int64
	props []*schema.Property
	edge  bool
}

// RunRows reads the live rows of run (consecutive fragments of table tk's
// state in this snapshot) from their fragment images, decoding through
// the cache only the images not cached yet.
func (s *Snapshot) RunRows(ctx context.Context, tk string, run []table.Fragment) (*RunRows, error) {
	st, props, edge, err := s.stateProps(ctx, tk)
	if err != nil {
		return nil, err
	}
	parts := make([]*Rows, len(run))
	dels := make([][]int64, len(run))
	n := 0
	out := &RunRows{keys: make([]string, len(run)), dels: dels, props: props, edge: edge}
	for i, f := range run {
		if parts[i], err = s.FragmentImage(ctx, tk, st, f, props, edge); err != nil {
			return nil, err
		}
		if int64(len(parts[i].IDs)) != f.Rows {
			return nil, &table.CorruptError{Key: f.Key, Offset: -1,
				Reason: fmt.Sprintf("fragment decodes to %d rows, its table state says %d", len(parts[i].IDs), f.Rows)}
		}
		if dels[i], err = s.DeletedOffsets(ctx, f); err != nil {
			return nil, err
		}
		out.keys[i] = f.Key
		n += len(parts[i].IDs) - len(dels[i])
	}
	out.rows = newRows(n, props, edge)
	for i, d := range parts {
		appendLive(out.rows, d, dels[i], props, edge)
	}
	return out, nil
}

// Len is the number of live rows of the run.
func (r *RunRows) Len() int { return len(r.rows.IDs) }

// Props returns the properties of the rows' columns.
func (r *RunRows) Props() []*schema.Property { return r.props }

// Slice returns rows [lo, hi) of the run as the image of a fragment
// holding exactly them, remembering where they came from. The image
// shares the run's arrays (both are immutable).
func (r *RunRows) Slice(lo, hi int) *Rows {
	d := &Rows{IDs: r.rows.IDs[lo:hi:hi], Cols: make(map[string][]any, len(r.props)),
		from: &movedFrom{keys: r.keys, dels: r.dels, first: lo}}
	if r.edge {
		d.Src, d.Dst = r.rows.Src[lo:hi:hi], r.rows.Dst[lo:hi:hi]
	}
	for _, p := range r.props {
		d.Cols[p.Name] = r.rows.Cols[p.Name][lo:hi:hi]
	}
	return d
}

// SeedFragmentImage caches d as the image of fragment f of table tk (a
// fragment written from d's rows), unless an image is cached already.
// INVARIANT: d holds exactly the rows a decode of f returns, in order
// (TestCompactedImageMatchesDecode).
func (s *Snapshot) SeedFragmentImage(tk string, f table.Fragment, d *Rows) {
	key := s.fragImageKey(tk, f)
	if _, ok := s.l.cache.Get(key); ok {
		return
	}
	props := len(d.Cols)
	s.l.cache.Add(key, d, imageSize(len(d.IDs), props, d.Src != nil))
}

// SeedDeletedOffsets caches offsets as the decoded deletion vector of f (a
// vector just written with exactly these sorted offsets), so that the
// next read of f's state does not read it back.
// INVARIANT: the key is the one deletionVector caches under
// (TestCompactedImageMatchesDecode reads every seeded vector's state
// against a decode).
func (s *Snapshot) SeedDeletedOffsets(f table.Fragment, offsets []int64) {
	if f.DV == "" {
		return
	}
	key := dvListKey(f.DV)
	if _, ok := s.l.cache.Get(key); ok {
		return
	}
	s.l.cache.Add(key, table.DeletionVector{Rows: f.Rows, Offsets: offsets}, int64(len(offsets))*8+128)
}

// movedParts is the number of fragments of the image placed on rows a
// compaction moved (placement.at).
func (rs *rowSpace) movedParts() int {
	n := 0
	if rs.place != nil {
		for _, a := range rs.place.at {
			if a != nil {
				n++
			}
		}
	}
	return n
}

// MovedParts reports how many fragments of the image sit on the rows an
// older image held for the run a compaction replaced by them (tests).
func (t *NodeTable) MovedParts() int { return t.movedParts() }

// MovedParts: see NodeTable.MovedParts.
func (t *EdgeTable) MovedParts() int { return t.movedParts() }
