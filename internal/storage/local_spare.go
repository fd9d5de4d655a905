package storage

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Spare temp files. Creating a file is most of what a small durable put
// costs on a local directory (allocating an inode: 0.16-0.55 ms of kernel
// CPU on this project's VMs, against ~0.15 ms for the fsync after it), and
// a write's ref CAS creates its temp file only after every other object of
// the write is durable, so that creation is on the critical path. A caller
// that knows a put is coming asks for a spare beforehand (PrepareTemps),
// while it waits for other work; the put then writes into the spare
// instead of creating a file. A spare is an empty file with a temp name:
// if it is never used it is a temp leftover like a killed writer's, which
// cleanup sweeps once it is older than the grace period.

// TempPreparer is a store that can create the temp files of coming puts
// ahead of time (PrepareTemps).
type TempPreparer interface {
	// PrepareTemps makes sure a spare temp file exists in the directory
	// of each key, for the next put of a key there. Best effort: it
	// reports nothing and changes no object.
	PrepareTemps(keys ...string)
	// DropTemps removes the spares PrepareTemps made for keys that no put
	// has used, so that nothing is left behind when the put does not come
	// (its write failed, or its CAS was refused before writing).
	DropTemps(keys ...string)
}

// PrepareTemps asks st to prepare the temp files of puts of keys, when it
// can (TempPreparer); otherwise it does nothing.
func PrepareTemps(st Store, keys ...string) {
	if p, ok := st.(TempPreparer); ok {
		p.PrepareTemps(keys...)
	}
}

// DropTemps asks st to remove the unused spares of keys (TempPreparer).
func DropTemps(st Store, keys ...string) {
	if p, ok := st.(TempPreparer); ok {
		p.DropTemps(keys...)
	}
}

// PrepareTemps implements TempPreparer: when the wrapped store does.
func (w wrapper) PrepareTemps(keys ...string) { PrepareTemps(w.inner, keys...) }

// DropTemps implements TempPreparer: when the wrapped store does.
func (w wrapper) DropTemps(keys ...string) { DropTemps(w.inner, keys...) }

// spareSet holds at most one spare per directory, for at most maxSpareDirs
// directories.
type spareSet struct {
	mu sync.Mutex
	m  map[string]spare // directory → its spare
}

type spare struct {
	path string
	made time.Time
}

const (
	maxSpareDirs = 16
	// spareMaxAge: an older spare is removed rather than used, so that a
	// put never writes into a file cleanup's temp sweep may be removing
	// (the sweep takes only leftovers older than its grace period, which
	// is far longer).
	spareMaxAge = time.Minute
)

// PrepareTemps implements TempPreparer.
func (l *Local) PrepareTemps(keys ...string) {
	for _, k := range keys {
		if checkKey(OpPut, k) != nil {
			continue
		}
		dir := filepath.Dir(l.path(k))
		l.spares.mu.Lock()
		_, have := l.spares.m[dir]
		l.spares.mu.Unlock()
		if have {
			continue
		}
		name := filepath.Join(dir, fmt.Sprintf("%s%016x", TempPrefix, rand.Uint64()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			continue // the directory may not exist yet: the put creates it
		}
		_ = f.Close()
		l.spares.mu.Lock()
		if _, have := l.spares.m[dir]; have || len(l.spares.m) >= maxSpareDirs {
			l.spares.mu.Unlock()
			_ = os.Remove(name)
			continue
		}
		if l.spares.m == nil {
			l.spares.m = map[string]spare{}
		}
		l.spares.m[dir] = spare{path: name, made: time.Now()}
		l.spares.mu.Unlock()
	}
}

// takeSpare returns dir's spare opened for writing (truncated), and
// forgets it; nil when there is none (or it is too old, or gone).
func (l *Local) takeSpare(dir string) *os.File {
	l.spares.mu.Lock()
	s, ok := l.spares.m[dir]
	delete(l.spares.m, dir)
	l.spares.mu.Unlock()
	if !ok {
		return nil
	}
	if time.Since(s.made) > spareMaxAge {
		_ = os.Remove(s.path)
		return nil
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return nil
	}
	return f
}

// DropTemps implements TempPreparer.
func (l *Local) DropTemps(keys ...string) {
	for _, k := range keys {
		if checkKey(OpPut, k) == nil {
			l.dropSpare(filepath.Dir(l.path(k)))
		}
	}
}

// dropSpare removes dir's spare, if any: a directory a delete leaves empty
// but for its spare must still be removable (Delete, removeEmptyParents).
func (l *Local) dropSpare(dir string) {
	l.spares.mu.Lock()
	s, ok := l.spares.m[dir]
	delete(l.spares.m, dir)
	l.spares.mu.Unlock()
	if ok {
		_ = os.Remove(s.path)
	}
}
