package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestDVRoundTrip(t *testing.T) {
	dense := make([]int64, 0, 900)
	for i := int64(0); i < 900; i++ {
		dense = append(dense, i)
	}
	tests := []struct {
		name    string
		dv      DeletionVector
		wantEnc byte
	}{
		{"one", DeletionVector{Fragment: "01ABC", Rows: 10, Offsets: []int64{3}}, dvEncDelta},
		{"first and last", DeletionVector{Fragment: "f", Rows: 1 << 40, Offsets: []int64{0, 1<<40 - 1}}, dvEncDelta},
		{"dense", DeletionVector{Fragment: "f", Rows: 1000, Offsets: dense}, dvEncBitmap},
		{"empty id small", DeletionVector{Fragment: "", Rows: 5, Offsets: []int64{0, 1, 2, 3}}, dvEncBitmap},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeDV(tc.dv)
			if b[5] != tc.wantEnc {
				t.Errorf("encoding %d, want %d", b[5], tc.wantEnc)
			}
			got, err := decodeDV("k", b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.dv) {
				t.Fatalf("got %+v, want %+v", got, tc.dv)
			}
		})
	}
}

// TestDVGoldenBytes pins the byte layout documented in docs/format/table.md.
func TestDVGoldenBytes(t *testing.T) {
	// 20 rows: the bitmap would be 3 bytes, as long as the deltas, and ties
	// go to the delta encoding.
	got := encodeDV(DeletionVector{Fragment: "F1", Rows: 20, Offsets: []int64{2, 3, 9}})
	want := []byte{
		'O', 'G', 'D', 'V', 1, 1, 0, 0, // magic, version, encoding delta, reserved
		20, 0, 0, 0, 0, 0, 0, 0, // rows
		3, 0, 0, 0, 0, 0, 0, 0, // deleted count
		2, 0, 'F', '1', // fragment id
		2, 0, 5, // gaps-minus-one of 2, 3, 9
	}
	want = binary.LittleEndian.AppendUint32(want, crcOf(want))
	if !bytes.Equal(got, want) {
		t.Fatalf("got  % x\nwant % x", got, want)
	}
}

func crcOf(b []byte) uint32 {
	return crc32Castagnoli(b)
}

// reseal recomputes the trailing checksum so a test can corrupt a field
// without the checksum catching it first.
func reseal(b []byte) []byte {
	out := append([]byte{}, b[:len(b)-4]...)
	return binary.LittleEndian.AppendUint32(out, crc32Castagnoli(out))
}

func TestDVDecodeCorrupt(t *testing.T) {
	good := encodeDV(DeletionVector{Fragment: "F1", Rows: 20, Offsets: []int64{2, 3, 9}})
	bitmap := encodeDV(DeletionVector{Fragment: "F1", Rows: 10, Offsets: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8}})
	if bitmap[5] != dvEncBitmap {
		t.Fatal("fixture should be a bitmap")
	}
	mut := func(b []byte, i int, v byte) []byte {
		c := append([]byte{}, b...)
		c[i] = v
		return reseal(c)
	}
	tests := []struct {
		name    string
		data    []byte
		version bool
	}{
		{"empty", nil, false},
		{"truncated header", good[:10], false},
		{"truncated tail", good[:len(good)-1], false},
		{"bit flip", func() []byte { c := append([]byte{}, good...); c[27] ^= 0x40; return c }(), false},
		{"bad magic", mut(good, 0, 'X'), false},
		{"version 2", mut(good, 4, 2), true},
		{"unknown encoding", mut(good, 5, 9), false},
		{"count over rows", mut(good, 16, 21), false},
		{"count too small", mut(good, 16, 2), false},
		{"offset past rows", mut(good, 30, 20), false},
		{"id overruns", mut(good, 24, 200), false},
		{"bitmap bit past rows", mut(bitmap, len(bitmap)-5, 0xFF), false},
		{"bitmap population", mut(bitmap, 16, 8), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeDV("dvkey", tc.data)
			if tc.version {
				if !errors.Is(err, ErrUnsupportedVersion) {
					t.Fatalf("err = %v, want version error", err)
				}
				return
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Key != "dvkey" {
				t.Fatalf("err = %v, want *CorruptError naming dvkey", err)
			}
		})
	}
}

func TestDeleteMergesDeletionVectors(t *testing.T) {
	ctx := context.Background()
	mem, st, s := memTenFragments(t)
	f4 := s.Fragments()[4]

	s1, n, err := Delete(ctx, st, testPrefix, s, []string{"p41", "p43", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || s1.Rows() != 98 {
		t.Fatalf("deleted %d, rows %d", n, s1.Rows())
	}
	g1 := s1.Fragments()[4]
	if g1.DV == "" || g1.Deleted != 2 {
		t.Fatalf("fragment after delete: %+v", g1)
	}
	// Second deletion on the same fragment: a new, merged vector; the old one
	// is untouched.
	oldBytes, _, _ := st.Get(ctx, g1.DV)
	s2, n, err := Delete(ctx, st, testPrefix, s1, []string{"p41", "p45"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("second delete removed %d rows, want 1 (p41 is already gone)", n)
	}
	g2 := s2.Fragments()[4]
	if g2.DV == g1.DV || g2.Deleted != 3 {
		t.Fatalf("fragment after second delete: %+v", g2)
	}
	if again, _, _ := st.Get(ctx, g1.DV); !bytes.Equal(again, oldBytes) {
		t.Error("old deletion vector was modified")
	}
	dv, err := ReadDeletionVector(ctx, st, g2.DV)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 3, 5}; !reflect.DeepEqual(dv.Offsets, want) || dv.Fragment != fragmentID(f4.Key) {
		t.Errorf("merged vector %+v, want offsets %v", dv, want)
	}
	rows, _ := scanAll(t, st, s2, ScanOptions{Columns: []string{"id"}, Filters: []Filter{{Column: "id", Op: OpGe, Value: "p40"}, {Column: "id", Op: OpLt, Value: "p50"}}, Alloc: mem})
	if fmt.Sprint(rows) != "[[p40] [p42] [p44] [p46] [p47] [p48] [p49]]" {
		t.Errorf("rows after deletes: %v", rows)
	}
	// Earlier states still see their rows.
	if rec, err := LookupIDs(ctx, st, s, []string{"p41"}, []string{"id"}, mem); err != nil || rec.NumRows() != 1 {
		t.Errorf("old state lost p41: %v", err)
	} else {
		rec.Release()
	}
}

func TestDeleteAllRowsDropsFragment(t *testing.T) {
	ctx := context.Background()
	_, st, s := memTenFragments(t)
	key := s.Fragments()[0].Key
	s1, err := DeleteRows(ctx, st, testPrefix, s, map[string][]int64{key: {0, 1, 2, 3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := DeleteRows(ctx, st, testPrefix, s1, map[string][]int64{key: {5, 6, 7, 8, 9, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if s2.NumFragments() != 9 || s2.Rows() != 90 {
		t.Fatalf("fragments %d rows %d, want 9/90", s2.NumFragments(), s2.Rows())
	}
	for _, bad := range []map[string][]int64{{key: {10}}, {"nope": {1}}} {
		if _, err := DeleteRows(ctx, st, testPrefix, s, bad); err == nil {
			t.Errorf("DeleteRows(%v) succeeded", bad)
		}
	}
}

func TestScanRejectsMismatchedDV(t *testing.T) {
	ctx := context.Background()
	mem, st, s := memTenFragments(t)
	s1, _, err := Delete(ctx, st, testPrefix, s, []string{"p01"})
	if err != nil {
		t.Fatal(err)
	}
	// Point fragment 1 at fragment 0's vector.
	frags := s1.Fragments()
	frags[1].DV, frags[1].Deleted = frags[0].DV, 1
	bad, err := s.Replace([]string{frags[0].Key, frags[1].Key}, frags[:2])
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Scan(ctx, st, bad, ScanOptions{Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for sc.Next() {
	}
	if !errors.Is(sc.Err(), ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", sc.Err())
	}
}

func TestDVFailpoints(t *testing.T) {
	ctx := context.Background()
	mem := checkedAlloc(t)
	for _, fp := range []string{FPBeforeDV, FPAfterDV} {
		t.Run(fp, func(t *testing.T) {
			st := storage.NewMem()
			s := tenFragments(t, st, WriteOptions{Alloc: mem})
			defer failpoint.Enable(fp, failpoint.Error)()
			_, _, err := Delete(ctx, st, testPrefix, s, []string{"p11"})
			if !errors.Is(err, failpoint.ErrInjected) {
				t.Fatalf("err = %v, want injected", err)
			}
			n := 0
			_ = st.List(ctx, testPrefix+"/dv/", "", func(storage.Info) error { n++; return nil })
			if want := map[string]int{FPBeforeDV: 0, FPAfterDV: 1}[fp]; n != want {
				t.Errorf("%d vectors written, want %d", n, want)
			}
		})
	}
}
