package storage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// temps lists the temp files under dir (recursively).
func temps(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && IsTemp(fi.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestLocalSpareTemps: PrepareTemps makes one spare per directory, reached
// through decorators; the next put there writes into it (no file is
// created, none is left), durably and with its ETag; a spare older than
// spareMaxAge is removed, not used; a delete that empties a directory
// removes its spare with it, so the directory goes too.
func TestLocalSpareTemps(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	l, err := NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	st := NewBatching(NewCounting(l)) // decorators forward the request
	if _, err := l.Put(ctx, "refs/heads/main", []byte("v0")); err != nil {
		t.Fatal(err)
	}
	PrepareTemps(st, "refs/heads/main")
	PrepareTemps(st, "refs/heads/other") // same directory: still one spare
	spares := temps(t, root)
	if len(spares) != 1 || filepath.Dir(spares[0]) != filepath.Join(root, "refs", "heads") {
		t.Fatalf("spares %v, want one in refs/heads", spares)
	}
	spareInfo, err := os.Stat(spares[0])
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Put(ctx, "refs/heads/main", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	if left := temps(t, root); len(left) != 0 {
		t.Fatalf("temp files left after the put: %v", left)
	}
	got, gi, err := l.Get(ctx, "refs/heads/main")
	if err != nil || !bytes.Equal(got, []byte("v1")) || gi.ETag != info.ETag || info.ETag != contentETag([]byte("v1")) {
		t.Fatalf("after a put into a spare: %q %+v %+v %v", got, gi, info, err)
	}
	// The spare was the put's file: the object's inode is the spare's.
	fi, err := os.Stat(filepath.Join(root, "refs", "heads", "main"))
	if err != nil || !os.SameFile(fi, spareInfo) {
		t.Fatalf("the put did not write into the spare (%v)", err)
	}

	// An old spare is removed, not written into.
	PrepareTemps(l, "refs/heads/main")
	l.spares.mu.Lock()
	for d, s := range l.spares.m {
		s.made = time.Now().Add(-2 * spareMaxAge)
		l.spares.m[d] = s
	}
	l.spares.mu.Unlock()
	if _, err := l.Put(ctx, "refs/heads/main", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if left := temps(t, root); len(left) != 0 {
		t.Fatalf("an old spare was kept: %v", left)
	}

	// A delete empties refs/heads/a although a spare was made there.
	if _, err := l.Put(ctx, "refs/heads/a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	PrepareTemps(l, "refs/heads/a/b")
	if err := l.Delete(ctx, "refs/heads/a/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(ctx, "refs/heads/a", []byte("y")); err != nil {
		t.Fatalf("the deleted key's directory lingers: %v", err)
	}
	if left := temps(t, root); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
	// An unused spare is dropped on request.
	PrepareTemps(st, "refs/heads/main")
	if len(temps(t, root)) != 1 {
		t.Fatal("no spare made")
	}
	DropTemps(st, "refs/heads/main")
	if left := temps(t, root); len(left) != 0 {
		t.Fatalf("DropTemps left %v", left)
	}
	// A key that is not valid prepares nothing.
	PrepareTemps(l, "../escape", "")
	if left := temps(t, root); len(left) != 0 || strings.Contains(strings.Join(left, ""), "escape") {
		t.Fatalf("invalid keys prepared %v", left)
	}
}
