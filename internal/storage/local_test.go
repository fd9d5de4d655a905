package storage_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// files lists every regular file under root, relative, slash-separated.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func objectFiles(t *testing.T, root string) []string {
	var out []string
	for _, f := range files(t, root) {
		if !strings.HasPrefix(f, ".locks/") {
			out = append(out, f)
		}
	}
	return out
}

// TestLocalLayout: key "a/b/c" is the file <root>/a/b/c, and no temp file
// survives any put, won or lost.
func TestLocalLayout(t *testing.T) {
	ctx := t.Context()
	l := newLocal(t)
	info, err := l.Put(ctx, "graph/nodes/Person/01H.parquet", []byte("p1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.PutIfAbsent(ctx, "refs/heads/main", []byte("c1")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PutIfAbsent(ctx, "refs/heads/main", []byte("c1b")); !errors.Is(err, storage.ErrExists) {
		t.Fatal(err)
	}
	ref, _ := l.Stat(ctx, "refs/heads/main")
	if _, err := l.PutIfMatch(ctx, "refs/heads/main", []byte("c2"), ref.ETag); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PutIfMatch(ctx, "refs/heads/main", []byte("c3"), ref.ETag); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatal(err)
	}
	want := []string{"graph/nodes/Person/01H.parquet", "refs/heads/main"}
	if got := objectFiles(t, l.Root()); !slices.Equal(got, want) {
		t.Fatalf("files = %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(l.Root(), "refs", "heads", "main"))
	if err != nil || string(b) != "c2" {
		t.Fatalf("ref file = %q, %v", b, err)
	}
	p, _ := l.Path("graph/nodes/Person/01H.parquet")
	if b, _ := os.ReadFile(p); string(b) != "p1" {
		t.Fatalf("Path file = %q", b)
	}
	// A reopened store sees the same objects and ETags.
	l2, err := storage.NewLocal(l.Root())
	if err != nil {
		t.Fatal(err)
	}
	got, err := l2.Stat(ctx, "graph/nodes/Person/01H.parquet")
	if err != nil || got.ETag != info.ETag {
		t.Fatalf("reopened Stat = %+v, %v", got, err)
	}
}

// TestLocalHiddenFiles: crash leftovers (temp files) and lock files never
// appear in List, even when named like the listing prefix.
func TestLocalHiddenFiles(t *testing.T) {
	ctx := t.Context()
	l := newLocal(t)
	if _, err := l.Put(ctx, "d/k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"d/.tmp-0123456789abcdef", ".tmp-deadbeef", "d/.lockstuff"} {
		if err := os.WriteFile(filepath.Join(l.Root(), filepath.FromSlash(name)), []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"", ".", ".t", "d/", "d/.", ".lock"} {
		var got []string
		if err := l.List(ctx, prefix, "", func(i storage.Info) error { got = append(got, i.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		want := []string{}
		if strings.HasPrefix("d/k", prefix) {
			want = []string{"d/k"}
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
	if !storage.IsTemp(".tmp-0123456789abcdef") || storage.IsTemp("k") {
		t.Fatal("IsTemp misclassifies")
	}
}

// TestLocalKeyConflict: a key cannot be both an object and a directory of keys.
func TestLocalKeyConflict(t *testing.T) {
	ctx := t.Context()
	l := newLocal(t)
	mustOK := func(_ storage.Info, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustOK(l.Put(ctx, "obj", []byte("x")))
	mustOK(l.Put(ctx, "dir/child", []byte("x")))
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Put below an object", func() error { _, err := l.Put(ctx, "obj/below", nil); return err }},
		{"Put deep below an object", func() error { _, err := l.Put(ctx, "obj/x/y", nil); return err }},
		{"PutIfAbsent below an object", func() error { _, err := l.PutIfAbsent(ctx, "obj/below", nil); return err }},
		{"Put onto a directory", func() error { _, err := l.Put(ctx, "dir", nil); return err }},
		{"PutIfAbsent onto a directory", func() error { _, err := l.PutIfAbsent(ctx, "dir", nil); return err }},
	} {
		if err := tc.call(); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("%s: err = %v, want ErrInvalidKey", tc.name, err)
		}
	}
	if err := l.Delete(ctx, "dir"); err != nil {
		t.Fatalf("Delete of a directory name: %v", err)
	}
	if _, err := l.Stat(ctx, "dir/child"); err != nil {
		t.Fatalf("Delete(dir) removed its child: %v", err)
	}
}

// TestLocalForeignFile: a file written by something else (no ETag xattr) gets
// the same content ETag from Get, Stat and List, and can be CASed.
func TestLocalForeignFile(t *testing.T) {
	ctx := t.Context()
	l := newLocal(t)
	if err := os.WriteFile(filepath.Join(l.Root(), "foreign"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	viaPut, _ := written.Put(ctx, "x", []byte("hello"))
	_, got, err := l.Get(ctx, "foreign")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := l.Stat(ctx, "foreign")
	var listed storage.Info
	l.List(ctx, "foreign", "", func(i storage.Info) error { listed = i; return nil })
	if got.ETag != viaPut.ETag || st.ETag != got.ETag || listed.ETag != got.ETag {
		t.Fatalf("ETags differ: Get %q Stat %q List %q Put-of-same-bytes %q", got.ETag, st.ETag, listed.ETag, viaPut.ETag)
	}
	if _, err := l.PutIfMatch(ctx, "foreign", []byte("bye"), got.ETag); err != nil {
		t.Fatal(err)
	}
}

// TestLocalPublishFailpoints: an error at storage/before-publish leaves
// nothing (no object, no temp file); at storage/after-publish the object is
// already visible.
func TestLocalPublishFailpoints(t *testing.T) {
	for _, tc := range []struct {
		point       string
		wantVisible bool
	}{
		{"storage/before-publish", false},
		{"storage/after-publish", true},
	} {
		for _, op := range []storage.Op{storage.OpPut, storage.OpPutIfAbsent, storage.OpPutIfMatch} {
			t.Run(tc.point+"/"+string(op), func(t *testing.T) {
				ctx := t.Context()
				l := newLocal(t)
				base, err := l.Put(ctx, "seed", []byte("seed"))
				if err != nil {
					t.Fatal(err)
				}
				off := failpoint.Enable(tc.point, failpoint.Error)
				key := "k/" + string(op)
				switch op {
				case storage.OpPut:
					_, err = l.Put(ctx, key, []byte("new"))
				case storage.OpPutIfAbsent:
					_, err = l.PutIfAbsent(ctx, key, []byte("new"))
				case storage.OpPutIfMatch:
					key = "seed"
					_, err = l.PutIfMatch(ctx, key, []byte("new"), base.ETag)
				}
				off()
				if !errors.Is(err, failpoint.ErrInjected) {
					t.Fatalf("err = %v, want injected", err)
				}
				b, _, err := l.Get(ctx, key)
				visible := err == nil && string(b) == "new"
				if visible != tc.wantVisible {
					t.Fatalf("new object visible = %v, want %v", visible, tc.wantVisible)
				}
				for _, f := range files(t, l.Root()) {
					if storage.IsTemp(filepath.Base(f)) {
						t.Fatalf("temp file %s left behind", f)
					}
				}
			})
		}
	}
}
