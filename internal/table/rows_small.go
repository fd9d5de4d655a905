package table

import (
	"context"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Point reads of small fragments (those of at most tailPrefetch bytes,
// which the first read of the file fetches whole anyway) are answered from
// the fragment's requested columns, decoded once and kept in the reader's
// cache. A group commit leaves a table with a few such fragments (each
// batch's shared one, until compaction merges them), and every keyed
// update of the next batch reads its row's current values from one of
// them: a Parquet open, page seek and decode per write (ReadRows), about a
// tenth of a batch leader's CPU, where one decode per fragment serves the
// whole batch. Fragments are immutable, so the decoded columns are keyed by
// the fragment, the columns asked for and the state's mapping onto the
// file's fields; ReadRows ignores deletion vectors, so no state enters it.

// smallRowsKey is the cache key of fragment f's columns (nil = all) read
// under schema sch. Types are part of it: a column's Arrow type follows the
// state's schema, not the file.
func smallRowsKey(f Fragment, sch Schema, columns []string) string {
	var b strings.Builder
	b.WriteString("table/rows/")
	b.WriteString(f.Key)
	add := func(c Column) {
		b.WriteByte(0)
		b.WriteString(c.Name)
		b.WriteByte(1)
		b.WriteString(c.Type.Kind.String())
		b.WriteByte(1)
		b.WriteString(strconv.FormatBool(c.Type.Nullable))
		b.WriteByte(1)
		b.WriteString(c.Type.Elem.String())
		b.WriteByte(1)
		b.WriteString(strconv.Itoa(c.Type.Dim))
	}
	if columns == nil {
		for _, c := range sch.Columns {
			add(c)
		}
	} else {
		for _, name := range columns {
			if i := sch.Index(name); i >= 0 {
				add(sch.Columns[i])
			} else {
				add(Column{Name: name})
			}
		}
	}
	b.WriteByte(2)
	b.WriteString(strings.Join(f.Fields, "\x00"))
	return b.String()
}

// smallRows is ReadRows for a small fragment f (its deletion vector already
// cleared) through the cache: ok is false when the path does not apply (a
// large fragment, or a reader without a cache budget, where nothing would
// be kept). want is sorted, distinct and in range.
func (r *Reader) smallRows(ctx context.Context, s *State, f Fragment, want []int64, columns []string, mem memory.Allocator) (rec arrow.RecordBatch, ok bool, err error) {
	if f.Bytes > tailPrefetch || f.Rows > smallIDRows || r.cache.Budget() <= 0 || len(want) == 0 {
		return nil, false, nil
	}
	v, err := r.cache.GetOrLoad(ctx, smallRowsKey(f, s.schema, columns), func(ctx context.Context) (any, int64, error) {
		one := &State{schema: s.schema, fragments: []Fragment{f}}
		// Go-allocated: the cached record is never released (buffers of
		// the Go allocator are the collector's), callers get slices of it.
		sc, err := r.Scan(ctx, one, ScanOptions{Columns: columns, Alloc: memory.DefaultAllocator})
		if err != nil {
			return nil, 0, err
		}
		defer sc.Close()
		all, err := collect(sc, memory.DefaultAllocator)
		if err != nil {
			return nil, 0, err
		}
		if all.NumRows() != f.Rows {
			all.Release()
			return nil, 0, corrupt(f.Key, 0, "fragment holds fewer rows than its state says", nil)
		}
		return all, recordBytes(all), nil
	})
	if err != nil {
		return nil, true, err
	}
	all := v.(arrow.RecordBatch)
	// Runs of consecutive offsets are one slice each.
	var parts []arrow.RecordBatch
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && want[j] == want[j-1]+1 {
			j++
		}
		parts = append(parts, all.NewSlice(want[i], want[j-1]+1))
		i = j
	}
	out, err := concat(parts, all.Schema(), mem)
	return out, true, err
}

// recordBytes is the memory the buffers of rec hold, for the cache budget.
func recordBytes(rec arrow.RecordBatch) int64 {
	n := int64(64)
	var add func(d arrow.ArrayData)
	add = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			add(c)
		}
		if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
			add(dict)
		}
	}
	for _, c := range rec.Columns() {
		add(c.Data())
	}
	return n
}
