package commit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// The primitives behind `omnigraph verify` and `omnigraph repair`
// (internal/integrity): a handle that opens a graph whose refs are lost or
// damaged, a walk over every stored commit, raw ref reads, and the one ref
// write repair makes.

// OpenUnchecked returns a handle after checking only the format stamp: the
// main ref may be missing or damaged. Verify and repair use it; everything
// else opens with Open.
func OpenUnchecked(ctx context.Context, st storage.Store, opts Options) (*Repo, error) {
	stamp, err := checkStamp(ctx, st)
	if err != nil {
		return nil, err
	}
	r := newRepo(st, opts)
	r.strict = stamp.Sum != ""
	return r, nil
}

// Strict reports whether the graph requires a checksum on every commit and
// ref (its stamp carries one: graphs created since checksums exist).
func (r *Repo) Strict() bool { return r.strict }

// RefKeys lists the keys under refs/heads/ that look like refs (valid branch
// names), including refs that do not decode.
func (r *Repo) RefKeys(ctx context.Context) ([]string, error) {
	var keys []string
	err := r.store.List(ctx, refPrefix, "", func(info storage.Info) error {
		if ValidateBranchName(strings.TrimPrefix(info.Key, refPrefix)) == nil {
			keys = append(keys, info.Key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	return keys, nil
}

// StoredCommit is one object under commits/ as ScanCommits found it: the
// decoded commit, or the error that made it unreadable.
type StoredCommit struct {
	Key    string
	Commit *Commit // nil when Err is set
	Err    error
}

// ScanCommits lists every object under commits/ and decodes each (through
// the cache), calling fn in key order. Keys that are not commit names are
// reported with a *CorruptError. It costs one list page per 1,000 commits
// and one GET per uncached commit: a maintenance operation, never on a read
// or write path.
func (r *Repo) ScanCommits(ctx context.Context, fn func(StoredCommit) error) error {
	return r.store.List(ctx, commitPrefix, "", func(info storage.Info) error {
		id, ok := commitIDOfKey(info.Key)
		if !ok {
			return fn(StoredCommit{Key: info.Key, Err: corrupt(info.Key, "not a commit object name")})
		}
		c, err := r.Commit(ctx, id)
		if err != nil {
			return fn(StoredCommit{Key: info.Key, Err: err})
		}
		return fn(StoredCommit{Key: info.Key, Commit: c})
	})
}

// ErrRefIntact: repair was asked to replace a ref that decodes and names a
// readable commit. Repair never moves a healthy branch.
var ErrRefIntact = errors.New("ref is intact")

// RestoreRef points branch at commit at, replacing a ref that is missing,
// does not decode, or names a commit that cannot be read. An intact ref is
// refused with ErrRefIntact. The write is conditional (create-if-absent for
// a missing ref, compare-and-swap against the damaged bytes otherwise), so a
// writer that repaired or advanced the ref meanwhile wins and repair reports
// the conflict instead of overwriting it.
func (r *Repo) RestoreRef(ctx context.Context, branch string, at ID) (Head, error) {
	if r.readOnly {
		return Head{}, ErrReadOnly
	}
	if err := ValidateBranchName(branch); err != nil {
		return Head{}, err
	}
	c, err := r.Commit(ctx, at)
	if err != nil {
		return Head{}, fmt.Errorf("restore %s: %w", RefKey(branch), err)
	}
	key := RefKey(branch)
	data, info, err := r.store.Get(ctx, key)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if err := r.checkNewBranch(ctx, branch); err != nil {
			return Head{}, err
		}
		wi, err := r.store.PutIfAbsent(ctx, key, encodeRef(c.ID, 1))
		if err != nil {
			return Head{}, fmt.Errorf("restore %s: %w", key, err)
		}
		return Head{Branch: branch, Commit: c.ID, Seq: 1, ETag: wi.ETag}, nil
	case err != nil:
		return Head{}, fmt.Errorf("read ref %s: %w", key, err)
	}
	seq := uint64(1)
	if h, summed, derr := decodeRef(branch, data, info.ETag); derr == nil && (summed || !r.strict) {
		if _, cerr := r.Commit(ctx, h.Commit); cerr == nil {
			return Head{}, &BranchError{Branch: branch, Err: ErrRefIntact,
				Reason: fmt.Sprintf("it names readable commit %s; repair only replaces lost or damaged refs", h.Commit)}
		}
		seq = h.Seq + 1
	}
	wi, err := r.store.PutIfMatch(ctx, key, encodeRef(c.ID, seq), info.ETag)
	if err != nil {
		return Head{}, fmt.Errorf("restore %s: %w", key, err)
	}
	return Head{Branch: branch, Commit: c.ID, Seq: seq, ETag: wi.ETag}, nil
}

// Reclaimed markers. Cleanup removes the data of old commits that stay in
// history; before it deletes anything it records each such commit under
// reclaimed/<ulid>, so a reader that finds an object of the commit missing
// can tell "removed by cleanup" from damage.
const reclaimedPrefix = "reclaimed/"

// ReclaimedKey is the marker object of a commit whose data cleanup removed.
func ReclaimedKey(id ID) string { return reclaimedPrefix + id.String() }

// MarkReclaimed records that cleanup is removing commit id's data. It is
// idempotent.
func (r *Repo) MarkReclaimed(ctx context.Context, id ID) error {
	if r.readOnly {
		return ErrReadOnly
	}
	if _, err := r.store.PutIfAbsent(ctx, ReclaimedKey(id), []byte(id.String()+"\n")); err != nil && !errors.Is(err, storage.ErrExists) {
		return fmt.Errorf("mark %s reclaimed: %w", id, err)
	}
	return nil
}

// Reclaimed reports whether cleanup removed commit id's data: its marker
// exists, or the graph predates markers (its stamp has no checksum), where
// every missing object of a non-head commit was cleanup's doing as far as
// anyone can tell. One request.
func (r *Repo) Reclaimed(ctx context.Context, id ID) (bool, error) {
	if !r.strict {
		return true, nil
	}
	_, err := r.store.Stat(ctx, ReclaimedKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
