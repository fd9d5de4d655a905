package exec

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestEngineLoadModes(t *testing.T) {
	tests := []struct {
		name    string
		mode    LoadMode
		data    string
		persons []string
		knows   []string
		errIs   func(error) bool
	}{
		{name: "empty load commits", mode: LoadAppend, data: "",
			persons: []string{"Alice=30", "Bob=25", "Charlie=35", "Diana=28"}},
		{name: "append new", mode: LoadAppend, data: `{"type":"Person","data":{"name":"Eve","age":22}}
{"edge":"Knows","from":"Eve","to":"Alice"}`,
			persons: []string{"Alice=30", "Bob=25", "Charlie=35", "Diana=28", "Eve=22"},
			knows:   []string{"Alice>Bob", "Alice>Charlie", "Bob>Diana", "Eve>Alice"}},
		{name: "append existing id is key conflict", mode: LoadAppend, data: `{"type":"Person","data":{"name":"Alice","age":31}}`,
			errIs: func(err error) bool {
				var kc *KeyConflictError
				var ie *InputError
				return errors.As(err, &kc) && kc.TypeKey == "node:Person" && kc.EntityID == "Alice" && errors.As(err, &ie) && ie.Line == 1
			}},
		{name: "merge upserts whole row", mode: LoadMerge, data: `{"type":"Person","data":{"name":"Alice"}}
{"type":"Person","data":{"name":"Eve","age":22}}`,
			persons: []string{"Alice=null", "Bob=25", "Charlie=35", "Diana=28", "Eve=22"}},
		{name: "merge twice-same key in one batch is unique violation", mode: LoadMerge, data: `{"type":"Person","data":{"name":"Eve"}}
{"type":"Person","data":{"name":"Eve","age":3}}`,
			errIs: func(err error) bool {
				var ce *ConstraintError
				var ie *InputError
				return errors.As(err, &ce) && ce.Kind == ConstraintUnique && errors.As(err, &ie) && ie.Line == 2
			}},
		{name: "overwrite replaces present types only", mode: LoadOverwrite, data: `{"edge":"Knows","from":"Diana","to":"Bob"}`,
			persons: []string{"Alice=30", "Bob=25", "Charlie=35", "Diana=28"},
			knows:   []string{"Diana>Bob"}},
		{name: "overwrite nodes orphaning retained edges fails", mode: LoadOverwrite, data: `{"type":"Person","data":{"name":"Alice","age":1}}`,
			errIs: func(err error) bool {
				var ce *ConstraintError
				return errors.As(err, &ce) && ce.Kind == ConstraintReference && strings.Contains(ce.Msg, "not found in Person")
			}},
		{name: "bad mode", mode: "upsert", errIs: func(err error) bool { return errors.Is(err, ErrInvalidLoadMode) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := engFixture(t)
			before := engSnap(t, g, "main")
			res, err := g.Load(context.Background(), strings.NewReader(tc.data), LoadRequest{Mode: tc.mode, Actor: "loader"})
			if tc.errIs != nil {
				if err == nil || !tc.errIs(err) {
					t.Fatalf("err = %v (%T)", err, err)
				}
				if !engSnap(t, g, "main").equal(before) {
					t.Fatal("failed load changed the graph")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			after := engSnap(t, g, "main")
			if res.Commit == nil || res.Commit.Parent != before.head || res.Commit.ID != after.head || res.Commit.Actor != "loader" {
				t.Fatalf("commit %+v", res.Commit)
			}
			if got := engNodes(t, g, "Person", "age"); tc.persons != nil && !slices.Equal(got, tc.persons) {
				t.Fatalf("persons %v, want %v", got, tc.persons)
			}
			if got := engEdges(t, g, "Knows"); tc.knows != nil && !slices.Equal(got, tc.knows) {
				t.Fatalf("knows %v, want %v", got, tc.knows)
			}
		})
	}
}

// TestEngineLoadBadInput: every class of bad input is a typed error naming
// the line (and field), and leaves the head and every table state unchanged.
func TestEngineLoadBadInput(t *testing.T) {
	const schemaSrc = `
node Person { name: String @key  age: I32?  role: enum(admin, user)?  handle: String?  email: String? @unique
  @range(age, 0..150)  @check(handle, "^[a-z]+$") }
node Company { name: String @key }
edge WorksAt: Person -> Company @card(0..1)
`
	good := `{"type":"Person","data":{"name":"Alice","email":"a@x"}}
{"type":"Company","data":{"name":"Acme"}}
`
	tests := []struct {
		name  string
		data  string
		line  int
		field string
		check func(error) bool
	}{
		{"malformed json", `{"type":"Person","data":{"name":"Bob"}`, 1, "", nil},
		{"unknown type", `{"type":"Robot","data":{}}`, 1, "type", nil},
		{"unknown property", `{"type":"Person","data":{"name":"Bob","height":3}}`, 1, "data.height", nil},
		{"type mismatch", "\n" + `{"type":"Person","data":{"name":"Bob","age":"old"}}`, 2, "data.age", nil},
		{"enum violation", `{"type":"Person","data":{"name":"Bob","role":"root"}}`, 1, "data.role", nil},
		{"range violation", `{"type":"Person","data":{"name":"Bob","age":200}}`, 1, "data.age", nil},
		{"check violation", `{"type":"Person","data":{"name":"Bob","handle":"B0b"}}`, 1, "data.handle", nil},
		{"dangling edge", `{"type":"Person","data":{"name":"Bob"}}
{"edge":"WorksAt","from":"Bob","to":"Initech"}`, 2, "to", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Msg == "dst 'Initech' not found in Company"
		}},
		{"duplicate key", `{"type":"Person","data":{"name":"Bob"}}
{"type":"Person","data":{"name":"Bob"}}`, 2, "data.name", nil},
		{"unique against committed", `{"type":"Person","data":{"name":"Bob","email":"a@x"}}`, 1, "data.email", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Kind == ConstraintUnique
		}},
		{"card violation", `{"type":"Company","data":{"name":"Globex"}}
{"edge":"WorksAt","from":"Alice","to":"Acme"}
{"edge":"WorksAt","from":"Alice","to":"Globex"}`, 2, "from", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Kind == ConstraintCard
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.NewMem()
			ctx := context.Background()
			g, err := Init(ctx, st, "bad.pg", schemaSrc, "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Load(ctx, strings.NewReader(good), LoadRequest{Mode: LoadAppend}); err != nil {
				t.Fatal(err)
			}
			before := engSnap(t, g, "main")
			_, err = g.Load(ctx, strings.NewReader(tc.data), LoadRequest{Mode: LoadAppend})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v (%T), want *InputError", err, err)
			}
			if ie.Line != tc.line || ie.Field != tc.field {
				t.Fatalf("error %q at line %d field %q, want line %d field %q", err, ie.Line, ie.Field, tc.line, tc.field)
			}
			if tc.check != nil && !tc.check(err) {
				t.Fatalf("error %v has the wrong type", err)
			}
			if !engSnap(t, g, "main").equal(before) {
				t.Fatal("failed load changed the graph")
			}
			// The next load succeeds.
			if _, err := g.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"Zoe"}}`), LoadRequest{Mode: LoadAppend}); err != nil {
				t.Fatalf("load after failure: %v", err)
			}
		})
	}
}

func TestEngineExportRoundTrip(t *testing.T) {
	g, _ := engFixture(t)
	ctx := context.Background()
	// Add an unkeyed-id-bearing edge property value to round-trip a Date.
	if _, err := g.Load(ctx, strings.NewReader(`{"edge":"Knows","from":"Diana","to":"Alice","data":{"since":"2020-01-02","id":"k1"}}`), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := g.Export(ctx, Target{}, nil, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 12 {
		t.Fatalf("export has %d lines:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), `{"edge":"Knows","from":"Diana","to":"Alice","data":{"id":"k1","since":"2020-01-02"}}`) {
		t.Fatalf("export:\n%s", out.String())
	}
	g2 := engInit(t, storage.NewMem())
	if _, err := g2.Load(ctx, bytes.NewReader(out.Bytes()), LoadRequest{Mode: LoadOverwrite}); err != nil {
		t.Fatalf("reload export: %v", err)
	}
	var out2 bytes.Buffer
	if err := g2.Export(ctx, Target{}, nil, &out2); err != nil {
		t.Fatal(err)
	}
	if out.String() != out2.String() {
		t.Fatalf("export is not a fixed point:\n%s\n---\n%s", out.String(), out2.String())
	}
	var only bytes.Buffer
	if err := g.Export(ctx, Target{}, []string{"Company"}, &only); err != nil || strings.Count(only.String(), "\n") != 2 {
		t.Fatalf("export Company: %v\n%s", err, only.String())
	}
	if err := g.Export(ctx, Target{}, []string{"Robot"}, &only); err == nil {
		t.Fatal("export of unknown type succeeded")
	}
}

func TestEngineQuery(t *testing.T) {
	g, _ := engFixture(t)
	ctx := context.Background()
	snap, err := g.Resolve(ctx, Target{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := query.CompileQuery(snap.Catalog(), "q.gq", `query friends_of($name: String) {
    match { $p: Person { name: $name }  $p knows $f }
    return { $f.name }
    order { $f.name asc } }`, "friends_of")
	if err != nil {
		t.Fatal(err)
	}
	res, ci, err := g.Query(ctx, Target{}, p, map[string]any{"name": "Alice"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, r[0].(string))
	}
	if !slices.Equal(got, []string{"Bob", "Charlie"}) || ci.ID != snap.Commit().ID.String() {
		t.Fatalf("friends of Alice = %v at %s", got, ci.ID)
	}
}
