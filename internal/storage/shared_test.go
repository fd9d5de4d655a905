package storage_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

var sharedKeys = []string{"commits/a.json", "commits/b.json", "other/deep/c.json"}

// TestLocalPutShared: every key reads the bytes with one ETag, missing
// directories are created, one file backs all names (hard links), deleting
// one name keeps the others, and bad key lists are typed errors that
// change nothing.
func TestLocalPutShared(t *testing.T) {
	ctx := context.Background()
	l := newLocal(t)
	data := []byte("chain of commits\n")
	if err := l.PutShared(ctx, sharedKeys, data); err != nil {
		t.Fatal(err)
	}
	want, _ := l.Stat(ctx, sharedKeys[0])
	for _, k := range sharedKeys {
		got, info, err := l.Get(ctx, k)
		if err != nil || !bytes.Equal(got, data) || info.ETag != want.ETag {
			t.Fatalf("%s: %q %+v %v", k, got, info, err)
		}
	}
	a, _ := os.Stat(filepath.Join(l.Root(), sharedKeys[0]))
	c, _ := os.Stat(filepath.Join(l.Root(), sharedKeys[2]))
	if !os.SameFile(a, c) {
		t.Error("the names are not one file")
	}
	for _, f := range files(t, l.Root()) {
		if storage.IsTemp(filepath.Base(f)) {
			t.Errorf("temp file left: %s", f)
		}
	}
	if err := l.Delete(ctx, sharedKeys[0]); err != nil {
		t.Fatal(err)
	}
	if got, _, err := l.Get(ctx, sharedKeys[1]); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after deleting one name: %q %v", got, err)
	}
	// A name that exists (a retried put) is replaced, as by Put.
	if err := l.PutShared(ctx, []string{"x/new.json", sharedKeys[1]}, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := l.Get(ctx, sharedKeys[1]); string(got) != "v2" {
		t.Errorf("existing name holds %q", got)
	}
	for _, bad := range [][]string{nil, {"ok", "../up"}, {"commits"}} {
		before := files(t, l.Root())
		if err := l.PutShared(ctx, bad, data); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("PutShared(%q) = %v, want ErrInvalidKey", bad, err)
		}
		if after := files(t, l.Root()); len(after) != len(before) {
			t.Errorf("PutShared(%q) left files: %q", bad, after)
		}
	}
}

// TestPutSharedWrappers: the capability passes through the wrappers as
// one OpPutShared request (counted once, with the bytes once), a Faulty
// hook fails it before anything is written, a batch defers it and reads
// its bytes under every key before Flush, and PutShared on a store without
// the capability falls back to one Put per key.
func TestPutSharedWrappers(t *testing.T) {
	ctx := context.Background()
	l := newLocal(t)
	cnt := storage.NewCounting(l)
	f := storage.NewFaulty(cnt)
	b := storage.NewBatching(storage.NewCached(storage.NewDelayed(storage.NewRecording(f), 0), storage.CacheOptions{}))
	data := []byte("abc")
	bctx := storage.WithBatch(ctx)
	if err := storage.PutShared(bctx, b, sharedKeys, data); err != nil {
		t.Fatal(err)
	}
	for _, k := range sharedKeys {
		if got, _, err := b.Get(bctx, k); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("pending %s: %q %v", k, got, err)
		}
	}
	if err := storage.Flush(bctx); err != nil {
		t.Fatal(err)
	}
	if c := cnt.Snapshot(); c[storage.OpPutShared].Requests != 1 || c[storage.OpPutShared].Bytes != int64(len(data)) || c[storage.OpPut].Requests != 0 {
		t.Fatalf("counts %+v", c)
	}
	for _, k := range sharedKeys {
		if got, _, err := l.Get(ctx, k); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: %q %v", k, got, err)
		}
	}
	f.SetHook(func(ctx context.Context, op storage.Op, key string, stage storage.Stage) error {
		if op == storage.OpPutShared && stage == storage.Before {
			return errors.New("injected")
		}
		return nil
	})
	if err := storage.PutShared(ctx, b, []string{"f/1", "f/2"}, data); err == nil {
		t.Fatal("the hook did not fail the request")
	}
	if _, err := l.Stat(ctx, "f/1"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("failed request left f/1: %v", err)
	}
	f.SetHook(nil)
	// No capability: Mem takes one Put per key, recorded in the ledger.
	m := storage.NewCounting(storage.NewMem())
	led := storage.NewLedger()
	if err := storage.PutShared(storage.WithLedger(ctx, led), m, []string{"m/1", "m/2"}, data); err != nil {
		t.Fatal(err)
	}
	if c := m.Snapshot(); c[storage.OpPut].Requests != 2 || !led.Has("m/1") || !led.Has("m/2") {
		t.Errorf("fallback: counts %+v, ledger %v", c, led.Keys())
	}
}

// TestCrashAtPutShared kills a process (failpoint exit, the stand-in for
// kill -9) inside PutShared: before the first link no name exists (a temp
// file remains, which List hides and cleanup's sweep recognises); after
// the links every name holds the whole object. No name ever holds a torn
// object.
func TestCrashAtPutShared(t *testing.T) {
	for _, tc := range []struct {
		point       string
		wantVisible bool
	}{
		{"storage/before-publish", false},
		{"storage/after-publish", true},
	} {
		t.Run(tc.point, func(t *testing.T) {
			ctx := t.Context()
			l := newLocal(t)
			crashHelper(t, l, "put-shared-once", tc.point)
			for _, k := range sharedKeys {
				got, _, err := l.Get(ctx, k)
				switch {
				case tc.wantVisible && (err != nil || string(got) != "crasher"):
					t.Errorf("%s: %q %v, want the whole object", k, got, err)
				case !tc.wantVisible && !errors.Is(err, storage.ErrNotFound):
					t.Errorf("%s: %q %v, want not found", k, got, err)
				}
			}
			var listed int
			l.List(ctx, "", "", func(storage.Info) error { listed++; return nil })
			if want := map[bool]int{true: len(sharedKeys), false: 0}[tc.wantVisible]; listed != want {
				t.Errorf("List: %d keys, want %d", listed, want)
			}
		})
	}
}
