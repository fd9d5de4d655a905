package exec

import (
	"fmt"

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
		return table.ColumnType{}, fmt.Errorf("exec: no column kind for %v", t)
	}
	ct := table.ColumnType{Kind: k, Nullable: t.Nullable, Dim: t.Dim}
	if t.Kind == schema.KindList {
		ek, ok := kindToColumn[t.Elem]
		if !ok {
			return table.ColumnType{}, fmt.Errorf("exec: no column kind for list element %v", t.Elem)
		}
		ct.Elem = ek
	}
	return ct, nil
}

// tableSchemaOf returns the table schema of a table key in cat.
func tableSchemaOf(cat *schema.Catalog, tk string) (table.Schema, error) {
	str := table.ColumnType{Kind: table.String}
	var cols []table.Column
	var props []*schema.Property
	kind, name := splitTableKey(tk)
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
		return table.Schema{}, fmt.Errorf("exec: table %s: %w", tk, err)
	}
	return s, nil
}
