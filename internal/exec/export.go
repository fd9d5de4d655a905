package exec

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Export writes the target's data as graph-batch NDJSON, the format Load
// reads: every node, then every edge, types in catalog order, rows in
// storage order. Unkeyed nodes and all edges carry data.id so that a load
// of the output (any mode, into a graph of the same schema) reproduces the
// same ids; keyed nodes omit it (their id is their key). Null properties
// are omitted. types, if non-empty, restricts the output to those node or
// edge type names; an unknown name is an *UnknownTypeError before any output.
func (g *Graph) Export(ctx context.Context, t Target, types []string, w io.Writer) error {
	snap, err := g.Resolve(ctx, t)
	if err != nil {
		return err
	}
	cat := snap.Catalog()
	for _, name := range types {
		if _, ok := cat.Node(name); ok {
			continue
		}
		if _, ok := cat.Edge(name); !ok {
			return &snapshot.UnknownTypeError{Kind: "node or edge", Name: name}
		}
	}
	want := func(name string) bool {
		if len(types) == 0 {
			return true
		}
		return slices.ContainsFunc(types, func(n string) bool {
			if n == name {
				return true
			}
			et, ok := cat.Edge(n)
			return ok && et.Name == name
		})
	}
	// Tables stream a row group at a time (snapshot.ScanBatches): an export
	// holds one batch of rows, not the graph, and builds no image.
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	// table writes every row of one table: head starts a row's line up to
	// its data members and says whether none was written yet.
	table := func(tk, name string, props []*schema.Property, edge bool, head func(line []byte, b *snapshot.Batch, i int) ([]byte, bool)) error {
		return snap.ScanBatches(ctx, tk, props, edge, func(b *snapshot.Batch) error {
			for i := range b.Len() {
				var first bool
				line, first = head(line[:0], b, i)
				var err error
				if line, err = appendProps(line, props, b, i, first); err != nil {
					return fmt.Errorf("export %s '%s': %w", name, b.ID(i), err)
				}
				line = append(line, "}}\n"...)
				if _, err := bw.Write(line); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, nt := range cat.Nodes {
		if !want(nt.Name) {
			continue
		}
		err := table(snapshot.NodeKey(nt.Name), nt.Name, nt.Props, false, func(line []byte, b *snapshot.Batch, i int) ([]byte, bool) {
			line = append(line, `{"type":`...)
			line = value.AppendJSONString(line, nt.Name)
			line = append(line, `,"data":{`...)
			if len(nt.Key) > 0 {
				return line, true
			}
			line = append(line, `"id":`...)
			return value.AppendJSONString(line, b.ID(i)), false
		})
		if err != nil {
			return err
		}
	}
	for _, et := range cat.Edges {
		if !want(et.Name) {
			continue
		}
		err := table(snapshot.EdgeKey(et.Name), et.Name, et.Props, true, func(line []byte, b *snapshot.Batch, i int) ([]byte, bool) {
			line = append(line, `{"edge":`...)
			line = value.AppendJSONString(line, et.Name)
			line = append(line, `,"from":`...)
			line = value.AppendJSONString(line, b.Src(i))
			line = append(line, `,"to":`...)
			line = value.AppendJSONString(line, b.Dst(i))
			line = append(line, `,"data":{"id":`...)
			return value.AppendJSONString(line, b.ID(i)), false
		})
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendProps appends row i's non-null properties of b as JSON members
// (a comma first unless first).
func appendProps(line []byte, props []*schema.Property, b *snapshot.Batch, i int, first bool) ([]byte, error) {
	for k, p := range props {
		// The member's name goes in first and is taken back for a null.
		mark := len(line)
		if !first {
			line = append(line, ',')
		}
		line = value.AppendJSONString(line, p.Name)
		line = append(line, ':')
		var ok bool
		var err error
		if line, ok, err = b.AppendExport(line, i, k); err != nil {
			return nil, err
		}
		if !ok {
			line = line[:mark]
			continue
		}
		first = false
	}
	return line, nil
}
