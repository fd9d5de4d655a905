package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// encodeTextV1 is the version-1 encoder (before ranged reads), kept to
// test that old objects stay readable.
func encodeTextV1(x *TextIndex) []byte {
	var dl []byte
	for _, d := range x.dl {
		dl = binary.AppendUvarint(dl, uint64(d+1))
	}
	dl = binary.LittleEndian.AppendUint32(dl, crc(dl))
	var dict, post []byte
	prev := ""
	for i, t := range x.terms {
		start := len(post)
		last := int32(-1)
		x.Postings(i, func(off, tf int32) {
			post = binary.AppendUvarint(post, uint64(off-last))
			post = binary.AppendUvarint(post, uint64(tf))
			last = off
		})
		p := commonPrefix(prev, t)
		dict = binary.AppendUvarint(dict, uint64(p))
		dict = binary.AppendUvarint(dict, uint64(len(t)-p))
		dict = append(dict, t[p:]...)
		dict = binary.AppendUvarint(dict, uint64(x.df[i]))
		dict = binary.AppendUvarint(dict, uint64(len(post)-start))
		prev = t
	}
	dict = binary.LittleEndian.AppendUint32(dict, crc(dict))
	post = binary.LittleEndian.AppendUint32(post, crc(post))
	h := []byte(textMagic)
	h = append(h, 1, 0, 0, 0)
	h = binary.LittleEndian.AppendUint32(h, uint32(x.rows))
	h = binary.LittleEndian.AppendUint32(h, uint32(x.docs))
	h = binary.LittleEndian.AppendUint64(h, uint64(x.total))
	h = binary.LittleEndian.AppendUint32(h, uint32(len(x.terms)))
	off := uint64(textHeadV1)
	for _, sec := range [][]byte{dl, dict, post} {
		h = binary.LittleEndian.AppendUint64(h, off)
		h = binary.LittleEndian.AppendUint64(h, uint64(len(sec)))
		off += uint64(len(sec))
	}
	h = binary.LittleEndian.AppendUint32(h, crc(h))
	return slices.Concat(h, dl, dict, post)
}

// zipfDocs is n rows of 12 Zipf-distributed words out of a vocabulary of
// vocab (one row in 50 null).
func zipfDocs(n, vocab int) []any {
	z := rand.NewZipf(rand.New(rand.NewPCG(7, 8)), 1.1, 1, uint64(vocab-1))
	docs := make([]any, n)
	for i := range docs {
		if i%50 == 7 {
			continue
		}
		s := ""
		for k := range 12 {
			if k > 0 {
				s += " "
			}
			s += fmt.Sprintf("w%dx", z.Uint64())
		}
		docs[i] = s
	}
	return docs
}

func postingsOf(x *TextIndex, term string) []Posting {
	i, ok := x.Lookup(term)
	if !ok {
		return nil
	}
	var out []Posting
	x.Postings(i, func(off, tf int32) { out = append(out, Posting{off, tf, x.dl[off]}) })
	return out
}

// TestTextSourceRanged pins the cost of a cold lookup on a fragment-sized
// index (65,536 rows): the front, then per term one read of its postings
// (its dictionary block is in the front here) or, for a large dictionary,
// one of its block too; document lengths of deleted rows one read. The
// answers equal the decoded index's.
func TestTextSourceRanged(t *testing.T) {
	ctx := context.Background()
	for _, vocab := range []int{5000, 200_000} {
		docs := zipfDocs(65536, vocab)
		x := buildOf(docs)
		obj := x.Encode()
		mem := memWith(t, "t/index/a.fts", obj)
		cnt := storage.NewCounting(mem)
		s, err := OpenText(ctx, cnt, "t/index/a.fts")
		if err != nil {
			t.Fatal(err)
		}
		if s.Docs() != x.Docs() || s.TotalLen() != x.TotalLen() || s.Rows() != x.Rows() {
			t.Fatal("statistics differ")
		}
		open := cnt.Snapshot()
		if open.Requests() != 1 || open[storage.OpGetRange].Bytes != TextFrontBytes {
			t.Fatalf("vocab %d: open cost %v", vocab, open)
		}
		terms := []string{"w1x", "w17x", "w4000x", "nothing"}
		var postBytes int64
		for _, term := range terms {
			got, err := s.Postings(ctx, term)
			if err != nil {
				t.Fatal(err)
			}
			if want := postingsOf(x, term); !slices.Equal(got, want) {
				t.Fatalf("vocab %d term %q: %d postings, want %d", vocab, term, len(got), len(want))
			}
			if i, ok := x.Lookup(term); ok {
				postBytes += int64(x.poff[i+1] - x.poff[i])
			}
		}
		offs := []int64{3, 7, 9000, 9001, 12000}
		dls, err := s.DocLens(ctx, offs)
		if err != nil {
			t.Fatal(err)
		}
		for k, o := range offs {
			if dls[k] != x.dl[o] {
				t.Fatalf("row %d length %d, want %d", o, dls[k], x.dl[o])
			}
		}
		c := cnt.Snapshot().Sub(open)
		// 3 terms found: one postings read each; the large dictionary's
		// blocks are beyond the front (one read per distinct block: 4
		// terms); the lengths of rows in chunks 0..2, one read.
		wantReq := int64(3 + 1)
		blocks := map[int]bool{}
		for _, term := range terms {
			bi := slices.IndexFunc(s.dir, func(d dirEnt) bool { return d.first > term }) - 1
			if bi == -2 {
				bi = len(s.dir) - 1
			}
			if d := s.dir[max(bi, 0)]; bi >= 0 && s.h.sec[secDict].off+d.off+d.len > TextFrontBytes {
				blocks[bi] = true
			}
		}
		if vocab > 5000 && len(blocks) == 0 {
			t.Fatal("the large dictionary fits the front: the test no longer reads blocks")
		}
		wantReq += int64(len(blocks))
		dlBytes := int64(3 * (textChunk*s.h.width + 4))
		if c.Requests() != wantReq || c[storage.OpGet].Requests != 0 {
			t.Errorf("vocab %d: %d requests after open, want %d (%v)", vocab, c.Requests(), wantReq, c)
		}
		maxBlock := int64(0)
		for _, d := range s.dir {
			maxBlock = max(maxBlock, int64(d.len))
		}
		if limit := postBytes + dlBytes + 4*maxBlock; c[storage.OpGetRange].Bytes > limit {
			t.Errorf("vocab %d: read %d bytes after open, want ≤ %d", vocab, c[storage.OpGetRange].Bytes, limit)
		}
		t.Logf("vocab %d: object %d bytes; open %d, lookups %d requests / %d bytes", vocab, len(obj), TextFrontBytes, c.Requests(), c[storage.OpGetRange].Bytes)
	}
}

// TestTextVersion1Readable: a version-1 object decodes to the same index,
// and a cold lookup reads it whole; an unknown version is a VersionError.
func TestTextVersion1Readable(t *testing.T) {
	ctx := context.Background()
	docs := randomDocs(rand.New(rand.NewPCG(9, 9)), 300)
	x := buildOf(docs)
	v1 := encodeTextV1(x)
	dec, err := VerifyText("k", v1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dec.Encode(), x.Encode()) {
		t.Fatal("version-1 object re-encodes differently")
	}
	mem := memWith(t, "k", v1)
	s, err := OpenText(ctx, mem, "k")
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range x.Terms() {
		got, err := s.Postings(ctx, term)
		if err != nil || !slices.Equal(got, postingsOf(x, term)) {
			t.Fatalf("term %q: %v", term, err)
		}
	}
	bad := slices.Clone(v1)
	bad[4] = 9
	var ve *table.VersionError
	if _, err := DecodeText("k", bad); !errors.As(err, &ve) {
		t.Fatalf("version 9: %v", err)
	}
}

// TestTextSourceCorrupt: a flipped byte anywhere in what a ranged lookup
// reads is a *table.CorruptError (or VersionError), never a wrong answer.
func TestTextSourceCorrupt(t *testing.T) {
	ctx := context.Background()
	x := buildOf(randomDocs(rand.New(rand.NewPCG(5, 6)), 60))
	b := x.Encode()
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0x41
		mem := memWith(t, "k", c)
		err := func() error {
			s, err := OpenText(ctx, mem, "k")
			if err != nil {
				return err
			}
			for _, term := range x.Terms() {
				got, err := s.Postings(ctx, term)
				if err != nil {
					return err
				}
				if !slices.Equal(got, postingsOf(x, term)) {
					return fmt.Errorf("term %q: wrong postings", term)
				}
			}
			offs := make([]int64, x.Rows())
			for k := range offs {
				offs[k] = int64(k)
			}
			_, err = s.DocLens(ctx, offs)
			return err
		}()
		if !typedCorrupt(err) {
			t.Fatalf("byte %d flipped: err = %v", i, err)
		}
	}
}
