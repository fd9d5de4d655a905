package storage_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

// suiteImmutable marks the conformance suite's write-once keys immutable;
// the keys it overwrites ("k", "ref", refs) are not.
func suiteImmutable(key string) bool {
	return key != "k" && key != "ref" && !strings.HasPrefix(key, "refs/")
}

func TestCachedConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return storage.NewCached(storage.NewMem(), storage.CacheOptions{Immutable: suiteImmutable})
	})
	storagetest.Run(t, func(t *testing.T) storage.Store {
		d, err := storage.OpenDiskCache(t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		return storage.NewCached(newLocal(t), storage.CacheOptions{Immutable: suiteImmutable, Disk: d, MemBytes: -1})
	})
}

func TestDelayedConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return storage.NewDelayed(storage.NewMem(), 0) })
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return storage.NewDelayed(storage.NewMem(), 50*time.Microsecond)
	})
}

// TestCachedSecondProcess: a fresh Cached (a new process) on the same disk
// cache reads immutable objects, their metadata and their ranges without a
// single request; mutable keys always go to the store.
func TestCachedSecondProcess(t *testing.T) {
	ctx := t.Context()
	mem := storage.NewMem()
	big := bytes.Repeat([]byte("0123456789"), 2000)
	for k, v := range map[string][]byte{"tables/a/data/1.parquet": big, "tables/a/state/s.json": []byte("state"), "refs/heads/main": []byte("r1")} {
		if _, err := mem.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	immutable := func(k string) bool { return strings.HasPrefix(k, "tables/") }
	open := func() (*storage.Cached, *storage.Counting) {
		d, err := storage.OpenDiskCache(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		cs := storage.NewCounting(mem)
		return storage.NewCached(cs, storage.CacheOptions{Immutable: immutable, Disk: d, Namespace: "s3://b/g", WholeObjectBytes: 1000}), cs
	}
	read := func(c *storage.Cached) {
		t.Helper()
		if b, _, err := c.Get(ctx, "tables/a/state/s.json"); err != nil || string(b) != "state" {
			t.Fatalf("Get: %q %v", b, err)
		}
		r, err := storage.OpenReadAt(ctx, c, "tables/a/data/1.parquet") // bigger than WholeObjectBytes: ranges
		if err != nil {
			t.Fatal(err)
		}
		p := make([]byte, 10)
		for _, off := range []int64{0, 19990} {
			if _, err := r.ReadAt(p, off); err != nil || !bytes.Equal(p, big[off:off+10]) {
				t.Fatalf("ReadAt(%d) = %q %v", off, p, err)
			}
		}
		if b, _, err := c.Get(ctx, "refs/heads/main"); err != nil || string(b) != "r1" {
			t.Fatalf("ref: %q %v", b, err)
		}
	}
	first, cs1 := open()
	read(first)
	if n := cs1.Snapshot().Requests(); n != 5 { // GET state, HEAD + 2 ranges, GET ref
		t.Fatalf("cold: %d requests (%v), want 5", n, cs1.Snapshot())
	}
	cs1.Reset()
	read(first)
	if s := cs1.Snapshot(); s.Requests() != 1 || s[storage.OpGet].Requests != 1 {
		t.Fatalf("warm: %v, want only the ref GET", s)
	}
	second, cs2 := open()
	read(second)
	if s := cs2.Snapshot(); s.Requests() != 1 || s[storage.OpGet].Requests != 1 {
		t.Fatalf("second process: %v, want only the ref GET", s)
	}
	// The ref is never cached.
	if _, err := mem.Put(ctx, "refs/heads/main", []byte("r2")); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := second.Get(ctx, "refs/heads/main"); string(b) != "r2" {
		t.Fatalf("ref served stale: %q", b)
	}
}

// TestDiskCacheBounded: the directory stays under its bound and the most
// recently used entries survive.
func TestDiskCacheBounded(t *testing.T) {
	ctx := t.Context()
	mem := storage.NewMem()
	dir := t.TempDir()
	d, err := storage.OpenDiskCache(dir, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	c := storage.NewCached(mem, storage.CacheOptions{Immutable: func(string) bool { return true }, Disk: d, MemBytes: -1})
	obj := bytes.Repeat([]byte("x"), 4<<10)
	for i := range 64 {
		k := filepath.Join("o", string(rune('a'+i%26)), string(rune('a'+i/26)))
		if _, err := mem.Put(ctx, k, obj); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Get(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	if total > 64<<10 {
		t.Fatalf("cache holds %d bytes, bound %d", total, 64<<10)
	}
	if total == 0 {
		t.Fatal("cache holds nothing")
	}
}

// TestDiskCacheCorruptEntry: a damaged entry is a miss, never wrong bytes.
func TestDiskCacheCorruptEntry(t *testing.T) {
	ctx := t.Context()
	mem := storage.NewMem()
	if _, err := mem.Put(ctx, "c/obj", []byte("the real bytes")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d, _ := storage.OpenDiskCache(dir, 0)
	c := storage.NewCached(mem, storage.CacheOptions{Immutable: func(string) bool { return true }, Disk: d, MemBytes: -1})
	if _, _, err := c.Get(ctx, "c/obj"); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("cache files: %q", files)
	}
	for _, damage := range []func(string) error{
		func(p string) error { return os.Truncate(p, 20) },
		func(p string) error {
			b, _ := os.ReadFile(p)
			return os.WriteFile(p, append(b, "extra"...), 0o644)
		},
		func(p string) error { return os.WriteFile(p, []byte("garbage\nthe real bytes"), 0o644) },
	} {
		if _, _, err := c.Get(ctx, "c/obj"); err != nil { // re-populate
			t.Fatal(err)
		}
		if err := damage(files[0]); err != nil {
			t.Fatal(err)
		}
		cs := storage.NewCounting(mem)
		fresh := storage.NewCached(cs, storage.CacheOptions{Immutable: func(string) bool { return true }, Disk: d, MemBytes: -1})
		b, _, err := fresh.Get(ctx, "c/obj")
		if err != nil || string(b) != "the real bytes" {
			t.Fatalf("after damage: %q %v", b, err)
		}
		if cs.Snapshot().Requests() != 1 {
			t.Fatal("damaged entry was served")
		}
	}
}
