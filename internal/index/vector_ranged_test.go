package index

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func clusteredVecs(n, dim int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	cent := make([][]float32, 64)
	for c := range cent {
		cent[c] = make([]float32, dim)
		for k := range cent[c] {
			cent[c][k] = float32(r.NormFloat64())
		}
	}
	vecs := make([][]float32, n)
	for i := range vecs {
		if i%97 == 5 {
			continue // null
		}
		ce := cent[r.IntN(len(cent))]
		vecs[i] = make([]float32, dim)
		for k := range dim {
			vecs[i][k] = ce[k] + 0.3*float32(r.NormFloat64())
		}
	}
	return vecs
}

type slotVec struct {
	off int32
	v   string
}

func listSlots(t *testing.T, s *VectorSource, ls []int) []slotVec {
	var out []slotVec
	err := s.Lists(context.Background(), ls, func(off int32, v []float32) {
		out = append(out, slotVec{off, string(f32Bytes(v))})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b slotVec) int { return int(a.off - b.off) })
	return out
}

// TestVectorSourceRanged pins a cold probe's reads: the front in one
// request, then one ranged read per run of adjacent probed lists, bytes
// exactly the probed lists' (with their CRCs); the slots equal the
// decoded index's.
func TestVectorSourceRanged(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	vecs := clusteredVecs(20000, dim, 3)
	x := BuildVector(vecs, dim, 0)
	obj := x.Encode()
	dec, err := DecodeVector("k", obj)
	if err != nil {
		t.Fatal(err)
	}
	mem := memWith(t, "k", obj)
	cnt := storage.NewCounting(mem)
	s, err := OpenVector(ctx, cnt, "k")
	if err != nil {
		t.Fatal(err)
	}
	if c := cnt.Snapshot(); c.Requests() != 1 || c[storage.OpGetRange].Bytes != VectorFrontBytes {
		t.Fatalf("open cost %v", c)
	}
	h := s.h
	q := vecs[0]
	ls := s.Probe(q, 12)
	if !slices.Equal(ls, dec.Probe(q, 12)) {
		t.Fatal("probes differ")
	}
	cnt.Reset()
	got := listSlots(t, s, ls)
	sorted := slices.Sorted(slices.Values(ls))
	runs, bytes := 0, int64(0)
	for i, l := range sorted {
		if i == 0 || l != sorted[i-1]+1 {
			if s.pos[l+1] > len(s.front) {
				runs++
			}
		}
		if s.pos[l+1] > len(s.front) {
			bytes += int64(h.listLen(int(x.start[l+1] - x.start[l])))
		}
	}
	c := cnt.Snapshot()
	if c.Requests() != int64(runs) || c[storage.OpGetRange].Bytes > bytes {
		t.Errorf("probe cost %v, want %d requests, ≤ %d bytes", c, runs, bytes)
	}
	var want []slotVec
	for _, l := range ls {
		lo, hi := dec.ListSlots(l)
		for k := lo; k < hi; k++ {
			off, v := dec.Slot(k)
			want = append(want, slotVec{off, string(f32Bytes(v))})
		}
	}
	slices.SortFunc(want, func(a, b slotVec) int { return int(a.off - b.off) })
	if !slices.Equal(got, want) {
		t.Fatalf("%d slots, want %d", len(got), len(want))
	}
	t.Logf("object %d bytes, %d lists; front %d, probe of 12 lists: %d requests, %d bytes", len(obj), x.Lists(), h.frontLen(), c.Requests(), c[storage.OpGetRange].Bytes)
}

// TestVectorCorrupt: a flipped byte in a version-2 object fails its
// decode, and a cold probe of every list, with a *table.CorruptError (or
// VersionError); a version-1 object stays readable.
func TestVectorCorrupt(t *testing.T) {
	ctx := context.Background()
	vecs := clusteredVecs(300, 4, 5)
	x := BuildVector(vecs, 4, 6)
	b := x.Encode()
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0x41
		_, err := DecodeVector("k", c)
		if !typedCorrupt(err) {
			t.Fatalf("byte %d flipped: decode err = %v", i, err)
		}
		mem := memWith(t, "k", c)
		err = func() error {
			s, err := OpenVector(ctx, mem, "k")
			if err != nil {
				return err
			}
			all := make([]int, max(s.NLists(), 1))
			for l := range all {
				all[l] = l
			}
			n := 0
			if err := s.Lists(ctx, all, func(int32, []float32) { n++ }); err != nil {
				return err
			}
			return errors.New("accepted")
		}()
		if !typedCorrupt(err) {
			t.Fatalf("byte %d flipped: cold probe err = %v", i, err)
		}
	}
	v1 := encodeVectorV1(x)
	dec, err := DecodeVector("k", v1)
	if err != nil || !slices.Equal(dec.Encode(), b) {
		t.Fatalf("version 1: %v", err)
	}
}

func encodeVectorV1(x *VectorIndex) []byte {
	h := []byte(vecMagic)
	h = append(h, 1, 0, 0, 0)
	for _, v := range []int{x.rows, x.dim, x.nlist, len(x.slotOff)} {
		h = appendU32(h, uint32(v))
	}
	h = appendU32(h, crc(h))
	out := h
	for _, sec := range [][]byte{f32Bytes(x.centroids), i32Bytes(x.start), i32Bytes(x.slotOff), f32Bytes(x.vecs)} {
		out = append(out, sec...)
		out = appendU32(out, crc(sec))
	}
	return out
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}
