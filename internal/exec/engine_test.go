package exec

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// engSchema and engData are the spec's standard fixture (languages §8,
// engine "fixture F"): its schema is the one the server and binary tests
// share, its data written from the spec's facts.
const engSchema = fixture.SocialSchema

const engData = `{"type":"Person","data":{"name":"Alice","age":30}}
{"type":"Person","data":{"name":"Bob","age":25}}
{"type":"Person","data":{"name":"Charlie","age":35}}
{"type":"Person","data":{"name":"Diana","age":28}}
{"type":"Company","data":{"name":"Acme"}}
{"type":"Company","data":{"name":"Globex"}}
{"edge":"Knows","from":"Alice","to":"Bob"}
{"edge":"Knows","from":"Alice","to":"Charlie"}
{"edge":"Knows","from":"Bob","to":"Diana"}
{"edge":"WorksAt","from":"Alice","to":"Acme"}
{"edge":"WorksAt","from":"Bob","to":"Globex"}
`

const engQueries = `
query insert_person($name: String, $age: I32) { insert Person { name: $name, age: $age } }
query insert_company($name: String) { insert Company { name: $name } }
query add_friend($from: String, $to: String) { insert Knows { from: $from, to: $to } }
query set_age($name: String, $age: I32) { update Person set { age: $age } where name = $name }
query bump_old($age: I32) { update Person set { age: $age } where age > 50 }
query bump_over($min: I32, $age: I32) { update Person set { age: $age } where age > $min }
query remove_person($name: String) { delete Person where name = $name }
query remove_friendship($from: String) { delete Knows where from = $from }
query insert_person_and_friend($name: String, $age: I32, $friend: String) {
    insert Person { name: $name, age: $age }  insert Knows { from: $name, to: $friend } }
query insert_then_update($name: String) {
    insert Person { name: $name, age: 1 }
    update Person set { age: 2 } where name = $name }
query chained($name: String) {
    update Person set { age: 99 } where name = $name
    update Person set { age: 10 } where age > 50 }
query remove_two() { delete Person where age > 29  delete Person where name = "Charlie" }
`

func engInit(t testing.TB, st storage.Store) *Graph {
	t.Helper()
	g, err := Init(context.Background(), st, "test.pg", engSchema, "tester", Options{})
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	t.Cleanup(func() { engCheck(t, st) })
	return g
}

// engCheck is the graph check run after every engine test: the commit
// history is intact and every table state of main's head decodes.
func engCheck(t testing.TB, st storage.Store) {
	t.Helper()
	ctx := context.Background()
	g, err := Open(ctx, st, Options{})
	if err != nil {
		t.Errorf("check: open: %v", err)
		return
	}
	if _, err := g.repo.Check(ctx); err != nil {
		t.Errorf("check: %v", err)
	}
	if _, err := g.Tables(ctx, Target{}); err != nil {
		t.Errorf("check: tables: %v", err)
	}
}

func engFixture(t testing.TB) (*Graph, storage.Store) {
	t.Helper()
	st := storage.NewMem()
	g := engInit(t, st)
	if _, err := g.Load(context.Background(), strings.NewReader(engData), LoadRequest{Mode: LoadOverwrite}); err != nil {
		t.Fatalf("load fixture: %v", err)
	}
	return g, st
}

func engPlan(t testing.TB, g *Graph, name string) *query.Plan {
	t.Helper()
	return headPlan(t, g, engQueries, name)
}

// engState is a comparable picture of a branch: its head and table states.
type engState struct {
	head   string
	tables map[string]string
}

func engSnap(t testing.TB, g *Graph, branch string) engState {
	t.Helper()
	snap := resolve(t, g, Target{Branch: branch})
	return engState{head: snap.Commit().ID.String(), tables: maps.Clone(snap.Commit().Tables)}
}

func (s engState) equal(o engState) bool { return s.head == o.head && maps.Equal(s.tables, o.tables) }

// engNodes returns "id=age" or ids of a node type, sorted.
func engNodes(t testing.TB, g *Graph, typ, prop string) []string {
	t.Helper()
	return engNodesAt(t, g, Target{}, typ, prop)
}

// engEdgesAt returns "src>dst" of every edge of a type at a target, sorted.
func engEdgesAt(t testing.TB, g *Graph, at Target, typ string) []string {
	t.Helper()
	rows := liveEdges(t, g, at, typ)
	return sortedRows(rows, func(i int) string { return rows.Src[i] + ">" + rows.Dst[i] })
}

// engNodesAt is engNodes at a target.
func engNodesAt(t testing.TB, g *Graph, at Target, typ, prop string) []string {
	t.Helper()
	nt, rows := liveNodes(t, g, at, typ)
	return sortedRows(rows, func(i int) string {
		id := rows.IDs[i]
		if prop == "" {
			return id
		}
		if v := cell(rows, i, prop); v != nil {
			p, _ := nt.Prop(prop)
			return id + "=" + value.FormatValue(p.Type, v)
		}
		return id + "=" + value.FormatValue(nt.Props[0].Type, nil)
	})
}

func engEdges(t testing.TB, g *Graph, typ string) []string {
	t.Helper()
	return engEdgesAt(t, g, Target{}, typ)
}

func TestEngineInitLoadSnapshot(t *testing.T) {
	g, _ := engFixture(t)
	ctx := context.Background()
	if got, want := engNodes(t, g, "Person", "age"), []string{"Alice=30", "Bob=25", "Charlie=35", "Diana=28"}; !slices.Equal(got, want) {
		t.Fatalf("Person = %v, want %v", got, want)
	}
	if got, want := engEdges(t, g, "Knows"), []string{"Alice>Bob", "Alice>Charlie", "Bob>Diana"}; !slices.Equal(got, want) {
		t.Fatalf("Knows = %v, want %v", got, want)
	}
	tabs, err := g.Tables(ctx, Target{})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, ti := range tabs {
		rows[ti.Kind+":"+ti.Name] = ti.Rows
	}
	want := map[string]int64{"node:Person": 4, "node:Company": 2, "edge:Knows": 3, "edge:WorksAt": 2}
	if !maps.Equal(rows, want) {
		t.Fatalf("tables %v, want %v", rows, want)
	}
	log := commitLog(t, g, "main", 0)
	if len(log) != 2 || log[0].Kind != "load" || log[1].Kind != "init" || log[0].Parent != log[1].ID || log[0].ManifestVersion != 1 {
		t.Fatalf("log %+v", log)
	}
	ci, err := g.CommitByID(ctx, log[0].ID)
	if err != nil || ci.ID != log[0].ID {
		t.Fatalf("CommitByID: %+v %v", ci, err)
	}
	if _, err := g.CommitByID(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("missing commit: %v", err)
	}
	if _, err := g.Resolve(ctx, Target{Branch: "nope"}); !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("missing branch: %v", err)
	}
	src, err := g.SchemaSource(ctx, Target{Snapshot: log[1].ID})
	if err != nil || src != engSchema {
		t.Fatalf("schema source: %q %v", src, err)
	}
	// Time travel: the init snapshot is empty.
	old := resolve(t, g, Target{Snapshot: log[1].ID})
	if nt, _ := old.Nodes(ctx, "Person"); nt.Len() != 0 {
		t.Fatalf("init snapshot has %d persons", nt.Len())
	}
}

func TestEngineWarmSnapshotReadsOnlyRef(t *testing.T) {
	mem := storage.NewMem()
	engFixtureOn(t, mem)
	cnt := storage.NewCounting(mem)
	ctx := context.Background()
	g := mustOpen(t, cnt, Options{})
	read := func() {
		snap := resolve(t, g, Target{})
		for _, n := range []string{"Person", "Company"} {
			if _, err := snap.Nodes(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := snap.Edges(ctx, "knows"); err != nil {
			t.Fatal(err)
		}
	}
	read()
	before := cnt.Snapshot()
	read()
	if got := cnt.Snapshot().Sub(before).Requests(); got != 1 {
		t.Fatalf("warm snapshot read made %d requests, want 1 (the ref)", got)
	}
}

func engFixtureOn(t testing.TB, st storage.Store) *Graph {
	t.Helper()
	g := engInit(t, st)
	if _, err := g.Load(context.Background(), strings.NewReader(engData), LoadRequest{Mode: LoadOverwrite}); err != nil {
		t.Fatalf("load fixture: %v", err)
	}
	return g
}
