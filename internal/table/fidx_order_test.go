package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestIDOrderListsRowsByID: IDOrder yields every row of a fragment once,
// in ascending id order with its offset, and stops when told to; a
// fragment without an index reports ok false.
func TestIDOrderListsRowsByID(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(8, 9))
	st := storage.NewMem()
	s := randomEdgeTable(t, r, st, 3, 1200, 200)
	rd := NewReader(st, nil)
	byFrag := map[string]map[int64]string{}
	sc, err := Scan(ctx, st, s, ScanOptions{Columns: []string{KeyColumn}, RowOffsets: true})
	if err != nil {
		t.Fatal(err)
	}
	for sc.Next() {
		f := sc.Fragment()
		if byFrag[f] == nil {
			byFrag[f] = map[int64]string{}
		}
		for j, off := range sc.Offsets() {
			byFrag[f][off] = Value(sc.Record().Column(0), j).(string)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sc.Close()
	for _, f := range s.Fragments() {
		var ids []string
		seen := map[int64]bool{}
		ok, err := rd.IDOrder(ctx, f, func(id string, off int64) bool {
			if seen[off] {
				t.Fatalf("offset %d twice", off)
			}
			seen[off] = true
			if want, live := byFrag[f.Key][off]; live && want != id {
				t.Fatalf("offset %d: id %q, want %q", off, id, want)
			}
			ids = append(ids, id)
			return true
		})
		if err != nil || ok != (f.Index != "") {
			t.Fatal(ok, err)
		}
		if !ok {
			continue // an unindexed fragment: the caller reads its id column
		}
		if int64(len(ids)) != f.Rows || !slices.IsSorted(ids) {
			t.Fatalf("%d ids (fragment has %d), sorted %v", len(ids), f.Rows, slices.IsSorted(ids))
		}
		n := 0
		if _, err := rd.IDOrder(ctx, f, func(string, int64) bool { n++; return n < 5 }); err != nil || n != 5 {
			t.Fatal(fmt.Sprint("stop after 5: ", n, err))
		}
	}
}

// TestIDOrderReadsRuns pins a cold full walk's cost: the header, the
// directory, then one ranged read per run of blocks, runs doubling from
// one block up to idOrderRun.
func TestIDOrderReadsRuns(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	s := randomEdgeTable(t, rand.New(rand.NewPCG(4, 5)), st, 1, 20000, 20000)
	for _, f := range s.Fragments() {
		if f.Index == "" {
			continue
		}
		cnt := storage.NewCounting(st)
		rd := NewReader(cnt, nil)
		n := 0
		if ok, err := rd.IDOrder(ctx, f, func(string, int64) bool { n++; return true }); err != nil || !ok {
			t.Fatal(ok, err)
		}
		got := cnt.Snapshot().Requests()
		h, _ := rd.fidxHeader(ctx, f)
		d, _ := rd.fidxDir(ctx, f, h.section(SectionID))
		runs := 0
		for i, run := 0, 1; i < len(d.first); i, run = i+run, min(2*run, idOrderRun) {
			runs++
		}
		if got > int64(2+runs) || int64(n) != f.Rows {
			t.Errorf("fragment of %d rows, %d blocks: %d requests, want ≤ %d", f.Rows, len(d.first), got, 2+runs)
		}
		t.Logf("%d rows, %d blocks: %d requests", f.Rows, len(d.first), got)
	}
}
