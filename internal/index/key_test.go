package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const prefix = "tables/node-Person"

var personSchema = table.Schema{Columns: []table.Column{
	{Name: "id", Type: table.ColumnType{Kind: table.String}},
	{Name: "age", Type: table.ColumnType{Kind: table.I64, Nullable: true}},
}}

// tenFragments writes 10 fragments of 10 rows each (ids "p<f>-<r>", but with
// interleaved names so statistics cannot prune most of them) and returns
// the state.
func tenFragments(t *testing.T, st storage.Store) *table.State {
	t.Helper()
	ctx := context.Background()
	s, err := table.NewState(personSchema)
	if err != nil {
		t.Fatal(err)
	}
	for f := range 10 {
		b, err := table.NewBatchBuilder(nil, personSchema)
		if err != nil {
			t.Fatal(err)
		}
		// "a…" and "z…" in every fragment: every fragment's id range is wide.
		for r := range 10 {
			id := fmt.Sprintf("m%d-%d", f, r)
			switch r {
			case 0:
				id = fmt.Sprintf("a%d", f)
			case 9:
				id = fmt.Sprintf("z%d", f)
			}
			if err := b.Append([]any{id, int64(f*10 + r)}); err != nil {
				t.Fatal(err)
			}
		}
		rec := b.NewRecord()
		b.Release()
		frag, err := table.WriteFragment(ctx, st, prefix, personSchema, rec, table.WriteOptions{})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if s, err = s.Append(frag); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestKeyIndexRoundTrip(t *testing.T) {
	in := []FragmentIDs{
		{Key: "f1", IDs: []string{"b", "a", "c"}},
		{Key: "f2", IDs: []string{"a", "d"}, Offsets: []int64{4, 7}},
		{Key: "f3", IDs: []string{}},
	}
	data, err := EncodeKey(in)
	if err != nil {
		t.Fatal(err)
	}
	k, err := DecodeKey("k", data)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id   string
		want []Loc
	}{
		{"a", []Loc{{"f1", 1}, {"f2", 4}}},
		{"b", []Loc{{"f1", 0}}},
		{"d", []Loc{{"f2", 7}}},
		{"zz", nil},
		{"", nil},
	}
	for _, tc := range tests {
		if got := k.Lookup(tc.id); !slices.Equal(got, tc.want) {
			t.Errorf("Lookup(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
	if k.Len() != 5 || !slices.Equal(k.Fragments(), []string{"f1", "f2", "f3"}) {
		t.Fatalf("len %d fragments %v", k.Len(), k.Fragments())
	}
	again, _ := EncodeKey(in)
	if string(again) != string(data) {
		t.Fatal("encoding is not deterministic")
	}
}

// TestKeyIndexCorrupt: every truncation and every single-byte flip of an
// index is a typed error, never a panic.
func TestKeyIndexCorrupt(t *testing.T) {
	data, err := EncodeKey([]FragmentIDs{{Key: "tables/x/data/F.parquet", IDs: []string{"alice", "bob", "carol"}}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) {
		if _, err := DecodeKey("k", data[:n]); !typedCorrupt(err) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	for i := range data {
		b := slices.Clone(data)
		b[i] ^= 0x40
		if _, err := DecodeKey("k", b); !typedCorrupt(err) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
}

// TestLookupMatchesScan: index-narrowed lookups return exactly what a full
// lookup returns — also for fragments the index does not cover and for rows
// a later deletion vector hides — and open fewer fragments.
func TestLookupMatchesScan(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	st := storage.NewCounting(mem)
	s := tenFragments(t, st)
	frags := s.Fragments()
	// Index the first six fragments; the last four stay unindexed.
	ids, err := FragmentIDsOf(ctx, st, s, frags[:6])
	if err != nil {
		t.Fatal(err)
	}
	ref, err := WriteKey(ctx, st, prefix, ids)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.WithIndexes([]table.IndexRef{ref}); err != nil {
		t.Fatal(err)
	}
	// A deletion after the index was built: the index still lists m2-3.
	if s, _, err = table.Delete(ctx, st, prefix, s, []string{"m2-3"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ids    []string
		opened int64 // fragments opened (one ranged read each); a plain lookup opens all 10
	}{
		{[]string{"m3-4"}, 5},       // its indexed fragment + the 4 unindexed ones
		{[]string{"m2-3"}, 5},       // indexed but deleted: read, then hidden by the scan
		{[]string{"m8-1"}, 4},       // no indexed fragment holds it
		{[]string{"a1", "m9-9"}, 5}, // one indexed hit + the unindexed fragments
		{[]string{"nope"}, 4},       // no indexed fragment is read
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.ids), func(t *testing.T) {
			want, err := table.LookupIDs(ctx, mem, s, tc.ids, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			before := st.Snapshot()
			got, err := LookupIDs(ctx, st, s, tc.ids, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			d := st.Snapshot().Sub(before)
			if got.NumRows() != want.NumRows() {
				t.Fatalf("rows %d, want %d", got.NumRows(), want.NumRows())
			}
			for i := range int(got.NumRows()) {
				if g, w := table.Value(got.Column(0), i), table.Value(want.Column(0), i); g != w {
					t.Fatalf("row %d: %v, want %v", i, g, w)
				}
			}
			// Wide id ranges defeat the statistics: each fragment opened is one
			// ranged read.
			if opened := d[storage.OpGetRange].Requests; opened != tc.opened {
				t.Fatalf("opened %d fragments, want %d (%+v)", opened, tc.opened, d)
			}
		})
	}
}

// typedCorrupt reports whether err is the typed refusal of a damaged
// index object: a *table.CorruptError or *table.VersionError.
func typedCorrupt(err error) bool {
	var ce *table.CorruptError
	var ve *table.VersionError
	return errors.As(err, &ce) || errors.As(err, &ve)
}
