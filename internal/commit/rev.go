package commit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Revisions: the ways a user names a commit. A revision is a base — a full
// commit id, a branch name, or a unique prefix of a commit id (at least
// MinIDPrefix characters, case-insensitive) — followed by any number of
// parent steps: "~N" (the N-th first-parent ancestor; "~" alone is "~1")
// and "^" (the first parent). A full id wins over a branch of the same
// spelling, a branch over a prefix (as in git).

// MinIDPrefix is the shortest commit-id prefix a revision may use.
const MinIDPrefix = 4

// ErrAmbiguousRevision is matched by *AmbiguousRevisionError.
var ErrAmbiguousRevision = errors.New("ambiguous commit prefix")

// AmbiguousRevisionError: a commit-id prefix matching several commits.
type AmbiguousRevisionError struct {
	Prefix     string
	Candidates []string // matching commit ids, ascending (at most a few shown)
	More       int      // candidates not listed
}

func (e *AmbiguousRevisionError) Error() string {
	msg := fmt.Sprintf("commit prefix %q is ambiguous: it matches %s", e.Prefix, strings.Join(e.Candidates, ", "))
	if e.More > 0 {
		msg += fmt.Sprintf(" and %d more", e.More)
	}
	return msg + "; give more characters"
}

func (e *AmbiguousRevisionError) Unwrap() error { return ErrAmbiguousRevision }

// RevisionError: a revision that names no commit (bad syntax, an unknown
// base, or more parent steps than the history has). It unwraps to
// ErrCommitNotFound.
type RevisionError struct {
	Rev    string
	Reason string
}

func (e *RevisionError) Error() string {
	return fmt.Sprintf("commit not found: %s (%s)", e.Rev, e.Reason)
}

func (e *RevisionError) Unwrap() error { return ErrCommitNotFound }

const shownCandidates = 5

// RevisionCommit reads the commit a revision names (ResolveRevision, then
// Commit).
func (r *Repo) RevisionCommit(ctx context.Context, rev string) (*Commit, error) {
	id, err := r.ResolveRevision(ctx, rev)
	if err != nil {
		return nil, err
	}
	return r.Commit(ctx, id)
}

// ResolveRevision returns the commit a revision names (see above). It
// reads the branch ref, lists commit ids only for a prefix (one listing of
// that prefix), and reads one commit per parent step.
func (r *Repo) ResolveRevision(ctx context.Context, rev string) (ID, error) {
	base, steps, err := splitRevision(rev)
	if err != nil {
		return ID{}, err
	}
	id, err := r.revisionBase(ctx, rev, base)
	if err != nil {
		return ID{}, err
	}
	for i := 0; i < steps; i++ {
		c, err := r.Commit(ctx, id)
		if err != nil {
			return ID{}, err
		}
		p, ok := c.Parent()
		if !ok {
			return ID{}, &RevisionError{Rev: rev, Reason: fmt.Sprintf("%s has only %d ancestors", base, i)}
		}
		id = p
	}
	return id, nil
}

// splitRevision parses base and the total first-parent steps.
func splitRevision(rev string) (string, int, error) {
	i := strings.IndexAny(rev, "~^")
	if i < 0 {
		return rev, 0, nil
	}
	base, rest := rev[:i], rev[i:]
	if base == "" {
		return "", 0, &RevisionError{Rev: rev, Reason: "no branch or commit before ~ or ^"}
	}
	steps := 0
	for rest != "" {
		switch rest[0] {
		case '^':
			steps++
			rest = rest[1:]
		case '~':
			rest = rest[1:]
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			n := 1
			if j > 0 {
				v, err := strconv.Atoi(rest[:j])
				if err != nil || v > 1<<20 {
					return "", 0, &RevisionError{Rev: rev, Reason: "ancestor count out of range"}
				}
				n = v
			}
			steps += n
			rest = rest[j:]
		default:
			return "", 0, &RevisionError{Rev: rev, Reason: fmt.Sprintf("unexpected %q after %s", rest, base)}
		}
		if steps > 1<<20 {
			return "", 0, &RevisionError{Rev: rev, Reason: "ancestor count out of range"}
		}
	}
	return base, steps, nil
}

func (r *Repo) revisionBase(ctx context.Context, rev, base string) (ID, error) {
	if id, err := ParseID(base); err == nil {
		return id, nil
	}
	if ValidateBranchName(base) == nil {
		h, err := r.Head(ctx, base)
		if err == nil {
			return h.Commit, nil
		}
		if !errors.Is(err, ErrBranchNotFound) {
			return ID{}, err
		}
	}
	prefix := strings.ToUpper(base)
	if len(prefix) < MinIDPrefix || len(prefix) >= 26 || !isIDPrefix(prefix) {
		return ID{}, &RevisionError{Rev: rev, Reason: fmt.Sprintf("no branch %q, and not a commit id or a prefix of one (%d+ characters)", base, MinIDPrefix)}
	}
	var found []string
	more := 0
	err := r.store.List(ctx, commitPrefix+prefix, "", func(info storage.Info) error {
		id, ok := commitIDOfKey(info.Key)
		if !ok {
			return nil
		}
		if len(found) < shownCandidates {
			found = append(found, id.String())
		} else {
			more++
		}
		return nil
	})
	if err != nil {
		return ID{}, fmt.Errorf("resolve %s: %w", rev, err)
	}
	switch {
	case len(found) == 0:
		return ID{}, &RevisionError{Rev: rev, Reason: fmt.Sprintf("no branch %q and no commit id starting with %s", base, prefix)}
	case len(found) > 1:
		return ID{}, &AmbiguousRevisionError{Prefix: base, Candidates: found, More: more}
	}
	return ParseID(found[0])
}

// isIDPrefix: only characters of the commit-id alphabet (Crockford base32).
func isIDPrefix(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) {
			return false
		}
	}
	return true
}
