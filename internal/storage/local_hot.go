package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Hot objects. A warm handle reads its branch's ref before every query:
// on local disk, an open, fstat, read, fgetxattr and close each time, which
// costs more than a warm key lookup itself. Local never changes a file in
// place: every put writes a temp file and renames (or links) it over the
// key, so a key names new content exactly when its directory entry names
// another inode. GetHot keeps the file it last read for a key open, and
// the key's parent directory with it, and answers from memory while a
// stat of the key's name inside that open directory (fstatat: one
// syscall, one path element to look up) still finds that same file;
// otherwise it reads the key again.
//
// Holding the file open is what makes the test exact: an inode is not
// freed, so its number cannot be reused by a later put, while a descriptor
// on it is open. A put that returned before GetHot started has renamed its
// file over the name in that directory (Local renames within the key's own
// directory), so the stat sees the new inode, in this process or any
// other: a GetHot sees every put acknowledged before it began
// (TestGetHotSeesOtherProcessWrites).
//
// Holding the directory open (rather than resolving the whole path each
// time, which cost twice as much: every element of the root's path is
// looked up again) is exact for the same reason: Local never removes,
// replaces or renames a directory. A directory someone else removed is
// empty (rmdir), and nothing can be created in it afterwards, so the
// stat fails and GetHot reads the path again (TestGetHotSeesDirectoryReplaced).
//
// Caveats: a file edited in place by something other than Local (an
// editor, `echo >`, `cp` over an existing file) keeps its inode and would
// not be noticed; and a handle keeps following the directory it opened
// if that directory is renamed away (`mv graph graph.old` under a live
// handle) rather than switching to what later appears at its path. Local's
// own writes do neither.

// maxHot bounds the keys GetHot keeps open per store (two descriptors
// each: the file and its directory).
const maxHot = 64

// hotFile is the last version of a key GetHot read.
type hotFile struct {
	dir   *os.File // the key's parent directory, as it was when f was opened in it
	dirfd int      // dir's descriptor (valid until close, which holds hotSet.mu)
	name  string   // the key's last path element
	f     *os.File
	ino   uint64
	dev   uint64
	data  []byte // shared by every GetHotShared caller: never modified
	info  Info
}

// hotSet is the open files of GetHot, by key.
type hotSet struct {
	mu    sync.RWMutex // read: a lookup and its stat; write: changing files (and closing theirs)
	files map[string]*hotFile
}

// GetHot is Get for a small object read very often and republished by
// puts (a branch ref): while the key's directory entry names the file this
// store last returned for it, the content comes from memory after one
// stat. The returned slice is the caller's.
func (l *Local) GetHot(ctx context.Context, key string) ([]byte, Info, error) {
	data, info, err := l.GetHotShared(ctx, key)
	if err != nil {
		return nil, Info{}, err
	}
	return append([]byte(nil), data...), info, nil
}

// GetHotShared is GetHot without the copy: the returned slice is shared
// with every other caller and must not be modified. While the key names
// the same file, every call returns the same slice (same backing array),
// so a caller that decoded it once may compare pointers instead of bytes.
func (l *Local) GetHotShared(ctx context.Context, key string) ([]byte, Info, error) {
	if err := l.begin(ctx, OpGet, key); err != nil {
		return nil, Info{}, err
	}
	// Read-locked through the stat: put and drop close descriptors only
	// under the write lock, so the one the stat uses cannot be closed (and
	// its number reused for another directory) meanwhile.
	l.hot.mu.RLock()
	if h := l.hot.files[key]; h != nil && h.current() {
		data, info := h.data, h.info
		l.hot.mu.RUnlock()
		return data, info, nil
	}
	l.hot.mu.RUnlock()
	h, err := l.openHot(key)
	if errors.Is(err, ErrNotFound) {
		l.hot.drop(key)
	}
	if err != nil {
		return nil, Info{}, opErr(OpGet, key, err)
	}
	l.hot.put(key, h)
	return h.data, h.info, nil
}

// current reports whether h's directory entry still names h's file (a
// symbolic link is followed, as Get follows it). Any
// failure (the name is gone, the directory was removed, an I/O error)
// answers false: the caller then reads the path again and reports what
// that finds.
func (h *hotFile) current() bool {
	var st unix.Stat_t
	if err := unix.Fstatat(h.dirfd, h.name, &st, 0); err != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG && uint64(st.Ino) == h.ino && uint64(st.Dev) == h.dev
}

// openHot reads key through its parent directory, opened first, so that
// the file read is the one the directory named at that moment.
func (l *Local) openHot(key string) (*hotFile, error) {
	p := l.path(key)
	dir, err := os.Open(filepath.Dir(p))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	h, err := readHot(dir, filepath.Base(p), key, l)
	if err != nil {
		dir.Close()
		return nil, err
	}
	return h, nil
}

func readHot(dir *os.File, name, key string, l *Local) (*hotFile, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name))
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, ErrNotFound
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	data, info, err := l.readOpen(f, fi, key)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &hotFile{dir: dir, dirfd: int(dir.Fd()), name: name, f: f, ino: uint64(st.Ino), dev: uint64(st.Dev), data: data, info: info}, nil
}

func (h *hotFile) close() {
	h.f.Close()
	h.dir.Close()
}

func (s *hotSet) put(key string, h *hotFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]*hotFile{}
	}
	if old := s.files[key]; old != nil {
		old.close()
	} else if len(s.files) >= maxHot {
		for k, o := range s.files { // any one: hot keys come back at once
			o.close()
			delete(s.files, k)
			break
		}
	}
	s.files[key] = h
}

func (s *hotSet) drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.files[key]; h != nil {
		h.close()
		delete(s.files, key)
	}
}

// HotGetter is a store whose GetHot answers as Get does, cheaply while an
// often-read object is unchanged (Local; Batching over a Local), and whose
// GetHotShared answers the same without copying (the slice is shared and
// stays the same slice while the object is unchanged).
type HotGetter interface {
	GetHot(ctx context.Context, key string) ([]byte, Info, error)
	GetHotShared(ctx context.Context, key string) ([]byte, Info, error)
}

var (
	_ HotGetter = (*Local)(nil)
	_ HotGetter = (*Batching)(nil)
)

// GetHot is Get, through the inner store's GetHot when it has one (the
// public API puts a local directory behind Batching).
func (s *Batching) GetHot(ctx context.Context, key string) ([]byte, Info, error) {
	data, info, err := s.GetHotShared(ctx, key)
	if err != nil {
		return nil, Info{}, err
	}
	return append([]byte(nil), data...), info, nil
}

// GetHotShared is GetHot without the copy (Local.GetHotShared); an object
// the batch of ctx holds is returned as that batch holds it.
func (s *Batching) GetHotShared(ctx context.Context, key string) ([]byte, Info, error) {
	if d, ok := batchOf(ctx).lookup(key); ok {
		return d, Info{Key: key, Size: int64(len(d))}, nil
	}
	if h, ok := s.inner.(HotGetter); ok {
		return h.GetHotShared(ctx, key)
	}
	return s.inner.Get(ctx, key)
}
