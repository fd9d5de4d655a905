package snapshot

import (
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/limits"
)

// csrBuilder builds the dense CSRs of an edge table over its edges in
// storage order, so that the far rows of one near row keep the order of
// their edges — the order the row executor walks (EdgeTable.Out/In and the
// row CSRs of adjacency.go list edge rows in row order), which a dense walk
// must reproduce — holding nothing but the CSRs (4 B an edge and 4 B a node
// per direction; grouping the resolved ends of every edge would hold 8 B
// an edge more). A first pass counts each near row's edges and, while the
// near rows come in non-decreasing order (edges stored grouped by source,
// as a bulk load writes them), keeps the far rows as they come: they are
// then already the CSR. A direction whose near rows came out of order
// takes a second pass that places each edge's far row at its near row's
// next slot.
type csrBuilder struct {
	out, in *csrFill
}

// csrFill is one direction being built: off[k+1] counts row k's edges in
// the first pass. In order (seq kept), grow makes off cumulative and seq
// is the CSR. Otherwise grow turns off[k+1] into row k's first slot (the
// cumulative counts shifted by one), the second pass moves it past each
// edge placed, and it ends as row k's end.
type csrFill struct {
	off     []int32
	far     []int32
	seq     []int32 // the far rows in storage order, while the near rows are in order
	last    int32
	charged int64 // what seq was charged
	placed  int
	done    bool // far is complete
}

// newCSRBuilder charges and makes the offsets of the directions asked for
// (from and to rows: the near rows by source and by destination), and the
// in-order far rows of up to edges edges.
func newCSRBuilder(fromRows, toRows int, edges int64, wantOut, wantIn bool, mem *limits.Budget) (*csrBuilder, error) {
	b := &csrBuilder{}
	mk := func(rows int) (*csrFill, error) {
		if err := mem.Charge(4*int64(rows+1) + 4*edges); err != nil {
			return nil, err
		}
		return &csrFill{off: make([]int32, rows+1), seq: make([]int32, 0, edges), charged: 4 * edges}, nil
	}
	var err error
	if wantOut {
		if b.out, err = mk(fromRows); err != nil {
			return nil, err
		}
	}
	if wantIn {
		if b.in, err = mk(toRows); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// count is the first pass: the edge from row s to row d.
func (b *csrBuilder) count(s, d int32, mem *limits.Budget) {
	if b.out != nil {
		b.out.count(s, d, mem)
	}
	if b.in != nil {
		b.in.count(d, s, mem)
	}
}

func (f *csrFill) count(near, far int32, mem *limits.Budget) {
	f.off[near+1]++
	if f.seq == nil {
		return
	}
	if near < f.last || len(f.seq) == cap(f.seq) {
		// Out of order (or more edges than the state counted): the
		// second pass places them.
		f.seq = nil
		mem.Release(f.charged)
		f.charged = 0
		return
	}
	f.last = near
	f.seq = append(f.seq, far)
}

// grow ends the first pass. It reports whether a second pass must place
// the edges of a direction that came out of order.
func (b *csrBuilder) grow(mem *limits.Budget) (bool, error) {
	again := false
	for _, f := range []*csrFill{b.out, b.in} {
		if f == nil {
			continue
		}
		for i := 1; i < len(f.off); i++ {
			f.off[i] += f.off[i-1]
		}
		total := int64(f.off[len(f.off)-1])
		if f.seq != nil {
			f.far, f.seq, f.done = f.seq, nil, true
			mem.Release(f.charged - 4*total)
			continue
		}
		// off[k+1] becomes the start of row k: its next free slot.
		copy(f.off[1:], f.off[:len(f.off)-1])
		if err := mem.Charge(4 * total); err != nil {
			return false, err
		}
		f.far = make([]int32, total)
		again = true
	}
	return again, nil
}

// place is the second pass: the edge from row s to row d, seen in the
// same order as by count.
func (b *csrBuilder) place(s, d int32) error {
	for _, e := range [2]struct {
		f         *csrFill
		near, far int32
	}{{b.out, s, d}, {b.in, d, s}} {
		f := e.f
		if f == nil || f.done {
			continue
		}
		p := f.off[e.near+1]
		if int(p) >= len(f.far) {
			return fmt.Errorf("snapshot: dense adjacency: more edges on the second pass than the first counted (%d)", len(f.far))
		}
		f.far[p] = e.far
		f.off[e.near+1]++
		f.placed++
	}
	return nil
}

// finish returns the CSRs asked for, once a second pass placed as many
// edges as the first counted (both read the same immutable table state).
func (b *csrBuilder) finish() (out, in *DenseCSR, err error) {
	for _, f := range []*csrFill{b.out, b.in} {
		if f != nil && !f.done && (f.placed != len(f.far) || int(f.off[len(f.off)-1]) != len(f.far)) {
			return nil, nil, fmt.Errorf("snapshot: dense adjacency: %d edges placed, %d counted", f.placed, len(f.far))
		}
	}
	if b.out != nil {
		out = &DenseCSR{off: b.out.off, far: b.out.far}
	}
	if b.in != nil {
		in = &DenseCSR{off: b.in.off, far: b.in.far}
	}
	return out, in, nil
}
