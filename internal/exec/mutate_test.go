package exec

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

func TestEngineMutate(t *testing.T) {
	type want struct {
		nodes, edges int64
		commit       bool
		persons      []string // Person id=age after, nil = unchanged check skipped
		knows        []string
	}
	tests := []struct {
		name   string
		query  string
		params map[string]any
		want   want
		errIs  func(error) bool
	}{
		{name: "insert unkeyed edge", query: "add_friend", params: map[string]any{"from": "Diana", "to": "Alice"},
			want: want{edges: 1, commit: true, knows: []string{"Alice>Bob", "Alice>Charlie", "Bob>Diana", "Diana>Alice"}}},
		{name: "insert keyed is upsert", query: "insert_person", params: map[string]any{"name": "Alice", "age": 31},
			want: want{nodes: 1, commit: true, persons: []string{"Alice=31", "Bob=25", "Charlie=35", "Diana=28"}}},
		{name: "update", query: "set_age", params: map[string]any{"name": "Bob", "age": 26},
			want: want{nodes: 1, commit: true, persons: []string{"Alice=30", "Bob=26", "Charlie=35", "Diana=28"}}},
		{name: "update no match is no-op", query: "set_age", params: map[string]any{"name": "Nobody", "age": 1},
			want: want{}},
		{name: "delete cascades", query: "remove_person", params: map[string]any{"name": "Alice"},
			want: want{nodes: 1, edges: 3, commit: true, persons: []string{"Bob=25", "Charlie=35", "Diana=28"}, knows: []string{"Bob>Diana"}}},
		{name: "delete nothing", query: "remove_person", params: map[string]any{"name": "Ghost"}, want: want{}},
		{name: "delete edges by from", query: "remove_friendship", params: map[string]any{"from": "Alice"},
			want: want{edges: 2, commit: true, knows: []string{"Bob>Diana"}}},
		{name: "read your writes", query: "insert_person_and_friend", params: map[string]any{"name": "Eve", "age": 22, "friend": "Bob"},
			want: want{nodes: 1, edges: 1, commit: true, knows: []string{"Alice>Bob", "Alice>Charlie", "Bob>Diana", "Eve>Bob"}}},
		{name: "insert then update counts twice", query: "insert_then_update", params: map[string]any{"name": "Zed"},
			want: want{nodes: 2, commit: true, persons: []string{"Alice=30", "Bob=25", "Charlie=35", "Diana=28", "Zed=2"}}},
		{name: "chained updates see pending values", query: "chained", params: map[string]any{"name": "Alice"},
			want: want{nodes: 2, commit: true, persons: []string{"Alice=10", "Bob=25", "Charlie=35", "Diana=28"}}},
		{name: "overlapping deletes count once", query: "remove_two",
			want: want{nodes: 2, edges: 3, commit: true, persons: []string{"Bob=25", "Diana=28"}, knows: []string{"Bob>Diana"}}},
		{name: "dangling edge endpoint", query: "add_friend", params: map[string]any{"from": "Alice", "to": "Ghost"},
			errIs: func(err error) bool {
				var ce *ConstraintError
				return errors.As(err, &ce) && ce.Kind == ConstraintReference && ce.Msg == "dst 'Ghost' not found in Person"
			}},
		{name: "range of I32 param", query: "set_age", params: map[string]any{"name": "Bob", "age": 1 << 40},
			errIs: func(err error) bool { var ve *value.Error; return errors.As(err, &ve) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := engFixture(t)
			before := engSnap(t, g, "main")
			res, err := g.Mutate(context.Background(), "main", engPlan(t, g, tc.query), tc.params, MutateOptions{Actor: "ann"})
			if tc.errIs != nil {
				if err == nil || !tc.errIs(err) {
					t.Fatalf("err = %v (%T)", err, err)
				}
				if after := engSnap(t, g, "main"); !after.equal(before) {
					t.Fatalf("failed mutation changed the graph")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.AffectedNodes != tc.want.nodes || res.AffectedEdges != tc.want.edges {
				t.Fatalf("affected %d/%d, want %d/%d", res.AffectedNodes, res.AffectedEdges, tc.want.nodes, tc.want.edges)
			}
			after := engSnap(t, g, "main")
			if (res.Commit != nil) != tc.want.commit {
				t.Fatalf("commit = %+v, want commit %v", res.Commit, tc.want.commit)
			}
			if !tc.want.commit {
				if !after.equal(before) {
					t.Fatalf("no-op mutation moved the head")
				}
				return
			}
			if res.Commit.Parent != before.head || res.Commit.ID != after.head || res.Commit.Actor != "ann" {
				t.Fatalf("commit %+v, before %s after %s", res.Commit, before.head, after.head)
			}
			if tc.want.persons != nil {
				if got := engNodes(t, g, "Person", "age"); !slices.Equal(got, tc.want.persons) {
					t.Fatalf("persons %v, want %v", got, tc.want.persons)
				}
			}
			if tc.want.knows != nil {
				if got := engEdges(t, g, "Knows"); !slices.Equal(got, tc.want.knows) {
					t.Fatalf("knows %v, want %v", got, tc.want.knows)
				}
			}
		})
	}
}

func TestEngineMutateIfCommit(t *testing.T) {
	g, _ := engFixture(t)
	ctx := context.Background()
	head := engSnap(t, g, "main").head
	p := engPlan(t, g, "set_age")
	res, err := g.Mutate(ctx, "main", p, map[string]any{"name": "Bob", "age": 40}, MutateOptions{IfCommit: head})
	if err != nil || res.Commit == nil || res.Commit.Parent != head {
		t.Fatalf("matching IfCommit: %+v %v", res, err)
	}
	// The old head is now stale.
	before := engSnap(t, g, "main")
	_, err = g.Mutate(ctx, "main", p, map[string]any{"name": "Bob", "age": 41}, MutateOptions{IfCommit: head})
	var pf *PreconditionFailedError
	if !errors.As(err, &pf) || !errors.Is(err, ErrPreconditionFailed) || pf.Expected != head || pf.Actual != before.head || pf.Branch != "main" {
		t.Fatalf("stale IfCommit: %v", err)
	}
	if !engSnap(t, g, "main").equal(before) {
		t.Fatal("failed conditional write changed the graph")
	}
	// A conditional no-op succeeds without a commit.
	res, err = g.Mutate(ctx, "main", p, map[string]any{"name": "Nobody", "age": 1}, MutateOptions{IfCommit: before.head})
	if err != nil || res.Commit != nil {
		t.Fatalf("conditional no-op: %+v %v", res, err)
	}
	// Losing the CAS race is a precondition failure too, never retried.
	// (The racing write uses another handle: this one is inside its own
	// group commit.)
	other := mustOpen(t, g.st, Options{})
	g.testBeforePublish = func(attempt int) {
		g.testBeforePublish = nil
		if _, err := other.Mutate(ctx, "main", engPlan(t, other, "insert_company"), map[string]any{"name": "Initech"}, MutateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = g.Mutate(ctx, "main", p, map[string]any{"name": "Bob", "age": 42}, MutateOptions{IfCommit: before.head})
	if !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("lost CAS with IfCommit: %v", err)
	}
	if got := engNodes(t, g, "Person", "age"); !slices.Contains(got, "Bob=40") {
		t.Fatalf("lost conditional write is visible: %v", got)
	}
}

// TestMutateUnknownPropertyTyped: a mutation plan naming a property its
// type does not declare (the query checker refuses one; a hand-built plan
// gets here) fails with *snapshot.UnknownPropertyError and changes nothing.
func TestMutateUnknownPropertyTyped(t *testing.T) {
	cases := []struct {
		name  string
		query string
		edit  func(op *query.MutationOp)
		typ   string
	}{
		{"update where", "set_age", func(op *query.MutationOp) { op.Where.Left.Prop = "nope" }, "Person"},
		{"update assignment", "set_age", func(op *query.MutationOp) { op.Assigns[0].Prop = "nope" }, ""},
		{"delete node where", "remove_person", func(op *query.MutationOp) { op.Where.Left.Prop = "nope" }, "Person"},
		{"delete edge where", "remove_friendship", func(op *query.MutationOp) { op.Where.Left.Prop = "nope" }, "Knows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, _ := engFixture(t)
			before := engSnap(t, g, "main")
			p := engPlan(t, g, c.query)
			c.edit(p.Mutations[0])
			_, err := g.Mutate(context.Background(), "main", p, map[string]any{"name": "Bob", "age": 26, "from": "Alice"}, MutateOptions{})
			var ue *snapshot.UnknownPropertyError
			if !errors.As(err, &ue) || ue.Prop != "nope" || ue.Type != c.typ {
				t.Fatalf("err = %v, want *snapshot.UnknownPropertyError{%q, nope}", err, c.typ)
			}
			if after := engSnap(t, g, "main"); !reflect.DeepEqual(after, before) {
				t.Fatalf("the failed mutation changed main: %+v -> %+v", before, after)
			}
		})
	}
}

// TestMutateRefusesExternalBlobs: insert node, insert edge and update all
// refuse an external blob URI (a String parameter is the only way to set a
// Blob property) with the value error naming the property, and change
// nothing.
func TestMutateRefusesExternalBlobs(t *testing.T) {
	const schemaSrc = `
node Doc { slug: String @key  body: Blob? }
edge Cites: Doc -> Doc { note: Blob? }
`
	const queries = `
query put_param($s: String, $b: String) { insert Doc { slug: $s, body: $b } }
query cite($a: String, $b: String, $n: String) { insert Cites { from: $a, to: $b, note: $n } }
query set_body($s: String, $b: String) { update Doc set { body: $b } where slug = $s }
`
	ctx := context.Background()
	cases := []struct {
		name, query, prop string
		params            map[string]any
	}{
		{"insert node param", "put_param", "body", map[string]any{"s": "x", "b": "s3://bkt/a"}},
		{"insert edge param", "cite", "note", map[string]any{"a": "d1", "b": "d2", "n": "https://example.com/n"}},
		{"update param", "set_body", "body", map[string]any{"s": "d1", "b": "s3://bkt/u"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := storage.NewMem()
			g := mustInit(t, st, "t.pg", schemaSrc, "tester", Options{})
			t.Cleanup(func() { engCheck(t, st) })
			data := `{"type":"Doc","data":{"slug":"d1"}}` + "\n" + `{"type":"Doc","data":{"slug":"d2"}}` + "\n"
			if _, err := g.Load(ctx, stringsReader(data), LoadRequest{Mode: LoadOverwrite}); err != nil {
				t.Fatal(err)
			}
			before := engSnap(t, g, "main")
			_, err := g.Mutate(ctx, "main", headPlan(t, g, queries, c.query), c.params, MutateOptions{})
			var ve *value.Error
			if !errors.As(err, &ve) || ve.Name != c.prop || ve.Reason != "external blob ingest is denied" {
				t.Fatalf("err = %v, want *value.Error for %s: external blob ingest is denied", err, c.prop)
			}
			if after := engSnap(t, g, "main"); !reflect.DeepEqual(after, before) {
				t.Fatalf("the refused mutation changed main")
			}
		})
	}
}
