package eval

import (
	"context"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
)

// StreamBatch is how many output rows a Stream projects at a time: the
// boxed values of one batch are all a stream holds of the projection.
const StreamBatch = 1024

// Stream is a read result whose rows are projected on demand, in batches
// of StreamBatch, instead of held as [][]any: the binding rows (compact
// int32 row sets) are materialized and charged to the query's budget, the
// projected values are not. Aggregate output (one row per group, charged
// as groups) is held and replayed.
//
// Len is known before the first row is produced, so a writer can print a
// row count ahead of the rows. Each may be called more than once (a table
// writer measures widths, then prints) and yields the same rows in the
// same order. A Stream holds its snapshot's tables until it is dropped; it
// is not safe for concurrent use.
type Stream struct {
	Columns []query.Column
	out     *outRows
	mem     *limits.Budget
}

// outRows is what the projection-level operators produce: either held
// rows (aggregates) or the first n binding rows of rs with the projection
// fns still to apply.
type outRows struct {
	held bool    // rows holds the output (else rs and fns produce it)
	rows [][]any // held rows
	rs   *rowSet
	fns  []valueFn
	n    int
	// gen, when set, produces the first n output rows itself (a dense
	// projection walks its views: dense_project.go); row is reused
	// between calls.
	gen func(ctx context.Context, n int, fn func(row []any) error) error
}

func heldRows(rows [][]any) *outRows { return &outRows{held: true, rows: rows, n: len(rows)} }

// Len returns the number of output rows.
func (s *Stream) Len() int { return s.out.n }

// Each calls fn with every output row in order, Columns[j] at row[j] in
// the value model of value.go. The row slice is reused after fn returns
// (the values it holds may be kept). Each stops at the first error of fn,
// or of ctx (checked once a batch; a deadline set with limits.WithTimeout
// is reported as *limits.Error), and returns it.
func (s *Stream) Each(ctx context.Context, fn func(row []any) error) (err error) {
	defer func() { err = limits.FromContext(ctx, err) }()
	defer recoverBudget(&err)
	o := s.out
	if o.gen != nil {
		return o.gen(ctx, o.n, fn)
	}
	if o.held {
		for i, row := range o.rows[:o.n] {
			if i%StreamBatch == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	}
	nc := len(o.fns)
	batch := min(o.n, StreamBatch)
	// The batch's cells are held while it is written: charged, then
	// returned to the budget when the stream is done.
	held := int64(batch) * 16 * int64(nc)
	charge(s.mem, held)
	defer s.mem.Release(held)
	cells := make([]any, batch*nc)
	for start := 0; start < o.n; start += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+batch, o.n)
		for i := start; i < end; i++ {
			row := o.rs.row(i)
			vals := cells[(i-start)*nc : (i-start+1)*nc : (i-start+1)*nc]
			for j, f := range o.fns {
				vals[j] = f(row)
			}
		}
		for i := range end - start {
			if err := fn(cells[i*nc : (i+1)*nc : (i+1)*nc]); err != nil {
				return err
			}
		}
	}
	return nil
}

// collect materializes every row, charging them to the budget as Run
// always has (Run's callers hold the whole result).
func (s *Stream) collect(ctx context.Context) ([][]any, error) {
	o := s.out
	if o.held {
		return o.rows[:o.n], nil
	}
	if o.gen != nil {
		nc := len(s.Columns)
		charge(s.mem, int64(o.n)*(24+16*int64(nc)))
		out := make([][]any, 0, o.n)
		cells := make([]any, o.n*nc)
		err := o.gen(ctx, o.n, func(row []any) error {
			i := len(out)
			vals := cells[i*nc : (i+1)*nc : (i+1)*nc]
			copy(vals, row)
			out = append(out, vals)
			return nil
		})
		return out, err
	}
	nc := len(o.fns)
	// Row headers and cells (a cell is an interface value; what it points
	// to is mostly shared with the table images).
	charge(s.mem, int64(o.n)*(24+16*int64(nc)))
	out := make([][]any, o.n)
	cells := make([]any, o.n*nc)
	for i := range out {
		if i%StreamBatch == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row := o.rs.row(i)
		vals := cells[i*nc : (i+1)*nc : (i+1)*nc]
		for j, f := range o.fns {
			vals[j] = f(row)
		}
		out[i] = vals
	}
	return out, nil
}
