package exec

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/schema"
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
	nt, ok := indexedNode(cat, tk)
	if !ok {
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
	var cols []searchColumn
	for _, c := range scalarColumns(cat, tk, s.Schema()) {
		cols = append(cols, searchColumn{c, index.KindBTree})
	}
	return buildColumnIndexes(ctx, st, tk, s, frags, refs, cols)
}

// scalarCoverage reports, per declared scalar index of table tk, the
// fragments with a persisted object (IndexCoverage kind "btree").
func scalarCoverage(cat *schema.Catalog, tk string, s *table.State) []IndexCoverage {
	var out []IndexCoverage
	for _, c := range scalarColumns(cat, tk, s.Schema()) {
		out = append(out, coverageOf(s, index.KindBTree, c))
	}
	return out
}
