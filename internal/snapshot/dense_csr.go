package snapshot

import (
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/limits"
)

// csrBuilder builds the dense CSRs of an edge table in two passes over its
// edges, in storage order: the first counts each near row's edges, the
// second places each edge's far row at its near row's next slot. The far
// rows of one near row so keep the order of their edges — the order the
// row executor walks (EdgeTable.Out/In and the row CSRs of adjacency.go
// list edge rows in row order), which a dense walk must reproduce — and
// nothing but the CSRs is ever held: 4 B an edge and 4 B a node per
// direction, where one pass would hold both resolved ends of every edge
// (8 B an edge) while grouping them.
type csrBuilder struct {
	out, in *csrFill
}

// csrFill is one direction being built: off[k+1] counts row k's edges in
// the first pass; grow turns it into row k's first slot (the cumulative
// counts shifted by one), the second pass moves it past each edge placed,
// and it ends as row k's end: the CSR's offsets.
type csrFill struct {
	off    []int32
	far    []int32
	placed int
}

// newCSRBuilder charges and makes the offsets of the directions asked for
// (from and to rows: the near rows by source and by destination).
func newCSRBuilder(fromRows, toRows int, wantOut, wantIn bool, mem *limits.Budget) (*csrBuilder, error) {
	b := &csrBuilder{}
	if wantOut {
		if err := mem.Charge(4 * int64(fromRows+1)); err != nil {
			return nil, err
		}
		b.out = &csrFill{off: make([]int32, fromRows+1)}
	}
	if wantIn {
		if err := mem.Charge(4 * int64(toRows+1)); err != nil {
			return nil, err
		}
		b.in = &csrFill{off: make([]int32, toRows+1)}
	}
	return b, nil
}

// count is the first pass: the edge from row s to row d.
func (b *csrBuilder) count(s, d int32) {
	if b.out != nil {
		b.out.off[s+1]++
	}
	if b.in != nil {
		b.in.off[d+1]++
	}
}

// grow ends the first pass: the offsets become cumulative and the far
// arrays are charged and made.
func (b *csrBuilder) grow(mem *limits.Budget) error {
	for _, f := range []*csrFill{b.out, b.in} {
		if f == nil {
			continue
		}
		for i := 1; i < len(f.off); i++ {
			f.off[i] += f.off[i-1]
		}
		total := int64(f.off[len(f.off)-1])
		// off[k+1] becomes the start of row k: its next free slot.
		copy(f.off[1:], f.off[:len(f.off)-1])
		if err := mem.Charge(4 * total); err != nil {
			return err
		}
		f.far = make([]int32, total)
	}
	return nil
}

// place is the second pass: the edge from row s to row d, seen in the
// same order as by count.
func (b *csrBuilder) place(s, d int32) error {
	for _, e := range [2]struct {
		f         *csrFill
		near, far int32
	}{{b.out, s, d}, {b.in, d, s}} {
		f := e.f
		if f == nil {
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

// finish returns the CSRs asked for, once the second pass placed as many
// edges as the first counted (both read the same immutable table state).
func (b *csrBuilder) finish() (out, in *DenseCSR, err error) {
	for _, f := range []*csrFill{b.out, b.in} {
		if f != nil && (f.placed != len(f.far) || int(f.off[len(f.off)-1]) != len(f.far)) {
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
