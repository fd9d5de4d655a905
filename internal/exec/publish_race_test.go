package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	errs := concurrently(n, func(i int) error {
		// No inline compaction: the test counts the chain's commits.
		h, err := Open(ctx, st, Options{NoAutoCompact: true})
		if err != nil {
			return err
		}
		if i%2 == 0 {
			_, err = h.Mutate(ctx, "main", p, map[string]any{"name": fmt.Sprintf("C%d", i)}, MutateOptions{})
		} else {
			_, err = h.Load(ctx, strings.NewReader(fmt.Sprintf(`{"type":"Company","data":{"name":"C%d"}}`, i)), LoadRequest{Mode: LoadAppend})
		}
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	got := engNodes(t, g, "Company", "")
	if len(got) != 2+n {
		t.Fatalf("companies %v", got)
	}
	log := commitLog(t, g, "main", n+1)
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
	h := mustOpen(t, g.st, Options{})
	g.testBeforePublish = func(attempt int) {
		if attempt == 0 {
			if err := other(h); err != nil {
				t.Errorf("racing write: %v", err)
			}
		}
	}
	t.Cleanup(func() { g.testBeforePublish = nil })
}

// TestEngineStrictRace pins the conflict rules of docs/write-path.md: a
// write that loses the publish race to another handle's commit rebases, or
// fails with a typed conflict naming what changed, with no effect.
func TestEngineStrictRace(t *testing.T) {
	ctx := context.Background()
	load := func(jsonl string) func(h *Graph) error {
		return func(h *Graph) error {
			_, err := h.Load(ctx, strings.NewReader(jsonl), LoadRequest{Mode: LoadAppend})
			return err
		}
	}
	mutate := func(name string, params map[string]any) func(g *Graph) error {
		return func(g *Graph) error {
			_, err := g.Mutate(ctx, "main", engPlan(t, g, name), params, MutateOptions{})
			return err
		}
	}
	insertCompany := load(`{"type":"Company","data":{"name":"Initech"}}`)
	insertPerson := load(`{"type":"Person","data":{"name":"Eve","age":70}}`)
	tests := []struct {
		name   string
		write  func(g *Graph) error
		other  func(h *Graph) error
		member string // "" = the write rebases and succeeds
		entity string // row-level conflicts: the row's id
		change string
	}{
		{"update vs insert into another type", mutate("set_age", map[string]any{"name": "Bob", "age": 26}), insertCompany, "", "", ""},
		{"keyed update vs insert into its table", mutate("set_age", map[string]any{"name": "Bob", "age": 99}), insertPerson, "", "", ""},
		{"keyed update vs update of another row", mutate("set_age", map[string]any{"name": "Bob", "age": 99}),
			func(h *Graph) error { return mutate("set_age", map[string]any{"name": "Alice", "age": 31})(h) }, "", "", ""},
		{"keyed update vs update of the same row", mutate("set_age", map[string]any{"name": "Bob", "age": 99}),
			func(h *Graph) error { return mutate("set_age", map[string]any{"name": "Bob", "age": 31})(h) }, "node:Person", "Bob", ChangeUpdated},
		{"keyed update vs delete of the same row", mutate("set_age", map[string]any{"name": "Bob", "age": 99}),
			func(h *Graph) error { return mutate("remove_person", map[string]any{"name": "Bob"})(h) }, "node:Person", "Bob", ChangeDeleted},
		{"predicate update vs insert of a matching row", mutate("bump_over", map[string]any{"min": 29, "age": 60}), insertPerson, "node:Person", "Eve", ChangeInserted},
		{"predicate update vs insert of a row it does not match", mutate("bump_over", map[string]any{"min": 29, "age": 60}),
			load(`{"type":"Person","data":{"name":"Young","age":7}}`), "", "", ""},
		{"predicate update vs a row updated into its match", mutate("bump_over", map[string]any{"min": 29, "age": 60}),
			func(h *Graph) error { return mutate("set_age", map[string]any{"name": "Bob", "age": 80})(h) }, "node:Person", "Bob", ChangeUpdated},
		{"keyed delete vs delete of another row", mutate("remove_person", map[string]any{"name": "Diana"}),
			func(h *Graph) error { return mutate("remove_person", map[string]any{"name": "Charlie"})(h) }, "", "", ""},
		{"delete vs insert of an edge its cascade matches", mutate("remove_person", map[string]any{"name": "Diana"}),
			load(`{"edge":"Knows","from":"Charlie","to":"Diana"}`), "edge:Knows", "", ChangeInserted},
		{"delete vs insert of an edge elsewhere", mutate("remove_person", map[string]any{"name": "Diana"}),
			load(`{"edge":"Knows","from":"Charlie","to":"Alice"}`), "", "", ""},
		{"insert-only vs insert into its table", mutate("insert_person", map[string]any{"name": "Fay", "age": 3}), insertPerson, "", "", ""},
		{"overwrite vs unrelated table", func(g *Graph) error {
			_, err := g.Load(ctx, strings.NewReader(`{"edge":"Knows","from":"Diana","to":"Bob"}`), LoadRequest{Mode: LoadOverwrite})
			return err
		}, insertCompany, "", "", ""},
		{"overwrite vs a node table it validated against", func(g *Graph) error {
			_, err := g.Load(ctx, strings.NewReader(`{"edge":"Knows","from":"Diana","to":"Bob"}`), LoadRequest{Mode: LoadOverwrite})
			return err
		}, insertPerson, "node:Person", "", ChangeChanged},
		{"append vs append", func(g *Graph) error {
			_, err := g.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"Gus"}}`), LoadRequest{Mode: LoadAppend})
			return err
		}, insertPerson, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := engFixture(t)
			before := engNodes(t, g, "Person", "age")
			raceOnce(t, g, tc.other)
			err := tc.write(g)
			g.testBeforePublish = nil
			after := engSnap(t, g, "main")
			if tc.member == "" {
				if err != nil {
					t.Fatalf("write should rebase: %v", err)
				}
				log, _ := g.Log(ctx, "main", 3)
				if log[0].ID != after.head || log[1].ID != log[0].Parent {
					t.Fatalf("expected the racing write then the rebased write: %+v", log)
				}
				return
			}
			var rs *ReadSetChangedError
			if !errors.As(err, &rs) || !errors.Is(err, ErrReadSetChanged) || rs.Member != tc.member || rs.Change != tc.change ||
				(tc.entity != "" && rs.EntityID != tc.entity) || (tc.change != ChangeChanged && rs.EntityID == "") {
				t.Fatalf("err = %v (%+v), want a %s conflict on %s %q", err, rs, tc.change, tc.member, tc.entity)
			}
			msg := err.Error()
			if strings.Contains(msg, "tables/") || strings.Contains(msg, ".json") || !strings.Contains(msg, "no effect") ||
				rs.Branch != "main" || rs.Actual != after.head || (rs.EntityID != "" && !strings.Contains(msg, "'"+rs.EntityID+"'")) {
				t.Fatalf("conflict text/fields: %q %+v", msg, rs)
			}
			// Only the racing write is visible.
			log, _ := g.Log(ctx, "main", 2)
			if log[0].ID != after.head || log[1].ID != rs.Expected {
				t.Fatalf("head %+v is not the racing write on the read commit", log)
			}
			if got := engNodes(t, g, "Person", "age"); slices.Contains(got, "Bob=99") || slices.Contains(got, "Eve=1") ||
				(slices.Contains(before, "Diana=28") && !slices.Contains(got, "Diana=28")) {
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
	errs := concurrently(n, func(i int) error {
		h, err := Open(ctx, st, Options{})
		if err == nil {
			_, err = h.Load(ctx, strings.NewReader(fmt.Sprintf(`{"type":"Person","data":{"name":"Zed","age":%d}}`, i)), LoadRequest{Mode: LoadAppend})
		}
		return err
	})
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
