package storage_test

import (
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

func newLocal(t *testing.T) *storage.Local {
	t.Helper()
	s, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// plainStore hides every method but the Store interface, so OpenReadAt takes
// its Stat + GetRange fallback.
type plainStore struct{ storage.Store }

func TestConformance(t *testing.T) {
	backends := []struct {
		name string
		new  func(t *testing.T) storage.Store
	}{
		{"mem", func(*testing.T) storage.Store { return storage.NewMem() }},
		{"local", func(t *testing.T) storage.Store { return newLocal(t) }},
		{"counting(mem)", func(*testing.T) storage.Store { return storage.NewCounting(storage.NewMem()) }},
		{"faulty(mem)", func(*testing.T) storage.Store { return storage.NewFaulty(storage.NewMem()) }},
		{"counting(faulty(local))", func(t *testing.T) storage.Store {
			return storage.NewCounting(storage.NewFaulty(newLocal(t)))
		}},
		{"recording(mem)", func(*testing.T) storage.Store { return storage.NewRecording(storage.NewMem()) }},
		{"batching(mem)", func(*testing.T) storage.Store { return storage.NewBatching(storage.NewMem()) }},
		{"fallback-readat(mem)", func(*testing.T) storage.Store { return plainStore{storage.NewMem()} }},
		{"counting(fallback-readat(local))", func(t *testing.T) storage.Store {
			return storage.NewCounting(plainStore{newLocal(t)})
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { storagetest.Run(t, b.new) })
	}
}

// TestMemSortedKeys pins Mem's sorted key index through inserts, overwrites
// and deletes.
func TestMemSortedKeys(t *testing.T) {
	ctx := t.Context()
	m := storage.NewMem()
	live := map[string]bool{}
	for i, k := range []string{"m", "c", "x/y", "a", "c", "m/n", "b", "a"} {
		if i%3 == 2 {
			if err := m.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
			delete(live, k)
			continue
		}
		if _, err := m.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
		live[k] = true
	}
	var want []string
	for k := range live {
		want = append(want, k)
	}
	slices.Sort(want)
	var got []string
	if err := m.List(ctx, "", "", func(i storage.Info) error { got = append(got, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
}

// TestMemETagNeverRepeats: rewriting identical bytes still yields a new ETag,
// so a stale ETag can never match again (ABA-free).
func TestMemETagNeverRepeats(t *testing.T) {
	ctx := t.Context()
	m := storage.NewMem()
	seen := map[string]bool{}
	for range 5 {
		for _, v := range []string{"A", "B"} {
			info, err := m.Put(ctx, "k", []byte(v))
			if err != nil {
				t.Fatal(err)
			}
			if seen[info.ETag] {
				t.Fatalf("ETag %q repeated", info.ETag)
			}
			seen[info.ETag] = true
		}
	}
}
