package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Compaction from fragment images (snapshot/moved.go). A run's live rows
// are read from the fragments' images this handle has cached (or decodes
// through the cache) instead of a Parquet scan of the run, and the
// fragments written from them keep those rows as their images: the next
// read neither decodes the new fragments nor appends their rows to the
// table's image again, it maps them onto the rows the image already
// holds. The work is that of the run's rows: nothing is read or decoded
// beyond the fragments merged.

// imageColumns reports whether every column of ts is one a fragment image
// holds (the id, the edge ends and the catalog's properties): a column the
// catalog dropped is in the Parquet but not in the image, and only a scan
// rewrites it as it was.
func imageColumns(ts table.Schema, props []*schema.Property, edge bool) bool {
	for _, c := range ts.Columns {
		switch {
		case c.Name == table.KeyColumn, edge && (c.Name == "src" || c.Name == "dst"):
		case snapshot.PropByName(props, c.Name) == nil:
			return false
		}
	}
	return true
}

// rewriteRunImages is rewriteRun reading the run from fragment images; ok
// is false (nothing written) when the table has columns images do not
// hold.
func (g *Graph) rewriteRunImages(ctx context.Context, snap *snapshot.Snapshot, tk, prefix string, s *table.State, run []table.Fragment) ([]table.Fragment, []index.FragmentIDs, bool, error) {
	kind, _ := snapshot.SplitKey(tk)
	edge := kind == "edge"
	rr, err := snap.RunRows(ctx, tk, run)
	if err != nil {
		return nil, nil, false, err
	}
	ts := s.Schema()
	if !imageColumns(ts, rr.Props(), edge) {
		return nil, nil, false, nil
	}
	enc := newRowEncoder(ts, rr.Props(), edge)
	var (
		out []table.Fragment
		ids []index.FragmentIDs
	)
	step := int(max(g.maint.targetRows, 1))
	for lo := 0; lo < rr.Len(); lo += step {
		d := rr.Slice(lo, min(lo+step, rr.Len()))
		f, err := g.writeImageFragment(ctx, prefix, ts, enc, d)
		if err != nil {
			return nil, nil, false, err
		}
		snap.SeedFragmentImage(tk, f, d)
		out, ids = append(out, f), append(ids, index.FragmentIDs{Key: f.Key, IDs: slices.Clone(d.IDs)})
	}
	return out, ids, true, nil
}

// writeImageFragment encodes the rows of image d as one fragment.
func (g *Graph) writeImageFragment(ctx context.Context, prefix string, ts table.Schema, enc *rowEncoder, d *snapshot.Rows) (table.Fragment, error) {
	b, err := table.NewBatchBuilder(nil, ts)
	if err != nil {
		return table.Fragment{}, err
	}
	defer b.Release()
	cols := make([][]any, len(ts.Columns))
	for i, c := range ts.Columns {
		switch {
		case c.Name == table.KeyColumn:
		case enc.edge && (c.Name == "src" || c.Name == "dst"):
		default:
			cols[i] = d.Cols[c.Name]
		}
	}
	for r, id := range d.IDs {
		for i, c := range ts.Columns {
			switch {
			case c.Name == table.KeyColumn:
				enc.vals[i] = id
			case enc.edge && c.Name == "src":
				enc.vals[i] = d.Src[r]
			case enc.edge && c.Name == "dst":
				enc.vals[i] = d.Dst[r]
			default:
				v, err := value.ToColumn(cols[i][r])
				if err != nil {
					return table.Fragment{}, fmt.Errorf("exec: compacting row '%s': %w", id, err)
				}
				enc.vals[i] = v
			}
		}
		if err := b.Append(enc.vals); err != nil {
			return table.Fragment{}, fmt.Errorf("exec: compacting row '%s': %w", id, err)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return table.WriteFragment(ctx, g.st, prefix, ts, rec, g.fragmentOptions())
}
