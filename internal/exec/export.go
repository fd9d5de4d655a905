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
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	for _, nt := range cat.Nodes {
		if !want(nt.Name) {
			continue
		}
		tab, err := snap.Nodes(ctx, nt.Name)
		if err != nil {
			return err
		}
		for i, id := range tab.IDs {
			if !tab.Alive(i) {
				continue
			}
			line = append(line[:0], `{"type":`...)
			line = value.AppendJSONString(line, nt.Name)
			line = append(line, `,"data":{`...)
			first := true
			if len(nt.Key) == 0 {
				line = append(line, `"id":`...)
				line = value.AppendJSONString(line, id)
				first = false
			}
			if line, err = appendProps(line, nt.Props, func(p string) any { return tab.Value(i, p) }, first); err != nil {
				return fmt.Errorf("export %s '%s': %w", nt.Name, id, err)
			}
			line = append(line, "}}\n"...)
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for _, et := range cat.Edges {
		if !want(et.Name) {
			continue
		}
		tab, err := snap.Edges(ctx, et.Name)
		if err != nil {
			return err
		}
		for i, id := range tab.IDs {
			if !tab.Alive(i) {
				continue
			}
			line = append(line[:0], `{"edge":`...)
			line = value.AppendJSONString(line, et.Name)
			line = append(line, `,"from":`...)
			line = value.AppendJSONString(line, tab.Src[i])
			line = append(line, `,"to":`...)
			line = value.AppendJSONString(line, tab.Dst[i])
			line = append(line, `,"data":{"id":`...)
			line = value.AppendJSONString(line, id)
			if line, err = appendProps(line, et.Props, func(p string) any { return tab.Value(i, p) }, false); err != nil {
				return fmt.Errorf("export %s '%s': %w", et.Name, id, err)
			}
			line = append(line, "}}\n"...)
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendProps(line []byte, props []*schema.Property, get func(string) any, first bool) ([]byte, error) {
	for _, p := range props {
		v := get(p.Name)
		if v == nil {
			continue
		}
		if !first {
			line = append(line, ',')
		}
		first = false
		line = value.AppendJSONString(line, p.Name)
		line = append(line, ':')
		var err error
		if line, err = value.AppendExportJSON(line, p.Type, v); err != nil {
			return nil, err
		}
	}
	return line, nil
}
