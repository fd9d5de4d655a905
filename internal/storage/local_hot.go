package storage

import (
	"context"
	"os"
	"sync"
)

// Hot objects. A warm handle reads its branch's ref before every query:
// on local disk, an open, fstat, read, fgetxattr and close each time, which
// costs more than a warm key lookup itself. Local never changes a file in
// place: every put writes a temp file and renames (or links) it over the
// key, so a key names new content exactly when its path names another
// inode. GetHot keeps the file it last read for a key open and answers
// from memory while a stat of the path still finds that same file (one
// syscall); otherwise it reads the key again.
//
// Holding the file open is what makes the test exact: an inode is not
// freed, so its number cannot be reused by a later put, while a descriptor
// on it is open. A put that returned before GetHot started has renamed its
// file over the path, so the stat sees the new inode, in this process or
// any other: a GetHot sees every put acknowledged before it began
// (TestGetHotSeesOtherProcessWrites).
//
// Caveat: a file edited in place by something other than Local (an editor,
// `echo >`) keeps its inode and would not be noticed; Local's own writes
// never do that.

// maxHot bounds the files GetHot keeps open per store.
const maxHot = 64

// hotFile is the last version of a key GetHot read.
type hotFile struct {
	f    *os.File
	fi   os.FileInfo
	data []byte
	info Info
}

// hotSet is the open files of GetHot, by key.
type hotSet struct {
	mu    sync.Mutex
	files map[string]*hotFile
}

// GetHot is Get for a small object read very often and republished by
// puts (a branch ref): while the key's path names the file this store last
// returned for it, the content comes from memory after one stat. The
// returned slice is the caller's.
func (l *Local) GetHot(ctx context.Context, key string) ([]byte, Info, error) {
	if err := l.begin(ctx, OpGet, key); err != nil {
		return nil, Info{}, err
	}
	fi, err := os.Stat(l.path(key))
	if err != nil || !fi.Mode().IsRegular() {
		l.hot.drop(key)
		return l.Get(ctx, key) // not found, or an error Get reports alike
	}
	l.hot.mu.Lock()
	h := l.hot.files[key]
	l.hot.mu.Unlock()
	if h != nil && os.SameFile(h.fi, fi) {
		return append([]byte(nil), h.data...), h.info, nil
	}
	f, ofi, err := l.open(key)
	if err != nil {
		return nil, Info{}, opErr(OpGet, key, err)
	}
	data, info, err := l.readOpen(f, ofi, key)
	if err != nil {
		f.Close()
		return nil, Info{}, err
	}
	l.hot.put(key, &hotFile{f: f, fi: ofi, data: data, info: info})
	return append([]byte(nil), data...), info, nil
}

func (s *hotSet) put(key string, h *hotFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string]*hotFile{}
	}
	if old := s.files[key]; old != nil {
		old.f.Close()
	} else if len(s.files) >= maxHot {
		for k, o := range s.files { // any one: hot keys come back at once
			o.f.Close()
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
		h.f.Close()
		delete(s.files, key)
	}
}

// HotGetter is a store whose GetHot answers as Get does, cheaply while an
// often-read object is unchanged (Local; Batching over a Local).
type HotGetter interface {
	GetHot(ctx context.Context, key string) ([]byte, Info, error)
}

var (
	_ HotGetter = (*Local)(nil)
	_ HotGetter = (*Batching)(nil)
)

// GetHot is Get, through the inner store's GetHot when it has one (the
// public API puts a local directory behind Batching).
func (s *Batching) GetHot(ctx context.Context, key string) ([]byte, Info, error) {
	if d, ok := batchOf(ctx).lookup(key); ok {
		return append([]byte(nil), d...), Info{Key: key, Size: int64(len(d))}, nil
	}
	if h, ok := s.inner.(HotGetter); ok {
		return h.GetHot(ctx, key)
	}
	return s.inner.Get(ctx, key)
}
