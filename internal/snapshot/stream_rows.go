package snapshot

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Batch is a window of a table's live rows in storage order, as a
// streaming scan returns them (ScanBatches): row i is ID(i) (with Src(i),
// Dst(i) for edges) and Value(i, k) is property props[k] of it, in the
// value model (nil is null; a property the stored table lacks reads as
// null, exactly as in a decoded image).
//
// A Batch is valid only during the callback that receives it.
type Batch struct {
	n             int
	ids, src, dst *array.String
	props         []*schema.Property
	arrs          []arrow.Array // per property; nil where the stored table lacks it
}

// Len returns the rows in the batch.
func (b *Batch) Len() int { return b.n }

// ID returns row i's id.
func (b *Batch) ID(i int) string { return b.ids.Value(i) }

// Src returns edge row i's source id.
func (b *Batch) Src(i int) string { return b.src.Value(i) }

// Dst returns edge row i's destination id.
func (b *Batch) Dst(i int) string { return b.dst.Value(i) }

// Value returns property k (an index into the props ScanBatches was given)
// of row i.
func (b *Batch) Value(i, k int) any {
	if a := b.arrs[k]; a != nil {
		return value.FromColumn(b.props[k].Type, table.Value(a, i))
	}
	return nil
}

// AppendExport appends property k of row i as the export writes it (the
// bytes of value.AppendExportJSON of Value(i, k)); ok is false, and dst
// unchanged, for a null. Strings, integers, booleans and doubles are
// written straight from their column without a boxed value
// (TestBatchAppendExportMatchesValue).
func (b *Batch) AppendExport(dst []byte, i, k int) (out []byte, ok bool, err error) {
	a := b.arrs[k]
	if a == nil || a.IsNull(i) {
		return dst, false, nil
	}
	t := b.props[k].Type
	switch x := a.(type) {
	case *array.String:
		if t.Kind == schema.KindString || t.Kind == schema.KindEnum {
			return value.AppendJSONString(dst, x.Value(i)), true, nil
		}
	case *array.Int64:
		if t.Kind == schema.KindI64 || t.Kind == schema.KindI32 {
			return strconv.AppendInt(dst, x.Value(i), 10), true, nil
		}
	case *array.Int32:
		if t.Kind == schema.KindI32 || t.Kind == schema.KindI64 {
			return strconv.AppendInt(dst, int64(x.Value(i)), 10), true, nil
		}
	case *array.Boolean:
		if t.Kind == schema.KindBool {
			return strconv.AppendBool(dst, x.Value(i)), true, nil
		}
	case *array.Float64:
		if t.Kind == schema.KindF64 {
			return value.AppendJSONFloat(dst, x.Value(i)), true, nil
		}
	}
	out, err = value.AppendExportJSON(dst, t, b.Value(i, k))
	return out, err == nil, err
}

// ScanBatches streams the live rows of table tk (a node or edge table key)
// to fn, one Parquet row group's worth at most per call, without building
// or caching the table's image: memory stays at one batch whatever the
// table's size. props are the properties to decode (the catalog's, in
// the order Batch.Value indexes them). Rows come in the order of the
// table's image (TestScanBatchesMatchImage).
func (s *Snapshot) ScanBatches(ctx context.Context, tk string, props []*schema.Property, edge bool, fn func(*Batch) error) error {
	st, err := s.State(ctx, tk)
	if err != nil {
		return err
	}
	sc, err := s.l.tr.Scan(ctx, st, table.ScanOptions{})
	if err != nil {
		return err
	}
	defer sc.Close()
	schemaCols := st.Schema().Columns
	// Where each wanted column stands in the stored schema (-1: absent).
	at := make([]int, len(props))
	for k, p := range props {
		at[k] = st.Schema().Index(p.Name)
	}
	b := &Batch{props: props, arrs: make([]arrow.Array, len(props))}
	for sc.Next() {
		rec := sc.Record()
		b.n = int(rec.NumRows())
		for ci, c := range schemaCols {
			var dst **array.String
			switch {
			case c.Name == table.KeyColumn:
				dst = &b.ids
			case edge && c.Name == "src":
				dst = &b.src
			case edge && c.Name == "dst":
				dst = &b.dst
			default:
				continue
			}
			arr, ok := rec.Column(ci).(*array.String)
			if !ok {
				return fmt.Errorf("%w: table %s column %s is %s, not a string", table.ErrCorrupt, tk, c.Name, rec.Column(ci).DataType())
			}
			*dst = arr
		}
		for k := range props {
			b.arrs[k] = nil
			if at[k] >= 0 {
				b.arrs[k] = rec.Column(at[k])
			}
		}
		if err := fn(b); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return sc.Err()
}
