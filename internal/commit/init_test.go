package commit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestInitCreatesGraph(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	_, h, err := Init(ctx, mem, InitRequest{Schema: []byte(testSchema), Actor: "ann", Message: "hello"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, mem, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	got, c, err := r.Resolve(ctx, MainBranch)
	if err != nil {
		t.Fatal(err)
	}
	if got.Commit != h.Commit || got.Seq != 1 || got.ETag != h.ETag {
		t.Fatalf("head %+v, init returned %+v", got, h)
	}
	if c.Kind != KindInit || len(c.Parents) != 0 || c.Height != 0 || c.Actor != "ann" || c.Message != "hello" || len(c.Tables) != 0 {
		t.Fatalf("genesis %+v", c)
	}
	src, err := r.Schema(ctx, c.Schema)
	if err != nil || string(src) != testSchema {
		t.Fatalf("schema %q err %v", src, err)
	}
	if bs, err := r.Branches(ctx); err != nil || len(bs) != 1 || bs[0] != MainBranch {
		t.Fatalf("branches %v err %v", bs, err)
	}
	// A read-only handle refuses writes before any request.
	if _, _, err := r.Publish(ctx, PublishRequest{Branch: MainBranch, Base: h, Kind: KindMutate}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only publish err %v", err)
	}
}

func TestInitRefusesExistingGraph(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	initGraph(t, mem)
	before := snapshotObjects(t, mem)
	cs := storage.NewCounting(mem)
	_, _, err := Init(ctx, cs, InitRequest{Schema: []byte("other")}, Options{})
	if !errors.Is(err, ErrAlreadyInitialized) {
		t.Fatalf("err = %v", err)
	}
	if w := writes(cs.Snapshot()); w != 0 {
		t.Fatalf("refused init wrote %d objects", w)
	}
	if after := snapshotObjects(t, mem); !maps.Equal(before, after) {
		t.Fatal("refused init changed stored objects")
	}
}

// TestInitRace: of N racing inits exactly one succeeds, and the graph opens
// with the winner's genesis.
func TestInitRace(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"mem", "local"} {
		t.Run(backend, func(t *testing.T) {
			st := backendStore(t, backend)
			const n = 8
			var wg sync.WaitGroup
			heads := make([]Head, n)
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, heads[i], errs[i] = Init(ctx, st, InitRequest{Schema: []byte(testSchema)}, Options{})
				}()
			}
			wg.Wait()
			winners := 0
			var win Head
			for i, err := range errs {
				switch {
				case err == nil:
					winners++
					win = heads[i]
				case !errors.Is(err, ErrAlreadyInitialized):
					t.Fatalf("init %d: unexpected error %v", i, err)
				}
			}
			if winners != 1 {
				t.Fatalf("%d inits succeeded, want 1", winners)
			}
			r := openRepo(t, st)
			if h, err := r.Head(ctx, MainBranch); err != nil || h.Commit != win.Commit {
				t.Fatalf("head %v err %v, winner %v", h.Commit, err, win.Commit)
			}
		})
	}
}

// TestInitInterrupted: an init that stops anywhere before creating main
// leaves a location Open refuses (never a half-usable graph), and running
// init again completes it.
func TestInitInterrupted(t *testing.T) {
	ctx := context.Background()
	for _, fp := range []string{"commit/init-after-stamp", "commit/init-before-ref"} {
		t.Run(fp, func(t *testing.T) {
			mem := storage.NewMem()
			disable := failpoint.Enable(fp, failpoint.Error)
			_, _, err := Init(ctx, mem, InitRequest{Schema: []byte(testSchema)}, Options{})
			disable()
			if !errors.Is(err, failpoint.ErrInjected) {
				t.Fatalf("init err %v", err)
			}
			wantReinitCompletes(t, mem, "interrupted", func() error {
				if _, _, err := Init(ctx, mem, InitRequest{Schema: []byte(testSchema)}, Options{}); err != nil {
					return fmt.Errorf("re-init: %w", err)
				}
				return nil
			})
		})
	}
}

// wantReinitCompletes requires that Open refuses st after a how
// ("interrupted", "killed") init, runs reinit, and requires the graph then
// to open and resolve main.
func wantReinitCompletes(t *testing.T, st storage.Store, how string, reinit func() error) {
	t.Helper()
	ctx := context.Background()
	if _, err := Open(ctx, st, Options{}); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("open after %s init: %v", how, err)
	}
	if err := reinit(); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, st)
	if _, _, err := r.Resolve(ctx, MainBranch); err != nil {
		t.Fatal(err)
	}
}

func snapshotObjects(t testing.TB, st storage.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.List(context.Background(), "", "", func(info storage.Info) error {
		data, _, err := st.Get(context.Background(), info.Key)
		out[info.Key] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInitKilled: a process killed anywhere inside init leaves a location
// that Open refuses and a second init completes.
func TestInitKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	for _, fp := range []string{"commit/init-after-stamp", "commit/init-before-ref", "storage/before-publish", "storage/after-publish"} {
		t.Run(fp, func(t *testing.T) {
			dir := t.TempDir()
			if code, _ := subprocess(t, "init", dir, failpoint.EnvVar+"="+fp+"=exit"); code != failpoint.ExitCode {
				t.Fatalf("init exited %d, want %d", code, failpoint.ExitCode)
			}
			st := localStore(t, dir)
			wantReinitCompletes(t, st, "killed", func() error {
				if code, _ := subprocess(t, "init", dir); code != 0 {
					return fmt.Errorf("second init exited %d", code)
				}
				return nil
			})
		})
	}
}
