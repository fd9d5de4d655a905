package commit

import (
	"bytes"
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Chain objects (docs/format/commit.md, "Chain objects"). A group commit
// publishes a chain of commits with one CAS; on a store that can keep one
// object under several names (storage.SharedPutter: a local directory, by
// hard links) the chain's commits are written as one object — their
// canonical encodings one per line, in chain order — stored under every
// one of their keys. Reading any of the keys reads the whole chain; the
// line whose id matches the key is the commit. Each line keeps its own
// format and checksum, so a chain object is exactly the concatenation of
// the objects the commits would otherwise be.
//
// Why: every commit object is a file, and creating a file (an inode) is
// most of a local put's cost — a 16-write batch made 16 commit files; now
// it makes one, and its hard links cost a directory entry each.

// maxChainObjectBytes bounds one chain object: a reader of one commit
// reads all of it, so a long chain of large commits (inline states) is
// split into several objects. 256 KiB holds a full 16-write batch whose
// commits carry ~12 KiB of inline states each (table states up to 12 KiB
// ride inline since December 2026; at 64 KiB such a batch made four
// files); reading it whole is ~0.1 ms of local I/O, and chain objects
// exist only on a local directory.
const maxChainObjectBytes = 256 << 10

// SharesCommits reports whether WriteCommitsShared writes a chain of
// commits as one object on this repository's store.
func (r *Repo) SharesCommits() bool {
	_, ok := storage.SharedPutterOf(r.store)
	return ok
}

// WriteCommitsShared is WriteCommits writing the chain's commits as chain
// objects where the store shares one object among names
// (storage.SharedPutterOf), a commit alone as before. Without the
// capability it is WriteCommits.
func (r *Repo) WriteCommitsShared(ctx context.Context, chain []*Commit) error {
	if _, ok := storage.SharedPutterOf(r.store); !ok || len(chain) < 2 {
		return r.WriteCommits(ctx, chain)
	}
	if r.readOnly {
		return ErrReadOnly
	}
	if err := beforeCommitObjects(ctx); err != nil {
		return err
	}
	enc := make([][]byte, len(chain))
	for i, c := range chain {
		b, err := Encode(c)
		if err != nil {
			return notPublished(err)
		}
		enc[i] = b
	}
	for start := 0; start < len(chain); {
		end, size := start+1, len(enc[start])
		for end < len(chain) && size+len(enc[end]) <= maxChainObjectBytes {
			size += len(enc[end])
			end++
		}
		if err := r.putChainObject(ctx, chain[start:end], enc[start:end]); err != nil {
			return notPublished(err)
		}
		start = end
	}
	return nil
}

// putChainObject writes commits (one, or a run of a chain) as one object
// under each commit's key and caches them.
func (r *Repo) putChainObject(ctx context.Context, commits []*Commit, enc [][]byte) error {
	if len(commits) == 1 {
		return r.putCommit(ctx, commits[0])
	}
	keys := make([]string, len(commits))
	for i, c := range commits {
		keys[i] = CommitKey(c.ID)
	}
	data := bytes.Join(enc, nil)
	if err := storage.PutShared(ctx, r.store, keys, data); err != nil {
		return fmt.Errorf("write commits %s…%s: %w", keys[0], keys[len(keys)-1], err)
	}
	for i, c := range commits {
		c.summed = true
		r.cache.Add(keys[i], c, sizeOf(c, len(enc[i])))
	}
	return nil
}

// decodeObject decodes the commit object stored under key: one commit, or
// a chain object (several lines), of which it returns the commit key names
// and every other commit of the chain (for the cache). Any defect in any
// line — undecodable, a bad checksum, not byte for byte its commit's
// canonical encoding, two lines with one id, a line whose first parent is
// not the line before it — makes the whole object corrupt,
// and so does a chain object not holding the key's commit.
func decodeObject(key string, data []byte) (*Commit, []*Commit, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || nl == len(data)-1 {
		c, err := Decode(key, data)
		return c, nil, err
	}
	var (
		found *Commit
		all   []*Commit
		seen  = map[ID]bool{}
	)
	for rest := data; len(rest) > 0; {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, nil, corrupt(key, "chain object: line %d has no trailing newline", len(all)+1)
		}
		line := rest[:nl+1]
		rest = rest[nl+1:]
		id, err := lineID(line)
		if err != nil {
			return nil, nil, corrupt(key, "chain object: line %d: %v", len(all)+1, err)
		}
		c, err := Decode(CommitKey(id), line)
		if err != nil {
			return nil, nil, corrupt(key, "chain object: line %d: %v", len(all)+1, err)
		}
		// Only this build writes chain objects, always canonically: a
		// line must be exactly its commit's encoding (a lenient JSON
		// reading of a damaged line could hide the line after it).
		if enc, err := Encode(c); err != nil || !c.summed || !bytes.Equal(enc, line) {
			return nil, nil, corrupt(key, "chain object: line %d is not the canonical encoding of commit %s", len(all)+1, c.ID)
		}
		if seen[c.ID] {
			return nil, nil, corrupt(key, "chain object: commit %s twice", c.ID)
		}
		seen[c.ID] = true
		if n := len(all); n > 0 {
			if p, ok := c.Parent(); !ok || p != all[n-1].ID {
				return nil, nil, corrupt(key, "chain object: commit %s does not follow %s", c.ID, all[n-1].ID)
			}
		}
		all = append(all, c)
		if CommitKey(c.ID) == key {
			found = c
		}
	}
	if found == nil {
		return nil, nil, corrupt(key, "chain object of %d commits does not hold the key's commit", len(all))
	}
	return found, all, nil
}

// lineID reads the id of one encoded commit without decoding the rest
// (Decode then checks it against the key built from it).
func lineID(line []byte) (ID, error) {
	const field = `"id":"`
	i := bytes.Index(line, []byte(field))
	if i < 0 || len(line) < i+len(field)+26 {
		return ID{}, fmt.Errorf("no commit id")
	}
	return ParseID(string(line[i+len(field) : i+len(field)+26]))
}
