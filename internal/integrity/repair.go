package integrity

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// RepairOptions select what Repair restores.
type RepairOptions struct {
	// Branch limits the repair to one branch. A branch whose ref is absent
	// (lost, or deleted) is restored only when named here, except main,
	// which every graph has.
	Branch string
	// Commit, with Branch, restores the ref to exactly this commit (it must
	// be intact) instead of the newest intact one of the branch.
	Commit string
	// Confirm performs the repair; without it Repair only previews.
	Confirm bool
}

// Candidate is a commit repair considered for a branch.
type Candidate struct {
	Commit    string    `json:"commit"`
	Height    uint64    `json:"height"`
	CreatedAt int64     `json:"created_at"` // unix microseconds
	Kind      string    `json:"kind"`
	Message   string    `json:"message"`
	Problems  []Problem `json:"problems,omitempty"` // why it is not intact
}

// RefRepair is what Repair found (and, confirmed, did) for one branch.
type RefRepair struct {
	Branch string `json:"branch"`
	Ref    string `json:"ref"`
	// State is "missing" or "damaged" (the ref does not decode or names an
	// unreadable commit).
	State  string `json:"state"`
	Detail string `json:"detail"`
	// Restore is the commit the ref is (or would be) pointed at; nil when no
	// intact commit of the branch exists.
	Restore *Candidate `json:"restore"`
	// Skipped lists newer commits of the branch that are not intact.
	Skipped []Candidate `json:"skipped,omitempty"`
	// Done is true once the ref was written (Confirm).
	Done bool `json:"done"`
}

// RepairReport is the result of Repair.
type RepairReport struct {
	Preview bool        `json:"preview"`
	Refs    []RefRepair `json:"refs"`
}

// ErrNothingToRestore: a damaged ref has no intact commit of its branch to
// point at.
var ErrNothingToRestore = errors.New("no intact commit to restore")

// Repair finds branch refs that are missing (main, or opts.Branch) or
// damaged, and for each chooses the newest intact commit authored on that
// branch: by height, then creation time, the first commit whose own objects
// and whose ancestors' commit objects all check out. With Confirm it writes
// the ref (commit.Repo.RestoreRef: conditional, never over an intact ref).
// Without Confirm it writes nothing.
func Repair(ctx context.Context, st storage.Store, opts RepairOptions) (*RepairReport, error) {
	if opts.Commit != "" && opts.Branch == "" {
		return nil, fmt.Errorf("%w: --commit needs --branch", commit.ErrInvalidRequest)
	}
	repo, err := commit.OpenUnchecked(ctx, st, commit.Options{ReadOnly: !opts.Confirm})
	if err != nil {
		return nil, err
	}
	rep := &RepairReport{Preview: !opts.Confirm, Refs: []RefRepair{}}
	damaged, err := damagedRefs(ctx, repo, opts.Branch)
	if err != nil {
		return nil, err
	}
	if len(damaged) == 0 {
		return rep, nil
	}
	byBranch, err := commitsByBranch(ctx, repo)
	if err != nil {
		return nil, err
	}
	for _, rr := range damaged {
		cands := byBranch[rr.Branch]
		if opts.Commit != "" {
			id, err := commit.ParseID(opts.Commit)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", commit.ErrInvalidRequest, err)
			}
			c, err := repo.Commit(ctx, id)
			if err != nil {
				return nil, err
			}
			cands = []*commit.Commit{c}
		}
		for _, c := range cands {
			probs := checkLineage(ctx, st, repo, c)
			cand := candidateOf(c, probs)
			if len(probs) > 0 {
				rr.Skipped = append(rr.Skipped, cand)
				continue
			}
			rr.Restore = &cand
			break
		}
		if rr.Restore != nil && opts.Confirm {
			id, _ := commit.ParseID(rr.Restore.Commit)
			if _, err := repo.RestoreRef(ctx, rr.Branch, id); err != nil {
				return rep, fmt.Errorf("repair %s: %w", rr.Ref, err)
			}
			rr.Done = true
		}
		rep.Refs = append(rep.Refs, rr)
	}
	for _, rr := range rep.Refs {
		if rr.Restore == nil {
			return rep, fmt.Errorf("%w: branch %q has no intact commit", ErrNothingToRestore, rr.Branch)
		}
	}
	return rep, nil
}

// damagedRefs lists the refs to repair: every ref that does not decode or
// names an unreadable commit, a missing main, and a missing named branch.
func damagedRefs(ctx context.Context, repo *commit.Repo, only string) ([]RefRepair, error) {
	keys, err := repo.RefKeys(ctx)
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	var out []RefRepair
	for _, key := range keys {
		branch := strings.TrimPrefix(key, "refs/heads/")
		present[branch] = true
		if only != "" && branch != only {
			continue
		}
		h, err := repo.Head(ctx, branch)
		if err == nil {
			if _, err = repo.Commit(ctx, h.Commit); err == nil {
				continue
			}
			err = fmt.Errorf("names commit %s: %w", h.Commit, err)
		}
		out = append(out, RefRepair{Branch: branch, Ref: key, State: "damaged", Detail: err.Error()})
	}
	for _, b := range []string{commit.MainBranch, only} {
		if b == "" || present[b] || (only != "" && b != only) {
			continue
		}
		if err := commit.ValidateBranchName(b); err != nil {
			return nil, err
		}
		present[b] = true
		out = append(out, RefRepair{Branch: b, Ref: commit.RefKey(b), State: "missing", Detail: "the ref does not exist"})
	}
	return out, nil
}

// commitsByBranch lists every decodable stored commit by the branch it was
// authored on, newest first (height, created_at, id). Commits written before
// commits recorded their branch count as main's.
func commitsByBranch(ctx context.Context, repo *commit.Repo) (map[string][]*commit.Commit, error) {
	out := map[string][]*commit.Commit{}
	err := repo.ScanCommits(ctx, func(sc commit.StoredCommit) error {
		if sc.Err != nil {
			return nil // damaged commits are never candidates
		}
		b := sc.Commit.Branch
		if b == "" {
			b = commit.MainBranch
		}
		out[b] = append(out[b], sc.Commit)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, cs := range out {
		sort.Slice(cs, func(i, j int) bool { return commit.Newer(cs[i], cs[j]) })
	}
	return out, nil
}

// checkLineage checks c's own objects and that every ancestor commit object
// is present and intact (their data may have been reclaimed by cleanup:
// that is not damage).
func checkLineage(ctx context.Context, st storage.Store, repo *commit.Repo, c *commit.Commit) []Problem {
	probs := CheckCommit(ctx, st, repo, c, false)
	commit.Reach(c.Parents, func(id commit.ID) []commit.ID {
		pc, err := repo.Commit(ctx, id)
		if err != nil {
			probs = append(probs, Problem{Object: commit.CommitKey(id), Kind: classify(err), Detail: err.Error()})
			return nil
		}
		return pc.Parents
	})
	return probs
}

func candidateOf(c *commit.Commit, probs []Problem) Candidate {
	return Candidate{Commit: c.ID.String(), Height: c.Height, CreatedAt: c.CreatedAt, Kind: string(c.Kind), Message: c.Message, Problems: probs}
}
