package table

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func edgeSchema() Schema {
	return Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "src", Type: ColumnType{Kind: String}},
		{Name: "dst", Type: ColumnType{Kind: String}},
		{Name: "w", Type: ColumnType{Kind: I64, Nullable: true}},
	}}
}

// randomEdgeTable writes nfrag fragments of random edges over nodes
// n0..n(nodes-1) (node n0 is a hub with hundreds of edges, so its entries
// span index blocks), deletes some rows, and strips the index of one
// fragment (a fragment written before indexes existed).
func randomEdgeTable(t *testing.T, r *rand.Rand, st storage.Store, nfrag, rows, nodes int) *State {
	t.Helper()
	return randomEdgeTableWith(t, r, st, nfrag, rows, nodes, WriteOptions{RowGroupRows: 97})
}

// randomEdgeTableWith is randomEdgeTable writing fragments with o.
func randomEdgeTableWith(t *testing.T, r *rand.Rand, st storage.Store, nfrag, rows, nodes int, o WriteOptions) *State {
	t.Helper()
	ctx := context.Background()
	s, _ := NewState(edgeSchema())
	id := 0
	for f := range nfrag {
		var in [][]any
		for range rows {
			src, dst := fmt.Sprintf("n%d", r.IntN(nodes)), fmt.Sprintf("n%d", r.IntN(nodes))
			if r.IntN(3) == 0 {
				src = "n0"
			}
			in = append(in, []any{fmt.Sprintf("e%05d", id), src, dst, int64(id)})
			id++
		}
		frag := writeRows(t, st, edgeSchema(), in, o)
		if frag.Index == "" {
			t.Fatal("edge fragment written without an index")
		}
		if f == 1 {
			frag.Index, frag.IndexBytes = "", 0
		}
		var err error
		if s, err = s.Append(frag); err != nil {
			t.Fatal(err)
		}
	}
	del := map[string][]int64{}
	for _, f := range s.Fragments() {
		for range rows / 10 {
			del[f.Key] = append(del[f.Key], r.Int64N(int64(rows)))
		}
	}
	s, err := DeleteRows(ctx, st, testPrefix, s, del)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFragmentIndexMatchesScan pins that Locate, Adjacent and LookupIDs
// through fragment indexes return exactly what scans with filters return:
// hubs spanning blocks, absent keys, deleted rows, an unindexed fragment,
// with and without a cache.
func TestFragmentIndexMatchesScan(t *testing.T) {
	for _, v := range []byte{fidxVersion, 2, 1} {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) { fragmentIndexMatchesScan(t, v, 0) })
	}
	// Every index carried inline in the state (format 5; the bound is
	// raised so that fragments large enough for lookups to go through
	// their indexes have inline ones): the same answers, no index object.
	t.Run("inline", func(t *testing.T) { fragmentIndexMatchesScan(t, fidxVersion, 1<<20) })
}

// fragmentIndexMatchesScan writes indexes of the given version (1: the
// uncompressed blocks of graphs written before version 2; 2: the packed
// 256-entry blocks of graphs written before version 3; both still read),
// inline in the state up to inline bytes.
func fragmentIndexMatchesScan(t *testing.T, version byte, inline int) {
	defer func(v byte) { fidxWriteVersion = v }(fidxWriteVersion)
	fidxWriteVersion = version
	ctx := context.Background()
	mem := checkedAlloc(t)
	r := rand.New(rand.NewPCG(3, 4))
	st := storage.NewMem()
	const nodes = 300
	s := randomEdgeTableWith(t, r, st, 4, 900, nodes, WriteOptions{RowGroupRows: 97, InlineIndexBytes: inline})
	if inline > 0 {
		// Through the state's encoding, as a reader gets it.
		data, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if s, err = DecodeState("inline", data); err != nil {
			t.Fatal(err)
		}
		n := 0
		_ = st.List(ctx, testPrefix+"/index/", "", func(storage.Info) error { n++; return nil })
		if n != 0 || !slices.ContainsFunc(s.Fragments(), func(f Fragment) bool { return IsInlineIndex(f.Index) && f.Bytes > tailPrefetch }) {
			t.Fatalf("%d index objects; want none, and fragments read through inline indexes", n)
		}
	}
	for _, f := range s.Fragments() {
		if f.Index == "" {
			continue
		}
		if err := VerifyFragmentIndex(ctx, st, f); err != nil {
			t.Fatal(err)
		}
		if inline > 0 {
			continue
		}
		if b, _, _ := st.Get(ctx, f.Index); b[4] != version {
			t.Fatalf("index %s has version %d, want %d", f.Index, b[4], version)
		}
	}
	rows, _ := scanAll(t, st, s, ScanOptions{Alloc: mem, RowOffsets: true})
	for _, rd := range []*Reader{NewReader(st, nil), NewReader(st, cache.New[any](1<<20))} {
		for trial := range 40 {
			var probe []string
			for range 1 + trial%5 {
				probe = append(probe, fmt.Sprintf("n%d", r.IntN(nodes+20))) // some absent
			}
			if trial%7 == 0 {
				probe = append(probe, "n0")
			}
			for _, end := range []Section{SectionSrc, SectionDst} {
				got, err := rd.Adjacent(ctx, s, end, probe)
				if err != nil {
					t.Fatal(err)
				}
				col := 1
				if end == SectionDst {
					col = 2
				}
				var want []Edge
				for _, row := range rows {
					if slices.Contains(probe, row[col].(string)) {
						want = append(want, Edge{Near: row[col].(string), Far: row[3-col].(string)})
					}
				}
				if len(got) != len(want) {
					t.Fatalf("Adjacent(%v, %v): %d edges, want %d", end, probe, len(got), len(want))
				}
				for i := range got {
					if got[i].Near != want[i].Near || got[i].Far != want[i].Far {
						t.Fatalf("Adjacent edge %d = %+v, want %+v", i, got[i], want[i])
					}
				}
			}
			var ids []string
			for range 1 + trial%4 {
				ids = append(ids, fmt.Sprintf("e%05d", r.IntN(3700)))
			}
			rec, err := rd.LookupIDs(ctx, s, ids, []string{"id", "dst", "w"}, mem)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := Collect(ctx, st, s, ScanOptions{Columns: []string{"id", "dst", "w"}, Filters: []Filter{In("id", ids...)}, Alloc: mem})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := rowsOf(rec), rowsOf(ref); !reflect.DeepEqual(g, w) {
				t.Fatalf("LookupIDs(%v) = %v, want %v", ids, g, w)
			}
			rec.Release()
			ref.Release()
		}
	}
}

// TestFragmentIndexCorruptIsTyped flips every byte of one fragment index:
// a lookup either answers exactly or fails with ErrCorrupt (never panics,
// never answers wrongly); truncation is corruption too.
func TestFragmentIndexCorruptIsTyped(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	var in [][]any
	for i := range 3000 {
		// Random weights keep the fragment larger than one tail read.
		in = append(in, []any{fmt.Sprintf("e%d", i), fmt.Sprintf("n%d", i%17), fmt.Sprintf("n%d", i%23), rand.Int64()})
	}
	f := writeRows(t, st, edgeSchema(), in, WriteOptions{})
	s0, _ := NewState(edgeSchema())
	s, err := s0.Append(f)
	if err != nil {
		t.Fatal(err)
	}
	good, _, err := st.Get(ctx, f.Index)
	if err != nil {
		t.Fatal(err)
	}
	probe := func() (int, error) {
		rd := NewReader(st, nil)
		a, err := rd.Adjacent(ctx, s, SectionSrc, []string{"n3", "n16"})
		if err != nil {
			return 0, err
		}
		b, err := rd.Adjacent(ctx, s, SectionDst, []string{"n5"})
		if err != nil {
			return 0, err
		}
		l, err := rd.Locate(ctx, s, []string{"e7", "e299", "nope"})
		return len(a)*10000 + len(b)*100 + len(l), err
	}
	if !useIndex(f) {
		t.Fatal("fixture fragment too small to be probed through its index")
	}
	want, err := probe()
	// n3 and n16 have 177 + 176 out-edges, n5 131 in-edges; 2 ids exist.
	if err != nil || want != 353*10000+131*100+2 {
		t.Fatalf("clean probe = %d, %v", want, err)
	}
	for i := 0; i < len(good); i += 1 + i/512*(i%199) {
		bad := slices.Clone(good)
		bad[i] ^= 0x5a
		if _, err := st.Put(ctx, f.Index, bad); err != nil {
			t.Fatal(err)
		}
		got, err := probe()
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("flip at %d: err = %v, want corruption", i, err)
		}
		if err == nil && got != want {
			t.Fatalf("flip at %d: answer %d, want %d", i, got, want)
		}
	}
	if _, err := st.Put(ctx, f.Index, good[:len(good)/2]); err != nil {
		t.Fatal(err)
	}
	if _, err := probe(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated index: err = %v, want ErrCorrupt", err)
	}
}

// TestReadRowsSeekMatchesScan reads random single rows of a fragment with
// many pages per column (seek mode) and compares with a full scan, over
// every column type.
func TestReadRowsSeekMatchesScan(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	st := storage.NewMem()
	r := rand.New(rand.NewPCG(5, 6))
	const n = 6000
	f := writeRows(t, st, allTypesSchema(), randomAllTypesRows(r, n), WriteOptions{Alloc: mem, RowGroupRows: 2500})
	s0, _ := NewState(allTypesSchema())
	s, _ := s0.Append(f)
	all, _ := scanAll(t, st, s, ScanOptions{Alloc: mem})
	rd := NewReader(st, cache.New[any](1<<20))
	for range 60 {
		offs := []int64{r.Int64N(n)}
		if r.IntN(2) == 0 {
			offs = append(offs, r.Int64N(n), r.Int64N(n))
		}
		rec, err := rd.ReadRows(ctx, s, f.Key, offs, nil, mem)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(offs)
		offs = slices.Compact(offs)
		got := rowsOf(rec)
		rec.Release()
		for i, o := range offs {
			if !equalRows(got[i], all[o]) {
				t.Fatalf("row %d = %v, want %v", o, got[i], all[o])
			}
		}
	}
}

func equalRows(a, b []any) bool {
	return fmt.Sprintf("%v", a) == fmt.Sprintf("%v", b)
}

// personRecord is a node-table record of rows [lo, hi) shaped like the peer
// graph's Person (id = name = p<i>, age, city, a three-word bio).
func personRecord(lo, hi int) (Schema, arrow.RecordBatch) {
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "name", Type: ColumnType{Kind: String}},
		{Name: "age", Type: ColumnType{Kind: I32, Nullable: true}},
		{Name: "city", Type: ColumnType{Kind: String, Nullable: true}},
		{Name: "bio", Type: ColumnType{Kind: String, Nullable: true}},
	}}
	words := []string{"graph", "agent", "memory", "vector", "branch", "merge", "commit", "query", "schema", "edge", "node", "search"}
	r := rand.New(rand.NewPCG(uint64(lo), 7))
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema())
	defer rb.Release()
	for i := lo; i < hi; i++ {
		name := fmt.Sprintf("p%d", i)
		rb.Field(0).(*array.StringBuilder).Append(name)
		rb.Field(1).(*array.StringBuilder).Append(name)
		rb.Field(2).(*array.Int32Builder).Append(int32(i % 90))
		rb.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("c%d", i%50))
		rb.Field(4).(*array.StringBuilder).Append(words[r.IntN(12)] + " " + words[r.IntN(12)] + " " + words[r.IntN(12)])
	}
	return schema, rb.NewRecordBatch()
}

// bigTable writes rows in fragments of per rows (as a bulk load does) and
// returns the state and the bytes of its data fragments.
func bigTable(t testing.TB, st storage.Store, rows, per int, rec func(lo, hi int) (Schema, arrow.RecordBatch)) (*State, int64) {
	t.Helper()
	ctx := context.Background()
	var s *State
	var total int64
	for lo := 0; lo < rows; lo += per {
		schema, r := rec(lo, min(lo+per, rows))
		if s == nil {
			s, _ = NewState(schema)
		}
		f, err := WriteFragment(ctx, st, testPrefix, schema, r, WriteOptions{})
		r.Release()
		if err != nil {
			t.Fatal(err)
		}
		total += f.Bytes
		if s, err = s.Append(f); err != nil {
			t.Fatal(err)
		}
	}
	return s, total
}

// TestKeyLookupReadsUnderOnePercent pins the cold point-read cost: a key
// lookup of one property of one row of a 1M-row, 16-fragment table shaped
// like the peer graph's Person (the query `$p: Person {name: k}` returning
// `$p.age`) reads under 1% of the table's bytes: one Bloom block per
// fragment, one index directory and block, the hit fragment's footer and
// page index, and one page of the column. Reading every column of the row
// costs a page per column (logged).
func TestKeyLookupReadsUnderOnePercent(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 1M-row table")
	}
	ctx := context.Background()
	cnt := storage.NewCounting(storage.NewMem())
	s, total := bigTable(t, cnt, 1_000_000, 1<<16, personRecord)
	for _, id := range []string{"p333340", "p7", "p999999"} {
		cnt.Reset()
		rec, err := NewReader(cnt, cache.New[any](64<<20)).LookupIDs(ctx, s, []string{id, "absent"}, []string{"age"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		fmt.Sscanf(id, "p%d", &n)
		if rec.NumRows() != 1 || Value(rec.Column(0), 0) != int32(n%90) {
			t.Fatalf("lookup %s: %v", id, rowsOf(rec))
		}
		rec.Release()
		c := cnt.Snapshot()
		var read int64
		for _, oc := range c {
			read += oc.Bytes
		}
		t.Logf("lookup %s: %d of %d bytes (%.3f%%) in %d requests", id, read, total, 100*float64(read)/float64(total), c.Requests())
		if read*100 >= total {
			t.Errorf("lookup %s read %d bytes, ≥ 1%% of the table's %d", id, read, total)
		}
	}
	cnt.Reset()
	rec, err := NewReader(cnt, nil).LookupIDs(ctx, s, []string{"p333340"}, nil, nil)
	if err != nil || rec.NumRows() != 1 {
		t.Fatal(err)
	}
	rec.Release()
	var read int64
	for _, oc := range cnt.Snapshot() {
		read += oc.Bytes
	}
	t.Logf("every column of p333340: %d bytes (%.3f%%)", read, 100*float64(read)/float64(total))
}

// edgeRecord is an edge-table record of the peer graph's Knows: edges
// [lo, hi), five out-edges per node over nodes p0..p(n-1), in source order.
func edgeRecord(n int) func(lo, hi int) (Schema, arrow.RecordBatch) {
	return func(lo, hi int) (Schema, arrow.RecordBatch) {
		schema := edgeSchema()
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.ArrowSchema())
		defer rb.Release()
		for e := lo; e < hi; e++ {
			src := e / 5
			dst := int((uint64(e)*2654435761 + 12345) % uint64(n))
			rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("01JEDGE%019d", e))
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("p%d", src))
			rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("p%d", dst))
			rb.Field(3).(*array.Int64Builder).AppendNull()
		}
		return schema, rb.NewRecordBatch()
	}
}

// TestTwoHopReadsUnderOnePercent pins the cold traversal cost: the nodes
// within two hops of one node of a 1M-edge table are found reading under
// 1% of the edge table's bytes, from the adjacency sections alone.
func TestTwoHopReadsUnderOnePercent(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 1M-edge table")
	}
	ctx := context.Background()
	cnt := storage.NewCounting(storage.NewMem())
	const nodes = 200_000
	s, total := bigTable(t, cnt, 5*nodes, 1<<16, edgeRecord(nodes))
	cnt.Reset()
	rd := NewReader(cnt, cache.New[any](64<<20))
	hop1, err := rd.Adjacent(ctx, s, SectionSrc, []string{"p4242"})
	if err != nil {
		t.Fatal(err)
	}
	var frontier []string
	seen := map[string]bool{}
	for _, e := range hop1 {
		frontier = append(frontier, e.Far)
		seen[e.Far] = true
	}
	hop2, err := rd.Adjacent(ctx, s, SectionSrc, frontier)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hop2 {
		seen[e.Far] = true
	}
	if len(hop1) != 5 || len(hop2) != 25 {
		t.Fatalf("hop1 %d edges, hop2 %d, want 5 and 25", len(hop1), len(hop2))
	}
	c := cnt.Snapshot()
	var read int64
	for _, oc := range c {
		read += oc.Bytes
	}
	t.Logf("2-hop: %d nodes, %d of %d bytes (%.3f%%) in %d requests", len(seen), read, total, 100*float64(read)/float64(total), c.Requests())
	if read*100 >= total {
		t.Errorf("2-hop read %d bytes, ≥ 1%% of the edge table's %d", read, total)
	}
}

// TestColumnEqualsID pins the id-equal column flags of fragment indexes.
func TestColumnEqualsID(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "key", Type: ColumnType{Kind: String}},
		{Name: "other", Type: ColumnType{Kind: String, Nullable: true}},
	}}
	s0, _ := NewState(schema)
	s1, _ := s0.Append(writeRows(t, st, schema, [][]any{{"a", "a", "a"}, {"b", "b", nil}}, WriteOptions{}))
	s2, _ := s1.Append(writeRows(t, st, schema, [][]any{{"c", "c", "x"}}, WriteOptions{}))
	old := writeRows(t, st, schema, [][]any{{"d", "d", "d"}}, WriteOptions{})
	old.Index, old.IndexBytes = "", 0
	s3, _ := s2.Append(old)
	rd := NewReader(st, nil)
	for _, tc := range []struct {
		s    *State
		col  string
		want bool
	}{{s1, "key", true}, {s1, "other", false}, {s1, "id", true}, {s2, "key", true}, {s2, "other", false}, {s3, "key", false}, {s1, "nope", false}} {
		got, err := rd.ColumnEqualsID(ctx, tc.s, tc.col)
		if err != nil || got != tc.want {
			t.Errorf("ColumnEqualsID(%d fragments, %s) = %v, %v; want %v", tc.s.NumFragments(), tc.col, got, err, tc.want)
		}
	}
}

// TestVerifyFragmentIndex pins that verification accepts a written index
// and rejects a damaged one.
func TestVerifyFragmentIndex(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	var in [][]any
	for i := range 700 {
		in = append(in, []any{fmt.Sprintf("e%d", i), fmt.Sprintf("n%d", i%17), fmt.Sprintf("n%d", i%23), nil})
	}
	f := writeRows(t, st, edgeSchema(), in, WriteOptions{})
	if err := VerifyFragmentIndex(ctx, st, f); err != nil {
		t.Fatal(err)
	}
	good, _, _ := st.Get(ctx, f.Index)
	for _, i := range []int{3, 30, len(good) / 3, len(good) / 2, len(good) - 3} {
		bad := slices.Clone(good)
		bad[i] ^= 1
		_, _ = st.Put(ctx, f.Index, bad)
		if err := VerifyFragmentIndex(ctx, st, f); !errors.Is(err, ErrCorrupt) {
			t.Errorf("flip at %d: err = %v, want ErrCorrupt", i, err)
		}
	}
}

// TestLocateManyPrefetchesSections: a Locate whose ids outnumber a
// fragment's index units reads each section whole (Bloom units, then
// blocks: two requests) instead of probing id by id, and answers exactly
// what probing answers; a few ids still probe.
func TestLocateManyPrefetchesSections(t *testing.T) {
	ctx := context.Background()
	cnt := storage.NewCounting(storage.NewMem())
	s, _ := bigTable(t, cnt, 60_000, 20_000, personRecord)
	r := rand.New(rand.NewPCG(4, 4))
	var many []string
	for range 12_000 {
		many = append(many, fmt.Sprintf("p%d", r.IntN(70_000))) // some absent
	}
	// Reference: probing id by id (each id alone is below the threshold).
	probe := NewReader(cnt, cache.New[any](64<<20))
	var want []RowLoc
	for _, id := range many {
		locs, err := probe.Locate(ctx, s, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, locs...)
	}
	pos := map[string]int{}
	for i, f := range s.Fragments() {
		pos[f.Key] = i
	}
	slices.SortFunc(want, func(a, b RowLoc) int {
		if pa, pb := pos[a.Fragment], pos[b.Fragment]; pa != pb {
			return pa - pb
		}
		return int(a.Offset - b.Offset)
	})
	want = slices.Compact(want)
	cnt.Reset()
	got, err := NewReader(cnt, cache.New[any](64<<20)).Locate(ctx, s, many)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("prefetched Locate: %d rows, probing %d", len(got), len(want))
	}
	// Per fragment: header, Bloom region, directory, blocks.
	if req := cnt.Snapshot().Requests(); req > int64(4*s.NumFragments()) {
		t.Fatalf("Locate of %d ids made %d requests over %d fragments, want ≤ 4 each", len(many), req, s.NumFragments())
	}
	cnt.Reset()
	if _, err := NewReader(cnt, cache.New[any](64<<20)).Locate(ctx, s, many[:3]); err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, oc := range cnt.Snapshot() {
		read += oc.Bytes
	}
	if read > 64<<10 {
		t.Fatalf("Locate of 3 ids read %d bytes: small lookups must not prefetch sections", read)
	}
}
