package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Scalar indexes (docs/search.md "Scalar indexes"). A node property
// declared `@index` that is an enum or an orderable scalar (integers,
// dates, bools) gets, per fragment, a BTREE-kind index object
// (index/btree.go); so does every column of a composite `@index(a, b)`
// that is a String, enum or orderable scalar. A single-property String
// `@index` stays a full-text index (search_index.go), as the spec
// derives it. Optimize builds the missing ones alongside the search
// indexes; readers scan fragments without one, so a write never waits
// for an index build.
//
// A composite gets one object per column, not one over the tuple: each
// column's object serves any conjunct on it (age alone, city alone, or
// both by intersecting their row sets), where a tuple index serves only
// its prefixes; and the same column in two declarations is indexed once.

// scalarColumns returns the columns of node table tk (state schema ts)
// that the catalog declares a scalar index on, in declaration order.
func scalarColumns(cat *schema.Catalog, tk string, ts table.Schema) []string {
	name, isNode := strings.CutPrefix(tk, "node:")
	nt, ok := cat.Node(name)
	if !isNode || !ok || snapshot.NodeKey(nt.Name) != tk {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, ix := range nt.Indexes {
		for _, col := range ix {
			p, ok := nt.Prop(col)
			if !ok || seen[col] || len(ix) == 1 && p.Type.Kind == schema.KindString {
				continue
			}
			ci := ts.Index(col)
			if ci < 0 || !index.BTreeIndexable(ts.Columns[ci].Type.Kind) {
				continue
			}
			seen[col] = true
			out = append(out, col)
		}
	}
	return out
}

// buildScalarIndexes writes the missing scalar indexes of frags
// (fragments of state s, table tk) and returns their references.
func buildScalarIndexes(ctx context.Context, st storage.Store, cat *schema.Catalog, tk string, s *table.State, frags []table.Fragment, refs []table.IndexRef) ([]table.IndexRef, error) {
	ts := s.Schema()
	cols := scalarColumns(cat, tk, ts)
	if len(cols) == 0 {
		return nil, nil
	}
	prefix := snapshot.TablePrefix(tk)
	var out []table.IndexRef
	for _, f := range frags {
		var need []string
		for _, c := range cols {
			if _, ok := index.RefFor(refs, index.KindBTree, c, f.Key); !ok {
				need = append(need, c)
			}
		}
		if len(need) == 0 {
			continue
		}
		vals, err := fragmentColumns(ctx, st, s, f, need)
		if err != nil {
			return nil, err
		}
		for i, c := range need {
			k := ts.Columns[ts.Index(c)].Type.Kind
			ref, err := index.WriteBTree(ctx, st, prefix, f.Key, c, k, vals[i])
			if err != nil {
				return nil, fmt.Errorf("index %s.%s: %w", tk, c, err)
			}
			out = append(out, ref)
		}
	}
	return out, nil
}

// scalarCoverage reports, per declared scalar index of table tk, the
// fragments with a persisted object (IndexCoverage kind "btree").
func scalarCoverage(cat *schema.Catalog, tk string, s *table.State) []IndexCoverage {
	cols := scalarColumns(cat, tk, s.Schema())
	if len(cols) == 0 {
		return nil
	}
	refs := s.Indexes()
	out := make([]IndexCoverage, len(cols))
	for i, c := range cols {
		out[i] = IndexCoverage{Property: c, Kind: index.KindBTree}
		for _, f := range s.Fragments() {
			if _, ok := index.RefFor(refs, index.KindBTree, c, f.Key); ok {
				out[i].FragmentsIndexed++
				out[i].RowsIndexed += f.Live()
			} else {
				out[i].FragmentsUnindexed++
			}
		}
	}
	return out
}
