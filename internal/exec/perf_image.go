package exec

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
// by its immutable object key; a table image is the concatenation of its
// fragments' live rows, in state order — exactly the rows and order a scan
// of the state returns (TestImageAssemblyMatchesScan).

// decodedRows is the decoded content of a fragment or a table state.
type decodedRows struct {
	ids, src, dst []string
	cols          map[string][]any

	// Lazily built lookups of a fragment image (write_lookup.go).
	idxOnce   sync.Once
	byID      map[string]int32
	canonOnce sync.Once
	canon     bool
}

// assembleImage builds the image of st from cached fragment images. It
// also returns the fragment view the image was assembled from, which maps
// every image row to its fragment and offset (fragSet.imageRow).
func (s *GraphSnapshot) assembleImage(ctx context.Context, tk string, st *table.State, props []*schema.Property, edge bool) (*decodedRows, *fragSet, error) {
	fs, err := s.buildFragSet(ctx, tk, st, props, edge)
	if err != nil {
		return nil, nil, err
	}
	return assembleFrom(fs, props, edge), fs, nil
}

// assembleFrom concatenates the live rows of fs's fragments.
func assembleFrom(fs *fragSet, props []*schema.Property, edge bool) *decodedRows {
	parts, dels, live := fs.parts, fs.dels, fs.live
	// One fragment without deletions: share its image (both are immutable).
	if len(parts) == 1 && dels[0] == nil {
		return parts[0]
	}
	out := &decodedRows{ids: make([]string, 0, live), cols: make(map[string][]any, len(props))}
	if edge {
		out.src = make([]string, 0, live)
		out.dst = make([]string, 0, live)
	}
	for _, p := range props {
		out.cols[p.Name] = make([]any, 0, live)
	}
	for i, d := range parts {
		// Copy the runs of live rows between deleted offsets.
		lo := 0
		for k := 0; k <= len(dels[i]); k++ {
			hi := len(d.ids)
			if k < len(dels[i]) {
				hi = int(dels[i][k])
			}
			if hi > lo {
				out.ids = append(out.ids, d.ids[lo:hi]...)
				if edge {
					out.src = append(out.src, d.src[lo:hi]...)
					out.dst = append(out.dst, d.dst[lo:hi]...)
				}
				for _, p := range props {
					out.cols[p.Name] = append(out.cols[p.Name], d.cols[p.Name][lo:hi]...)
				}
			}
			lo = hi + 1
		}
	}
	return out
}

// fragmentImage decodes (cached by schema and fragment key) every row of
// fragment f, deleted or not.
func (s *GraphSnapshot) fragmentImage(ctx context.Context, tk string, st *table.State, f table.Fragment, props []*schema.Property, edge bool) (*decodedRows, error) {
	key := "exec/frag/" + s.c.Schema + "/" + tk + "/" + f.Key
	v, err := s.g.cache.GetOrLoad(ctx, key, func(ctx context.Context) (any, int64, error) {
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
		return d, imageSize(len(d.ids), len(props), edge), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*decodedRows), nil
}
