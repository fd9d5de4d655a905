package table

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestScanRowsRestriction: a scan restricted to row offsets (an index's
// candidates) returns exactly the rows of the full scan at those offsets
// that the deletion vector keeps and the filters pass, in offset order;
// LiveRows drops the deleted offsets alike.
func TestScanRowsRestriction(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	ctx := context.Background()
	schema := allTypesSchema()
	r := rand.New(rand.NewPCG(3, 4))
	const n = 500
	s, f := allTypesFragment(t, st, mem, r, n)
	deleted := []int64{0, 36, 37, 250, 499}
	sDel, err := DeleteRows(ctx, st, testPrefix, s, map[string][]int64{f.Key: deleted})
	if err != nil {
		t.Fatal(err)
	}
	fDel := sDel.Fragments()[0]
	all, _ := scanAll(t, st, s, ScanOptions{Alloc: mem, RowOffsets: true})
	filter := Filter{Column: "i64", Op: OpGe, Value: int64(0)}
	passes := func(row []any) bool { v, ok := row[schema.Index("i64")].(int64); return ok && v >= 0 }
	sorted := func(k int) []int64 {
		out := make([]int64, k)
		for i := range out {
			out[i] = r.Int64N(n)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	rd := NewReader(st, nil)
	for _, tc := range []struct {
		name    string
		rows    []int64
		filters []Filter
	}{
		{"few", []int64{1, 2, 36, 38, 400}, nil},
		{"many in one row group", sorted(300), nil},
		{"with a filter", sorted(120), []Filter{filter}},
		{"deleted only", deleted, nil},
		{"none", []int64{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Scan(ctx, st, sDel, ScanOptions{Alloc: mem, Rows: tc.rows, Filters: tc.filters, RowOffsets: true})
			if err != nil {
				t.Fatal(err)
			}
			got, offs, _ := drainWithOffsets(t, sc)
			var want [][]any
			var wantOffs []int64
			for _, o := range tc.rows {
				if slices.Contains(deleted, o) || (tc.filters != nil && !passes(all[o])) {
					continue
				}
				want, wantOffs = append(want, all[o]), append(wantOffs, o)
			}
			if !slices.Equal(offs, wantOffs) || !reflect.DeepEqual(got, want) && len(want) > 0 {
				t.Fatalf("offsets %v, want %v", offs, wantOffs)
			}
			live, err := rd.LiveRows(ctx, fDel, tc.rows)
			if err != nil {
				t.Fatal(err)
			}
			var wantLive []int64
			for _, o := range tc.rows {
				if !slices.Contains(deleted, o) {
					wantLive = append(wantLive, o)
				}
			}
			if len(live) != len(wantLive) || len(live) > 0 && !slices.Equal(live, wantLive) {
				t.Fatalf("live %v, want %v", live, wantLive)
			}
		})
	}
	// Bad restrictions are typed errors, before any read.
	two, err := s.Append(writeRows(t, st, schema, randomAllTypesRows(r, 3), WriteOptions{Alloc: mem}))
	if err != nil {
		t.Fatal(err)
	}
	var roe *RowOffsetError
	for _, tc := range []struct {
		name  string
		state *State
		rows  []int64
		check func(error) bool
	}{
		{"two fragments", two, []int64{1}, func(err error) bool { return errors.Is(err, ErrValue) }},
		{"out of range", s, []int64{3, n}, func(err error) bool { return errors.As(err, &roe) && roe.Offset == n }},
		{"negative", s, []int64{-1}, func(err error) bool { return errors.As(err, &roe) }},
		{"not ascending", s, []int64{4, 4}, func(err error) bool { return errors.Is(err, ErrValue) }},
	} {
		if _, err := Scan(ctx, st, tc.state, ScanOptions{Rows: tc.rows}); err == nil || !tc.check(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// allTypesFragment writes n random rows of allTypesSchema (row groups of
// 37 rows) as one fragment and returns its one-fragment state.
func allTypesFragment(t *testing.T, st storage.Store, mem memory.Allocator, r *rand.Rand, n int) (*State, Fragment) {
	t.Helper()
	f := writeRows(t, st, allTypesSchema(), randomAllTypesRows(r, n), WriteOptions{Alloc: mem, RowGroupRows: 37})
	return stateOf(t, allTypesSchema(), f), f
}
