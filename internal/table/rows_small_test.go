package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestSmallReadRowsCached: ReadRows of a small fragment through a reader
// with a cache returns exactly what the uncached page-granular read
// returns (every column type, nulls, projections,
// runs and gaps of offsets, deleted rows), a repeated read of any offsets
// of the same columns makes no request, and nothing it hands out leaks
// (the caller's checked allocator ends at zero).
func TestSmallReadRowsCached(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	cnt := storage.NewCounting(storage.NewMem())
	r := rand.New(rand.NewPCG(3, 4))
	const n = 14
	f := writeRows(t, cnt, allTypesSchema(), randomAllTypesRows(r, n), WriteOptions{Alloc: mem})
	s := stateOf(t, allTypesSchema(), f)
	if f.Bytes > tailPrefetch || f.Rows > smallIDRows {
		t.Fatalf("fragment of %d bytes, %d rows is not small", f.Bytes, f.Rows)
	}
	sDel, err := DeleteRows(ctx, cnt, testPrefix, s, map[string][]int64{f.Key: {0, 7, 8}})
	if err != nil {
		t.Fatal(err)
	}
	rd := NewReader(cnt, cache.New[any](64<<20))
	tests := []struct {
		name    string
		state   *State
		offsets []int64
		columns []string
	}{
		{"one row", s, []int64{11}, nil},
		{"first and last", s, []int64{n - 1, 0}, nil},
		{"a run", s, []int64{3, 4, 5, 6, 10}, nil},
		{"gaps and repeats", s, []int64{12, 2, 3, 12, 9, 4}, nil},
		{"projection", s, []int64{5, 6, 11}, []string{"tags", "id", "v"}},
		{"other projection", s, []int64{5}, []string{"dt"}},
		{"deleted rows are returned", sDel, []int64{0, 7, 8, 9}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := ReadRows(ctx, storage.NewMem(), tc.state, f.Key, tc.offsets, tc.columns, mem) // wrong store: must not be read
			if err == nil {
				want.Release()
				t.Fatal("reading another store found the fragment")
			}
			want, err = ReadRows(ctx, cnt, tc.state, f.Key, tc.offsets, tc.columns, mem) // no cache: the page path
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			for round := range 2 {
				cnt.Reset()
				got, err := rd.ReadRows(ctx, tc.state, f.Key, tc.offsets, tc.columns, mem)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Schema().Equal(want.Schema()) {
					t.Fatalf("schema %v, want %v", got.Schema(), want.Schema())
				}
				if g, w := rowsOf(got), rowsOf(want); !reflect.DeepEqual(g, w) {
					t.Fatalf("round %d:\n got  %v\n want %v", round, g, w)
				}
				got.Release()
				if n := cnt.Snapshot().Requests(); round > 0 && n != 0 {
					t.Errorf("repeated read made %d requests, want 0", n)
				}
			}
		})
	}
	// Other offsets of columns already decoded: no request either.
	cnt.Reset()
	for off := range int64(n) {
		rec, err := rd.ReadRows(ctx, s, f.Key, []int64{off}, nil, mem)
		if err != nil {
			t.Fatal(err)
		}
		if rec.NumRows() != 1 || fmt.Sprint(Value(rec.Column(0), 0)) != fmt.Sprintf("id%06d", off) {
			t.Fatalf("offset %d: %v", off, rowsOf(rec))
		}
		rec.Release()
	}
	if n := cnt.Snapshot().Requests(); n != 0 {
		t.Errorf("reading every row one by one made %d requests, want 0", n)
	}
}
