package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestEngineConcurrentInsertsLinear: 8 writers on separate handles insert
// on one branch at once; every write lands exactly once and history is one
// chain.
func TestEngineConcurrentInsertsLinear(t *testing.T) {
	g, st := engFixture(t)
	ctx := context.Background()
	base := engSnap(t, g, "main").head
	p := engPlan(t, g, "insert_company")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// No inline compaction: the test counts the chain's commits.
			h, err := Open(ctx, st, Options{NoAutoCompact: true})
			if err != nil {
				errs[i] = err
				return
			}
			if i%2 == 0 {
				_, errs[i] = h.Mutate(ctx, "main", p, map[string]any{"name": fmt.Sprintf("C%d", i)}, MutateOptions{})
			} else {
				_, errs[i] = h.Load(ctx, strings.NewReader(fmt.Sprintf(`{"type":"Company","data":{"name":"C%d"}}`, i)), LoadRequest{Mode: LoadAppend})
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	got := engNodes(t, g, "Company", "")
	if len(got) != 2+n {
		t.Fatalf("companies %v", got)
	}
	log, err := g.Log(ctx, "main", n+1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if log[i].Parent != log[i+1].ID || log[i].MergedParent != "" {
			t.Fatalf("history is not linear at %d: %+v", i, log[i])
		}
	}
	if log[n].ID != base {
		t.Fatalf("chain does not start at the pre-race head")
	}
}

// raceOnce arms g so that the first publish attempt of the next write is
// preceded by other's write, committed from a separate handle.
func raceOnce(t *testing.T, g *Graph, other func(h *Graph) error) {
	t.Helper()
	h, err := Open(context.Background(), g.st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.testBeforePublish = func(attempt int) {
		if attempt == 0 {
			if err := other(h); err != nil {
				t.Errorf("racing write: %v", err)
			}
		}
	}
	t.Cleanup(func() { g.testBeforePublish = nil })
}

func TestEngineStrictRace(t *testing.T) {
	ctx := context.Background()
	insertCompany := func(h *Graph) error {
		_, err := h.Load(ctx, strings.NewReader(`{"type":"Company","data":{"name":"Initech"}}`), LoadRequest{Mode: LoadAppend})
		return err
	}
	insertPerson := func(h *Graph) error {
		_, err := h.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"Eve","age":70}}`), LoadRequest{Mode: LoadAppend})
		return err
	}
	tests := []struct {
		name   string
		write  func(g *Graph) error
		other  func(h *Graph) error
		member string // "" = the write rebases and succeeds
	}{
		{"update vs insert into another type", func(g *Graph) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": "Bob", "age": 26}, MutateOptions{})
			return err
		}, insertCompany, ""},
		{"update vs insert into its table", func(g *Graph) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": "Bob", "age": 99}, MutateOptions{})
			return err
		}, insertPerson, "node:Person"},
		{"delete vs change of a cascaded table", func(g *Graph) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "remove_person"), map[string]any{"name": "Diana"}, MutateOptions{})
			return err
		}, func(h *Graph) error {
			_, err := h.Load(ctx, strings.NewReader(`{"edge":"Knows","from":"Charlie","to":"Diana"}`), LoadRequest{Mode: LoadAppend})
			return err
		}, "edge:Knows"},
		{"insert-only vs insert into its table", func(g *Graph) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "insert_person"), map[string]any{"name": "Fay", "age": 3}, MutateOptions{})
			return err
		}, insertPerson, ""},
		{"overwrite vs unrelated table", func(g *Graph) error {
			_, err := g.Load(ctx, strings.NewReader(`{"edge":"Knows","from":"Diana","to":"Bob"}`), LoadRequest{Mode: LoadOverwrite})
			return err
		}, insertCompany, ""},
		{"overwrite vs a node table it validated against", func(g *Graph) error {
			_, err := g.Load(ctx, strings.NewReader(`{"edge":"Knows","from":"Diana","to":"Bob"}`), LoadRequest{Mode: LoadOverwrite})
			return err
		}, insertPerson, "node:Person"},
		{"append vs append", func(g *Graph) error {
			_, err := g.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"Gus"}}`), LoadRequest{Mode: LoadAppend})
			return err
		}, insertPerson, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := engFixture(t)
			raceOnce(t, g, tc.other)
			err := tc.write(g)
			g.testBeforePublish = nil
			after := engSnap(t, g, "main")
			if tc.member == "" {
				if err != nil {
					t.Fatalf("write should rebase: %v", err)
				}
				log, _ := g.Log(ctx, "main", 3)
				if log[0].ID != after.head || log[1].Kind != "load" {
					t.Fatalf("expected racing load then the rebased write: %+v", log)
				}
				return
			}
			var rs *ReadSetChangedError
			if !errors.As(err, &rs) || !errors.Is(err, ErrReadSetChanged) || rs.Member != tc.member {
				t.Fatalf("err = %v, want ReadSetChanged on %s", err, tc.member)
			}
			// Only the racing write is visible.
			log, _ := g.Log(ctx, "main", 1)
			if log[0].Kind != "load" || log[0].ID != after.head {
				t.Fatalf("head %+v is not the racing write", log[0])
			}
			if got := engNodes(t, g, "Person", "age"); !slices.Contains(got, "Bob=25") || !slices.Contains(got, "Diana=28") {
				t.Fatalf("strict write leaked: %v", got)
			}
		})
	}
}

// TestEngineConcurrentSameIDAppend: racing strict inserts of one id have
// exactly one winner; the others get KeyConflict, also after a rebase.
func TestEngineConcurrentSameIDAppend(t *testing.T) {
	g, st := engFixture(t)
	ctx := context.Background()
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := Open(ctx, st, Options{})
			if err == nil {
				_, err = h.Load(ctx, strings.NewReader(fmt.Sprintf(`{"type":"Person","data":{"name":"Zed","age":%d}}`, i)), LoadRequest{Mode: LoadAppend})
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		var kc *KeyConflictError
		switch {
		case err == nil:
			wins++
		case !errors.As(err, &kc):
			t.Fatalf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners, want 1 (%v)", wins, errs)
	}
	if got := engNodes(t, g, "Person", ""); len(got) != 5 {
		t.Fatalf("persons %v", got)
	}
}
