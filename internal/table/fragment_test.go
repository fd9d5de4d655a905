package table

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// oneFragment writes a small all-types fragment and returns its state.
func oneFragment(t *testing.T, st storage.Store, opts WriteOptions) *State {
	t.Helper()
	rows := [][]any{
		{"a", "x", true, 1, 2, 3, 4, float32(5), 6.0, 7, 8, []float32{1, 2, 3}, []byte("x"), []string{"t"}, nil, "e"},
		{"b", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	f := writeRows(t, st, allTypesSchema(), rows, opts)
	s, _ := NewState(allTypesSchema())
	s, err := s.Append(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func scanErr(st storage.Store, s *State, opts ScanOptions) error {
	sc, err := Scan(context.Background(), st, s, opts)
	if err != nil {
		return err
	}
	defer sc.Close()
	for sc.Next() {
	}
	return sc.Err()
}

// plainStore hides every optional interface of the store it wraps (native
// readers above all), as a remote store without them looks.
type plainStore struct{ storage.Store }

func TestFragmentCorruptionIsTyped(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	tests := []struct {
		name   string
		mangle func([]byte) []byte
	}{
		{"truncated by one", func(b []byte) []byte { return b[:len(b)-1] }},
		{"truncated to half", func(b []byte) []byte { return b[:len(b)/2] }},
		{"empty", func([]byte) []byte { return nil }},
		{"longer", func(b []byte) []byte { return append(b, 0) }},
		{"bad tail magic", func(b []byte) []byte { b[len(b)-1] = 'X'; return b }},
		{"footer length huge", func(b []byte) []byte { b[len(b)-5] = 0x7f; return b }},
		{"footer length zero", func(b []byte) []byte { copy(b[len(b)-8:], []byte{0, 0, 0, 0}); return b }},
		{"zeroed footer", func(b []byte) []byte {
			for i := len(b) - 200; i < len(b)-8; i++ {
				b[i] = 0
			}
			return b
		}},
		{"garbage", func(b []byte) []byte {
			for i := range b {
				b[i] = byte(i * 31)
			}
			return b
		}},
	}
	// The stacks a fragment is read through: a store with a native reader
	// (the size check at open), and remote-like stores opened by the size
	// the state records (nothing sent at open: the mismatch shows in the
	// reads), bare or behind the object cache fetching small objects whole
	// or by ranges.
	stacks := []struct {
		name string
		wrap func(storage.Store) storage.Store
	}{
		{"native", func(s storage.Store) storage.Store { return s }},
		{"remote", func(s storage.Store) storage.Store { return plainStore{s} }},
		{"cached-whole", func(s storage.Store) storage.Store {
			return storage.NewCached(plainStore{s}, storage.CacheOptions{Immutable: func(string) bool { return true }})
		}},
		{"cached-ranges", func(s storage.Store) storage.Store {
			return storage.NewCached(plainStore{s}, storage.CacheOptions{Immutable: func(string) bool { return true }, WholeObjectBytes: 1})
		}},
	}
	for _, stack := range stacks {
		for _, tc := range tests {
			t.Run(stack.name+"/"+tc.name, func(t *testing.T) {
				st := storage.NewMem()
				s := oneFragment(t, st, WriteOptions{Alloc: mem})
				key := s.Fragments()[0].Key
				data, _, _ := st.Get(ctx, key)
				if _, err := st.Put(ctx, key, tc.mangle(append([]byte{}, data...))); err != nil {
					t.Fatal(err)
				}
				rst := stack.wrap(st)
				err := scanErr(rst, s, ScanOptions{Alloc: mem})
				if tc.name == "longer" && (stack.name == "remote" || stack.name == "cached-ranges") {
					// Read by ranges, the recorded bytes are intact: the
					// read must succeed and verify must report the growth.
					if err != nil {
						t.Fatalf("scan: %v", err)
					}
					err = VerifyFragment(ctx, rst, s.Schema(), s.Fragments()[0], false)
				}
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Key != key {
					t.Fatalf("err = %v, want *CorruptError naming %s", err, key)
				}
			})
		}
	}
}

// TestFragmentBitFlipsNeverPanic flips every byte of a fragment in turn: a
// scan must either succeed (flips in unused bytes or values zstd's checksum
// does not cover) or fail with a typed error — never panic or leak.
func TestFragmentBitFlipsNeverPanic(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	st := storage.NewMem()
	s := oneFragment(t, st, WriteOptions{Alloc: mem})
	key := s.Fragments()[0].Key
	orig, _, _ := st.Get(ctx, key)
	step := 1
	if testing.Short() {
		step = 7
	}
	corrupted := 0
	for i := 0; i < len(orig); i += step {
		data := append([]byte{}, orig...)
		data[i] ^= 0xA5
		_, _ = st.Put(ctx, key, data)
		err := scanErr(st, s, ScanOptions{Alloc: mem})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("flip at %d: untyped error %v", i, err)
			}
			corrupted++
		}
	}
	if corrupted == 0 {
		t.Fatal("no flip was detected at all")
	}
}

func TestFragmentMissingIsNotFound(t *testing.T) {
	mem := checkedAlloc(t)
	st := storage.NewMem()
	s := oneFragment(t, st, WriteOptions{Alloc: mem})
	_ = st.Delete(context.Background(), s.Fragments()[0].Key)
	err := scanErr(st, s, ScanOptions{Alloc: mem})
	if !errors.Is(err, storage.ErrNotFound) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrNotFound (not corruption)", err)
	}
}

func TestFragmentFailpoints(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	for _, fp := range []string{FPBeforeFragment, FPAfterFragment} {
		t.Run(fp, func(t *testing.T) {
			st := storage.NewMem()
			rec := buildRecord(t, mem, personSchema(), [][]any{{"a", "n", nil}})
			defer rec.Release()
			defer failpoint.Enable(fp, failpoint.Error)()
			before := failpoint.Hits(fp)
			_, err := WriteFragment(ctx, st, testPrefix, personSchema(), rec, WriteOptions{Alloc: mem})
			if !errors.Is(err, failpoint.ErrInjected) || failpoint.Hits(fp) != before+1 {
				t.Fatalf("err = %v, want injected", err)
			}
			n := 0
			_ = st.List(ctx, testPrefix, "", func(storage.Info) error { n++; return nil })
			// After the fragment: the fragment and its index.
			if want := map[string]int{FPBeforeFragment: 0, FPAfterFragment: 2}[fp]; n != want {
				t.Errorf("%d objects written, want %d", n, want)
			}
		})
	}
}

func TestWriteFragmentRejects(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	st := storage.NewMem()
	schema := personSchema()
	mk := func(fields []arrow.Field, cols ...arrow.Array) arrow.RecordBatch {
		defer releaseAll(cols)
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, -1)
	}
	str := func(vals []string, valid []bool) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(vals, valid)
		return b.NewArray()
	}
	i64 := func(vals ...int64) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	f := func(name string, t arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: t, Nullable: true}
	}
	tests := []struct {
		name string
		rec  arrow.RecordBatch
		want error
	}{
		{"too few columns", mk([]arrow.Field{f("id", arrow.BinaryTypes.String)}, str([]string{"a"}, nil)), ErrSchema},
		{"renamed", mk([]arrow.Field{f("id", arrow.BinaryTypes.String), f("nom", arrow.BinaryTypes.String), f("age", arrow.PrimitiveTypes.Int64)},
			str([]string{"a"}, nil), str([]string{"a"}, nil), i64(1)), ErrSchema},
		{"wrong type", mk([]arrow.Field{f("id", arrow.BinaryTypes.String), f("name", arrow.BinaryTypes.String), f("age", arrow.BinaryTypes.String)},
			str([]string{"a"}, nil), str([]string{"a"}, nil), str([]string{"1"}, nil)), ErrSchema},
		{"null in non-nullable", mk([]arrow.Field{f("id", arrow.BinaryTypes.String), f("name", arrow.BinaryTypes.String), f("age", arrow.PrimitiveTypes.Int64)},
			str([]string{"a"}, []bool{false}), str([]string{"a"}, nil), i64(1)), ErrValue},
		{"empty", mk([]arrow.Field{f("id", arrow.BinaryTypes.String), f("name", arrow.BinaryTypes.String), f("age", arrow.PrimitiveTypes.Int64)},
			str(nil, nil), str(nil, nil), i64()), ErrValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.rec.Release()
			if _, err := WriteFragment(ctx, st, testPrefix, schema, tc.rec, WriteOptions{Alloc: mem}); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestBatchBuilderRejects(t *testing.T) {
	mem := checkedAlloc(t)
	b, err := NewBatchBuilder(mem, allTypesSchema())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	good := func() []any {
		return []any{"a", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
	}
	tests := []struct {
		name string
		col  int
		v    any
	}{
		{"null id", 0, nil},
		{"int for string", 1, 5},
		{"i32 overflow", 3, int64(math.MaxInt32) + 1},
		{"u32 negative", 5, -1},
		{"u64 negative", 6, int64(-1)},
		{"i64 from huge uint", 4, uint64(math.MaxUint64)},
		{"f32 overflow", 7, 1e300},
		{"short vector", 11, []float32{1, 2}},
		{"vector of float64", 11, []float64{1, 2, 3}},
		{"string blob", 12, "x"},
		{"list of wrong elem", 13, []int{1}},
		{"list not slice", 13, "x"},
		{"bool for date", 9, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := good()
			row[tc.col] = tc.v
			if err := b.Append(row); !errors.Is(err, ErrValue) {
				t.Fatalf("err = %v, want ErrValue", err)
			}
		})
	}
	if err := b.Append([]any{"a"}); !errors.Is(err, ErrValue) {
		t.Fatalf("short row: err = %v", err)
	}
	if b.Len() != 0 {
		t.Fatalf("rejected rows were appended: %d", b.Len())
	}
	rec := b.NewRecord()
	rec.Release()
}

func TestSchemaValidate(t *testing.T) {
	col := func(name string, ct ColumnType) Column { return Column{Name: name, Type: ct} }
	tests := []struct {
		name string
		s    Schema
	}{
		{"empty", Schema{}},
		{"dup", Schema{Columns: []Column{col("a", ColumnType{Kind: String}), col("a", ColumnType{Kind: I64})}}},
		{"unnamed", Schema{Columns: []Column{col("", ColumnType{Kind: String})}}},
		{"vector 0", Schema{Columns: []Column{col("v", ColumnType{Kind: Vector})}}},
		{"list of blob", Schema{Columns: []Column{col("l", ColumnType{Kind: List, Elem: Blob})}}},
		{"list of list", Schema{Columns: []Column{col("l", ColumnType{Kind: List, Elem: List})}}},
		{"list of enum", Schema{Columns: []Column{col("l", ColumnType{Kind: List, Elem: Enum})}}},
		{"nullable id", Schema{Columns: []Column{col("id", ColumnType{Kind: String, Nullable: true})}}},
		{"int id", Schema{Columns: []Column{col("id", ColumnType{Kind: I64})}}},
		{"invalid kind", Schema{Columns: []Column{col("x", ColumnType{})}}},
		{"dim on string", Schema{Columns: []Column{col("x", ColumnType{Kind: String, Dim: 2})}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.Validate(); !errors.Is(err, ErrSchema) {
				t.Fatalf("err = %v, want ErrSchema", err)
			}
		})
	}
}

func TestStatsBoundValues(t *testing.T) {
	mem := checkedAlloc(t)
	long := strings.Repeat("é", 200) // 400 bytes
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "f", Type: ColumnType{Kind: F64, Nullable: true}},
		{Name: "b", Type: ColumnType{Kind: Bool}},
	}}
	rec := buildRecord(t, mem, schema, [][]any{
		{"m", math.NaN(), false}, {long, nil, false}, {"b", 3.0, false}, {"a\xffz", -1.0, false},
	})
	defer rec.Release()
	var got []ColumnStats
	for i, c := range schema.Columns {
		got = append(got, computeStats(c.Type, rec.Column(i)))
	}
	// Invalid UTF-8 cannot round-trip through JSON, so its bounds are dropped.
	if got[0].Min != nil || got[0].Max != nil {
		t.Errorf("invalid utf8 min/max = %v/%v, want unknown", got[0].Min, got[0].Max)
	}
	if got[1].Min != -1.0 || got[1].Max != 3.0 || got[1].Nulls != 1 {
		t.Errorf("float stats %+v", got[1])
	}
	if got[2].Min != false || got[2].Max != false {
		t.Errorf("bool stats %+v", got[2])
	}
	if b := boundString(long, false).(string); len(b) > maxStatString || !strings.HasPrefix(long, b) {
		t.Errorf("long min not a short prefix: %d bytes", len(b))
	}
	if boundString(long, true) != nil {
		t.Error("long max should be unknown")
	}
}
