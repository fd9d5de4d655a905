package snapshot

import (
	"fmt"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// The mapping between .pg types and table columns. A node table is
// (id, props…), an edge table (id, src, dst, props…), props in declaration
// order. The value model of value.go converts to and from the Go values the
// table package accepts (toColumn, fromColumn).

var kindToColumn = map[schema.Kind]table.Kind{
	schema.KindString: table.String, schema.KindBool: table.Bool,
	schema.KindI32: table.I32, schema.KindI64: table.I64, schema.KindU32: table.U32, schema.KindU64: table.U64,
	schema.KindF32: table.F32, schema.KindF64: table.F64, schema.KindDate: table.Date, schema.KindDateTime: table.DateTime,
	schema.KindVector: table.Vector, schema.KindBlob: table.Blob, schema.KindList: table.List, schema.KindEnum: table.Enum,
}

func columnType(t schema.Type) (table.ColumnType, error) {
	k, ok := kindToColumn[t.Kind]
	if !ok {
		return table.ColumnType{}, fmt.Errorf("snapshot: no column kind for %v", t)
	}
	ct := table.ColumnType{Kind: k, Nullable: t.Nullable, Dim: t.Dim}
	if t.Kind == schema.KindList {
		ek, ok := kindToColumn[t.Elem]
		if !ok {
			return table.ColumnType{}, fmt.Errorf("snapshot: no column kind for list element %v", t.Elem)
		}
		ct.Elem = ek
	}
	return ct, nil
}

// TableSchema returns the table schema of a table key in cat.
func TableSchema(cat *schema.Catalog, tk string) (table.Schema, error) {
	str := table.ColumnType{Kind: table.String}
	var cols []table.Column
	var props []*schema.Property
	kind, name := SplitKey(tk)
	if kind == "node" {
		nt, ok := cat.Node(name)
		if !ok {
			return table.Schema{}, &UnknownTypeError{Kind: "node", Name: name}
		}
		cols = []table.Column{{Name: table.KeyColumn, Type: str}}
		props = nt.Props
	} else {
		et, ok := cat.Edge(name)
		if !ok {
			return table.Schema{}, &UnknownTypeError{Kind: "edge", Name: name}
		}
		cols = []table.Column{{Name: table.KeyColumn, Type: str}, {Name: "src", Type: str}, {Name: "dst", Type: str}}
		props = et.Props
	}
	for _, p := range props {
		ct, err := columnType(p.Type)
		if err != nil {
			return table.Schema{}, fmt.Errorf("%s.%s: %w", name, p.Name, err)
		}
		cols = append(cols, table.Column{Name: p.Name, Type: ct})
	}
	s := table.Schema{Columns: cols}
	if err := s.Validate(); err != nil {
		return table.Schema{}, fmt.Errorf("snapshot: table %s: %w", tk, err)
	}
	return s, nil
}

// NodeKey and EdgeKey build the type keys used by Committed and
// KeyConflictError; node and edge types live in separate namespaces, so a
// bare name would be ambiguous.
func NodeKey(name string) string { return "node:" + name }

// EdgeKey: see NodeKey.
func EdgeKey(name string) string { return "edge:" + name }

// TableKeys lists the table keys of a catalog: nodes then edges, catalog order.
func TableKeys(cat *schema.Catalog) []string {
	keys := make([]string, 0, len(cat.Nodes)+len(cat.Edges))
	for _, n := range cat.Nodes {
		keys = append(keys, NodeKey(n.Name))
	}
	for _, e := range cat.Edges {
		keys = append(keys, EdgeKey(e.Name))
	}
	return keys
}

func SplitKey(tk string) (kind, name string) {
	if n, ok := strings.CutPrefix(tk, "node:"); ok {
		return "node", n
	}
	n, _ := strings.CutPrefix(tk, "edge:")
	return "edge", n
}

// TablePrefix is the object prefix of a table: tables/node-<T> or tables/edge-<T>.
func TablePrefix(tk string) string {
	kind, name := SplitKey(tk)
	return "tables/" + kind + "-" + name
}
