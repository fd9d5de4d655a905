package table

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata")

// goldenState is a state built by hand so that its bytes are reproducible.
func goldenState(t *testing.T) *State {
	t.Helper()
	schema := Schema{Columns: []Column{
		{Name: "id", Type: ColumnType{Kind: String}},
		{Name: "age", Type: ColumnType{Kind: I64, Nullable: true}},
		{Name: "big", Type: ColumnType{Kind: U64}},
		{Name: "score", Type: ColumnType{Kind: F64}},
		{Name: "ok", Type: ColumnType{Kind: Bool}},
		{Name: "v", Type: ColumnType{Kind: Vector, Dim: 4}},
		{Name: "tags", Type: ColumnType{Kind: List, Elem: String, Nullable: true}},
	}}
	s, err := NewState(schema)
	if err != nil {
		t.Fatal(err)
	}
	s, err = s.Append(
		Fragment{Key: testPrefix + "/data/01J00000000000000000000001.parquet", Rows: 3, Bytes: 1234, Stats: []ColumnStats{
			{Min: "a<&>", Max: "c\u00e9"}, {Nulls: 1, Min: int64(math.MinInt64), Max: int64(7)}, {Min: uint64(0), Max: uint64(math.MaxUint64)},
			{Min: math.Inf(-1), Max: 2.5}, {Min: false, Max: true}, {}, {Nulls: 3},
		}},
		Fragment{Key: testPrefix + "/data/01J00000000000000000000002.parquet", Rows: 2, Bytes: 99, DV: testPrefix + "/dv/01J00000000000000000000003.dv", Deleted: 1,
			Stats: []ColumnStats{{Min: "d", Max: "e"}, {}, {Min: uint64(5), Max: uint64(5)}, {Min: 0.1, Max: math.Inf(1)}, {Min: true, Max: true}, {}, {}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	s, err = s.WithIndexes([]IndexRef{{Name: "by_id", Kind: "key", Columns: []string{"id"}, Key: testPrefix + "/index/01J00000000000000000000004.idx"}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStateGoldenRoundTrip(t *testing.T) {
	s := goldenState(t)
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := checkGolden(t, "state_v1.json", data)
	back, err := DecodeState("golden", want)
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Fatalf("decode→encode differs:\n%s", again)
	}
	if back.Rows() != 4 || s.Rows() != 4 {
		t.Errorf("rows = %d/%d, want 4", back.Rows(), s.Rows())
	}
}

// checkGolden compares data with testdata/<name> (rewriting it first with
// -rewrite) and returns the golden bytes.
func checkGolden(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("encoding changed (run with -rewrite only if the format change is intended):\n%s", data)
	}
	return want
}

func TestStateContentAddressed(t *testing.T) {
	ctx := context.Background()
	st := storage.NewCounting(storage.NewMem())
	k1, err := WriteState(ctx, st, testPrefix, goldenState(t))
	if err != nil {
		t.Fatal(err)
	}
	k2, err := WriteState(ctx, st, testPrefix, goldenState(t))
	if err != nil {
		t.Fatalf("rewriting an identical state must succeed: %v", err)
	}
	if k1 != k2 {
		t.Fatalf("same state, different keys %s %s", k1, k2)
	}
	if !strings.HasPrefix(k1, testPrefix+"/state/") || !strings.HasSuffix(k1, ".json") {
		t.Errorf("key %s does not follow the layout", k1)
	}
	n := 0
	_ = st.List(ctx, testPrefix+"/state/", "", func(storage.Info) error { n++; return nil })
	if n != 1 {
		t.Errorf("%d state objects, want 1", n)
	}
	s, err := ReadState(ctx, st, k1)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := s.Replace([]string{s.Fragments()[0].Key}, nil)
	k3, err := WriteState(ctx, st, testPrefix, s2)
	if err != nil {
		t.Fatal(err)
	}
	if k3 == k1 {
		t.Error("different states share a key")
	}
}

func TestStateIsImmutable(t *testing.T) {
	s := goldenState(t)
	before, _ := s.Encode()
	frags := s.Fragments()
	frags[0].Stats[0].Min = "zzz"
	frags[0].Rows = 1
	sc := s.Schema()
	sc.Columns[0].Name = "renamed"
	idx := s.Indexes()
	idx[0].Columns[0] = "x"
	if _, err := s.Append(Fragment{Key: "k", Rows: 1, Bytes: 1, Stats: make([]ColumnStats, 7)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Replace([]string{frags[1].Key}, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Encode()
	if !bytes.Equal(before, after) {
		t.Fatal("state changed through a returned copy or an operation")
	}
}

func TestStateValidateRejects(t *testing.T) {
	s, _ := NewState(personSchema())
	ok := Fragment{Key: "a", Rows: 2, Bytes: 10, Stats: make([]ColumnStats, 3)}
	tests := []struct {
		name string
		f    []Fragment
	}{
		{"duplicate key", []Fragment{ok, ok}},
		{"stats count", []Fragment{{Key: "b", Rows: 1, Bytes: 1, Stats: make([]ColumnStats, 2)}}},
		{"no rows", []Fragment{{Key: "b", Rows: 0, Bytes: 1, Stats: make([]ColumnStats, 3)}}},
		{"all deleted", []Fragment{{Key: "b", Rows: 2, Bytes: 1, DV: "d", Deleted: 2, Stats: make([]ColumnStats, 3)}}},
		{"dv without count", []Fragment{{Key: "b", Rows: 2, Bytes: 1, DV: "d", Stats: make([]ColumnStats, 3)}}},
		{"count without dv", []Fragment{{Key: "b", Rows: 2, Bytes: 1, Deleted: 1, Stats: make([]ColumnStats, 3)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Append(tc.f...); !errors.Is(err, ErrSchema) {
				t.Fatalf("err = %v, want ErrSchema", err)
			}
		})
	}
	if _, err := s.Replace([]string{"missing"}, nil); !errors.Is(err, ErrUnknownFragment) {
		t.Fatalf("Replace unknown: err = %v", err)
	}
}

func TestDecodeStateCorrupt(t *testing.T) {
	good, err := goldenState(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	rep := func(old, new string) []byte { return []byte(strings.Replace(string(good), old, new, 1)) }
	tests := []corruptState{
		{"empty", nil, false},
		{"truncated", good[:len(good)/2], false},
		{"not json", []byte("\x00\x01garbage"), false},
		{"no format", rep(`"format":1,`, ""), false},
		{"newer format", rep(`"format":1`, `"format":6`), true},
		{"format 5 without inline indexes", rep(`"format":1`, `"format":5`), false},
		{"format 3 without field maps", rep(`"format":1`, `"format":3`), false},
		{"format 2 without indexes", rep(`"format":1`, `"format":2`), false},
		{"index in a format 1 state", rep(`"dv":"tables/node-Person/dv/01J00000000000000000000003.dv",`, `"dv":"tables/node-Person/dv/01J00000000000000000000003.dv","index":"i","index_bytes":9,`), false},
		{"older format", rep(`"format":1`, `"format":0`), true},
		{"unknown field", rep(`"rows":4`, `"rows":4,"extra":1`), false},
		{"rows mismatch", rep(`"rows":4`, `"rows":5`), false},
		{"bad kind", rep(`"kind":"i64"`, `"kind":"i128"`), false},
		{"stats for wrong column", rep(`"column":"age"`, `"column":"agx"`), false},
		{"bad bound", rep(`"min":-9223372036854775808`, `"min":"x"`), false},
		{"bound on vector", rep(`"column":"v",`, `"column":"v","min":1,`), false},
		{"deleted without dv", rep(`"dv":"tables/node-Person/dv/01J00000000000000000000003.dv",`, ""), false},
	}
	checkStatesRejected(t, good, tests)
}

// corruptState is one case of checkStatesRejected: bytes DecodeState must
// refuse, with a *VersionError if version, else a *CorruptError.
type corruptState struct {
	name    string
	data    []byte
	version bool
}

func checkStatesRejected(t *testing.T, good []byte, tests []corruptState) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Equal(tc.data, good) {
				t.Fatal("mutation did not apply")
			}
			_, err := DecodeState("k", tc.data)
			var ce *CorruptError
			var ve *VersionError
			switch {
			case tc.version && !errors.As(err, &ve):
				t.Fatalf("err = %v, want *VersionError", err)
			case tc.version && (ve.Key != "k" || ve.Want != StateFormatVersion || !errors.Is(err, ErrUnsupportedVersion)):
				t.Fatalf("bad version error %+v", ve)
			case !tc.version && (!errors.As(err, &ce) || ce.Key != "k" || !errors.Is(err, ErrCorrupt)):
				t.Fatalf("err = %v, want *CorruptError for key k", err)
			}
		})
	}
}

func TestReadStateChecksHashName(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	key, err := WriteState(ctx, st, testPrefix, goldenState(t))
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := st.Get(ctx, key)
	data[len(data)-3] ^= 1 // still valid JSON whitespace/bracket? flip within content
	if _, err := st.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(ctx, st, key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	if _, err := ReadState(ctx, st, testPrefix+"/state/missing.json"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing: err = %v, want ErrNotFound", err)
	}
}

func TestStateFailpoints(t *testing.T) {
	ctx := context.Background()
	for _, fp := range []string{FPBeforeState, FPAfterState} {
		t.Run(fp, func(t *testing.T) {
			st := storage.NewMem()
			defer failpoint.Enable(fp, failpoint.Error)()
			_, err := WriteState(ctx, st, testPrefix, goldenState(t))
			if !errors.Is(err, failpoint.ErrInjected) {
				t.Fatalf("err = %v, want injected", err)
			}
			n := 0
			_ = st.List(ctx, testPrefix, "", func(storage.Info) error { n++; return nil })
			if want := map[string]int{FPBeforeState: 0, FPAfterState: 1}[fp]; n != want {
				t.Errorf("%d objects written, want %d", n, want)
			}
		})
	}
}
