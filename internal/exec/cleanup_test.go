package exec

import (
	"context"
	"errors"
	"fmt"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// storeBytes is the total size of every object in st.
func storeBytes(t *testing.T, st storage.Store) (n int64, files int) {
	t.Helper()
	err := st.List(context.Background(), "", "", func(in storage.Info) error {
		if strings.HasPrefix(in.Key, "reclaimed/") {
			return nil // cleanup's markers of reclaimed commits, not data
		}
		n += in.Size
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, files
}

// cleanupGraph: a graph on a fake clock with history on main and on two
// branches created from it, then two hours pass.
func cleanupGraph(t *testing.T, opts ...Options) (*Graph, *storage.Mem, *fakeClock, []string) {
	t.Helper()
	ctx := context.Background()
	clk := newFakeClock()
	st := storage.NewMemClock(clk.Now)
	o := Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Now = clk.Now
	g := maintInit(t, st, o)
	maintHistory(t, g, 0, 20)
	log := commitLog(t, g, "main", 0)
	for _, b := range []string{"feature", "other"} {
		if _, err := g.repo.CreateBranch(ctx, b, mustID(t, log[0].ID)); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			line := fmt.Sprintf(`{"type":"Company","data":{"name":"%s%d"}}`, b, i)
			if _, err := g.Load(ctx, strings.NewReader(line), LoadRequest{Branch: b, Mode: LoadAppend}); err != nil {
				t.Fatal(err)
			}
		}
	}
	maintHistory(t, g, 20, 30)
	old := []string{log[len(log)/2].ID, log[1].ID}
	clk.Advance(2 * time.Hour)
	return g, st, clk, old
}

func TestCleanupRequiresPolicy(t *testing.T) {
	g := maintInit(t, storage.NewMem(), Options{})
	if _, err := g.Cleanup(context.Background(), CleanupOptions{Confirm: true}); !errors.Is(err, ErrCleanupPolicy) {
		t.Fatalf("err = %v", err)
	}
}

// TestCleanupKeepsBranches: --keep 1 on a graph with several branches
// previews without deleting, then frees space while every branch head
// reads exactly as before, history and merge bases stay whole, and time
// travel to a removed commit fails with ErrCommitReclaimed.
func TestCleanupKeepsBranches(t *testing.T) {
	ctx := context.Background()
	g, st, _, old := cleanupGraph(t)
	branches := []string{"main", "feature", "other"}
	content := map[string]string{}
	for _, b := range branches {
		content[b] = maintContent(t, g, Target{Branch: b})
	}
	bytes0, files0 := storeBytes(t, st)

	pre, err := g.Cleanup(ctx, CleanupOptions{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !pre.Preview || pre.FilesRemoved == 0 || pre.BytesFreed == 0 || pre.CommitsReclaimed == 0 {
		t.Fatalf("preview %+v", pre)
	}
	if b, f := storeBytes(t, st); b != bytes0 || f != files0 {
		t.Fatal("preview deleted something")
	}

	res, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Preview || res.FilesRemoved != pre.FilesRemoved || res.BytesFreed != pre.BytesFreed {
		t.Fatalf("cleanup %+v, preview %+v", res, pre)
	}
	bytes1, files1 := storeBytes(t, st)
	if bytes1 != bytes0-res.BytesFreed || files1 != files0-res.FilesRemoved {
		t.Fatalf("store %d B/%d files → %d B/%d files, reported %+v", bytes0, files0, bytes1, files1, res)
	}
	// Kept: the three heads and the merge base of the branches.
	if len(res.Kept) != 4 {
		t.Fatalf("kept %v", res.Kept)
	}
	h := mustOpen(t, st, Options{})
	for _, b := range branches {
		if got := maintContent(t, h, Target{Branch: b}); got != content[b] {
			t.Fatalf("branch %s changed", b)
		}
		checkFragmentIndexes(t, h, b)
		if _, err := h.Log(ctx, b, 0); err != nil {
			t.Fatalf("log of %s: %v", b, err)
		}
	}
	for _, id := range old {
		_, err := h.Resolve(ctx, Target{Snapshot: id})
		var rc *CommitReclaimedError
		if !errors.As(err, &rc) || !errors.Is(err, ErrCommitReclaimed) || !errors.Is(err, ErrCommitNotFound) {
			t.Fatalf("time travel to %s: %v", id, err)
		}
	}
	// Writes continue on every branch; a second cleanup has nothing to do
	// beyond the superseded heads.
	for _, b := range branches {
		if _, err := h.Load(ctx, strings.NewReader(`{"type":"Company","data":{"name":"after"}}`), LoadRequest{Branch: b, Mode: LoadAppend}); err != nil {
			t.Fatal(err)
		}
	}
	again, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.CommitsRemoved != 0 || again.FilesRemoved != 0 {
		t.Fatalf("second cleanup within the grace period removed %+v", again)
	}
}

// TestCleanupGrace: unreferenced objects younger than the grace period
// (an in-flight or failed writer's files) and the data of a head replaced
// less than the grace period ago survive; once older, they go.
func TestCleanupGrace(t *testing.T) {
	ctx := context.Background()
	clk := newFakeClock()
	st := storage.NewMemClock(clk.Now)
	g := maintInit(t, st, Options{Now: clk.Now, NoAutoCompact: true})
	maintHistory(t, g, 0, 4)
	prev := engSnap(t, g, "main").head
	// A failed write leaves unreferenced objects behind.
	injectFailure(t, FPBeforePublish, "load", func() error {
		_, err := g.Load(ctx, strings.NewReader(maintRow(4)), LoadRequest{Mode: LoadAppend})
		return err
	})
	maintHistory(t, g, 4, 5) // prev is no longer the head
	res, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRemoved != 0 {
		t.Fatalf("removed young objects: %+v", res)
	}
	if _, err := g.Resolve(ctx, Target{Snapshot: prev}); err != nil {
		t.Fatalf("just-replaced head unreadable: %v", err)
	}
	clk.Advance(2 * DefaultCleanupGrace)
	res, err = g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRemoved == 0 {
		t.Fatalf("nothing removed after the grace period: %+v", res)
	}
	// A fresh handle: g's cache may still serve what it read before.
	h := mustOpen(t, st, Options{})
	if _, err := h.Resolve(ctx, Target{Snapshot: prev}); !errors.Is(err, ErrCommitReclaimed) {
		t.Fatalf("old head: %v", err)
	}
}

// TestCleanupOlderThan keeps every commit younger than the cutoff.
func TestCleanupOlderThan(t *testing.T) {
	ctx := context.Background()
	g, st, clk, old := cleanupGraph(t)
	maintHistory(t, g, 30, 34)
	recent := engSnap(t, g, "main").head
	maintHistory(t, g, 34, 36)
	clk.Advance(30 * time.Minute)
	if _, err := g.Cleanup(ctx, CleanupOptions{OlderThan: time.Hour, Confirm: true}); err != nil {
		t.Fatal(err)
	}
	h := mustOpen(t, st, Options{})
	if _, err := h.Resolve(ctx, Target{Snapshot: recent}); err != nil {
		t.Fatalf("recent commit: %v", err)
	}
	if _, err := h.Resolve(ctx, Target{Snapshot: old[1]}); !errors.Is(err, ErrCommitReclaimed) {
		t.Fatalf("old commit: %v", err)
	}
}

// TestCleanupRacingWriters: cleanup (keep 1, loop) and optimize race
// writers on three branches: no write is lost or sees a conflict, and
// every branch head reads.
func TestCleanupRacingWriters(t *testing.T) {
	ctx := context.Background()
	g, st, _, _ := cleanupGraph(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	stop := make(chan struct{})
	branches := []string{"main", "feature", "other"}
	// onHandle runs body in a goroutine of wg on a handle of its own (as
	// another process would), sending a failure to open or body's error
	// to errs.
	onHandle := func(wg *sync.WaitGroup, body func(h *Graph) error) {
		wg.Go(func() {
			h, err := Open(ctx, st, Options{Now: g.now})
			if err == nil {
				err = body(h)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	for _, b := range branches {
		onHandle(&wg, func(h *Graph) error {
			for i := range 12 {
				line := fmt.Sprintf(`{"type":"Company","data":{"name":"race-%s-%d"}}`, b, i)
				if _, err := h.Load(ctx, strings.NewReader(line), LoadRequest{Branch: b, Mode: LoadAppend}); err != nil {
					return fmt.Errorf("writer %s: %w", b, err)
				}
			}
			return nil
		})
	}
	var mwg sync.WaitGroup
	onHandle(&mwg, func(h *Graph) error {
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			if _, err := h.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true}); err != nil {
				return fmt.Errorf("cleanup: %w", err)
			}
			if _, err := h.Optimize(ctx, ""); err != nil {
				return fmt.Errorf("optimize: %w", err)
			}
		}
	})
	wg.Wait()
	close(stop)
	mwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, b := range branches {
		c := maintContent(t, g, Target{Branch: b})
		for i := range 12 {
			if !strings.Contains(c, fmt.Sprintf("race-%s-%d", b, i)) {
				t.Fatalf("branch %s lost write %d", b, i)
			}
		}
	}
}

// TestCleanupCrashPoints fails cleanup after each deletion step: every
// branch head still reads, and the next cleanup finishes the job.
func TestCleanupCrashPoints(t *testing.T) {
	ctx := context.Background()
	for _, fp := range []string{FPCleanupBeforeDelete, FPCleanupAfterCommits, FPCleanupAfterStates, FPCleanupAfterData} {
		t.Run(fp, func(t *testing.T) {
			g, st, _, _ := cleanupGraph(t)
			want := maintContent(t, g, Target{Branch: "feature"})
			injectFailure(t, fp, "cleanup", func() error {
				_, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true})
				return err
			})
			h := mustOpen(t, st, Options{})
			if got := maintContent(t, h, Target{Branch: "feature"}); got != want {
				t.Fatal("branch changed")
			}
			if _, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true}); err != nil {
				t.Fatal(err)
			}
			again, err := g.Cleanup(ctx, CleanupOptions{Keep: 1})
			if err != nil || again.FilesRemoved != 0 {
				t.Fatalf("leftovers after the retried cleanup: %+v %v", again, err)
			}
		})
	}
}

// TestCleanupLocalTempFiles: killed writers' ".tmp-" files on a local
// directory are removed once older than the grace period.
func TestCleanupLocalTempFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := localStore(t, dir)
	g := maintInit(t, st, Options{})
	oldTmp := filepath.Join(dir, "tables", ".tmp-old")
	newTmp := filepath.Join(dir, "commits", ".tmp-new")
	for _, p := range []string{oldTmp, newTmp} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * DefaultCleanupGrace)
	if err := os.Chtimes(oldTmp, past, past); err != nil {
		t.Fatal(err)
	}
	res, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(oldTmp); !errors.Is(err, os.ErrNotExist) || res.FilesRemoved != 1 {
		t.Fatalf("old temp file: %v, result %+v", err, res)
	}
	if _, err := os.Stat(newTmp); err != nil {
		t.Fatalf("young temp file: %v", err)
	}
}

func mustID(t *testing.T, s string) commit.ID {
	t.Helper()
	id, err := commit.ParseID(s)
	return must(t, id, err)
}

// checkFragmentIndexes verifies every fragment index the head of branch
// names (cleanup must keep them: reads and writes probe them).
func checkFragmentIndexes(t *testing.T, g *Graph, branch string) {
	t.Helper()
	ctx := context.Background()
	snap := resolve(t, g, Target{Branch: branch})
	n := 0
	for tk := range snap.Commit().Tables {
		st, err := snap.State(ctx, tk)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range st.Fragments() {
			if f.Index == "" {
				continue
			}
			n++
			if err := table.VerifyFragmentIndex(ctx, g.st, f); err != nil {
				t.Fatalf("branch %s: %v", branch, err)
			}
		}
	}
	if n == 0 {
		t.Fatalf("branch %s: no fragment indexes to check", branch)
	}
}
