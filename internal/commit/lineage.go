package commit

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
)

// ErrNoMergeBase: two commits share no ancestor (they belong to different
// graphs; impossible within one graph, whose commits all descend from genesis).
var ErrNoMergeBase = errors.New("no common ancestor")

// LogOptions bound a history walk.
type LogOptions struct {
	// Limit caps the number of commits returned (0 = no limit).
	Limit int
	// FirstParent follows only first parents: the branch's own line,
	// skipping the history a merge brought in.
	FirstParent bool
}

// Log walks history from commit from, newest first. The full-DAG order is by
// height, then created_at, then id, all descending, so it is deterministic
// and every commit appears after all of its descendants. Cost: one GET per
// commit not yet cached.
func (r *Repo) Log(ctx context.Context, from ID, opts LogOptions) ([]*Commit, error) {
	var out []*Commit
	full := func() bool { return opts.Limit > 0 && len(out) >= opts.Limit }
	if opts.FirstParent {
		id, ok := from, true
		for ok && !full() {
			c, err := r.Commit(ctx, id)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			id, ok = c.Parent()
		}
		return out, nil
	}
	start, err := r.Commit(ctx, from)
	if err != nil {
		return nil, err
	}
	q := &commitHeap{}
	seen := map[ID]bool{start.ID: true}
	heap.Push(q, start)
	for q.Len() > 0 && !full() {
		c := heap.Pop(q).(*Commit)
		out = append(out, c)
		if err := r.pushParents(ctx, q, seen, c, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MergeBase returns a lowest common ancestor of a and b: a common ancestor
// with no other common ancestor below it. When several exist (criss-cross
// merges) it returns the one with the greatest height, ties broken by the
// later created_at, then the greater id, so the answer is deterministic.
//
// INVARIANT: reads only commits above the merge base's height
// (TestMergeBaseReadsOnlyAboveBase).
//
// It walks both histories together in decreasing height order. A commit is
// only popped after every commit of greater height has been, so by then it
// carries every mark it will ever get; the first commit marked from both
// sides is therefore a common ancestor none of whose descendants is one.
// Only commits above the merge base's height are read.
func (r *Repo) MergeBase(ctx context.Context, a, b ID) (*Commit, error) {
	const fromA, fromB = 1, 2
	ca, err := r.Commit(ctx, a)
	if err != nil {
		return nil, err
	}
	if a == b {
		return ca, nil
	}
	cb, err := r.Commit(ctx, b)
	if err != nil {
		return nil, err
	}
	marks := map[ID]uint8{a: fromA, b: fromB}
	q := &commitHeap{}
	heap.Push(q, ca)
	heap.Push(q, cb)
	for q.Len() > 0 {
		c := heap.Pop(q).(*Commit)
		m := marks[c.ID]
		if m == fromA|fromB {
			return c, nil
		}
		for _, p := range c.Parents {
			old, queued := marks[p]
			marks[p] = old | m
			if queued {
				continue // already in the queue; it picks up the new mark
			}
			pc, err := r.Commit(ctx, p)
			if err != nil {
				return nil, err
			}
			heap.Push(q, pc)
		}
	}
	return nil, fmt.Errorf("%w: %s and %s", ErrNoMergeBase, a, b)
}

// IsAncestor reports whether a is b or an ancestor of b. It reads only
// commits whose height is above a's.
func (r *Repo) IsAncestor(ctx context.Context, a, b ID) (bool, error) {
	ca, err := r.Commit(ctx, a)
	if err != nil {
		return false, err
	}
	cb, err := r.Commit(ctx, b)
	if err != nil {
		return false, err
	}
	q := &commitHeap{}
	seen := map[ID]bool{b: true}
	heap.Push(q, cb)
	for q.Len() > 0 {
		c := heap.Pop(q).(*Commit)
		if c.ID == a {
			return true, nil
		}
		if c.Height <= ca.Height {
			continue // no parent of c can be at a's height or above it
		}
		if err := r.pushParents(ctx, q, seen, c, func(pc *Commit) bool { return pc.Height >= ca.Height }); err != nil {
			return false, err
		}
	}
	return false, nil
}

// Reach calls visit once for each commit id reachable from ids, depth
// first, following the ids visit returns (a commit's parents, or fewer);
// it returns every id visited. It reads nothing itself.
func Reach(ids []ID, visit func(ID) []ID) map[ID]bool {
	seen := map[ID]bool{}
	stack := append([]ID(nil), ids...)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		stack = append(stack, visit(id)...)
	}
	return seen
}

// pushParents reads the parents of c not seen yet, marks them seen and
// pushes those keep accepts (nil: all) onto q.
func (r *Repo) pushParents(ctx context.Context, q *commitHeap, seen map[ID]bool, c *Commit, keep func(*Commit) bool) error {
	for _, p := range c.Parents {
		if seen[p] {
			continue
		}
		seen[p] = true
		pc, err := r.Commit(ctx, p)
		if err != nil {
			return err
		}
		if keep == nil || keep(pc) {
			heap.Push(q, pc)
		}
	}
	return nil
}

// Newer reports whether a comes before b in history order, newest first:
// by height, then created_at, then id, all descending (the order of Log,
// and of MergeBase's tie-break).
func Newer(a, b *Commit) bool {
	if a.Height != b.Height {
		return a.Height > b.Height
	}
	if a.CreatedAt != b.CreatedAt {
		return a.CreatedAt > b.CreatedAt
	}
	return a.ID.Compare(b.ID) > 0
}

// commitHeap is a max-heap in Newer order.
type commitHeap []*Commit

func (h commitHeap) Len() int           { return len(h) }
func (h commitHeap) Less(i, j int) bool { return Newer(h[i], h[j]) }
func (h commitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *commitHeap) Push(x any)        { *h = append(*h, x.(*Commit)) }
func (h *commitHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
