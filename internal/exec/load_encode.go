package exec

import (
	"fmt"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// loadEncoder converts a load's rows to typed columns: rowEncoder's
// conversion, except that the id (and an edge's src and dst) go to their
// columns unboxed (table.BatchBuilder.AppendStrings) — three boxed strings
// fewer per edge of a bulk load. A table whose schema does not lead with
// those columns is encoded by rowEncoder itself.
type loadEncoder struct {
	lead  int                // leading string columns taken from the row: 1 (id) or 3 (id, src, dst); 0: enc does it all
	cols  []string           // names of the other columns
	props []*schema.Property // per other column: its property, nil for none (null)
	vals  []any
	// cellIdx is, per other column, the index of its property in the
	// type's properties (the order of a typed record's cells), -1 for none;
	// cellRow is appendCells' scratch row.
	cellIdx []int
	cellRow []table.Cell
	enc     *rowEncoder
}

func newLoadEncoder(ts table.Schema, props []*schema.Property, edge bool) *loadEncoder {
	e := &loadEncoder{enc: newRowEncoder(ts, props, edge)}
	want := []string{table.KeyColumn}
	if edge {
		want = append(want, "src", "dst")
	}
	if len(ts.Columns) < len(want) {
		return e
	}
	for i, name := range want {
		if ts.Columns[i].Name != name {
			return e
		}
	}
	e.lead = len(want)
	for _, c := range ts.Columns[e.lead:] {
		e.cols = append(e.cols, c.Name)
		e.props = append(e.props, snapshot.PropByName(props, c.Name))
		e.cellIdx = append(e.cellIdx, slices.IndexFunc(props, func(p *schema.Property) bool { return p.Name == c.Name }))
	}
	e.vals = make([]any, len(e.cols))
	e.cellRow = make([]table.Cell, len(e.cols))
	return e
}

// append converts r and appends it to b; a rejected row leaves b unchanged.
func (e *loadEncoder) append(b *table.BatchBuilder, r Row) error {
	if e.lead == 0 {
		return e.enc.append(b, r)
	}
	for i, p := range e.props {
		if p == nil {
			e.vals[i] = nil
			continue
		}
		v, err := value.ToColumn(r.Values[e.cols[i]])
		if err != nil {
			return &ConstraintError{Kind: ConstraintRequired, Prop: e.cols[i], ID: r.ID, Msg: err.Error()}
		}
		e.vals[i] = v
	}
	lead := [3]string{r.ID, r.Src, r.Dst}
	if err := b.AppendStrings(lead[:e.lead], e.vals); err != nil {
		return fmt.Errorf("row '%s': %w", r.ID, err)
	}
	return nil
}

// appendCells is append for a row in the typed form: cells are its
// properties in declared order (NodeRecord.Cells), appended unboxed
// (table.BatchBuilder.AppendCells). The encoder must have lead > 0.
func (e *loadEncoder) appendCells(b *table.BatchBuilder, r Row, cells []table.Cell) error {
	for i, pi := range e.cellIdx {
		if pi < 0 {
			e.cellRow[i] = table.Cell{}
			continue
		}
		e.cellRow[i] = cells[pi]
	}
	lead := [3]string{r.ID, r.Src, r.Dst}
	if err := b.AppendCells(lead[:e.lead], e.cellRow); err != nil {
		return fmt.Errorf("row '%s': %w", r.ID, err)
	}
	return nil
}
