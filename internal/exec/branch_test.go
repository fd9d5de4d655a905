package exec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestBranchRefusals: spec/engine.md §1.6 and §10 scenarios 6–7. Every
// refusal happens before any write.
func TestBranchRefusals(t *testing.T) {
	h := featureBH(t)
	cases := []struct {
		name      string
		op        func() error
		want      error
		msg       string
		unchanged bool
	}{
		{"create main", func() error { return h.g.CreateBranch(h.ctx, "main", "", "") }, ErrBranchExists, `branch "main": branch already exists`, true},
		{"delete main", func() error { return h.g.DeleteBranch(h.ctx, "main", "") }, ErrProtectedBranch, "cannot delete branch 'main'", true},
		{"invalid name", func() error { return h.g.CreateBranch(h.ctx, "bad branch", "", "") }, ErrInvalidBranch, "", true},
		{"dot dot", func() error { return h.g.CreateBranch(h.ctx, "a..b", "", "") }, ErrInvalidBranch, "", true},
		{"lock suffix", func() error { return h.g.CreateBranch(h.ctx, "x.lock", "", "") }, ErrInvalidBranch, "", true},
		{"internal ref", func() error { return h.g.CreateBranch(h.ctx, SchemaApplyLockRef, "", "") }, ErrInternalRef, "internal system ref", true},
		{"internal from", func() error { return h.g.CreateBranch(h.ctx, "x", SchemaApplyLockRef, "") }, ErrInternalRef, "", true},
		{"delete internal", func() error { return h.g.DeleteBranch(h.ctx, SchemaApplyLockRef, "") }, ErrInternalRef, "", true},
		{"duplicate", func() error { return h.g.CreateBranch(h.ctx, "feature", "", "") }, ErrBranchExists, "", true},
		{"prefix child", func() error { return h.g.CreateBranch(h.ctx, "feature/child", "", "") }, ErrBranchExists, "ancestors or descendants", true},
		{"missing from", func() error { return h.g.CreateBranch(h.ctx, "x", "nope", "") }, ErrBranchNotFound, "", true},
		{"missing commit", func() error { return h.g.CreateBranch(h.ctx, "x", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "") }, ErrCommitNotFound, "", true},
		{"delete missing", func() error { return h.g.DeleteBranch(h.ctx, "nope", "") }, ErrBranchNotFound, "", true},
		{"run prefix is ordinary", func() error { return h.g.CreateBranch(h.ctx, "__run__x", "", "") }, nil, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, err := h.g.Branches(h.ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = tc.op()
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("message %q lacks %q", err, tc.msg)
			}
			after, _ := h.g.Branches(h.ctx)
			if tc.unchanged && !slices.Equal(before, after) {
				t.Fatalf("branches changed %v → %v", before, after)
			}
		})
	}
}

// TestBranchLifecycle: scenarios 3–5, 8 (with our deliberate difference:
// a branch others were created from can be deleted) and 10.
func TestBranchLifecycle(t *testing.T) {
	h := fixtureBH(t)
	mainHead := h.head("main")
	h.branch("feature", "")
	if h.head("main") != mainHead || h.head("feature") != mainHead {
		t.Fatal("branch create moved a head or wrote a commit")
	}
	h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
	h.mut("feature", "link", map[string]any{"from": "Alice", "to": "Diana"})
	if n := len(h.nodes(Target{Branch: "feature"}, "Person", "")); n != 5 {
		t.Fatalf("feature persons %d", n)
	}
	if n := len(h.nodes(Target{}, "Person", "")); n != 4 {
		t.Fatalf("main persons %d", n)
	}
	if a, b := len(h.edges(Target{Branch: "feature"}, "Knows")), len(h.edges(Target{}, "Knows")); a != 4 || b != 3 {
		t.Fatalf("knows feature %d main %d", a, b)
	}
	// The untouched tables are shared by reference.
	f, m := engSnap(t, h.g, "feature"), engSnap(t, h.g, "main")
	if f.tables["node:Company"] != m.tables["node:Company"] || f.tables["node:Person"] == m.tables["node:Person"] {
		t.Fatalf("table sharing: feature %v main %v", f.tables, m.tables)
	}
	h.branch("experiment", "feature")
	if got, _ := h.g.Branches(h.ctx); !slices.Equal(got, []string{"experiment", "feature", "main"}) {
		t.Fatalf("branches %v", got)
	}
	if err := h.g.DeleteBranch(h.ctx, "feature", ""); err != nil {
		t.Fatalf("delete a branch others were created from: %v", err)
	}
	if got := h.nodes(Target{Branch: "experiment"}, "Person", ""); !slices.Contains(got, "Eve") {
		t.Fatalf("experiment lost Eve: %v", got)
	}
	log, err := h.g.Log(h.ctx, "experiment", 0)
	if err != nil || len(log) != 4 || log[len(log)-1].Kind != "init" {
		t.Fatalf("experiment log %d %v", len(log), err)
	}
	// Recreated, the branch starts fresh (no resurrection).
	h.branch("feature", "")
	h.mut("feature", "add", map[string]any{"name": "Frank", "age": 40})
	got := h.nodes(Target{Branch: "feature"}, "Person", "")
	if len(got) != 5 || slices.Contains(got, "Eve") {
		t.Fatalf("recreated feature %v", got)
	}
	// Fork at a commit id: the old main head.
	h.branch("old", mainHead)
	if h.head("old") != mainHead {
		t.Fatal("fork from commit id")
	}
	// The internal ref is never listed.
	if _, err := h.g.repo.CreateBranch(h.ctx, SchemaApplyLockRef, h.g.mustHead(t, "main")); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.g.Branches(h.ctx); slices.Contains(got, SchemaApplyLockRef) {
		t.Fatalf("internal ref listed: %v", got)
	}
}

// TestBranchWritesAndReads: conditional writes, loads and time travel work
// on a non-main branch as on main.
func TestBranchWritesAndReads(t *testing.T) {
	h := featureBH(t)
	head := h.head("feature")
	p, _ := h.qs.Query("age")
	if _, err := h.g.Mutate(h.ctx, "feature", p, map[string]any{"name": "Bob", "age": 40}, MutateOptions{IfCommit: head}); err != nil {
		t.Fatalf("conditional write with the inherited head: %v", err)
	}
	_, err := h.g.Mutate(h.ctx, "feature", p, map[string]any{"name": "Bob", "age": 41}, MutateOptions{IfCommit: head})
	if !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("stale conditional write: %v", err)
	}
	h.load("feature", "append", `{"type":"Person","data":{"name":"Eve","age":22}}`)
	if got := h.nodes(Target{Snapshot: head}, "Person", "age"); !slices.Contains(got, "Bob=25") || len(got) != 4 {
		t.Fatalf("time travel on feature: %v", got)
	}
	if got := h.nodes(Target{Branch: "feature"}, "Person", "age"); !slices.Contains(got, "Bob=40") || !slices.Contains(got, "Eve=22") {
		t.Fatalf("feature: %v", got)
	}
	log, err := h.g.Log(h.ctx, "feature", 0)
	if err != nil || len(log) != 4 || log[0].Branch != "feature" {
		t.Fatalf("feature log %+v %v", log, err)
	}
	mlog, _ := h.g.Log(h.ctx, "main", 0)
	if len(mlog) != 2 {
		t.Fatalf("main sees branch commits: %d", len(mlog))
	}
}

// TestLoadFrom: LoadRequest.From forks a missing branch (spec §2.3).
func TestLoadFrom(t *testing.T) {
	h := fixtureBH(t)
	const eve = `{"type":"Person","data":{"name":"Eve","age":22}}`
	_, err := h.g.Load(h.ctx, strings.NewReader(eve), LoadRequest{Branch: "nb", Mode: LoadAppend})
	if !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("load into a missing branch: %v", err)
	}
	res, err := h.g.Load(h.ctx, strings.NewReader(eve), LoadRequest{Branch: "nb", From: "main", Mode: LoadAppend})
	if err != nil || !res.BranchCreated || res.BaseBranch != "main" || res.Branch != "nb" {
		t.Fatalf("load with From: %+v %v", res, err)
	}
	if got := h.nodes(Target{Branch: "nb"}, "Person", ""); len(got) != 5 {
		t.Fatalf("nb %v", got)
	}
	res, err = h.g.Load(h.ctx, strings.NewReader(`{"type":"Person","data":{"name":"Fay"}}`), LoadRequest{Branch: "nb", From: "main", Mode: LoadAppend})
	if err != nil || res.BranchCreated {
		t.Fatalf("second load: %+v %v", res, err)
	}
	// A failed load leaves no branch behind.
	_, err = h.g.Load(h.ctx, strings.NewReader(`{"edge":"Knows","from":"Eve","to":"Ghost"}`), LoadRequest{Branch: "nb2", From: "main", Mode: LoadAppend})
	if err == nil {
		t.Fatal("load of an orphan edge succeeded")
	}
	if got, _ := h.g.Branches(h.ctx); slices.Contains(got, "nb2") {
		t.Fatalf("failed load left its branch: %v", got)
	}
	if n := len(h.nodes(Target{}, "Person", "")); n != 4 {
		t.Fatalf("main changed: %d", n)
	}
}

// countedEngGraph is the engine fixture, reopened through a counting store.
func countedEngGraph(t *testing.T) (*Graph, *storage.Counting) {
	t.Helper()
	mem := storage.NewMem()
	newBH(t, mem, engSchema, engData, "")
	cnt := storage.NewCounting(mem)
	g := mustOpen(t, cnt, Options{})
	return g, cnt
}

// TestBranchCreateWritesOneRef: creating a branch costs one object write
// and reads no table data, whatever the graph holds.
func TestBranchCreateWritesOneRef(t *testing.T) {
	g, cnt := countedEngGraph(t)
	kl := &keyLog{Store: cnt}
	g.st = kl
	before := cnt.Snapshot()
	if err := g.CreateBranch(t.Context(), "feature", "main", ""); err != nil {
		t.Fatal(err)
	}
	d := cnt.Snapshot().Sub(before)
	if w := d[storage.OpPut].Requests + d[storage.OpPutIfAbsent].Requests + d[storage.OpPutIfMatch].Requests + d[storage.OpCopyIfAbsent].Requests; w != 1 {
		t.Fatalf("branch create made %d writes, want 1: %+v", w, d)
	}
	for _, k := range kl.take() {
		if strings.HasPrefix(k, "tables/") {
			t.Fatalf("branch create read %s", k)
		}
	}
}

func (g *Graph) mustHead(t testing.TB, branch string) commit.ID {
	t.Helper()
	h, err := g.repo.Head(t.Context(), branch)
	if err != nil {
		t.Fatal(err)
	}
	return h.Commit
}

// TestBranchCreateFromCommitIDNoCopy: a branch created at a full commit id
// is not first tried as a copy of a ref of that name (no copy request, the
// round trips of a revision), and a branch whose name looks like one still
// wins over the commit, as resolveFrom promises.
func TestBranchCreateFromCommitIDNoCopy(t *testing.T) {
	g, cnt := countedEngGraph(t)
	head := g.mustHead(t, "main")
	before := cnt.Snapshot()
	if err := g.CreateBranch(t.Context(), "at-commit", head.String(), ""); err != nil {
		t.Fatal(err)
	}
	if d := cnt.Snapshot().Sub(before); d[storage.OpCopyIfAbsent].Requests != 0 || d[storage.OpPutIfAbsent].Requests != 1 {
		t.Fatalf("branch create at a commit id: %+v, want one PutIfAbsent and no copy", d)
	}
	if got := g.mustHead(t, "at-commit"); got != head {
		t.Fatalf("at-commit names %s, want %s", got, head)
	}
	// A branch named like a commit id (of no commit): creating from it
	// succeeds only if the branch is preferred.
	idLike := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	if err := g.CreateBranch(t.Context(), idLike, "main", ""); err != nil {
		t.Fatal(err)
	}
	if err := g.CreateBranch(t.Context(), "from-id-like", idLike, ""); err != nil {
		t.Fatalf("create from the branch %s: %v", idLike, err)
	}
	if got := g.mustHead(t, "from-id-like"); got != head {
		t.Fatalf("from-id-like names %s, want %s", got, head)
	}
}
