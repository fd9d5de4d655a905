package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func fixtureBH(t testing.TB) *bh {
	t.Helper()
	return newBH(t, storage.NewMem(), engSchema, engData, "")
}

// featureBH is fixtureBH with a branch "feature" created at main's head,
// the start of most branch and merge scenarios.
func featureBH(t testing.TB) *bh {
	t.Helper()
	h := fixtureBH(t)
	h.branch("feature", "")
	return h
}

func (h *bh) merge(source, target string) *MergeResult {
	h.t.Helper()
	res, err := h.g.Merge(h.ctx, source, target, "merger")
	if err != nil {
		h.t.Fatalf("merge %s into %s: %v", source, target, err)
	}
	return res
}

// TestMergeOutcomes covers spec/engine.md §10 scenarios 39–42 and 48.
func TestMergeOutcomes(t *testing.T) {
	t.Run("fast-forward", func(t *testing.T) { // 39
		h := featureBH(t)
		h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
		fh, mh := h.head("feature"), h.head("main")
		res := h.merge("feature", "main")
		// Like the reference system, a fast-forward publishes one commit on
		// the target with parent = old target head, merged parent = source head.
		if res.Outcome != MergeFastForward || res.Commit == nil || res.Commit.ID != h.head("main") ||
			res.Commit.Parent != mh || res.Commit.MergedParent != fh || res.Commit.Actor != "merger" {
			t.Fatalf("got %+v; want a fast-forward commit on main with parents %s, %s", res.Commit, mh, fh)
		}
		if got := h.reopen().nodes(Target{}, "Person", ""); !slices.Contains(got, "Eve") {
			t.Fatalf("Eve missing after reopen: %v", got)
		}
		if again := h.merge("feature", "main"); again.Outcome != MergeAlreadyUpToDate || again.Commit != nil {
			t.Fatalf("re-merge %+v", again)
		}
	})
	t.Run("fresh branch is up to date", func(t *testing.T) { // 40
		h := featureBH(t)
		before := h.head("main")
		if res := h.merge("feature", "main"); res.Outcome != MergeAlreadyUpToDate || h.head("main") != before {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("merged keeps both sides", func(t *testing.T) { // 41
		h := featureBH(t)
		h.mut("main", "age", map[string]any{"name": "Bob", "age": 26})
		h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
		mainHead, featHead := h.head("main"), h.head("feature")
		res := h.merge("feature", "main")
		if res.Outcome != MergeMerged {
			t.Fatalf("outcome %s", res.Outcome)
		}
		c := res.Commit
		if c.Parent != mainHead || c.MergedParent != featHead || c.Kind != "merge" || c.Actor != "merger" || c.ID != h.head("main") {
			t.Fatalf("merge commit %+v (main was %s, feature %s)", c, mainHead, featHead)
		}
		got := h.nodes(Target{}, "Person", "age")
		want := []string{"Alice=30", "Bob=26", "Charlie=35", "Diana=28", "Eve=22"}
		if !slices.Equal(got, want) {
			t.Fatalf("main persons %v, want %v", got, want)
		}
		log, err := h.g.Log(h.ctx, "main", 0)
		if err != nil || log[0].ID != c.ID {
			t.Fatalf("log %v %v", log, err)
		}
	})
	t.Run("identical updates merge", func(t *testing.T) { // 42
		h := featureBH(t)
		h.mut("main", "age", map[string]any{"name": "Alice", "age": 31})
		h.mut("feature", "age", map[string]any{"name": "Alice", "age": 31})
		if res := h.merge("feature", "main"); res.Outcome != MergeMerged {
			t.Fatalf("outcome %s", res.Outcome)
		}
		if got := h.nodes(Target{}, "Person", "age"); !slices.Contains(got, "Alice=31") {
			t.Fatalf("persons %v", got)
		}
	})
	t.Run("branch to branch", func(t *testing.T) { // 48
		h := featureBH(t)
		h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
		h.branch("experiment", "feature")
		h.mut("feature", "age", map[string]any{"name": "Bob", "age": 26})
		if res := h.merge("feature", "experiment"); res.Outcome != MergeFastForward {
			t.Fatalf("outcome %s", res.Outcome)
		}
		got := h.nodes(Target{Branch: "experiment"}, "Person", "age")
		if !slices.Contains(got, "Bob=26") || !slices.Contains(got, "Eve=22") {
			t.Fatalf("experiment %v", got)
		}
		if got := h.nodes(Target{}, "Person", "age"); !slices.Contains(got, "Bob=25") || len(got) != 4 {
			t.Fatalf("main changed: %v", got)
		}
		// And back: main into a branch.
		h.mut("main", "add", map[string]any{"name": "Zed", "age": 1})
		if res := h.merge("main", "experiment"); res.Outcome != MergeMerged {
			t.Fatalf("main → experiment: %s", res.Outcome)
		}
		if got := h.nodes(Target{Branch: "experiment"}, "Person", ""); !slices.Contains(got, "Zed") || !slices.Contains(got, "Eve") {
			t.Fatalf("experiment %v", got)
		}
	})
}

// TestMergeNetZero is scenario 47 (spec/engine.md §3.5).
func TestMergeNetZero(t *testing.T) {
	h := featureBH(t)
	h.mut("feature", "link", map[string]any{"from": "Diana", "to": "Alice"})
	h.mut("feature", "unlink", map[string]any{"from": "Diana"})
	before := engSnap(t, h.g, "main")
	if res := h.merge("feature", "main"); res.Outcome != MergeFastForward {
		t.Fatalf("outcome %s", res.Outcome)
	}
	after := engSnap(t, h.g, "main")
	for tk, key := range before.tables {
		if after.tables[tk] != key {
			t.Fatalf("table %s moved from %s to %s on a net-zero merge", tk, key, after.tables[tk])
		}
	}
	for range 2 {
		if res := h.merge("feature", "main"); res.Outcome != MergeAlreadyUpToDate {
			t.Fatalf("re-merge %s", res.Outcome)
		}
	}
	// Into a moved target: merged, the target's change survives.
	h.branch("nz", "")
	h.mut("nz", "link", map[string]any{"from": "Diana", "to": "Alice"})
	h.mut("nz", "unlink", map[string]any{"from": "Diana"})
	h.mut("main", "add", map[string]any{"name": "Erin", "age": 1})
	if res := h.merge("nz", "main"); res.Outcome != MergeMerged {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if got := h.nodes(Target{}, "Person", ""); len(got) != 5 {
		t.Fatalf("persons %v", got)
	}
	if got := h.edges(Target{}, "Knows"); !slices.Equal(got, []string{"Alice>Bob", "Alice>Charlie", "Bob>Diana"}) {
		t.Fatalf("knows %v", got)
	}
	if res := h.merge("nz", "main"); res.Outcome != MergeAlreadyUpToDate {
		t.Fatalf("re-merge %s", res.Outcome)
	}
}

// TestMergeConstraintConflicts covers scenarios 44–46 and value equality
// (49): each case prepares both sides and expects a conflict kind on a type,
// or a clean merge. A conflicting merge leaves the target untouched.
func TestMergeConstraintConflicts(t *testing.T) {
	const userSchema = `
node User { name: String @key  email: String? @unique }
node Person { name: String @key  age: I32? }
edge Knows: Person -> Person { @unique(src, dst) }
node Pair { a: String  b: String  @unique(a, b) }
node Company { name: String @key }
edge WorksAt: Person -> Company @card(0..1)
node Doc { slug: String @key  tags: [String]?  body: String? }
`
	const userData = `{"type":"User","data":{"name":"Alice","email":"a@x"}}
{"type":"Person","data":{"name":"Alice"}}
{"type":"Person","data":{"name":"Bob"}}
{"type":"Person","data":{"name":"Carol"}}
{"type":"Company","data":{"name":"Acme"}}
{"type":"Company","data":{"name":"Beta"}}
{"type":"Doc","data":{"slug":"x","tags":["a, b"]}}
{"type":"Doc","data":{"slug":"y"}}
`
	cases := []struct {
		name           string
		main, feature  string // JSONL appended on each side
		source, target string // merge direction (default feature → main)
		delFeature     string // person deleted on feature first
		wantKind       string // "" = merges cleanly
		wantType       string
		check          func(h *bh)
	}{
		{name: "unique email", main: `{"type":"User","data":{"name":"Bob","email":"dup@x"}}`,
			feature: `{"type":"User","data":{"name":"Carol","email":"dup@x"}}`, wantKind: ConflictUnique, wantType: "node:User"},
		{name: "edge unique src dst", main: `{"edge":"Knows","from":"Alice","to":"Bob"}`,
			feature: `{"edge":"Knows","from":"Alice","to":"Bob"}`, wantKind: ConflictUnique, wantType: "edge:Knows"},
		{name: "edge distinct pairs", main: `{"edge":"Knows","from":"Alice","to":"Bob"}`,
			feature: `{"edge":"Knows","from":"Alice","to":"Carol"}`,
			check: func(h *bh) {
				if got := h.edges(Target{}, "Knows"); len(got) != 2 {
					h.t.Fatalf("knows %v", got)
				}
			}},
		{name: "composite unique is not a joined string", main: `{"type":"Pair","data":{"id":"p1","a":"x|y","b":"z"}}`,
			feature: `{"type":"Pair","data":{"id":"p2","a":"x","b":"y|z"}}`,
			check: func(h *bh) {
				if got := h.nodes(Target{}, "Pair", ""); len(got) != 2 {
					h.t.Fatalf("pairs %v", got)
				}
			}},
		{name: "cardinality", main: `{"edge":"WorksAt","from":"Alice","to":"Acme"}`,
			feature: `{"edge":"WorksAt","from":"Alice","to":"Beta"}`, wantKind: ConflictCardinality, wantType: "edge:WorksAt"},
		{name: "orphan edge main into feature", main: `{"edge":"Knows","from":"Alice","to":"Bob"}`,
			delFeature: "Bob", source: "main", target: "feature", wantKind: ConflictOrphanEdge, wantType: "edge:Knows"},
		{name: "list value is typed", main: `{"type":"Doc","data":{"slug":"y","body":"main"}}`,
			feature: `{"type":"Doc","data":{"slug":"x","tags":["a","b"]}}`,
			check: func(h *bh) {
				if got := h.nodes(Target{}, "Doc", "tags"); !slices.Contains(got, "x=[a b]") {
					h.t.Fatalf("docs %v", got)
				}
			}},
		{name: "null to empty string is a change", main: `{"type":"Doc","data":{"slug":"y","body":"main"}}`,
			feature: `{"type":"Doc","data":{"slug":"x","tags":["a, b"],"body":""}}`,
			check: func(h *bh) {
				if got := h.nodes(Target{}, "Doc", "body"); !slices.Equal(got, []string{"x=", "y=main"}) {
					h.t.Fatalf("docs %v", got)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newBH(t, storage.NewMem(), userSchema, userData, "")
			h.branch("feature", "")
			if tc.delFeature != "" {
				h.mut("feature", "del", map[string]any{"name": tc.delFeature})
			}
			h.load("main", "merge", tc.main)
			h.load("feature", "merge", tc.feature)
			src, dst := tc.source, tc.target
			if src == "" {
				src, dst = "feature", "main"
			}
			before := engSnap(t, h.g, dst)
			res, err := h.g.Merge(h.ctx, src, dst, "merger")
			if tc.wantKind == "" {
				if err != nil || res.Outcome != MergeMerged {
					t.Fatalf("merge: %+v %v", res, err)
				}
				tc.check(h)
				return
			}
			var mc *MergeConflictsError
			if !errors.As(err, &mc) || !errors.Is(err, ErrMergeConflicts) {
				t.Fatalf("merge err %v, want conflicts", err)
			}
			if len(mc.Conflicts) != 1 || mc.Conflicts[0].Kind != tc.wantKind || mc.Conflicts[0].TypeKey() != tc.wantType {
				t.Fatalf("conflicts %+v, want one %s on %s", mc.Conflicts, tc.wantKind, tc.wantType)
			}
			if !engSnap(t, h.g, dst).equal(before) {
				t.Fatalf("conflicting merge changed %s", dst)
			}
		})
	}
}

// TestMergeRowConflictsAllListed: every row conflict of every table is
// reported, in a deterministic order, and nothing changes.
func TestMergeRowConflictsAllListed(t *testing.T) {
	h := featureBH(t)
	for _, side := range []struct {
		b   string
		age int
	}{{"main", 1}, {"feature", 2}} {
		h.mut(side.b, "age", map[string]any{"name": "Alice", "age": side.age})
		h.mut(side.b, "age", map[string]any{"name": "Bob", "age": side.age})
		h.mut(side.b, "add", map[string]any{"name": "Eve", "age": side.age})
	}
	h.mut("main", "del", map[string]any{"name": "Diana"})
	h.mut("feature", "age", map[string]any{"name": "Diana", "age": 3})
	before := engSnap(t, h.g, "main")
	_, err := h.g.Merge(h.ctx, "feature", "main", "")
	var mc *MergeConflictsError
	if !errors.As(err, &mc) {
		t.Fatalf("err %v", err)
	}
	var got []string
	for _, c := range mc.Conflicts {
		got = append(got, c.Kind+" "+c.TypeKey()+" "+c.EntityID)
	}
	want := []string{"divergent_update node:Person Alice", "divergent_update node:Person Bob",
		"delete_vs_update node:Person Diana", "divergent_insert node:Person Eve"}
	if !slices.Equal(got, want) {
		t.Fatalf("conflicts\n%v\nwant\n%v", got, want)
	}
	if !strings.Contains(err.Error(), "+1 more") {
		t.Fatalf("message %q should summarize the top 3", err)
	}
	// Each row conflict names its properties with the base and both sides.
	detail := []string{"age base=30 source=2 target=1", "age base=25 source=2 target=1",
		"age base=28 source=3 target=-", "age base=- source=2 target=1"}
	for i, c := range mc.Conflicts {
		var got []string
		for _, p := range c.Properties {
			show := func(v []byte) string {
				if v == nil {
					return "-"
				}
				return string(v)
			}
			got = append(got, fmt.Sprintf("%s base=%s source=%s target=%s", p.Name, show(p.Base), show(p.Source), show(p.Target)))
		}
		if strings.Join(got, "; ") != detail[i] {
			t.Fatalf("conflict %s properties %v, want %s", c.EntityID, got, detail[i])
		}
	}
	if m := mc.Conflicts[0].Message; !strings.HasSuffix(m, "(age: base 30, source 2, target 1)") {
		t.Fatalf("message %q does not name the property and values", m)
	}
	if m := mc.Conflicts[2].Message; !strings.HasSuffix(m, "(age: base 28, source 3, target (deleted))") {
		t.Fatalf("message %q does not name the deleted side", m)
	}
	if !engSnap(t, h.g, "main").equal(before) {
		t.Fatal("main changed")
	}
}

func TestMergeRefusals(t *testing.T) {
	h := featureBH(t)
	cases := []struct {
		source, target string
		want           error
	}{
		{"main", "main", ErrMergeSameBranch},
		{"", "main", ErrMergeSameBranch},
		{SchemaApplyLockRef, "main", ErrInternalRef},
		{"feature", SchemaApplyLockRef, ErrInternalRef},
		{"nope", "main", ErrBranchNotFound},
		{"feature", "nope", ErrBranchNotFound},
		{"bad branch", "main", ErrInvalidBranch},
	}
	for _, tc := range cases {
		if _, err := h.g.Merge(h.ctx, tc.source, tc.target, ""); !errors.Is(err, tc.want) {
			t.Errorf("Merge(%q, %q) = %v, want %v", tc.source, tc.target, err, tc.want)
		}
	}
	if _, err := h.g.Merge(h.ctx, "main", "main", ""); !strings.Contains(err.Error(), "distinct source and target") {
		t.Errorf("message %q", err)
	}
}

// keyLog wraps a store and records the keys of object reads.
type keyLog struct {
	storage.Store
	mu   sync.Mutex
	keys []string
}

func (k *keyLog) note(key string) {
	k.mu.Lock()
	k.keys = append(k.keys, key)
	k.mu.Unlock()
}

func (k *keyLog) Get(ctx context.Context, key string) ([]byte, storage.Info, error) {
	k.note(key)
	return k.Store.Get(ctx, key)
}

func (k *keyLog) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	k.note(key)
	return k.Store.GetRange(ctx, key, off, n)
}

func (k *keyLog) OpenReadAt(ctx context.Context, key string) (storage.ReadAtCloser, error) {
	k.note(key)
	return storage.OpenReadAt(ctx, k.Store, key)
}

func (k *keyLog) take() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.keys
	k.keys = nil
	return out
}

// TestMergeAdoptsOneSidedTablesWithoutReading pins the cost rule: a table
// changed only on the source is adopted by state key, and a table changed
// only on the target is kept; neither has a fragment, deletion vector or
// even a table state read by the merge.
func TestMergeAdoptsOneSidedTablesWithoutReading(t *testing.T) {
	kl := &keyLog{Store: storage.NewMem()}
	h := newBH(t, kl, engSchema, engData, "")
	h.branch("feature", "")
	h.load("feature", "append", `{"type":"Company","data":{"name":"Initech"}}`)
	h.mut("main", "link", map[string]any{"from": "Alice", "to": "Diana"})
	g, err := Open(h.ctx, kl, Options{}) // a cold handle: nothing cached
	if err != nil {
		t.Fatal(err)
	}
	kl.take()
	res, err := g.Merge(h.ctx, "feature", "main", "")
	if err != nil || res.Outcome != MergeMerged {
		t.Fatalf("merge %+v %v", res, err)
	}
	for _, k := range kl.take() {
		if strings.HasPrefix(k, "tables/") {
			t.Errorf("merge read %s", k)
		}
	}
	if got := h.nodes(Target{}, "Company", ""); !slices.Contains(got, "Initech") {
		t.Fatalf("companies %v", got)
	}
	if got := h.edges(Target{}, "Knows"); !slices.Contains(got, "Alice>Diana") {
		t.Fatalf("knows %v", got)
	}
}

// TestMergeRacesTargetWrites: a write lands on the target between the
// merge's planning and its publish; the merge re-plans against the new head
// and both the write and the merge survive. Concurrent writers on the
// target likewise all land.
func TestMergeRacesTargetWrites(t *testing.T) {
	for _, ff := range []bool{false, true} {
		name := "merged"
		if ff {
			name = "fast-forward"
		}
		t.Run(name, func(t *testing.T) {
			h := featureBH(t)
			h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
			if !ff {
				h.mut("main", "age", map[string]any{"name": "Bob", "age": 26})
			}
			other := mustOpen(t, h.st, Options{})
			p, _ := h.qs.Query("add")
			h.g.testBeforePublish = func(attempt int) {
				if attempt == 0 {
					if _, err := other.Mutate(h.ctx, "main", p, map[string]any{"name": "Racer", "age": 5}, MutateOptions{}); err != nil {
						t.Errorf("racing write: %v", err)
					}
				}
			}
			res := h.merge("feature", "main")
			h.g.testBeforePublish = nil
			if res.Outcome != MergeMerged {
				t.Fatalf("outcome %s, want merged (the target moved)", res.Outcome)
			}
			got := h.nodes(Target{}, "Person", "")
			if !slices.Contains(got, "Eve") || !slices.Contains(got, "Racer") {
				t.Fatalf("persons %v", got)
			}
		})
	}
	t.Run("concurrent writers", func(t *testing.T) {
		h := featureBH(t)
		h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
		h.mut("main", "age", map[string]any{"name": "Bob", "age": 26})
		p, _ := h.qs.Query("add")
		const n = 6
		// n writers and, last, one merge of feature into main.
		errs := concurrently(n+1, func(i int) error {
			if i == n {
				g, err := Open(h.ctx, h.st, Options{MaxRetries: 64})
				if err == nil {
					_, err = g.Merge(h.ctx, "feature", "main", "")
				}
				return err
			}
			g, err := Open(h.ctx, h.st, Options{})
			if err == nil {
				_, err = g.Mutate(h.ctx, "main", p, map[string]any{"name": "W" + string(rune('a'+i)), "age": i}, MutateOptions{})
			}
			return err
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if got := h.nodes(Target{}, "Person", ""); len(got) != 4+1+n {
			t.Fatalf("persons %v", got)
		}
	})
}

// TestMergeRetryBudget: a target that moves on every attempt exhausts the
// budget with a typed ReadSetChanged on the target's head.
func TestMergeRetryBudget(t *testing.T) {
	h := fixtureBH(t)
	h.g.maxRetries = 2
	h.branch("feature", "")
	h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
	h.mut("main", "age", map[string]any{"name": "Bob", "age": 26})
	other := mustOpen(t, h.st, Options{})
	p, _ := h.qs.Query("age")
	n := 0
	h.g.testBeforePublish = func(int) {
		n++
		if _, err := other.Mutate(h.ctx, "main", p, map[string]any{"name": "Bob", "age": 100 + n}, MutateOptions{}); err != nil {
			t.Errorf("racing write: %v", err)
		}
	}
	_, err := h.g.Merge(h.ctx, "feature", "main", "")
	var rs *ReadSetChangedError
	if !errors.As(err, &rs) || rs.Member != "graph_head:main" || !errors.Is(err, ErrReadSetChanged) {
		t.Fatalf("err %v, want ReadSetChanged on graph_head:main", err)
	}
	if got := h.nodes(Target{}, "Person", ""); slices.Contains(got, "Eve") {
		t.Fatal("a failed merge published")
	}
}
