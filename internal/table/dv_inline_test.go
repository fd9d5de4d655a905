package table

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// goldenInlineState is goldenState with its second fragment's vector
// carried inline (a hand-built reference, so the bytes are reproducible).
func goldenInlineState(t *testing.T) *State {
	t.Helper()
	return goldenStateWith(t, func(frags []Fragment) {
		f := &frags[1]
		f.DV = InlineDVPrefix + "01J00000000000000000000005:" + base64.RawURLEncoding.EncodeToString(
			encodeDV(DeletionVector{Fragment: fragmentID(f.Key), Rows: f.Rows, Offsets: []int64{1}}))
	})
}

// goldenStateWith is goldenState with its fragments changed by edit.
func goldenStateWith(t *testing.T, edit func(frags []Fragment)) *State {
	t.Helper()
	s := goldenState(t)
	frags := s.Fragments()
	edit(frags)
	n, err := s.with(frags, s.indexes)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkGoldenState pins s's encoding in testdata/name, checks it is state
// format format and that decode→encode is the identity on it, and returns
// the decoded state.
func checkGoldenState(t *testing.T, s *State, name string, format int) *State {
	t.Helper()
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := checkGolden(t, name, data)
	if prefix := fmt.Sprintf(`{"format":%d,`, format); !bytes.HasPrefix(want, []byte(prefix)) {
		t.Fatalf("%s: not format %d: %.20s", name, format, want)
	}
	back, err := DecodeState("golden", want)
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Encode()
	if err != nil || !bytes.Equal(again, want) {
		t.Fatalf("decode→encode differs (%v):\n%s", err, again)
	}
	return back
}

// TestInlineDVStateGolden pins the bytes of a format-4 state (an inline
// deletion vector) and that decode→encode is the identity on them.
func TestInlineDVStateGolden(t *testing.T) {
	back := checkGoldenState(t, goldenInlineState(t), "state_v4.json", 4)
	// The vector reads without the store.
	dv, err := LoadDeletionVector(context.Background(), nil, back.Fragments()[1])
	if err != nil || !reflect.DeepEqual(dv.Offsets, []int64{1}) {
		t.Fatalf("inline vector = %+v, %v", dv, err)
	}
	// A state without inline vectors keeps its old format and bytes.
	old, err := goldenState(t).Encode()
	if err != nil || !bytes.HasPrefix(old, []byte(`{"format":1,`)) {
		t.Fatalf("state without inline vectors: %.20s %v", old, err)
	}
}

func TestInlineDVStateCorrupt(t *testing.T) {
	good, err := goldenInlineState(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	ref := goldenInlineState(t).Fragments()[1].DV
	b64 := strings.TrimPrefix(ref, InlineDVPrefix+"01J00000000000000000000005:")
	other := base64.RawURLEncoding.EncodeToString(encodeDV(DeletionVector{Fragment: "elsewhere", Rows: 2, Offsets: []int64{1}}))
	rep := func(old, new string) []byte { return []byte(strings.Replace(string(good), old, new, 1)) }
	checkStatesRejected(t, good, []corruptState{
		{"inline vector in a format 1 state", rep(`"format":4`, `"format":1`), false},
		{"inline vector in a format 3 state", rep(`"format":4`, `"format":3`), false},
		{"format 4 without inline vector", func() []byte {
			old, _ := goldenState(t).Encode()
			return []byte(strings.Replace(string(old), `"format":1`, `"format":4`, 1))
		}(), false},
		{"name not a ULID", rep("01J00000000000000000000005:", "nope:"), false},
		{"no name", rep("01J00000000000000000000005:", ""), false},
		{"not base64url", rep(b64, b64[:len(b64)-2]+"+/"), false},
		{"truncated vector", rep(b64, b64[:len(b64)-8]), false},
		{"vector of another fragment", rep(b64, other), false},
		{"deleted count disagrees", rep(`"deleted":1`, `"deleted":0`), false},
	})
}

// TestDeleteRowsInline: with InlineBytes a small vector is written into the
// state, not the store; merging onto it reads it back; one over the bound is
// an object; the ledger records the inline name (so the state joins it) but
// has no object to delete for it.
func TestDeleteRowsInline(t *testing.T) {
	ctx := context.Background()
	mem, st, s := memTenFragments(t)
	f4 := s.Fragments()[4]
	countDV := func() int {
		n := 0
		_ = st.List(ctx, testPrefix+"/dv/", "", func(storage.Info) error { n++; return nil })
		return n
	}
	l := storage.NewLedger()
	lctx := storage.WithLedger(ctx, l)
	inline := DeleteOptions{InlineBytes: DefaultInlineDVBytes}
	s1, err := DeleteRowsWith(lctx, st, testPrefix, s, map[string][]int64{f4.Key: {1, 3}}, inline)
	if err != nil {
		t.Fatal(err)
	}
	g1 := s1.Fragments()[4]
	if !IsInlineDV(g1.DV) || g1.Deleted != 2 || countDV() != 0 {
		t.Fatalf("fragment %+v, %d vector objects", g1, countDV())
	}
	if !l.Has(g1.DV) || len(l.Keys()) != 0 {
		t.Fatalf("ledger: has %v, keys %v", l.Has(g1.DV), l.Keys())
	}
	key, err := WriteState(lctx, st, testPrefix, s1)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Has(key) {
		t.Error("a state naming the write's inline vector is not in its ledger")
	}
	back, err := ReadState(ctx, st, key)
	if err != nil || back.Fragments()[4].DV != g1.DV {
		t.Fatalf("read back: %v", err)
	}
	s2, err := DeleteRowsWith(ctx, st, testPrefix, back, map[string][]int64{f4.Key: {5}}, inline)
	if err != nil {
		t.Fatal(err)
	}
	dv, err := LoadDeletionVector(ctx, nil, s2.Fragments()[4])
	if err != nil || !reflect.DeepEqual(dv.Offsets, []int64{1, 3, 5}) {
		t.Fatalf("merged inline vector %+v, %v", dv, err)
	}
	rows, _ := scanAll(t, st, s2, ScanOptions{Columns: []string{"id"}, Filters: []Filter{{Column: "id", Op: OpGe, Value: "p40"}, {Column: "id", Op: OpLt, Value: "p50"}}, Alloc: mem})
	if fmt.Sprint(rows) != "[[p40] [p42] [p44] [p46] [p47] [p48] [p49]]" {
		t.Errorf("rows after inline deletes: %v", rows)
	}
	r := NewReader(st, nil)
	if locs, err := r.Locate(ctx, s2, []string{"p41", "p42"}); err != nil || len(locs) != 1 || locs[0].Offset != 2 {
		t.Errorf("Locate after inline deletes: %+v %v", locs, err)
	}
	// Over the bound: an object, as without the option.
	s3, err := DeleteRowsWith(ctx, st, testPrefix, s, map[string][]int64{f4.Key: {2}}, DeleteOptions{InlineBytes: 8})
	if err != nil || IsInlineDV(s3.Fragments()[4].DV) || countDV() != 1 {
		t.Fatalf("vector over the bound: %+v %v, %d objects", s3.Fragments()[4], err, countDV())
	}
	// Discard deletes the state and nothing else.
	if err := l.Discard(ctx, st); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("state after discard: %v", err)
	}
}
