package storage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

// Local's durable puts are measured next to the raw cost of durability on the
// same disk in the same run: compare ns/op of BenchmarkLocal/* with
// BenchmarkFsyncFloor/*. A durable create needs at least a file fsync and a
// directory fsync, so "create+fsync+dirsync" is the floor for Put/PutIfAbsent.

const benchSize = 4 << 10

func BenchmarkFsyncFloor(b *testing.B) {
	data := make([]byte, benchSize)
	b.Run("write+fsync", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "f"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.SetBytes(benchSize)
		for b.Loop() {
			if _, err := f.WriteAt(data, 0); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("create+fsync+dirsync", func(b *testing.B) {
		dir := b.TempDir()
		b.SetBytes(benchSize)
		i := 0
		for b.Loop() {
			i++
			name := fmt.Sprintf("f%d", i)
			storagetest.WriteFileDurably(b, dir, name, name, data)
		}
	})
}

func BenchmarkLocal(b *testing.B) {
	data := make([]byte, benchSize)
	open := func(b *testing.B) *storage.Local {
		l, err := storage.NewLocal(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	// Fresh keys: a fragment write and a commit-object write.
	for _, w := range []struct {
		name, dir string
		put       func(*storage.Local, context.Context, string, []byte) (storage.Info, error)
	}{{"Put", "frag", (*storage.Local).Put}, {"PutIfAbsent", "commits", (*storage.Local).PutIfAbsent}} {
		b.Run(w.name, func(b *testing.B) {
			l := open(b)
			b.SetBytes(benchSize)
			i := 0
			for b.Loop() {
				i++
				if _, err := w.put(l, b.Context(), fmt.Sprintf("%s/%08d", w.dir, i), data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("PutIfMatch", func(b *testing.B) {
		l := open(b)
		info, err := l.Put(b.Context(), "refs/heads/main", data)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(benchSize)
		i := 0
		for b.Loop() {
			i++
			data[0], data[1] = byte(i), byte(i>>8) // each write differs, as commit ids do
			if info, err = l.PutIfMatch(b.Context(), "refs/heads/main", data, info.ETag); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Get", func(b *testing.B) {
		l := open(b)
		if _, err := l.Put(b.Context(), "frag/x", data); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(benchSize)
		for b.Loop() {
			if _, _, err := l.Get(b.Context(), "frag/x"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Stat", func(b *testing.B) {
		l := open(b)
		if _, err := l.Put(b.Context(), "frag/x", data); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := l.Stat(b.Context(), "frag/x"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkMem(b *testing.B) {
	data := make([]byte, benchSize)
	m := storage.NewMem()
	b.Run("Put", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			if _, err := m.Put(b.Context(), "k", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Get", func(b *testing.B) {
		b.SetBytes(benchSize)
		for b.Loop() {
			if _, _, err := m.Get(b.Context(), "k"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
