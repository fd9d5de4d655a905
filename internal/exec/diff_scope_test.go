package exec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestDiffBetweenScope: kinds, types and ops select changes; counts match;
// an unknown type is refused rather than read as "no changes".
func TestDiffBetweenScope(t *testing.T) {
	h := featureBH(t)
	h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
	h.mut("feature", "age", map[string]any{"name": "Bob", "age": 99})
	h.mut("feature", "link", map[string]any{"from": "Eve", "to": "Alice"})
	h.mut("feature", "del", map[string]any{"name": "Diana"}) // cascades Knows Bob>Diana
	cases := []struct {
		name  string
		scope ChangeScope
		want  []string // kind type id-or-endpoints op
		stats ChangeStats
	}{
		{"everything", ChangeScope{}, []string{
			"edge Knows Bob>Diana delete", "edge Knows Eve>Alice insert",
			"node Person Bob update", "node Person Diana delete", "node Person Eve insert"},
			ChangeStats{Inserts: 2, Updates: 1, Deletes: 2}},
		{"one type", ChangeScope{Types: []string{"Person"}}, []string{
			"node Person Bob update", "node Person Diana delete", "node Person Eve insert"},
			ChangeStats{Inserts: 1, Updates: 1, Deletes: 1}},
		{"edges only", ChangeScope{Kinds: []string{"edge"}}, []string{
			"edge Knows Bob>Diana delete", "edge Knows Eve>Alice insert"},
			ChangeStats{Inserts: 1, Deletes: 1}},
		{"deletes only", ChangeScope{Ops: []string{OpDelete}}, []string{
			"edge Knows Bob>Diana delete", "node Person Diana delete"},
			ChangeStats{Deletes: 2}},
		{"an unchanged type", ChangeScope{Types: []string{"Company"}}, nil, ChangeStats{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := h.g.DiffBetween(h.ctx, Target{}, Target{Branch: "feature"}, tc.scope)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs.Changes {
				who := c.ID
				if c.Kind == "edge" {
					who = c.Src + ">" + c.Dst
				}
				got = append(got, strings.Join([]string{c.Kind, c.Type, who, c.Op}, " "))
			}
			slices.Sort(got) // edges of one type come in (generated) id order
			if !slices.Equal(got, tc.want) || cs.Stats != tc.stats {
				t.Fatalf("got %v %+v\nwant %v %+v", got, cs.Stats, tc.want, tc.stats)
			}
			if cs.From.ID != h.head("main") || cs.To.ID != h.head("feature") || cs.To.Branch != "feature" {
				t.Fatalf("resolved %+v → %+v", cs.From, cs.To)
			}
		})
	}
	_, err := h.g.DiffBetween(h.ctx, Target{}, Target{Branch: "feature"}, ChangeScope{Types: []string{"Persn"}})
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), `"Persn"`) {
		t.Fatalf("unknown type: %v", err)
	}
}

// TestDiffBetweenReadsOnlySelectedTables: a diff scoped to one type never
// reads another type's table objects (cold handle, every request seen).
func TestDiffBetweenReadsOnlySelectedTables(t *testing.T) {
	fs := storage.NewFaulty(storage.NewMem())
	h := newBH(t, fs, engSchema, engData, "")
	h.branch("feature", "")
	h.mut("feature", "age", map[string]any{"name": "Bob", "age": 99})
	h.mut("feature", "link", map[string]any{"from": "Diana", "to": "Alice"})
	var mu sync.Mutex
	var keys []string
	fs.SetHook(func(_ context.Context, _ storage.Op, key string, stage storage.Stage) error {
		if stage == storage.Before {
			mu.Lock()
			keys = append(keys, key)
			mu.Unlock()
		}
		return nil
	})
	read := func(scope ChangeScope) (int, bool) {
		keys = nil
		g := mustOpen(t, fs, Options{})
		cs, err := g.DiffBetween(h.ctx, Target{}, Target{Branch: "feature"}, scope)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return len(cs.Changes), slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "node-Person") })
	}
	if n, person := read(ChangeScope{}); n != 2 || !person {
		t.Fatalf("full diff: %d changes, read Person: %v", n, person)
	}
	if n, person := read(ChangeScope{Types: []string{"Knows"}}); n != 1 || person {
		t.Fatalf("diff of Knows: %d changes, read Person's table: %v", n, person)
	}
}

// TestChangedProperties: an update names exactly the properties whose
// values differ; inserts and deletes name none.
func TestChangedProperties(t *testing.T) {
	h := featureBH(t)
	h.mut("feature", "age", map[string]any{"name": "Bob", "age": 99})
	h.mut("feature", "add", map[string]any{"name": "Eve", "age": 1})
	cs, err := h.g.DiffBetween(h.ctx, Target{}, Target{Branch: "feature"}, ChangeScope{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"Bob": {"age"}, "Eve": nil}
	for _, c := range cs.Changes {
		if got := c.ChangedProperties(); !slices.Equal(got, want[c.ID]) {
			t.Fatalf("%s %s: changed %v, want %v", c.Op, c.ID, got, want[c.ID])
		}
	}
	same := Change{Op: OpUpdate, Kind: "edge", Src: "a", Dst: "b", BeforeSrc: "a", BeforeDst: "c"}
	if !same.EndpointsChanged() {
		t.Fatal("an edge whose dst moved reports unchanged endpoints")
	}
}
