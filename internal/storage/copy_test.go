package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// runtimeUnsupported is a Copier that claims the capability and then
// answers ErrUnsupported, as an S3 server answering 501 does.
type runtimeUnsupported struct {
	storage.Store
	calls int
}

func (r *runtimeUnsupported) CopiesIfAbsent() bool { return true }

func (r *runtimeUnsupported) CopyIfAbsent(_ context.Context, _, dst string) (storage.Info, error) {
	r.calls++
	return storage.Info{}, &storage.Error{Op: storage.OpCopyIfAbsent, Key: dst, Err: storage.ErrUnsupported}
}

// TestCopyIfAbsentCost pins what storage.CopyIfAbsent costs through the
// wrappers: one copy request over a store with the capability, a read and
// a create without it (or when the store refuses at run time).
func TestCopyIfAbsentCost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner func(t *testing.T) storage.Store
		want  storage.Counts
		calls int
	}{
		{"mem", func(*testing.T) storage.Store { return storage.NewMem() },
			storage.Counts{storage.OpCopyIfAbsent: {Requests: 1}}, 0},
		{"delayed(faulty(recording(batching(cached(mem)))))", func(*testing.T) storage.Store {
			return storage.NewDelayed(storage.NewFaulty(storage.NewRecording(storage.NewBatching(
				storage.NewCached(storage.NewMem(), storage.CacheOptions{Immutable: func(string) bool { return false }})))), 0)
		}, storage.Counts{storage.OpCopyIfAbsent: {Requests: 1}}, 0},
		{"local", func(t *testing.T) storage.Store { return newLocal(t) },
			storage.Counts{storage.OpGet: {Requests: 1, Bytes: 4}, storage.OpPutIfAbsent: {Requests: 1, Bytes: 4}}, 0},
		{"refused at run time", func(*testing.T) storage.Store { return &runtimeUnsupported{Store: storage.NewMem()} },
			storage.Counts{storage.OpCopyIfAbsent: {Requests: 1}, storage.OpGet: {Requests: 1, Bytes: 4}, storage.OpPutIfAbsent: {Requests: 1, Bytes: 4}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			inner := tc.inner(t)
			if _, err := inner.Put(ctx, "refs/heads/main", []byte("head")); err != nil {
				t.Fatal(err)
			}
			cnt := storage.NewCounting(inner)
			if _, err := storage.CopyIfAbsent(ctx, cnt, "refs/heads/main", "refs/heads/b"); err != nil {
				t.Fatal(err)
			}
			got := cnt.Snapshot()
			for _, op := range storage.Ops() {
				if got[op] != tc.want[op] {
					t.Errorf("%s: %+v, want %+v", op, got[op], tc.want[op])
				}
			}
			if r, ok := inner.(*runtimeUnsupported); ok && r.calls != tc.calls {
				t.Errorf("copier called %d times, want %d", r.calls, tc.calls)
			}
			data, _, err := inner.Get(ctx, "refs/heads/b")
			if err != nil || string(data) != "head" {
				t.Fatalf("copy: %q, %v", data, err)
			}
		})
	}
}

// TestCopyIfAbsentFaults: a fault before the copy changes nothing; one
// after it models a copy that landed unheard (the destination exists).
func TestCopyIfAbsentFaults(t *testing.T) {
	for _, stage := range []storage.Stage{storage.Before, storage.After} {
		t.Run(stage.String(), func(t *testing.T) {
			ctx := t.Context()
			mem := storage.NewMem()
			if _, err := mem.Put(ctx, "refs/heads/main", []byte("head")); err != nil {
				t.Fatal(err)
			}
			f := storage.NewFaulty(mem)
			f.Inject(storage.Fault{Op: storage.OpCopyIfAbsent, Stage: stage})
			c, ok := storage.CopierOf(f)
			if !ok {
				t.Fatal("Faulty(Mem) lost the capability")
			}
			if _, err := c.CopyIfAbsent(ctx, "refs/heads/main", "refs/heads/b"); err == nil {
				t.Fatal("injected fault did not fire")
			}
			_, err := mem.Stat(ctx, "refs/heads/b")
			if landed := err == nil; landed != (stage == storage.After) {
				t.Fatalf("after a fault %s the copy: err %v", stage, err)
			}
		})
	}
}

// TestCopierOfWrappers: the capability is visible through a wrapper only
// when the wrapped store has it.
func TestCopierOfWrappers(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   storage.Store
		want bool
	}{
		{"mem", storage.NewMem(), true},
		{"counting(mem)", storage.NewCounting(storage.NewMem()), true},
		{"counting(local)", storage.NewCounting(newLocal(t)), false},
		{"plain(mem)", plainStore{storage.NewMem()}, false},
	} {
		if _, ok := storage.CopierOf(tc.st); ok != tc.want {
			t.Errorf("%s: CopierOf = %v, want %v", tc.name, ok, tc.want)
		}
	}
	_, err := storage.NewCounting(newLocal(t)).CopyIfAbsent(t.Context(), "a", "b")
	if !errors.Is(err, storage.ErrUnsupported) {
		t.Fatalf("copy through a wrapper of a store without the capability: %v", err)
	}
}
