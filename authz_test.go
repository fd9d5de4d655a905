package omnigraph_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

// recorder is an Authorizer that allows the actions in allow and records
// every question it is asked.
type recorder struct {
	mu    sync.Mutex
	allow map[omnigraph.WriteAction]bool
	err   error
	asked []omnigraph.WriteAccess
}

func (r *recorder) AuthorizeWrite(_ context.Context, a omnigraph.WriteAccess) (omnigraph.Decision, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, a)
	if r.err != nil {
		return omnigraph.Decision{}, r.err
	}
	if r.allow[a.Action] {
		return omnigraph.Decision{Allowed: true, RuleID: "test-allow"}, nil
	}
	return omnigraph.Decision{RuleID: "test-deny", Reason: "not granted"}, nil
}

const authzSchema = "node Person { name: String @key  age: I32? }\n"

// writer is one writer of the public API called as actor, with the
// questions it must ask (spec/surfaces.md §3.3 scope mapping).
type writer struct {
	name string
	call func(ctx context.Context, g *omnigraph.Graph, actor string) error
	asks []omnigraph.WriteAccess
}

// writers lists every writer that acts for an actor. The branch "feat"
// exists and differs from main when they run.
func writers() []writer {
	person := func(name string) string { return `{"type":"Person","data":{"name":"` + name + `"}}` + "\n" }
	return []writer{
		{"mutate", func(ctx context.Context, g *omnigraph.Graph, a string) error {
			_, _, err := g.Mutate(ctx, "feat", `query add($n: String) { insert Person { name: $n } }`, "", map[string]any{"n": "M"}, omnigraph.MutateOptions{Actor: a})
			return err
		}, []omnigraph.WriteAccess{{Action: omnigraph.ActionChange, Branch: "feat"}}},
		{"load", func(ctx context.Context, g *omnigraph.Graph, a string) error {
			_, err := g.Load(ctx, strings.NewReader(person("L")), omnigraph.LoadOptions{Mode: omnigraph.Append, Actor: a})
			return err
		}, []omnigraph.WriteAccess{{Action: omnigraph.ActionChange, Branch: "main"}}},
		{"load creating its branch", func(ctx context.Context, g *omnigraph.Graph, a string) error {
			_, err := g.Load(ctx, strings.NewReader(person("N")), omnigraph.LoadOptions{Branch: "fresh", From: "main", Mode: omnigraph.Append, Actor: a})
			return err
		}, []omnigraph.WriteAccess{{Action: omnigraph.ActionChange, Branch: "fresh"}, {Action: omnigraph.ActionBranchCreate, Branch: "main", TargetBranch: "fresh"}}},
		{"schema apply", func(ctx context.Context, g *omnigraph.Graph, a string) error {
			_, err := g.ApplySchema(ctx, authzSchema+"node Company { name: String @key }\n", omnigraph.SchemaApplyOptions{Actor: a})
			return err
		}, []omnigraph.WriteAccess{{Action: omnigraph.ActionSchemaApply, TargetBranch: "main"}}},
		{"branch create", func(ctx context.Context, g *omnigraph.Graph, a string) error {
			return g.CreateBranch(ctx, "other", "feat", a)
		}, []omnigraph.WriteAccess{{Action: omnigraph.ActionBranchCreate, Branch: "feat", TargetBranch: "other"}}},
		{"merge", func(ctx context.Context, g *omnigraph.Graph, a string) error {
			_, err := g.Merge(ctx, "feat", "", a)
			return err
		}, []omnigraph.WriteAccess{{Action: omnigraph.ActionBranchMerge, Branch: "feat", TargetBranch: "main"}}},
		{"branch delete", func(ctx context.Context, g *omnigraph.Graph, a string) error {
			return g.DeleteBranch(ctx, "feat", a)
		}, []omnigraph.WriteAccess{{Action: omnigraph.ActionBranchDelete, TargetBranch: "feat"}}},
	}
}

// authzGraph is a graph with Person "A" on main and "F" on branch feat.
func authzGraph(t *testing.T) *omnigraph.Graph {
	t.Helper()
	ctx := context.Background()
	g, err := omnigraph.Init(ctx, filepath.Join(t.TempDir(), "a.omni"), "a.pg", authzSchema, "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"A"}}`+"\n"), omnigraph.LoadOptions{Mode: omnigraph.Append}); err != nil {
		t.Fatal(err)
	}
	if err := g.CreateBranch(ctx, "feat", "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"F"}}`+"\n"), omnigraph.LoadOptions{Branch: "feat", Mode: omnigraph.Append}); err != nil {
		t.Fatal(err)
	}
	return g
}

// heads is every branch with its head commit: what a refused write must
// leave unchanged.
func heads(t *testing.T, g *omnigraph.Graph) map[string]string {
	t.Helper()
	ctx := context.Background()
	names, err := g.Branches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range names {
		log, err := g.Log(ctx, b, 1)
		if err != nil {
			t.Fatal(err)
		}
		out[b] = log[0].ID
	}
	return out
}

// TestAuthorizerEveryWriter: a handle with an Authorizer asks it at every
// writer, with the scope mapping of spec/surfaces.md §3.3; a denial is a
// typed *ForbiddenError and writes nothing; an allowed write lands; the
// handle it was derived from asks nothing.
func TestAuthorizerEveryWriter(t *testing.T) {
	ctx := context.Background()
	for _, w := range writers() {
		t.Run(w.name, func(t *testing.T) {
			g := authzGraph(t)
			deny := &recorder{}
			before := heads(t, g)
			err := w.call(ctx, g.WithAuthorizer(deny), "act-x")
			var fe *omnigraph.ForbiddenError
			if !errors.Is(err, omnigraph.ErrForbidden) || !errors.As(err, &fe) {
				t.Fatalf("denied %s: %v, want *ForbiddenError", w.name, err)
			}
			if fe.Actor != "act-x" || fe.Action != w.asks[len(deny.asked)-1].Action || fe.RuleID != "test-deny" {
				t.Fatalf("forbidden error %+v", fe)
			}
			if after := heads(t, g); !maps.Equal(before, after) {
				t.Fatalf("a refused %s changed the graph: %v → %v", w.name, before, after)
			}

			allow := &recorder{allow: map[omnigraph.WriteAction]bool{}}
			for _, a := range w.asks {
				allow.allow[a.Action] = true
			}
			if err := w.call(ctx, g.WithAuthorizer(allow), "act-x"); err != nil {
				t.Fatalf("allowed %s: %v", w.name, err)
			}
			want := slices.Clone(w.asks)
			for i := range want {
				want[i].Actor = "act-x"
			}
			if !slices.Equal(allow.asked, want) {
				t.Fatalf("%s asked %+v, want %+v", w.name, allow.asked, want)
			}
			if g.Authorizer() != nil {
				t.Fatal("WithAuthorizer changed the handle it was derived from")
			}
		})
	}
}

// TestAuthorizerFailsClosed: under an Authorizer a write without an actor
// is refused without asking it, and an authorizer error refuses the write
// as an evaluation failure (not a denial).
func TestAuthorizerFailsClosed(t *testing.T) {
	ctx := context.Background()
	for _, w := range writers() {
		t.Run(w.name, func(t *testing.T) {
			g := authzGraph(t)
			before := heads(t, g)
			all := &recorder{allow: map[omnigraph.WriteAction]bool{omnigraph.ActionChange: true, omnigraph.ActionBranchCreate: true,
				omnigraph.ActionBranchDelete: true, omnigraph.ActionBranchMerge: true, omnigraph.ActionSchemaApply: true}}
			if err := w.call(ctx, g.WithAuthorizer(all), ""); !errors.Is(err, omnigraph.ErrForbidden) || len(all.asked) != 0 {
				t.Fatalf("no actor: %v (asked %v)", err, all.asked)
			}
			boom := errors.New("policy store unreachable")
			err := w.call(ctx, g.WithAuthorizer(&recorder{err: boom}), "act-x")
			if !errors.Is(err, boom) || errors.Is(err, omnigraph.ErrForbidden) {
				t.Fatalf("authorizer error: %v", err)
			}
			if after := heads(t, g); !maps.Equal(before, after) {
				t.Fatalf("a refused %s changed the graph", w.name)
			}
		})
	}
}
