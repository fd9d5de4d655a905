package snapshot

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// Typed column scans of a partial snapshot. The partial snapshot of a
// plan's only scan (scan.go) does not read its table when it is built:
// the node table (boxed values, placeholder ids) is read on first Nodes
// call, and until then ScanColumns streams the same rows — the live rows
// passing the pushed-down filters, in storage order — as the typed Arrow
// columns of each row group, so that eval can fold a filtered count or
// an aggregate over them without a boxed value per cell or a row of
// table (eval/aggregate_typed.go). Memory stays at one row group's
// columns whatever the table's size.

// lazyScan is the deferred table of a partial snapshot's only scan.
type lazyScan struct {
	pp      *partialPlan
	nt      *schema.NodeType
	st      *table.State
	filters []table.Filter
	want    map[string]bool
	realIDs bool
	top     *topK

	once  sync.Once
	t     *NodeTable
	err   error
	built atomic.Bool
}

// table reads the deferred table (once).
func (lz *lazyScan) table(ctx context.Context) (*NodeTable, error) {
	lz.once.Do(func() {
		lz.t, lz.err = lz.pp.scanRows(ctx, lz.nt, lz.st, lz.filters, lz.want, lz.realIDs, lz.top)
		lz.built.Store(true)
	})
	return lz.t, lz.err
}

// ColumnsOnly reports whether m defers a table that was never read: typed
// column scans answered everything asked of m.
func (m *Mem) ColumnsOnly() bool {
	return m.lazy != nil && !m.lazy.built.Load()
}

// ScanColumns streams the rows the table of node type typ holds (the
// live rows passing the pushed-down filters, in storage order) to fn
// without reading that table: one call per row group's surviving rows
// (or per fragment whose count an index decided), n rows, cols[k] the
// Arrow column of props[k] (nil: a property the stored table lacks,
// null in every row; all nil when props is empty). ok is false when m
// does not defer typ's table (it is read whole or absent): read Nodes.
//
// The columns are valid only during the call.
func (m *Mem) ScanColumns(ctx context.Context, typ string, props []string, fn func(n int, cols []arrow.Array) error) (bool, error) {
	lz := m.lazy
	if lz == nil || lz.nt.Name != typ {
		return false, nil
	}
	sch := lz.st.Schema()
	var read []string
	at := make([]int, len(props)) // index in read, -1 when not stored
	for k, p := range props {
		at[k] = -1
		if sch.Index(p) < 0 {
			continue
		}
		for j, r := range read {
			if r == p {
				at[k] = j
			}
		}
		if at[k] < 0 {
			at[k] = len(read)
			read = append(read, p)
		}
	}
	cols := make([]arrow.Array, len(props))
	var countErr error // a count callback cannot stop the scan: its first error is kept
	err := lz.pp.snap.filteredScan(ctx, lz.st, read, lz.filters, false, func(rec arrow.RecordBatch, _ string, _ []int64) error {
		for k, j := range at {
			cols[k] = nil
			if j >= 0 {
				cols[k] = rec.Column(j)
			}
		}
		return fn(int(rec.NumRows()), cols)
	}, func(n int) {
		clear(cols)
		if countErr == nil {
			countErr = fn(n, cols)
		}
	})
	if err == nil {
		err = countErr
	}
	return true, err
}
