package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// SharedPutter is the optional capability of stores that can keep one
// object under several fresh names for about the cost of one: Local writes
// one file and hard-links it under each name, so a group commit's chain of
// commits costs one file creation (an inode; the expensive part of a put
// on ext4) and one fsync round instead of one of each per commit. Every
// name reads the same bytes; deleting one name leaves the others.
//
// Only Local has it natively. The wrappers (Counting, Recording, Delayed,
// Faulty, Batching, Cached) forward it when their inner store has it,
// counting, recording, delaying and fault-injecting it as one request of
// OpPutShared matched on the first key. Callers that would rather write
// something else without it (one object per name instead of the shared
// bytes under each) ask SharedPutterOf first.
type SharedPutter interface {
	// PutsShared reports whether PutShared is available; it sends no
	// request.
	PutsShared() bool
	// PutShared writes data durably under every key (fresh names, as for
	// Put). On success every key reads data; on an error any of them may
	// exist or not, like a failed Put's key (the caller deletes them or
	// leaves them to cleanup).
	PutShared(ctx context.Context, keys []string, data []byte) error
}

// SharedPutterOf returns st's SharedPutter when st has the capability. It
// does not look under wrappers: a wrapper forwards the capability itself,
// so that the request is counted and fault-injected like every other.
func SharedPutterOf(st Store) (SharedPutter, bool) {
	p, ok := st.(SharedPutter)
	if !ok || !p.PutsShared() {
		return nil, false
	}
	return p, true
}

// PutShared writes data under every key of keys (fresh names), recording
// them all in ctx's ledger first (as PutFresh): through st's SharedPutter
// when it has one, else by one Put per key.
func PutShared(ctx context.Context, st Store, keys []string, data []byte) error {
	if err := checkSharedKeys(keys); err != nil {
		return err // before any put: a bad key list changes nothing
	}
	for _, k := range keys {
		LedgerOf(ctx).Add(k)
	}
	if p, ok := SharedPutterOf(st); ok {
		return p.PutShared(ctx, keys, data)
	}
	for _, k := range keys {
		if _, err := st.Put(ctx, k, data); err != nil {
			return err
		}
	}
	return nil
}

func checkSharedKeys(keys []string) error {
	if len(keys) == 0 {
		return opErr(OpPutShared, "", invalidKeyError("no keys"))
	}
	for _, k := range keys {
		if err := checkKey(OpPutShared, k); err != nil {
			return err
		}
	}
	return nil
}

// errNoSharedPut is the answer of a wrapper whose inner store cannot share.
func errNoSharedPut(keys []string) error { return opErr(OpPutShared, keys[0], ErrUnsupported) }

func innerShared(inner Store, keys []string) (SharedPutter, error) {
	if err := checkSharedKeys(keys); err != nil {
		return nil, err
	}
	p, ok := SharedPutterOf(inner)
	if !ok {
		return nil, errNoSharedPut(keys)
	}
	return p, nil
}

// PutsShared implements SharedPutter: always.
func (l *Local) PutsShared() bool { return true }

// PutShared implements SharedPutter with the durable recipe of PutIfAbsent
// done once: a temp file in the first key's directory, written, its ETag
// xattr set and fsynced; then a hard link under each key (creating missing
// directories durably); the temp name unlinked; and one fsync per distinct
// directory. Nothing is visible under a key before its file is durable, so
// a crash at any point leaves whole objects (unreferenced until the
// caller's ref CAS) and at most a temp file for cleanup's sweep.
//
// INVARIANT: on success every key holds data durably (TestLocalPutShared,
// TestPutSharedCrash).
func (l *Local) PutShared(ctx context.Context, keys []string, data []byte) error {
	if err := checkSharedKeys(keys); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return opErr(OpPutShared, keys[0], err)
	}
	err := l.putShared(ctx, keys, data)
	return opErr(OpPutShared, keys[0], err)
}

func (l *Local) putShared(ctx context.Context, keys []string, data []byte) error {
	tmp, _, err := l.writeTemp(ctx, keys[0], data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := failpoint.Hit("storage/before-publish"); err != nil {
		return err
	}
	dirs := []string{filepath.Dir(tmp)}
	for _, k := range keys {
		final := l.path(k)
		err := os.Link(tmp, final)
		if errors.Is(err, fs.ErrNotExist) {
			if err = l.mkdirs(ctx, k); err == nil {
				err = os.Link(tmp, final)
			}
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			if isDir(final) {
				return invalidKeyError("key names a directory of other keys")
			}
			// A fresh name that exists already (a retried put): replace
			// it as Put would.
			if _, err := l.put(ctx, OpPut, k, data, ""); err != nil {
				return err
			}
		case errors.Is(err, syscall.ENOTDIR):
			return invalidKeyError("a parent of the key is an object")
		case err != nil:
			return err
		}
		if d := filepath.Dir(final); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	if err := failpoint.Hit("storage/after-publish"); err != nil {
		return err
	}
	// The temp name goes before the directory fsyncs, so they cover it too.
	if err := os.Remove(tmp); err != nil {
		return err
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// PutShared implements SharedPutter: one OpPutShared request carrying the
// bytes once.
func (c *Counting) PutShared(ctx context.Context, keys []string, data []byte) error {
	p, err := innerShared(c.inner, keys)
	if err != nil {
		return err
	}
	c.add(OpPutShared, len(data))
	return p.PutShared(ctx, keys, data)
}

// PutShared implements SharedPutter (recorded under the first key).
func (r *Recording) PutShared(ctx context.Context, keys []string, data []byte) error {
	p, err := innerShared(r.inner, keys)
	if err != nil {
		return err
	}
	defer r.end(r.start(OpPutShared, keys[0], 0, -1))
	return p.PutShared(ctx, keys, data)
}

// PutShared implements SharedPutter: one round trip.
func (d *Delayed) PutShared(ctx context.Context, keys []string, data []byte) error {
	p, err := innerShared(d.inner, keys)
	if err != nil {
		return err
	}
	if err := d.wait(ctx); err != nil {
		return opErr(OpPutShared, keys[0], err)
	}
	return p.PutShared(ctx, keys, data)
}

// PutShared implements SharedPutter (op "put_shared", matched on the first
// key; the After stage models a put that landed unheard).
func (f *Faulty) PutShared(ctx context.Context, keys []string, data []byte) error {
	p, err := innerShared(f.inner, keys)
	if err != nil {
		return err
	}
	_, err = f.info(ctx, OpPutShared, keys[0], func() (Info, error) { return Info{}, p.PutShared(ctx, keys, data) })
	return err
}

// PutShared implements SharedPutter. Nothing is cached: the caller (the
// commit repository) keeps what it decoded, and one shared object cached
// under each of its names would count its bytes once per name.
func (c *Cached) PutShared(ctx context.Context, keys []string, data []byte) error {
	p, err := innerShared(c.inner, keys)
	if err != nil {
		return err
	}
	return p.PutShared(ctx, keys, data)
}

// PutShared implements SharedPutter. Inside a batch it is deferred like a
// Put: every key reads data from the batch at once, and the one request
// runs in the background until Flush. In a held batch each key is held as
// its own object (sent later by Put, one per key).
func (s *Batching) PutShared(ctx context.Context, keys []string, data []byte) error {
	p, err := innerShared(s.inner, keys)
	if err != nil {
		return err
	}
	b := batchOf(ctx)
	if b == nil {
		return p.PutShared(ctx, keys, data)
	}
	if err := ctx.Err(); err != nil {
		return opErr(OpPutShared, keys[0], err)
	}
	b.deferShared(ctx, keys, data, func(ctx context.Context, data []byte) error { return p.PutShared(ctx, keys, data) })
	return nil
}
