package exec

import (
	"fmt"

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
	enc   *rowEncoder
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
	}
	e.vals = make([]any, len(e.cols))
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
