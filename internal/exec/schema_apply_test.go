package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// evolved schemas of engSchema used below.
const (
	evRenameAdd = `
node Human @rename_from("Person") { fullname: String @key @rename_from("name")  age: I32?  nickname: String? }
node Company { name: String @key }
edge Knows: Human -> Human { since: Date? }
edge WorksAt: Human -> Company
`
	evDropAge = `
node Person { name: String @key }
node Company { name: String @key }
edge Knows: Person -> Person { since: Date? }
edge WorksAt: Person -> Company
`
)

func (h *bh) schemaSrc(branch string) string {
	h.t.Helper()
	src, err := h.g.SchemaSource(h.ctx, Target{Branch: branch})
	if err != nil {
		h.t.Fatal(err)
	}
	return src
}

// TestApplyCrashPoints fails a schema apply at every durable step, reopens,
// and checks the graph has exactly the old or the new schema with its data
// readable under it; the apply then succeeds.
func TestApplyCrashPoints(t *testing.T) {
	type pt struct {
		name    string
		visible bool
	}
	common := []pt{{FPApplyBeforeStates, false}, {"table/before-state", false}, {"table/after-state", false},
		{FPApplyAfterState, false}, {FPApplyBeforeSchema, false}, {FPBeforePublish, false},
		{"commit/before-commit-object", false}, {"commit/after-commit-object", false}, {"commit/before-cas", false},
		{"commit/after-cas", true}, {FPAfterPublish, true}}
	cases := []struct {
		desired string
		hard    bool
		points  []pt
		newType string
		newProp string
	}{
		{evRenameAdd, false, common, "Human", "fullname"},
		{evDropAge, true, append([]pt{{"table/before-fragment", false}, {"table/after-fragment", false}}, common...), "Person", "name"},
	}
	for _, c := range cases {
		for _, p := range c.points {
			t.Run(fmt.Sprintf("hard=%v/%s", c.hard, p.name), func(t *testing.T) {
				h := fixtureBH(t)
				old := h.schemaSrc("main")
				injectFailure(t, p.name, "apply", func() error {
					_, err := h.g.ApplySchema(h.ctx, c.desired, SchemaApplyOptions{AllowDataLoss: c.hard})
					return err
				})
				h2 := h.reopen()
				got := h2.schemaSrc("main")
				typ := "Person"
				switch {
				case p.visible && got != c.desired:
					t.Fatalf("after a failure past the CAS the schema is\n%s", got)
				case !p.visible && got != old:
					t.Fatalf("after a failure before the CAS the schema is\n%s", got)
				case p.visible:
					typ = c.newType
				}
				if n := len(h2.nodes(Target{}, typ, "")); n != 4 {
					t.Fatalf("%s rows after the failure: %d, want 4", typ, n)
				}
				if p.visible {
					return
				}
				if _, err := h2.g.ApplySchema(h.ctx, c.desired, SchemaApplyOptions{AllowDataLoss: c.hard}); err != nil {
					t.Fatalf("apply after the failure: %v", err)
				}
				if got := h2.nodes(Target{}, c.newType, c.newProp); len(got) != 4 {
					t.Fatalf("%s.%s after apply = %v", c.newType, c.newProp, got)
				}
			})
		}
	}
}

// TestApplyAddNullableReadsNoData pins the cost of a metadata-only apply:
// adding a nullable property (and renaming one) to a loaded table reads
// and writes no data fragment, deletion vector or index — only refs,
// commits, schemas and table states — from a cold handle. Rows:
// OMNIGRAPH_EVOLVE_ROWS (default 100,000; the figure is 1,000,000).
func TestApplyAddNullableReadsNoData(t *testing.T) {
	rows := 100_000
	if v := os.Getenv("OMNIGRAPH_EVOLVE_ROWS"); v != "" {
		rows, _ = strconv.Atoi(v)
	}
	mem := storage.NewMem()
	h := newBH(t, mem, `node Person { name: String @key  age: I32? }`, "", `query q() { match { $p: Person } return { $p.name } }`)
	var b strings.Builder
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":"p%07d","age":%d}}`+"\n", i, i%100)
	}
	h.load("main", "overwrite", b.String())
	rec := storage.NewRecording(mem)
	counting := storage.NewCounting(rec)
	g := mustOpen(t, counting, Options{})
	res, err := g.ApplySchema(h.ctx, `node Person { name: String @key  years: I32? @rename_from("age")  nickname: String? }`, SchemaApplyOptions{})
	if err != nil || !res.Applied {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	var reads, writes []string
	for _, q := range rec.Requests() {
		switch q.Op {
		case storage.OpGet, storage.OpGetRange:
			reads = append(reads, q.Key)
		case storage.OpPut, storage.OpPutIfAbsent, storage.OpPutIfMatch:
			writes = append(writes, q.Key)
		}
	}
	for _, k := range append(append([]string{}, reads...), writes...) {
		if strings.Contains(k, "/data/") || strings.Contains(k, "/dv/") || strings.Contains(k, "/index/") {
			t.Errorf("metadata-only apply touched %s", k)
		}
	}
	t.Logf("apply on %d rows: %d requests (%d reads, %d writes): %v", rows, counting.Snapshot().Requests(), len(reads), len(writes), writes)
	// Old fragments read through the new schema.
	h2 := &bh{t: t, g: g, st: counting, qs: h.qs, ctx: h.ctx}
	got := h2.nodes(Target{}, "Person", "years")
	if len(got) != rows || got[0] != "p0000000=0" || got[rows-1] != fmt.Sprintf("p%07d=%d", rows-1, (rows-1)%100) {
		t.Fatalf("years = %d rows, first %v", len(got), got[:1])
	}
	if nn := h2.nodes(Target{}, "Person", "nickname"); nn[0] != "p0000000=<nil>" {
		t.Fatalf("nickname of an old row = %v", nn[0])
	}
}

// TestApplyBranches: each branch keeps the schema of its own head; a
// three-way merge across different schemas is refused naming the change;
// a fast-forward adopts the source's schema.
func TestApplyBranches(t *testing.T) {
	h := featureBH(t)
	old := h.schemaSrc("main")
	if _, err := h.g.ApplySchema(h.ctx, evRenameAdd, SchemaApplyOptions{Branch: "feature"}); err != nil {
		t.Fatal(err)
	}
	if h.schemaSrc("main") != old || h.schemaSrc("feature") != evRenameAdd {
		t.Fatal("apply on feature changed main's schema")
	}
	if n := len(h.nodes(Target{Branch: "feature"}, "Human", "fullname")); n != 4 {
		t.Fatalf("feature Human rows = %d", n)
	}
	// Fast-forward: main has not moved.
	ff := h.merge("feature", "main")
	if ff.Outcome != MergeFastForward || h.schemaSrc("main") != evRenameAdd {
		t.Fatalf("fast-forward = %v, main schema %q", ff.Outcome, h.schemaSrc("main"))
	}
	if n := len(h.nodes(Target{}, "Human", "")); n != 4 {
		t.Fatalf("main Human rows after fast-forward = %d", n)
	}
	// Three-way across a schema change: refused, naming the change.
	h.branch("other", "")
	if _, err := h.g.ApplySchema(h.ctx, strings.Replace(evRenameAdd, "nickname: String?", "nickname: String?  email: String?", 1), SchemaApplyOptions{Branch: "other"}); err != nil {
		t.Fatal(err)
	}
	h.load("main", "append", `{"type":"Company","data":{"name":"Initech"}}`)
	_, err := h.g.Merge(h.ctx, "other", "main", "")
	var mse *MergeSchemaError
	if !errors.As(err, &mse) || !errors.Is(err, ErrMergeSchema) || !strings.Contains(err.Error(), "add property 'Human.email'") {
		t.Fatalf("merge across schemas: %v", err)
	}
}

// TestApplyConstraintAdditions: an added @unique/@range is checked against
// the stored rows and refused listing the offenders; nothing is written.
func TestApplyConstraintAdditions(t *testing.T) {
	h := fixtureBH(t)
	h.mut("main", "age", map[string]any{"name": "Bob", "age": 30})
	head := h.head("main")
	for _, c := range []struct{ desired, want string }{
		{strings.Replace(engSchema, "age: I32?", "age: I32? @unique", 1), "@unique(age) to node:Person: existing data violates it: Alice, Bob"},
		{strings.Replace(engSchema, "age: I32? }", "age: I32?  @range(age, 0..29) }", 1), "existing data violates it: Alice, Bob, Charlie"},
	} {
		_, err := h.g.ApplySchema(h.ctx, c.desired, SchemaApplyOptions{})
		var ce *ConstraintAdditionError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("apply %q: %v", c.desired, err)
		}
		if h.head("main") != head {
			t.Fatal("a refused apply published a commit")
		}
	}
	ok := strings.Replace(engSchema, "age: I32? }", "age: I32?  @range(age, 0..200) }", 1)
	if res, err := h.g.ApplySchema(h.ctx, ok, SchemaApplyOptions{}); err != nil || !res.Applied {
		t.Fatalf("satisfied range: %+v %v", res, err)
	}
}

// TestFeedConsumerWithWriters follows main with a change-feed consumer
// while 8 writers commit, restarting the consumer from its stored cursor
// twice; baseline + changes must rebuild exactly the final state.
// Duration: OMNIGRAPH_FEED_SECONDS (default 2; the figure is 30).
func TestFeedConsumerWithWriters(t *testing.T) {
	secs := 2.0
	if v := os.Getenv("OMNIGRAPH_FEED_SECONDS"); v != "" {
		secs, _ = strconv.ParseFloat(v, 64)
	}
	h := newBH(t, storage.NewMem(), `node Item { name: String @key  n: I64? }`, `{"type":"Item","data":{"name":"seed","n":0}}`+"\n",
		`query put($name: String, $n: I64) { insert Item { name: $name, n: $n } }
query bump($name: String, $n: I64) { update Item set { n: $n } where name = $name }
query drop($name: String) { delete Item where name = $name }`)
	state := map[string]string{}
	var base strings.Builder
	bl, err := h.g.CaptureBaseline(h.ctx, "main", ChangeScope{}, &base)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(base.String()), "\n") {
		var rec struct {
			Data map[string]any `json:"data"`
		}
		if err := jsonDecoder([]byte(line)).Decode(&rec); err != nil {
			t.Fatal(err)
		}
		state[rec.Data["name"].(string)] = fmt.Sprint(rec.Data["n"])
	}
	ctx, cancel := context.WithTimeout(h.ctx, time.Duration(secs*float64(time.Second)))
	defer cancel()
	var wg sync.WaitGroup
	var commits sync.Map
	var gaveUp atomic.Int64
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d-%d", w, i%7)
				op := []string{"put", "bump", "drop"}[i%3]
				p, _ := h.qs.Query(op)
				params := map[string]any{"name": name, "n": i}
				if op == "drop" {
					params = map[string]any{"name": fmt.Sprintf("w%d-%d", w, (i+3)%7)}
				}
				if res, err := h.g.Mutate(context.Background(), "main", p, params, MutateOptions{}); err == nil && res.Commit != nil {
					commits.Store(res.Commit.ID, true)
				} else if errors.Is(err, commit.ErrHeadMoved) {
					gaveUp.Add(1) // retry budget spent under contention: a typed outcome, not the feed's concern
				} else if err != nil && !errors.Is(err, ErrReadSetChanged) {
					var ce *ConstraintError
					if !errors.As(err, &ce) {
						t.Errorf("writer %d: %v", w, err)
						return
					}
				}
			}
		}(w)
	}
	seen := map[string]int{}
	cursor := bl.ResumeCursor
	apply := func(b ChangeBlock) {
		seen[b.Cause.Commit]++
		for _, c := range b.Changes {
			if c.Op == OpDelete {
				delete(state, c.ID)
			} else {
				raw, _ := c.After["n"].(json.RawMessage)
				state[c.ID] = string(raw)
			}
		}
	}
	poll := func(g *Graph) bool {
		page, err := g.PollChanges(h.ctx, FeedRequest{Cursor: cursor, MaxChanges: 5})
		for err == nil {
			for _, b := range page.Blocks {
				apply(b)
			}
			if page.PageToken == "" {
				cursor = page.Cursor
				return page.CaughtUp
			}
			// A block split over pages: the next page repeats its cause.
			page, err = g.PollChanges(h.ctx, FeedRequest{PageToken: page.PageToken, MaxChanges: 5})
			if err == nil && len(page.Blocks) > 0 {
				seen[page.Blocks[0].Cause.Commit]--
			}
		}
		t.Fatalf("poll: %v", err)
		return false
	}
	restarts := 0
	for ctx.Err() == nil {
		g := h.g
		if restarts < 2 && time.Now().UnixNano()%3 == 0 {
			// A restarted consumer: a new handle, only the cursor survives.
			var err error
			if g, err = Open(h.ctx, h.st, Options{}); err != nil {
				t.Fatal(err)
			}
			restarts++
		}
		poll(g)
	}
	wg.Wait()
	for !poll(h.g) {
	}
	if restarts < 2 {
		g, _ := Open(h.ctx, h.st, Options{})
		poll(g)
		restarts = 2
	}
	final := map[string]string{}
	for _, id := range h.nodes(Target{}, "Item", "n") {
		k, v, _ := strings.Cut(id, "=")
		final[k] = v
	}
	if fmt.Sprint(final) != fmt.Sprint(state) {
		t.Fatalf("rebuilt state differs from the branch:\nfeed:  %v\nfinal: %v", state, final)
	}
	n := 0
	commits.Range(func(k, _ any) bool {
		n++
		if seen[k.(string)] != 1 {
			t.Errorf("commit %v seen %d times", k, seen[k.(string)])
		}
		return true
	})
	t.Logf("%d commits by 8 writers in %.0fs, %d entities, consumer restarted %d times (%d writes gave up after their retry budget)", n, secs, len(final), restarts, gaveUp.Load())
}

// TestPlanDeterministic: the same inputs give the same steps.
func TestPlanDeterministic(t *testing.T) {
	a, _ := schema.Compile("a.pg", engSchema)
	d, _ := schema.Compile("d.pg", evRenameAdd)
	p1, _ := schema.PlanChange(a, schema.Identity{}, d, schema.PlanOptions{})
	p2, _ := schema.PlanChange(a, schema.Identity{}, d, schema.PlanOptions{})
	if fmt.Sprint(p1.Steps) != fmt.Sprint(p2.Steps) {
		t.Fatal("plan is not deterministic")
	}
}

// TestApplyRenameSurvivesCleanup: a renamed type's new state names the
// fragments written under its old table prefix; cleanup keeps them.
func TestApplyRenameSurvivesCleanup(t *testing.T) {
	h := fixtureBH(t)
	if _, err := h.g.ApplySchema(h.ctx, evRenameAdd, SchemaApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Cleanup(h.ctx, CleanupOptions{Keep: 1, Confirm: true, Grace: -1}); err != nil {
		t.Fatal(err)
	}
	h2 := h.reopen()
	if got := h2.nodes(Target{}, "Human", "fullname"); len(got) != 4 || got[0] != "Alice=Alice" {
		t.Fatalf("Human after cleanup = %v", got)
	}
}
