package table

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// overlappingFragments is a table of eight small fragments whose id ranges
// all overlap (a group commit's batch fragments: every one spans the rows
// of its batch), so statistics rule none out; fragment 3 holds "q05" twice.
func overlappingFragments(t *testing.T, st storage.Store) *State {
	t.Helper()
	s, err := NewState(personSchema())
	if err != nil {
		t.Fatal(err)
	}
	for k := range 8 {
		var rows [][]any
		for j := range 6 {
			rows = append(rows, []any{fmt.Sprintf("q%02d", j*8+k), fmt.Sprintf("n%d", k), int64(j)})
		}
		if k == 3 {
			rows = append(rows, []any{"q05", "dup", nil})
		}
		rows = append(rows, []any{"q00", "lo", nil}, []any{"q99", "hi", nil}) // every range spans q00..q99
		if s, err = s.Append(writeRows(t, st, personSchema(), rows, WriteOptions{Alloc: checkedAlloc(t)})); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestSmallLocateMatchesScan: Locate over small fragments (answered from
// their cached id columns) returns exactly what scanning them returns,
// under two states hiding different rows of the same fragments (the cache
// is per fragment, the vector per state), and a repeated Locate makes no
// request at all.
func TestSmallLocateMatchesScan(t *testing.T) {
	ctx := context.Background()
	cnt := storage.NewCounting(storage.NewMem())
	s := overlappingFragments(t, cnt)
	fr := s.Fragments()
	for _, f := range fr {
		if useIndex(f) || f.Rows > smallIDRows {
			t.Fatalf("fragment %s (%d bytes) is not small", f.Key, f.Bytes)
		}
	}
	hidden, err := DeleteRowsWith(ctx, cnt, testPrefix, s, map[string][]int64{fr[3].Key: {6}, fr[5].Key: {0, 2}}, DeleteOptions{InlineBytes: DefaultInlineDVBytes})
	if err != nil {
		t.Fatal(err)
	}
	object, err := DeleteRowsWith(ctx, cnt, testPrefix, s, map[string][]int64{fr[0].Key: {1}, fr[3].Key: {0}}, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(cnt, cache.New[any](64<<20))
	idSets := [][]string{{"q05"}, {"q13", "q21", "nope"}, {"q00", "q99"}, {"q40", "q05", "q40"}, {"zz"}}
	for _, st := range []struct {
		name string
		s    *State
	}{{"no vectors", s}, {"inline vectors", hidden}, {"vector objects", object}} {
		for _, ids := range idSets {
			t.Run(fmt.Sprintf("%s/%v", st.name, ids), func(t *testing.T) {
				var want []RowLoc
				for _, f := range st.s.Fragments() {
					got, err := r.scanLocate(ctx, st.s, f, uniqueSorted(ids))
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, got...)
				}
				got, err := r.Locate(ctx, st.s, ids)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("Locate %v:\n got  %+v\n want %+v", ids, got, want)
				}
				cnt.Reset()
				if again, err := r.Locate(ctx, st.s, ids); err != nil || !reflect.DeepEqual(again, want) {
					t.Fatalf("repeated Locate: %+v %v", again, err)
				}
				if n := cnt.Snapshot().Requests(); n != 0 {
					t.Errorf("repeated Locate made %d requests, want 0", n)
				}
			})
		}
	}
}

func uniqueSorted(ids []string) []string {
	m := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !m[id] {
			m[id] = true
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
