package table

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSortRowsMatchesPlainSort pins that the prefix sort of index
// sections yields exactly the (key, row) order of a plain stable sort, for
// keys that share long prefixes, differ only past 8 bytes, are shorter
// than 8 bytes, hold NUL bytes, repeat (adjacency sections) or arrive
// sorted.
func TestSortRowsMatchesPlainSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := map[string]func(i int) string{
		"short":        func(i int) string { return fmt.Sprintf("p%d", rng.IntN(1000)) },
		"ulid-like":    func(i int) string { return fmt.Sprintf("01JQZX%04d%016d", rng.IntN(50), rng.Int64N(1e16)) },
		"past-8-bytes": func(i int) string { return fmt.Sprintf("commonprefix-%03d-x", rng.IntN(300)) },
		"nul-and-empty": func(i int) string {
			return [...]string{"", "\x00", "a", "a\x00", "a\x00\x00", "ab", "\xff", "a\x01"}[rng.IntN(8)]
		},
		"duplicates":    func(i int) string { return fmt.Sprintf("k%d", rng.IntN(3)) },
		"sorted":        func(i int) string { return fmt.Sprintf("n%08d", i) },
		"mixed-lengths": func(i int) string { return string(make([]byte, rng.IntN(12))) + fmt.Sprint(rng.IntN(9)) },
		"utf8-and-high": func(i int) string {
			return [...]string{"é", "e", "ü1", "\u00ff\u00ff", "z"}[rng.IntN(5)] + fmt.Sprint(rng.IntN(4))
		},
		"one-distinct":   func(i int) string { return "same-key-for-all-rows" },
		"long-shared-18": func(i int) string { return fmt.Sprintf("aaaaaaaaaaaaaaaaaa%d", rng.IntN(100)) },
	}
	for name, key := range gen {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{0, 1, 2, 7, 500, 3000} {
				bld := array.NewStringBuilder(memory.DefaultAllocator)
				keys := make([]string, n)
				for i := range keys {
					keys[i] = key(i)
					bld.Append(keys[i])
				}
				col := bld.NewStringArray()
				want := make([]int32, n)
				for i := range want {
					want[i] = int32(i)
				}
				slices.SortStableFunc(want, func(a, b int32) int { return strings.Compare(keys[a], keys[b]) })
				var sc fidxScratch
				got := sc.sortRows(newStrView(col), n)
				col.Release()
				if !slices.Equal(got, want) {
					for i := range want {
						if i >= len(got) || got[i] != want[i] {
							t.Fatalf("n=%d: position %d holds row %v, want row %d (%q)", n, i, got[min(i, len(got)-1):], want[i], keys[want[i]])
						}
					}
					t.Fatalf("n=%d: %d rows, want %d", n, len(got), len(want))
				}
			}
		})
	}
}

// TestFNV64aMatchesHashFNV pins that the in-place Bloom hash is the
// hash/fnv one the written indexes were built with.
func TestFNV64aMatchesHashFNV(t *testing.T) {
	for _, s := range []string{"", "a", "p123456", "01JQZX0000000000000000000", "\x00\xff é"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := fnv64a(s), h.Sum64(); got != want {
			t.Errorf("fnv64a(%q) = %x, want %x", s, got, want)
		}
	}
}

// BenchmarkEncodeFragmentIndexEdges encodes the index of one full load
// fragment of edges: ids in order, sources grouped, destinations random.
func BenchmarkEncodeFragmentIndexEdges(b *testing.B) {
	schema := edgeKeySchema()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema())
	defer rb.Release()
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1 << 16
	for i := range n {
		rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("01JQZX%020d", i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("p%d", 100000+i/5))
		rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("p%d", rng.IntN(1_000_000)))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	b.ReportAllocs()
	for b.Loop() {
		encodeFragmentIndex(schema, rec)
	}
}

// edgeKeySchema is an edge table of the three key columns alone.
func edgeKeySchema() Schema {
	return Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "src", Type: ColumnType{Kind: String}},
		{Name: "dst", Type: ColumnType{Kind: String}},
	}}
}

// TestCommonPrefix pins the word-at-a-time prefix length against the
// byte loop, at every split of strings up to 20 bytes.
func TestCommonPrefix(t *testing.T) {
	base := "0123456789abcdefghij"
	for n := 0; n <= len(base); n++ {
		for at := 0; at <= n; at++ {
			a := base[:n]
			b := []byte(a)
			want := n
			if at < n {
				b[at] ^= 0x40
				want = at
			}
			for _, pair := range [][2]string{{a, string(b)}, {string(b), a}, {a, a[:at]}} {
				w := want
				if len(pair[1]) < len(pair[0]) && pair[1] == a[:at] {
					w = at
				}
				if got := commonPrefix(pair[0], pair[1]); got != w {
					t.Fatalf("commonPrefix(%q, %q) = %d, want %d", pair[0], pair[1], got, w)
				}
			}
		}
	}
}

// TestKeysAscendMatchesCompare pins the prefix-based order check of
// sortRows to string comparison, on prefixes of one another, equal and
// empty keys, and keys that differ in every word of a long shared prefix.
func TestKeysAscendMatchesCompare(t *testing.T) {
	words := []string{"", "a", "ab", "abc", "b", "ba", "01JQZX0000000000000000000A", "01JQZX0000000000000000000B",
		"01JQZX000000000000000000", "01JQZX1000000000000000000A", "p1", "p10", "p2", "\xff", "\x00"}
	for _, a := range words {
		for _, b := range words {
			for _, c := range words {
				keys := []string{a, b, c}
				bld := array.NewStringBuilder(memory.DefaultAllocator)
				bld.AppendValues(keys, nil)
				col := bld.NewStringArray()
				bld.Release()
				want := a <= b && b <= c
				if got := keysAscend(newStrView(col), 3); got != want {
					t.Errorf("keysAscend(%q) = %v, want %v", keys, got, want)
				}
				if got, want := keysAscend(newStrView(col), 2), a <= b; got != want {
					t.Errorf("keysAscend(%q) = %v, want %v", keys[:2], got, want)
				}
				col.Release()
			}
		}
	}
}
