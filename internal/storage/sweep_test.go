package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestSweepTemp: the local backend's temporary leftovers older than the
// cut are found (dry run) and removed (sweep), younger ones and objects are
// untouched; through Counting a sweep is one sweep_temp request, through
// Faulty it can be failed and then removes nothing; a store without the
// capability reports nothing.
func TestSweepTemp(t *testing.T) {
	ctx := t.Context()
	l := newLocal(t)
	if _, err := l.Put(ctx, "d/k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(l.Root(), "d", ".tmp-old")
	young := filepath.Join(l.Root(), ".tmp-young")
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("junk!"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cut := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, cut.Add(-time.Hour), cut.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	counting := storage.NewCounting(l)
	// The stack of a local graph opened through the public API: a batching
	// layer on top must not hide the leftovers.
	faulty := storage.NewBatching(storage.NewFaulty(counting))
	remove := faulty.Inner().(*storage.Faulty).Inject(storage.Fault{Op: storage.OpSweepTemp})
	if _, err := storage.SweepTemp(ctx, faulty, cut, false); !errors.Is(err, failpoint.ErrInjected) {
		t.Fatalf("injected sweep: err = %v", err)
	}
	remove()
	if !exists(old) {
		t.Fatal("a failed sweep removed a file")
	}
	dry, err := storage.SweepTemp(ctx, faulty, cut, true)
	if err != nil || dry != (storage.TempSweep{Files: 1, Bytes: 5}) || !exists(old) {
		t.Fatalf("dry run = %+v, %v (old file kept: %v)", dry, err, exists(old))
	}
	sw, err := storage.SweepTemp(ctx, faulty, cut, false)
	if err != nil || sw != (storage.TempSweep{Files: 1, Bytes: 5}) {
		t.Fatalf("sweep = %+v, %v", sw, err)
	}
	if exists(old) || !exists(young) {
		t.Fatalf("after sweep: old exists %v, young exists %v", exists(old), exists(young))
	}
	if _, _, err := l.Get(ctx, "d/k"); err != nil {
		t.Fatalf("object swept: %v", err)
	}
	if got := counting.Snapshot()[storage.OpSweepTemp]; got.Requests != 2 || got.Bytes != 10 {
		t.Fatalf("counted %+v, want 2 requests and 10 bytes (the failed sweep never reached the store)", got)
	}
	if sw, err := storage.SweepTemp(ctx, storage.NewMem(), cut, false); err != nil || sw != (storage.TempSweep{}) {
		t.Fatalf("memory store sweep = %+v, %v", sw, err)
	}
}
