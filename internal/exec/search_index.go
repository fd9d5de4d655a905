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

// Search indexes (docs/search.md). A node property declared @index gets,
// per fragment, a full-text index when it is a String and a vector index
// when it is a Vector. Optimize builds the missing ones (the equivalent of
// the reference's ensure_indices); readers answer exactly without them
// (fragments without a persisted index are indexed in memory when first
// searched), so a write never waits for an index build.

// searchColumn is one declared search index of a table.
type searchColumn struct {
	col  string
	kind string // index.KindText, index.KindVector or index.KindBTree
}

// searchColumns returns the search indexes the catalog declares for node
// table tk (none for edges).
func searchColumns(cat *schema.Catalog, tk string) []searchColumn {
	nt, ok := indexedNode(cat, tk)
	if !ok {
		return nil
	}
	var out []searchColumn
	seen := map[string]bool{}
	for _, ix := range nt.Indexes {
		if len(ix) != 1 || seen[ix[0]] {
			continue
		}
		p, ok := nt.Prop(ix[0])
		if !ok {
			continue
		}
		seen[ix[0]] = true
		switch p.Type.Kind {
		case schema.KindString:
			out = append(out, searchColumn{p.Name, index.KindText})
		case schema.KindVector:
			out = append(out, searchColumn{p.Name, index.KindVector})
		}
	}
	return out
}

// indexedNode returns the node type of table tk (false for edge tables,
// whose declared indexes are not built).
func indexedNode(cat *schema.Catalog, tk string) (*schema.NodeType, bool) {
	name, isNode := strings.CutPrefix(tk, "node:")
	nt, ok := cat.Node(name)
	if !isNode || !ok || snapshot.NodeKey(nt.Name) != tk {
		return nil, false
	}
	return nt, true
}

// buildSearchIndexes writes the missing search indexes of frags (fragments
// of state s, table tk) and returns their references.
func buildSearchIndexes(ctx context.Context, st storage.Store, cat *schema.Catalog, tk string, s *table.State, frags []table.Fragment, refs []table.IndexRef) ([]table.IndexRef, error) {
	return buildColumnIndexes(ctx, st, tk, s, frags, refs, searchColumns(cat, tk))
}

// buildColumnIndexes writes the per-fragment index objects of cols that
// frags (fragments of state s, table tk) lack among refs, reading each
// fragment's columns once, and returns their references.
func buildColumnIndexes(ctx context.Context, st storage.Store, tk string, s *table.State, frags []table.Fragment, refs []table.IndexRef, cols []searchColumn) ([]table.IndexRef, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	prefix := snapshot.TablePrefix(tk)
	ts := s.Schema()
	var out []table.IndexRef
	for _, f := range frags {
		var need []searchColumn
		for _, c := range cols {
			if _, ok := index.RefFor(refs, c.kind, c.col, f.Key); !ok {
				need = append(need, c)
			}
		}
		if len(need) == 0 {
			continue
		}
		names := make([]string, len(need))
		for i, c := range need {
			names[i] = c.col
		}
		vals, err := fragmentColumns(ctx, st, s, f, names)
		if err != nil {
			return nil, err
		}
		for i, c := range need {
			col := vals[i]
			var ref table.IndexRef
			switch c.kind {
			case index.KindText:
				x := index.BuildText(len(col), func(r int) (string, bool) { v, ok := col[r].(string); return v, ok })
				ref, err = index.WriteText(ctx, st, prefix, f.Key, c.col, x)
			case index.KindVector:
				ref, err = index.WriteVector(ctx, st, prefix, f.Key, c.col, vectorsOf(col))
			case index.KindBTree:
				ref, err = index.WriteBTree(ctx, st, prefix, f.Key, c.col, ts.Columns[ts.Index(c.col)].Type.Kind, col)
			}
			if err != nil {
				return nil, fmt.Errorf("index %s.%s: %w", tk, c.col, err)
			}
			out = append(out, ref)
		}
	}
	return out, nil
}

// fragmentColumns reads columns of every row of fragment f by offset;
// rows its deletion vector hides read as null (readers never see them).
func fragmentColumns(ctx context.Context, st storage.Store, s *table.State, f table.Fragment, cols []string) ([][]any, error) {
	sub, err := table.NewState(s.Schema())
	if err != nil {
		return nil, err
	}
	if sub, err = sub.Append(f); err != nil {
		return nil, err
	}
	sc, err := table.Scan(ctx, st, sub, table.ScanOptions{Columns: cols, RowOffsets: true})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	out := make([][]any, len(cols))
	for i := range out {
		out[i] = make([]any, f.Rows)
	}
	for sc.Next() {
		rec := sc.Record()
		for i := range cols {
			arr := rec.Column(i)
			for j, off := range sc.Offsets() {
				out[i][off] = table.Value(arr, j)
			}
		}
	}
	return out, sc.Err()
}

// vectorsOf converts a Vector column read by table.Value to float32 rows
// (nil for null).
func vectorsOf(col []any) [][]float32 {
	out := make([][]float32, len(col))
	for i, v := range col {
		out[i], _ = v.([]float32)
	}
	return out
}

// IndexCoverage is how much of a table one declared search index covers:
// fragments (and their rows) with a persisted index object. Uncovered
// fragments are still answered exactly; `optimize` builds the rest.
type IndexCoverage struct {
	Property           string
	Kind               string // index.KindText ("fts"), index.KindVector ("ivf") or index.KindBTree ("btree")
	FragmentsIndexed   int
	RowsIndexed        int64 // live rows of the covered fragments
	FragmentsUnindexed int
}

func searchCoverage(cat *schema.Catalog, tk string, s *table.State) []IndexCoverage {
	var out []IndexCoverage
	for _, c := range searchColumns(cat, tk) {
		out = append(out, coverageOf(s, c.kind, c.col))
	}
	return out
}

// coverageOf is the coverage of the index of kind over column col in s.
func coverageOf(s *table.State, kind, col string) IndexCoverage {
	refs := s.Indexes()
	out := IndexCoverage{Property: col, Kind: kind}
	for _, f := range s.Fragments() {
		if _, ok := index.RefFor(refs, kind, col, f.Key); ok {
			out.FragmentsIndexed++
			out.RowsIndexed += f.Live()
		} else {
			out.FragmentsUnindexed++
		}
	}
	return out
}
