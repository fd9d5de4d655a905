package commit

import (
	"context"
	"errors"
	"fmt"
)

// CheckReport summarizes a successful Check.
type CheckReport struct {
	Branches int // live refs
	Commits  int // commits reachable from some ref
	Schemas  int // distinct schema sources referenced
}

// Check verifies the history layer of a graph: the stamp is current, every
// ref decodes and names an existing commit, every reachable commit decodes
// and has height 1 + max(parent heights), exactly one genesis is reachable,
// and every referenced schema source exists with a matching hash. Problems
// are joined into one error; each wraps ErrCorrupt or the read failure. It
// reads every reachable commit once (cached ones are free) and writes nothing.
// Tests run it in t.Cleanup; the graph-level check calls it.
func (r *Repo) Check(ctx context.Context) (CheckReport, error) {
	var rep CheckReport
	var problems []error
	if _, err := checkStamp(ctx, r.store); err != nil {
		return rep, err
	}
	branches, err := r.Branches(ctx)
	if err != nil {
		return rep, err
	}
	rep.Branches = len(branches)
	var heads []ID
	for _, b := range branches {
		h, err := r.Head(ctx, b)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		heads = append(heads, h.Commit)
	}
	schemas := map[string]bool{}
	var genesis []ID
	seen := Reach(heads, func(id ID) []ID {
		c, err := r.Commit(ctx, id)
		if err != nil {
			problems = append(problems, err)
			return nil
		}
		if len(c.Parents) == 0 {
			genesis = append(genesis, id)
		}
		var want uint64
		var next []ID
		for _, p := range c.Parents {
			pc, err := r.Commit(ctx, p)
			if err != nil {
				problems = append(problems, fmt.Errorf("parent of %s: %w", id, err))
				continue
			}
			want = max(want, pc.Height+1)
			next = append(next, p)
		}
		if len(c.Parents) > 0 && c.Height != want {
			problems = append(problems, corrupt(CommitKey(id), "height %d, parents imply %d", c.Height, want))
		}
		if !schemas[c.Schema] {
			schemas[c.Schema] = true
			if _, err := r.Schema(ctx, c.Schema); err != nil {
				problems = append(problems, fmt.Errorf("schema of %s: %w", id, err))
			}
		}
		return next
	})
	if len(heads) > 0 && len(genesis) != 1 {
		problems = append(problems, fmt.Errorf("%w: %d genesis commits reachable, want 1", ErrCorrupt, len(genesis)))
	}
	rep.Commits, rep.Schemas = len(seen), len(schemas)
	return rep, errors.Join(problems...)
}
