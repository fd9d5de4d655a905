package snapshot

import "github.com/omnigraph-go/omnigraph/internal/limits"

// groupStable turns the edges (near[e], far[e]), in edge storage order,
// into the CSR by near row (rows near rows): a counting sort that scatters
// far into a new array, so the far rows of one near row keep the order of
// their edges. That is the order the row executor walks (EdgeTable.Out/In
// and the row CSRs of adjacency.go list edge rows in row order), which a
// dense projection must reproduce; counts do not need it but share the
// view. The CSR (4 B a row and 4 B an edge) is charged to mem and kept
// charged for the query; near and far are left to the caller.
func groupStable(near, far []int32, rows int, mem *limits.Budget) (*DenseCSR, error) {
	if err := mem.Charge(4*int64(rows+1) + 4*int64(len(far))); err != nil {
		return nil, err
	}
	off := make([]int32, rows+1)
	for _, k := range near {
		off[k+1]++
	}
	for i := 1; i <= rows; i++ {
		off[i] += off[i-1]
	}
	// The next free slot of each group: off shifted by one, so that after
	// the scatter off[k] is again the start of group k.
	out := make([]int32, len(far))
	for e, k := range near {
		out[off[k]] = far[e]
		off[k]++
	}
	copy(off[1:], off[:rows])
	off[0] = 0
	return &DenseCSR{off: off, far: out}, nil
}
