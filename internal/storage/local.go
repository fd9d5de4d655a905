package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
)

// Local is a crash-safe Store on a local directory, safe for concurrent use by
// goroutines and by OS processes sharing the directory. See
// docs/format/storage.md for the layout and the durability recipe:
//
//   - key "a/b/c" is the file <root>/a/b/c;
//   - every put writes <dir>/.tmp-<random>, fsyncs it, then publishes it with
//     rename (Put, PutIfMatch) or link (PutIfAbsent) and fsyncs the directory;
//   - Put, PutIfMatch and Delete hold an exclusive flock on one of lockStripes
//     lock files under <root>/.locks while they check and publish;
//   - ETags are the first 16 bytes of the content's SHA-256, in hex, cached in
//     the xattr user.omnigraph.etag (recomputed when the xattr is missing).
//
// Local never removes directories, and it never removes lock files (removing a
// lock file that another process holds would let two processes "hold" it).
type Local struct {
	root string
	// sem serialises lock holders of one stripe inside this process (and makes
	// waiting cancellable); flock serialises processes.
	sem [lockStripes]chan struct{}
	hot hotSet // files GetHot keeps open (local_hot.go)
	// spares are temp files created ahead of coming puts (local_spare.go).
	spares spareSet
}

const (
	lockStripes = 64
	lockDir     = ".locks"
	etagXattr   = "user.omnigraph.etag"
)

var (
	_ Store        = (*Local)(nil)
	_ ReadAtOpener = (*Local)(nil)
)

// NewLocal opens (creating if needed) a store rooted at dir.
func NewLocal(dir string) (*Local, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: local root %q: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(root, lockDir), 0o755); err != nil {
		return nil, fmt.Errorf("storage: local root %q: %w", dir, err)
	}
	l := &Local{root: root}
	for i := range l.sem {
		l.sem[i] = make(chan struct{}, 1)
	}
	return l, nil
}

// Root returns the absolute directory the store lives in.
func (l *Local) Root() string { return l.root }

// Path returns the file that holds key (for external readers such as DuckDB).
func (l *Local) Path(key string) (string, error) {
	if err := checkKey(OpStat, key); err != nil {
		return "", err
	}
	return l.path(key), nil
}

func (l *Local) path(key string) string { return filepath.Join(l.root, filepath.FromSlash(key)) }

// IsTemp reports whether a file name (one path element) is a temp file a put
// wrote and has not published (yet, or ever, after a crash). Cleanup may
// delete such files once they are older than its grace period.
func IsTemp(name string) bool { return strings.HasPrefix(name, TempPrefix) }

func (l *Local) begin(ctx context.Context, op Op, key string) error {
	if err := checkKey(op, key); err != nil {
		return err
	}
	return opErr(op, key, ctx.Err())
}

// Get implements Store.
func (l *Local) Get(ctx context.Context, key string) ([]byte, Info, error) {
	if err := l.begin(ctx, OpGet, key); err != nil {
		return nil, Info{}, err
	}
	f, fi, err := l.open(key)
	if err != nil {
		return nil, Info{}, opErr(OpGet, key, err)
	}
	defer f.Close()
	return l.readOpen(f, fi, key)
}

// readOpen reads the whole object file f (opened for key) and its Info.
func (l *Local) readOpen(f *os.File, fi fs.FileInfo, key string) ([]byte, Info, error) {
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		// The file is never modified in place, so a short read is corruption or I/O failure.
		return nil, Info{}, opErr(OpGet, key, err)
	}
	etag, ok := xattrETag(f)
	if !ok {
		etag = contentETag(data)
	}
	return data, Info{Key: key, Size: fi.Size(), ETag: etag, ModTime: fi.ModTime()}, nil
}

// GetRange implements Store.
func (l *Local) GetRange(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := l.begin(ctx, OpGetRange, key); err != nil {
		return nil, err
	}
	if err := checkRange(off, length); err != nil {
		return nil, opErr(OpGetRange, key, err)
	}
	f, fi, err := l.open(key)
	if err != nil {
		return nil, opErr(OpGetRange, key, err)
	}
	defer f.Close()
	if off >= fi.Size() {
		return []byte{}, nil
	}
	buf := make([]byte, min(length, fi.Size()-off))
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, opErr(OpGetRange, key, err)
	}
	return buf, nil
}

// Stat implements Store.
func (l *Local) Stat(ctx context.Context, key string) (Info, error) {
	if err := l.begin(ctx, OpStat, key); err != nil {
		return Info{}, err
	}
	f, fi, err := l.open(key)
	if err != nil {
		return Info{}, opErr(OpStat, key, err)
	}
	defer f.Close()
	info, err := fileInfo(f, fi, key)
	return info, opErr(OpStat, key, err)
}

// OpenReadAt implements ReadAtOpener with an open *os.File: the reader keeps
// the version it opened even if the key is replaced or deleted meanwhile.
func (l *Local) OpenReadAt(ctx context.Context, key string) (ReadAtCloser, error) {
	if err := l.begin(ctx, OpStat, key); err != nil {
		return nil, err
	}
	f, fi, err := l.open(key)
	if err != nil {
		return nil, opErr(OpStat, key, err)
	}
	return &fileReadAt{File: f, size: fi.Size()}, nil
}

type fileReadAt struct {
	*os.File
	size int64
}

func (r *fileReadAt) Size() int64 { return r.size }

// open opens the object file; a missing file, a missing parent, or a directory
// in its place all mean ErrNotFound.
func (l *Local) open(key string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(l.path(key))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil, ErrNotFound
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, ErrNotFound
	}
	return f, fi, nil
}

// fileInfo builds Info for an open object file, hashing it only when the
// ETag xattr is missing (files written by something other than Local, or a
// file system without user xattrs).
func fileInfo(f *os.File, fi fs.FileInfo, key string) (Info, error) {
	etag, ok := xattrETag(f)
	if !ok {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size())); err != nil {
			return Info{}, err
		}
		etag = hex.EncodeToString(h.Sum(nil)[:16])
	}
	return Info{Key: key, Size: fi.Size(), ETag: etag, ModTime: fi.ModTime()}, nil
}

// contentETag is the ETag of a content: 16 bytes of SHA-256, hex. It cannot be
// forged or go stale: a reader's ETag matches only if the bytes are identical.
func contentETag(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

func xattrETag(f *os.File) (string, bool) {
	var buf [64]byte
	n, err := unix.Fgetxattr(int(f.Fd()), etagXattr, buf[:])
	if err != nil || n != 32 {
		return "", false
	}
	return string(buf[:n]), true
}

// Put implements Store.
func (l *Local) Put(ctx context.Context, key string, data []byte) (Info, error) {
	info, err := l.put(ctx, OpPut, key, data, "")
	return info, opErr(OpPut, key, err)
}

// PutIfMatch implements Store. The comparison and the rename happen under the
// key's stripe lock, which Put and Delete also take, so no other publish can
// slip between them, in this process or another.
//
// INVARIANT: exactly one of N concurrent PutIfMatch with the same ETag wins,
// across goroutines and processes (TestCASChain, TestCASChainProcesses).
func (l *Local) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (Info, error) {
	info, err := l.put(ctx, OpPutIfMatch, key, data, etag)
	return info, opErr(OpPutIfMatch, key, err)
}

// put is Put (op == OpPut) and PutIfMatch: temp file, then compare and rename
// under the stripe lock, then fsync the directory.
func (l *Local) put(ctx context.Context, op Op, key string, data []byte, etag string) (Info, error) {
	if err := l.begin(ctx, op, key); err != nil {
		return Info{}, err
	}
	if op == OpPutIfMatch {
		// Cheap early out for stale callers (most of them under contention):
		// no temp file, no fsync. The check that counts is repeated under the lock.
		if err := l.matches(key, etag); err != nil {
			return Info{}, err
		}
	}
	tmp, info, err := l.writeTemp(ctx, key, data)
	if err != nil {
		return Info{}, err
	}
	published := false
	defer func() {
		if !published {
			os.Remove(tmp)
		}
	}()
	final := l.path(key)
	err = l.withLock(ctx, key, func() error {
		if op == OpPutIfMatch {
			if err := l.matches(key, etag); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := failpoint.Hit("storage/before-publish"); err != nil {
			return err
		}
		if err := os.Rename(tmp, final); err != nil {
			if isDir(final) {
				return invalidKeyError("key names a directory of other keys")
			}
			return err
		}
		published = true
		return nil
	})
	if err != nil {
		return Info{}, err
	}
	// After the rename the object is visible; finish making it durable even if
	// ctx is cancelled now, so "visible" and "durable" differ only across a crash.
	if err := failpoint.Hit("storage/after-publish"); err != nil {
		return Info{}, err
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return Info{}, err
	}
	return info, nil
}

// matches returns nil if key's current ETag is etag, else ErrPrecondition
// (ErrNotFound if the object is missing).
func (l *Local) matches(key, etag string) error {
	f, fi, err := l.open(key)
	if err != nil {
		return err
	}
	cur, err := fileInfo(f, fi, key)
	f.Close()
	if err != nil {
		return err
	}
	if cur.ETag != etag {
		return ErrPrecondition
	}
	return nil
}

// PutIfAbsent implements Store: link(2) of a durable temp file fails with
// EEXIST if the name exists, atomically, in any number of processes.
//
// INVARIANT: exactly one of N concurrent PutIfAbsent on one key wins, across
// goroutines and processes (TestPutIfAbsentRace, TestPutIfAbsentProcesses).
func (l *Local) PutIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	info, err := l.putIfAbsent(ctx, key, data)
	return info, opErr(OpPutIfAbsent, key, err)
}

func (l *Local) putIfAbsent(ctx context.Context, key string, data []byte) (Info, error) {
	if err := l.begin(ctx, OpPutIfAbsent, key); err != nil {
		return Info{}, err
	}
	tmp, info, err := l.writeTemp(ctx, key, data)
	if err != nil {
		return Info{}, err
	}
	defer os.Remove(tmp)
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if err := failpoint.Hit("storage/before-publish"); err != nil {
		return Info{}, err
	}
	final := l.path(key)
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			if isDir(final) {
				return Info{}, invalidKeyError("key names a directory of other keys")
			}
			return Info{}, ErrExists
		}
		return Info{}, err
	}
	if err := failpoint.Hit("storage/after-publish"); err != nil {
		return Info{}, err
	}
	// Unlink the temp name before the directory fsync so one fsync covers both.
	if err := os.Remove(tmp); err != nil {
		return Info{}, err
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return Info{}, err
	}
	return info, nil
}

// Delete implements Store. It takes the stripe lock so a delete cannot fall
// between a PutIfMatch's comparison and its rename (which would resurrect the
// object), and fsyncs the directory so a deleted ref stays deleted.
func (l *Local) Delete(ctx context.Context, key string) error {
	if err := l.begin(ctx, OpDelete, key); err != nil {
		return err
	}
	final := l.path(key)
	err := l.withLock(ctx, key, func() error {
		err := unix.Unlink(final)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EISDIR):
			return errNothingDeleted
		}
		return err
	})
	if err == errNothingDeleted {
		return nil
	}
	if err == nil {
		l.dropSpare(filepath.Dir(final))
		err = syncDir(l.removeEmptyParents(key))
	}
	return opErr(OpDelete, key, err)
}

// removeEmptyParents removes the directories of key's prefix that the delete
// left empty, deepest first, stopping at the first that is not empty (rmdir
// refuses) and never touching the root. It returns the deepest directory that
// remains, for the caller to fsync. So a deleted key's prefix never lingers
// as an empty directory that would block creating the prefix itself as a key
// (deleting branch a/b must not block branch a). A concurrent put into a
// directory removed here finds it gone and recreates it (writeTemp retries);
// once its temp file exists the directory is not empty and rmdir fails.
func (l *Local) removeEmptyParents(key string) string {
	dir := filepath.Dir(l.path(key))
	for dir != l.root && strings.HasPrefix(dir, l.root+string(filepath.Separator)) {
		if unix.Rmdir(dir) != nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	return dir
}

var errNothingDeleted = errors.New("nothing deleted")

// writeTemp writes data to a fresh temp file in key's directory (creating the
// directories durably), stores its ETag xattr and fsyncs it. The caller
// publishes or removes it.
func (l *Local) writeTemp(ctx context.Context, key string, data []byte) (string, Info, error) {
	dir := filepath.Dir(l.path(key))
	f := l.takeSpare(dir)
	for attempt := 0; f == nil; attempt++ {
		name := filepath.Join(dir, fmt.Sprintf("%s%016x", TempPrefix, rand.Uint64()))
		var err error
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		switch {
		case errors.Is(err, syscall.ENOTDIR):
			return "", Info{}, invalidKeyError("a parent of the key is an object")
		case errors.Is(err, fs.ErrExist) && attempt < 8:
			continue // random name collision
		case errors.Is(err, fs.ErrNotExist) && attempt < 8:
			// A concurrent cleanup may remove an empty directory we just made: retry.
			if err := l.mkdirs(ctx, key); err != nil {
				return "", Info{}, err
			}
			continue
		}
		return "", Info{}, err
	}
	name := f.Name()
	fail := func(err error) (string, Info, error) {
		f.Close()
		os.Remove(name)
		return "", Info{}, err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	etag := contentETag(data)
	// Best effort: without the xattr, Stat and List hash the file instead.
	_ = unix.Fsetxattr(int(f.Fd()), etagXattr, []byte(etag), 0)
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", Info{}, err
	}
	return name, Info{Key: key, Size: int64(len(data)), ETag: etag, ModTime: fi.ModTime()}, nil
}

// mkdirs creates key's parent directories, fsyncing each parent so the new
// entries survive a crash. It fsyncs existing levels too: another process may
// have created one and not yet synced it.
func (l *Local) mkdirs(ctx context.Context, key string) error {
	segs := strings.Split(key, "/")
	cur := l.root
	for _, seg := range segs[:len(segs)-1] {
		if err := ctx.Err(); err != nil {
			return err
		}
		parent := cur
		cur = filepath.Join(cur, seg)
		if err := os.Mkdir(cur, 0o755); err != nil {
			if errors.Is(err, syscall.ENOTDIR) {
				return invalidKeyError("a parent of the key is an object")
			}
			if !errors.Is(err, fs.ErrExist) {
				return err
			}
			if !isDir(cur) {
				return invalidKeyError("a parent of the key is an object")
			}
		}
		if err := syncDir(parent); err != nil {
			return err
		}
	}
	return nil
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// withLock runs fn holding key's stripe lock: first this process's semaphore
// (cancellable), then an exclusive flock on <root>/.locks/NN (blocking; the
// holders are short critical sections, and the kernel drops the lock of a
// process that dies).
func (l *Local) withLock(ctx context.Context, key string, fn func() error) error {
	h := fnv.New32a()
	h.Write([]byte(key))
	stripe := h.Sum32() % lockStripes
	select {
	case l.sem[stripe] <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.sem[stripe] }()
	lf, err := os.OpenFile(filepath.Join(l.root, lockDir, fmt.Sprintf("%02d", stripe)), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// Closing the descriptor releases the flock.
	defer lf.Close()
	for {
		err = unix.Flock(int(lf.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn()
}

// List implements Store. It walks only the directory subtree of the prefix,
// visiting each directory's entries in key order (a directory "d" sorts as
// "d/"), so keys stream out lexically without collecting them all. Temp and
// lock files are skipped by name.
func (l *Local) List(ctx context.Context, prefix, startAfter string, fn func(Info) error) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	dirKey, namePrefix := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dirKey, namePrefix = prefix[:i+1], prefix[i+1:]
	}
	err := l.walk(ctx, dirKey, namePrefix, startAfter, fn)
	if sw, ok := err.(stopWalk); ok {
		return sw.err // fn's own error, returned as is
	}
	return opErr(OpList, prefix, err)
}

// stopWalk carries fn's error out of walk, where it must not be wrapped.
type stopWalk struct{ err error }

func (s stopWalk) Error() string { return s.err.Error() }

// walk lists the directory holding keys that start with dirKey ("" or ending
// in "/"), restricted to entry names starting with namePrefix.
func (l *Local) walk(ctx context.Context, dirKey, namePrefix, startAfter string, fn func(Info) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := l.root
	if dirKey != "" {
		dir = filepath.Join(l.root, filepath.FromSlash(strings.TrimSuffix(dirKey, "/")))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return err
	}
	type entry struct {
		sortKey string // key, plus "/" for directories
		isDir   bool
	}
	list := make([]entry, 0, len(ents))
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, namePrefix) || segmentProblem(name) != "" || !utf8.ValidString(name) {
			continue
		}
		switch {
		case e.IsDir():
			k := dirKey + name + "/"
			// Skip subtrees entirely at or before the cursor.
			if k <= startAfter && !strings.HasPrefix(startAfter, k) {
				continue
			}
			list = append(list, entry{k, true})
		case e.Type().IsRegular():
			if k := dirKey + name; k > startAfter {
				list = append(list, entry{k, false})
			}
		}
	}
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.sortKey, b.sortKey) })
	for _, e := range list {
		if e.isDir {
			if err := l.walk(ctx, e.sortKey, "", startAfter, fn); err != nil {
				return err
			}
			continue
		}
		f, fi, err := l.open(e.sortKey)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since ReadDir
		}
		if err != nil {
			return err
		}
		info, err := fileInfo(f, fi, e.sortKey)
		f.Close()
		if err != nil {
			return err
		}
		if err := fn(info); err != nil {
			return stopWalk{err}
		}
	}
	return nil
}
