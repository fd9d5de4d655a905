package exec

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// turnStore is a store with a Serializer whose turn is always free, and
// before runs (once) when a writer asks for it: what another process
// publishes while a batch staged outside the turn waits for it.
type turnStore struct {
	storage.Store
	once   sync.Once
	before func()
}

func (s *turnStore) Inner() storage.Store { return s.Store }

func (s *turnStore) Serialize(ctx context.Context, name string) (func(), error) {
	s.once.Do(s.before)
	return func() {}, nil
}

// TestRebaseReusesFragments: a write staged again because another writer
// moved the head — after a lost CAS, and when its leader staged it before
// taking the turn — builds the same rows and names the fragment its first
// round sent, instead of encoding and sending another; it publishes on top
// of the other write, and the graph is what the two writes one by one give.
// Under the turn there is no lost round: one CAS.
func TestRebaseReusesFragments(t *testing.T) {
	for _, turn := range []bool{false, true} {
		name := "lost-cas"
		if turn {
			name = "before-turn"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rec := storage.NewRecording(storage.NewMem())
			g := engFixtureOn(t, storage.NewBatching(rec))
			var alice *CommitInfo
			other := func() {
				res, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": "Alice", "age": 40}, MutateOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				alice = res.Commit
			}
			var hs storage.Store = rec
			if turn {
				hs = &turnStore{Store: rec, before: other}
			}
			h, err := Open(ctx, storage.NewBatching(hs), Options{NoAutoCompact: true})
			if err != nil {
				t.Fatal(err)
			}
			rounds := 0
			h.testBeforePublish = func(lost int) {
				rounds++
				if !turn && lost == 0 {
					other() // the head moves before h's CAS: h loses it
				}
			}
			base := engSnap(t, g, "main").head
			rec.Reset()
			res, err := h.Mutate(ctx, "main", engPlan(t, h, "set_age"), map[string]any{"name": "Bob", "age": 50}, MutateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rounds != 2 {
				t.Fatalf("%d stagings, want 2 (the head moved once)", rounds)
			}
			var data, cas int
			for _, r := range rec.Requests() {
				switch {
				case r.Op == storage.OpPutIfMatch:
					cas++
				case (r.Op == storage.OpPut || r.Op == storage.OpPutIfAbsent) && strings.HasPrefix(r.Key, "tables/node-Person/data/"):
					data++
				}
			}
			// One fragment for Alice's write, one for Bob's: Bob's second
			// round sent none.
			if data != 2 {
				t.Errorf("%d Person fragments sent, want 2 (one per write)", data)
			}
			if want := map[bool]int{false: 3, true: 2}[turn]; cas != want {
				t.Errorf("%d ref CAS, want %d", cas, want)
			}
			if got, want := engNodes(t, h, "Person", "age"), []string{"Alice=40", "Bob=50"}; !containsAll(got, want) {
				t.Errorf("ages %v, want %v among them", got, want)
			}
			// Bob's commit follows Alice's, which follows the base.
			if alice == nil || res.Commit.Parent != alice.ID || alice.Parent != base {
				t.Errorf("chain base %s → Alice %+v → Bob %+v, want Bob on Alice on the base", base, alice, res.Commit)
			}
		})
	}
}

func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// TestFragmentReuseMatches: the memo hands back a fragment only for the
// same write, table, columns and rows, once its round was flushed, and
// never one that round did not send.
func TestFragmentReuseMatches(t *testing.T) {
	ts := table.Schema{Columns: []table.Column{{Name: table.KeyColumn, Type: table.ColumnType{Kind: table.String}}, {Name: "age", Type: table.ColumnType{Kind: table.I64, Nullable: true}}}}
	props := []*schema.Property{{Name: "age"}}
	rows := func(age any) []Row { return []Row{{ID: "p1", Values: map[string]any{"age": age}}} }
	mine, theirs := storage.NewLedger(), storage.NewLedger()
	ctx := storage.WithLedger(context.Background(), mine)
	frag := table.Fragment{Key: "tables/node-P/data/A.parquet", Index: "tables/node-P/index/A.fidx", Rows: 1}
	for _, tc := range []struct {
		name  string
		setup func(r *fragmentReuse)
		ctx   context.Context
		rows  []Row
		props []*schema.Property
		want  bool
	}{
		{name: "same rows after confirm", setup: func(r *fragmentReuse) { r.confirm() }, ctx: ctx, rows: rows(int64(3)), props: props, want: true},
		{name: "not flushed yet", setup: func(*fragmentReuse) {}, ctx: ctx, rows: rows(int64(3)), props: props},
		{name: "replaced, never sent", setup: func(r *fragmentReuse) { r.drop(map[string]bool{frag.Key: true}); r.confirm() }, ctx: ctx, rows: rows(int64(3)), props: props},
		{name: "another write's", setup: func(r *fragmentReuse) { r.confirm() }, ctx: storage.WithLedger(context.Background(), theirs), rows: rows(int64(3)), props: props},
		{name: "a value differs", setup: func(r *fragmentReuse) { r.confirm() }, ctx: ctx, rows: rows(int64(4)), props: props},
		{name: "a value of another type", setup: func(r *fragmentReuse) { r.confirm() }, ctx: ctx, rows: rows(int32(3)), props: props},
		{name: "a column dropped", setup: func(r *fragmentReuse) { r.confirm() }, ctx: ctx, rows: rows(int64(3)), props: nil},
		{name: "another row", setup: func(r *fragmentReuse) { r.confirm() }, ctx: ctx, rows: append(rows(int64(3)), Row{ID: "p2"}), props: props},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fragmentReuse{}
			r.add(ctx, "tables/node-P/", ts, rows(int64(3)), props, false, frag)
			tc.setup(r)
			got, ok := r.find(tc.ctx, "tables/node-P/", ts, tc.rows, tc.props, false)
			if ok != tc.want || (ok && got.Key != frag.Key) {
				t.Errorf("find = %v, %v; want found=%v", got.Key, ok, tc.want)
			}
		})
	}
	// NaN is not equal to itself: never reused.
	r := &fragmentReuse{}
	nan := []Row{{ID: "p1", Values: map[string]any{"age": math.NaN()}}}
	r.add(ctx, "tables/node-P/", ts, nan, props, false, frag)
	r.confirm()
	if _, ok := r.find(ctx, "tables/node-P/", ts, nan, props, false); ok {
		t.Error("a NaN row matched itself")
	}
}
