package exec

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// The typed record form. A bulk load of the usual types (scalar
// properties, a single String key, no per-row constraints beyond
// nullability and enums) needs no value map and no boxed value per cell:
// a record of such a type carries its properties as unboxed cells in
// declared order (NodeRecord.Cells), which the load appends straight to
// its Arrow builders (table.BatchBuilder.AppendCells).
//
// The typed conversion is only a faster route to the same record: it
// accepts a line only when every value converts exactly as ConvertJSON
// would convert it and every per-row check passes; on anything else it
// gives up and the line takes the general path, which reports the error
// (TestTypedRecordsMatchGeneral). So typed and general records hold the
// same values, and a bad line gets the same error either way.

// recShape is how the records of one type take the typed path.
type recShape struct {
	props []*schema.Property
	// key is the index in props of the type's single String or Enum @key,
	// or -1 for an unkeyed type.
	key int
}

// typedShapes returns the shape of every type of cat whose records can
// take the typed path, by type name (node and edge names may collide, so
// two maps).
func typedShapes(cat *schema.Catalog) (nodes, edges map[string]*recShape) {
	nodes, edges = map[string]*recShape{}, map[string]*recShape{}
	if cat == nil {
		return nodes, edges
	}
	for _, nt := range cat.Nodes {
		if sh := nodeShape(nt); sh != nil {
			nodes[nt.Name] = sh
		}
	}
	for _, et := range cat.Edges {
		if len(et.Uniques) == 0 && scalarProps(et.Props) {
			edges[et.Name] = &recShape{props: et.Props, key: -1}
		}
	}
	return nodes, edges
}

func nodeShape(nt *schema.NodeType) *recShape {
	if len(nt.Ranges) > 0 || len(nt.Checks) > 0 || len(embedTargets(nt)) > 0 || !scalarProps(nt.Props) {
		return nil
	}
	for _, u := range nt.Uniques {
		if !sameCols(u, nt.Key) {
			return nil // a load keeps the values of other uniques (Keep)
		}
	}
	sh := &recShape{props: nt.Props, key: -1}
	switch len(nt.Key) {
	case 0:
	case 1:
		sh.key = slices.IndexFunc(nt.Props, func(p *schema.Property) bool { return p.Name == nt.Key[0] })
		if sh.key < 0 {
			return nil
		}
		if k := nt.Props[sh.key].Type.Kind; k != schema.KindString && k != schema.KindEnum {
			return nil // the canonical id of other keys is encoded (NodeID)
		}
	default:
		return nil
	}
	return sh
}

// scalarProps reports whether every property has a kind the typed path
// converts.
func scalarProps(props []*schema.Property) bool {
	for _, p := range props {
		if p.Embed != nil {
			return false
		}
		switch p.Type.Kind {
		case schema.KindString, schema.KindEnum, schema.KindBool, schema.KindI32, schema.KindI64,
			schema.KindU32, schema.KindU64, schema.KindF32, schema.KindF64:
		default:
			return false
		}
	}
	return true
}

// typedValues converts the data members of a record of shape sh to cells
// (one per property, in declared order; nulls where absent) and the
// explicit data.id. ok is false when the line must take the general path.
// Strings may be views of the line (lineParser.alias); the caller copies
// what it keeps.
func (r *Reader) typedValues(sh *recShape, data []jsonMember) (cells []table.Cell, id string, hasID, ok bool) {
	cells = r.newCells(len(sh.props))
	next := 0 // the property after the last one found
	for i := range data {
		m := &data[i]
		if m.key == "id" {
			if !m.isStr || m.str == "" {
				return nil, "", false, false
			}
			id, hasID = m.str, true
			continue
		}
		// Lines name the properties in declared order, as a rule: the
		// next one is tried first (names are unique, so the index found
		// is the same either way).
		pi := -1
		if next < len(sh.props) && sh.props[next].Name == m.key {
			pi = next
		} else {
			for j, p := range sh.props {
				if p.Name == m.key {
					pi = j
					break
				}
			}
		}
		if pi < 0 {
			return nil, "", false, false
		}
		next = pi + 1
		c, ok := typedCell(sh.props[pi].Type, m)
		if !ok {
			return nil, "", false, false
		}
		cells[pi] = c
	}
	for i, p := range sh.props {
		c := cells[i]
		if c.Kind == table.CellNull {
			if !p.Type.Nullable {
				return nil, "", false, false
			}
			continue
		}
		if p.Type.Kind == schema.KindEnum {
			if _, found := slices.BinarySearch(p.Type.Enum, c.S); !found {
				return nil, "", false, false
			}
		}
	}
	return cells, id, hasID, true
}

// typedCell converts one member as value.ConvertJSON would, or reports
// that it cannot say.
func typedCell(t schema.Type, m *jsonMember) (table.Cell, bool) {
	switch {
	case m.isStr:
		// The parser checked the text is valid UTF-8 (strictText).
		if t.Kind == schema.KindString || t.Kind == schema.KindEnum {
			return table.StringCell(m.str), true
		}
	case m.isNum:
		return numberCell(t.Kind, m.str)
	case m.val == nil:
		return table.Cell{}, true // JSON null
	default:
		if b, isBool := m.val.(bool); isBool && t.Kind == schema.KindBool {
			return table.BoolCell(b), true
		}
	}
	return table.Cell{}, false
}

// numberCell converts a JSON number literal to a cell of kind k, as
// value.ConvertJSON's integer and float rules do; a literal they would
// refuse, or that needs their special cases (a signed zero for an
// unsigned column), is left to them.
func numberCell(k schema.Kind, text string) (table.Cell, bool) {
	switch k {
	case schema.KindI32, schema.KindI64:
		if !value.Digits(strings.TrimPrefix(text, "-")) {
			return table.Cell{}, false
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || (k == schema.KindI32 && (n < math.MinInt32 || n > math.MaxInt32)) {
			return table.Cell{}, false
		}
		return table.IntCell(n), true
	case schema.KindU32, schema.KindU64:
		if !value.Digits(text) {
			return table.Cell{}, false
		}
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil || (k == schema.KindU32 && n > math.MaxUint32) {
			return table.Cell{}, false
		}
		return table.UintCell(n), true
	case schema.KindF32, schema.KindF64:
		bits := 64
		if k == schema.KindF32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(text, bits)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return table.Cell{}, false
		}
		return table.FloatCell(f), true
	}
	return table.Cell{}, false
}

// newCells returns n null cells, from the reader's cell arena when it has
// one (the parse workers: one allocation per block).
func (r *Reader) newCells(n int) []table.Cell {
	if len(r.cells)+n > cap(r.cells) {
		if r.cellsPerBlock == 0 {
			return make([]table.Cell, n)
		}
		r.cells = make([]table.Cell, 0, max(r.cellsPerBlock, n))
	}
	start := len(r.cells)
	r.cells = r.cells[:start+n]
	c := r.cells[start : start+n : start+n]
	clear(c)
	return c
}

// cellValues returns cells as the value map of the general path (for
// errors and the encoders' general route).
func cellValues(props []*schema.Property, cells []table.Cell) map[string]any {
	if len(props) == 0 {
		return nil
	}
	values := make(map[string]any, len(props))
	for i, p := range props {
		v := cells[i].Value()
		if s, ok := v.(string); ok {
			v = strings.Clone(s) // cells may view a parse block
		}
		values[p.Name] = v
	}
	return values
}
