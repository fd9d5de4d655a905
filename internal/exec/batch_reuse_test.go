package exec

import (
	"context"
	"errors"
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
// Under the turn there is no lost round (one CAS), and the write reads at
// its turn: an update of the row the other write changed applies on top of
// it, where after a lost CAS it fails with its read-set conflict.
func TestRebaseReusesFragments(t *testing.T) {
	for _, tc := range []struct {
		name       string
		turn       bool
		other      string // whose age the other writer sets meanwhile
		want       []string
		wantErr    error
		data, cass int // fragments of Person sent, ref CAS
	}{
		{name: "lost-cas", other: "Alice", want: []string{"Alice=40", "Bob=50"}, data: 2, cass: 3},
		{name: "before-turn", turn: true, other: "Alice", want: []string{"Alice=40", "Bob=50"}, data: 2, cass: 2},
		{name: "lost-cas/same-row", other: "Bob", want: []string{"Bob=40"}, wantErr: ErrReadSetChanged, data: 2, cass: 2},
		{name: "before-turn/same-row", turn: true, other: "Bob", want: []string{"Bob=50"}, data: 2, cass: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rec := storage.NewRecording(storage.NewMem())
			g := engFixtureOn(t, storage.NewBatching(rec))
			var other *CommitInfo
			move := func() {
				res, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": tc.other, "age": 40}, MutateOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				other = res.Commit
			}
			var hs storage.Store = rec
			if tc.turn {
				hs = &turnStore{Store: rec, before: move}
			}
			h, err := Open(ctx, storage.NewBatching(hs), Options{NoAutoCompact: true})
			if err != nil {
				t.Fatal(err)
			}
			rounds := 0
			h.testBeforePublish = func(lost int) {
				rounds++
				if !tc.turn && lost == 0 {
					move() // the head moves before h's CAS: h loses it
				}
			}
			base := engSnap(t, g, "main").head
			rec.Reset()
			res, err := h.Mutate(ctx, "main", engPlan(t, h, "set_age"), map[string]any{"name": "Bob", "age": 50}, MutateOptions{})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("write: %v, want %v", err, tc.wantErr)
			}
			// Two stagings reach the publish (the head moved once), but a
			// write whose second staging fails.
			if want := map[bool]int{false: 2, true: 1}[tc.wantErr != nil]; rounds != want {
				t.Fatalf("%d stagings reached the publish, want %d", rounds, want)
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
			// One fragment for the other write, one for h's: its second
			// round sent none.
			if data != tc.data {
				t.Errorf("%d Person fragments sent, want %d", data, tc.data)
			}
			if cas != tc.cass {
				t.Errorf("%d ref CAS, want %d", cas, tc.cass)
			}
			if got := engNodes(t, h, "Person", "age"); !containsAll(got, tc.want) {
				t.Errorf("ages %v, want %v among them", got, tc.want)
			}
			if err != nil {
				return
			}
			// h's commit follows the other's, which follows the base.
			if other == nil || res.Commit.Parent != other.ID || other.Parent != base {
				t.Errorf("chain base %s → other %+v → h %+v, want h on the other on the base", base, other, res.Commit)
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
