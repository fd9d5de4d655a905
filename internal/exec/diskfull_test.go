package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/integrity"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// errDiskFull is what a full local disk answers, wrapped as the backends
// wrap it.
var errDiskFull = fmt.Errorf("write /graph/.tmp-0123: %w", syscall.ENOSPC)

// diskFullOp is one write of the disk-full matrix: setup prepares the
// graph (the fixture plus whatever the write needs), run is the write.
type diskFullOp struct {
	name  string
	opts  Options
	setup func(t *testing.T, g *Graph)
	run   func(ctx context.Context, g *Graph) (warnings []string, err error)
	// compacts: the write triggers an inline compaction, whose failure is a
	// warning, not an error.
	compacts bool
}

func diskFullOps(t *testing.T) []diskFullOp {
	mutate := func(query string, params map[string]any) func(ctx context.Context, g *Graph) ([]string, error) {
		return func(ctx context.Context, g *Graph) ([]string, error) {
			res, err := g.Mutate(ctx, "main", engPlan(t, g, query), params, MutateOptions{})
			if err != nil {
				return nil, err
			}
			return res.Warnings, nil
		}
	}
	load := func(mode LoadMode, data string) func(ctx context.Context, g *Graph) ([]string, error) {
		return func(ctx context.Context, g *Graph) ([]string, error) {
			// Two records a chunk: the load writes fragments while it reads.
			res, err := g.Load(ctx, strings.NewReader(data), LoadRequest{Mode: mode, ChunkRecords: 2})
			if err != nil {
				return nil, err
			}
			return res.Warnings, nil
		}
	}
	newPeople := `{"type":"Person","data":{"name":"Eve","age":41}}
{"type":"Person","data":{"name":"Frank","age":42}}
{"type":"Person","data":{"name":"Grace","age":43}}
{"edge":"Knows","from":"Eve","to":"Alice"}
{"edge":"Knows","from":"Frank","to":"Grace"}
`
	merged := `{"type":"Person","data":{"name":"Alice","age":31}}
{"type":"Person","data":{"name":"Zed","age":50}}
{"type":"Person","data":{"name":"Bob","age":26}}
`
	companies := `{"type":"Company","data":{"name":"Acme"}}
{"type":"Company","data":{"name":"Globex"}}
{"type":"Company","data":{"name":"Initech"}}
`
	branchWrites := func(main bool) func(t *testing.T, g *Graph) {
		return func(t *testing.T, g *Graph) {
			ctx := context.Background()
			if err := g.CreateBranch(ctx, "feature", "main", "tester"); err != nil {
				t.Fatal(err)
			}
			if _, err := g.Mutate(ctx, "feature", engPlan(t, g, "set_age"), map[string]any{"name": "Bob", "age": 60}, MutateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := g.Mutate(ctx, "feature", engPlan(t, g, "insert_person"), map[string]any{"name": "Fia", "age": 3}, MutateOptions{}); err != nil {
				t.Fatal(err)
			}
			if main {
				if _, err := g.Mutate(ctx, "main", engPlan(t, g, "set_age"), map[string]any{"name": "Alice", "age": 70}, MutateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	merge := func(ctx context.Context, g *Graph) ([]string, error) {
		_, err := g.Merge(ctx, "feature", "main", "tester")
		return nil, err
	}
	singleRows := func(n int) func(t *testing.T, g *Graph) {
		return func(t *testing.T, g *Graph) {
			for i := range n {
				if _, err := g.Mutate(context.Background(), "main", engPlan(t, g, "insert_person"), map[string]any{"name": fmt.Sprintf("s%d", i), "age": i}, MutateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return []diskFullOp{
		{name: "load append", run: load(LoadAppend, newPeople)},
		{name: "load merge", run: load(LoadMerge, merged)},
		{name: "load overwrite", run: load(LoadOverwrite, companies)},
		{name: "mutate insert", run: mutate("insert_person_and_friend", map[string]any{"name": "Eve", "age": 41, "friend": "Alice"})},
		{name: "mutate update", run: mutate("set_age", map[string]any{"name": "Bob", "age": 26})},
		{name: "mutate delete with cascade", run: mutate("remove_person", map[string]any{"name": "Alice"})},
		{name: "merge three-way", setup: branchWrites(true), run: merge},
		{name: "merge fast-forward", setup: branchWrites(false), run: merge},
		{name: "optimize", opts: Options{NoAutoCompact: true}, setup: singleRows(4), run: func(ctx context.Context, g *Graph) ([]string, error) {
			_, err := g.Optimize(ctx, "")
			return nil, err
		}},
		// The fixture's Person table holds one fragment; three more single
		// rows leave four, and the fourth write compacts them inline.
		{name: "mutate with inline compaction", opts: Options{CompactFragments: 3}, setup: singleRows(2), compacts: true,
			run: mutate("insert_person", map[string]any{"name": "Eve", "age": 41})},
	}
}

// durable reports whether a request makes something durable: the steps a
// full disk can fail.
func durable(op storage.Op) bool {
	return op == storage.OpPut || op == storage.OpPutIfAbsent || op == storage.OpPutIfMatch || op == storage.OpPutShared
}

// objectKeys lists every stored object but the lock files.
func objectKeys(t *testing.T, st storage.Store) []string {
	t.Helper()
	var keys []string
	if err := st.List(context.Background(), "", "", func(in storage.Info) error {
		if !strings.HasPrefix(in.Key, ".") {
			keys = append(keys, in.Key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// unreachable is what verify counts as stored but reached by no ref.
func unreachable(t *testing.T, st storage.Store) integrity.Counts {
	t.Helper()
	rep, err := integrity.Verify(context.Background(), st, integrity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("verify found problems: %+v", rep.Problems)
	}
	return rep.Unreachable
}

// TestDiskFullEveryDurableStep fails each durable request of load (append,
// merge, overwrite; chunked), mutate (insert, update, delete with cascade),
// merge (three-way, fast-forward), optimize and a write with inline
// compaction with ENOSPC, once per request, on a plain store and behind
// the batching layer the public API uses. A write that fails returns an
// error matching storage.ErrNoSpace and syscall.ENOSPC, leaves the head
// and content as they were and the stored objects exactly as before (it
// deleted everything it wrote: the store is settled, so even a failed ref
// CAS is known not to have landed). A failure inside the inline compaction
// fails nothing: the write lands with a warning and every object left is
// reachable. Then the same write succeeds once the disk has room. "local"
// is the batching stack over a local directory, where a write's commit and
// its inline compaction's share one chain object (storage.PutShared).
func TestDiskFullEveryDurableStep(t *testing.T) {
	for _, stack := range []string{"plain", "batching", "local"} {
		for _, op := range diskFullOps(t) {
			t.Run(stack+"/"+op.name, func(t *testing.T) {
				build := func() (*Graph, *storage.Faulty, storage.Store) {
					var inner storage.Store = storage.NewMem()
					if stack == "local" {
						inner = localStore(t, t.TempDir())
					}
					f := storage.NewFaulty(inner)
					var st storage.Store = f
					if stack != "plain" {
						st = storage.NewBatching(f)
					}
					g := engFixtureOn(t, st)
					g = mustOpen(t, st, op.opts)
					if op.setup != nil {
						op.setup(t, g)
					}
					return g, f, st
				}
				// A dry run counts the durable requests of the write.
				g, f, _ := build()
				var mu sync.Mutex
				steps := 0
				f.SetHook(func(_ context.Context, o storage.Op, _ string, s storage.Stage) error {
					if s == storage.Before && durable(o) {
						mu.Lock()
						steps++
						mu.Unlock()
					}
					return nil
				})
				if ws, err := op.run(context.Background(), g); err != nil || len(ws) > 0 {
					t.Fatalf("dry run: %v %v", ws, err)
				}
				f.SetHook(nil)
				if steps < 2 {
					t.Fatalf("only %d durable steps", steps)
				}
				// The puts of one round run concurrently (a write's fragment
				// and its inline compaction's), so which object the n-th
				// durable request is varies from run to run: every run's
				// outcome is checked, and the steps are run again (at most
				// 8 times) until both outcomes a compacting write can have
				// were seen.
				warned, failed := 0, 0
				for round := 0; round < 8 && (failed == 0 || (op.compacts && warned == 0)); round++ {
					for n := 1; n <= steps; n++ {
						g, f, st := build()
						ctx := context.Background()
						before := engSnap(t, g, "main")
						content := maintContent(t, g, Target{})
						keys := objectKeys(t, st)
						var failedKey string
						seen := 0
						f.SetHook(func(_ context.Context, o storage.Op, key string, s storage.Stage) error {
							if s != storage.Before || !durable(o) {
								return nil
							}
							mu.Lock()
							defer mu.Unlock()
							if seen++; seen == n {
								failedKey = key
								return errDiskFull
							}
							return nil
						})
						ws, err := op.run(ctx, g)
						f.SetHook(nil)
						switch {
						case err != nil:
							failed++
							if !errors.Is(err, storage.ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
								t.Fatalf("step %d (%s): err = %v, want ErrNoSpace", n, failedKey, err)
							}
							if !engSnap(t, g, "main").equal(before) || maintContent(t, g, Target{}) != content {
								t.Fatalf("step %d (%s): the failed write changed the graph", n, failedKey)
							}
							if got := objectKeys(t, st); !slices.Equal(got, keys) {
								t.Fatalf("step %d (%s): the failed write left objects behind:\n%s", n, failedKey, strings.Join(diffKeys(keys, got), "\n"))
							}
						case op.compacts && len(ws) == 1 && strings.Contains(ws[0], "automatic compaction failed") && strings.Contains(ws[0], "no space left"):
							warned++
							if engSnap(t, g, "main").equal(before) {
								t.Fatalf("step %d (%s): the write did not land", n, failedKey)
							}
							if u := unreachable(t, st); u != (integrity.Counts{}) {
								t.Fatalf("step %d (%s): the failed compaction left %+v unreachable", n, failedKey, u)
							}
						default:
							t.Fatalf("step %d (%s): %v %v, want a disk-full failure", n, failedKey, ws, err)
						}
						if u := unreachable(t, st); u != (integrity.Counts{}) {
							t.Fatalf("step %d (%s): verify counts %+v unreachable", n, failedKey, u)
						}
						// Space is free again: the same write succeeds.
						if ws, err := op.run(ctx, g); err != nil || len(ws) > 0 {
							t.Fatalf("step %d (%s): the write after the disk-full failure: %v %v", n, failedKey, ws, err)
						}
					}
				}
				if failed == 0 || (op.compacts && warned == 0) {
					t.Fatalf("%d failures, %d warnings over %d steps", failed, warned, steps)
				}
				t.Logf("%d durable steps: %d failed the write, %d warned", steps, failed, warned)
			})
		}
	}
}

func diffKeys(before, after []string) []string {
	var out []string
	for _, k := range after {
		if !slices.Contains(before, k) {
			out = append(out, "+ "+k)
		}
	}
	for _, k := range before {
		if !slices.Contains(after, k) {
			out = append(out, "- "+k)
		}
	}
	return out
}

// unsettled hides the store's Settled capability (and every wrapper
// below it): a failed request may still land, as on S3.
type unsettled struct{ storage.Store }

// TestFailedWriteKeepsObjectsWhenOutcomeUnknown: when the ref CAS fails on
// a store that cannot rule out its landing later, the write's objects may
// be referenced, so the failed write deletes nothing; verify counts them
// as unreachable and cleanup collects them. On a settled store the same
// failure deletes them (TestDiskFullEveryDurableStep).
func TestFailedWriteKeepsObjectsWhenOutcomeUnknown(t *testing.T) {
	cases := []struct {
		name string
		op   storage.Op
		// deleted: the failure proves the chain unpublished.
		deleted bool
	}{
		{"ref CAS fails", storage.OpPutIfMatch, false},
		{"fragment put fails", storage.OpPut, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := storage.NewFaulty(storage.NewMem())
			st := unsettled{f}
			g := engFixtureOn(t, st)
			keys := objectKeys(t, st)
			prefix := "refs/heads/main"
			if tc.op == storage.OpPut {
				prefix = "tables/node-Person/data/"
			}
			remove := f.Inject(storage.Fault{Op: tc.op, Prefix: prefix, Nth: 1, Err: errDiskFull})
			_, err := g.Mutate(ctx, "main", engPlan(t, g, "insert_person"), map[string]any{"name": "Eve", "age": 41}, MutateOptions{})
			remove()
			if !errors.Is(err, storage.ErrNoSpace) {
				t.Fatalf("err = %v, want ErrNoSpace", err)
			}
			left := diffKeys(keys, objectKeys(t, st))
			if tc.deleted != (len(left) == 0) {
				t.Fatalf("left behind: %v (want deleted: %v)", left, tc.deleted)
			}
			u := unreachable(t, st)
			if tc.deleted != (u == integrity.Counts{}) {
				t.Fatalf("unreachable %+v", u)
			}
			// (Its table state rides in the commit: no object of its own.)
			if !tc.deleted && (u.Commits != 1 || u.States != 0 || u.Fragments != 1) {
				t.Fatalf("unreachable %+v, want the write's commit and fragment", u)
			}
			if _, err := g.Cleanup(ctx, CleanupOptions{Keep: 1, Confirm: true, Grace: -1}); err != nil {
				t.Fatal(err)
			}
			if u := unreachable(t, st); u != (integrity.Counts{}) {
				t.Fatalf("after cleanup: unreachable %+v", u)
			}
		})
	}
}

// TestGroupCommitLeftOutWriteDeletesOnlyItsOwn: in one batch, a write that
// fails after writing objects (its fragment or its state cannot be
// written) is left out and deletes what it wrote, while the writes chained
// before and after it land with every object they name: nothing of the
// published chain is deleted and nothing of the failed write stays. Behind
// the batching layer a put's failure surfaces at the chain's flush and
// fails the whole batch, which then deletes everything it wrote.
func TestGroupCommitLeftOutWriteDeletesOnlyItsOwn(t *testing.T) {
	for _, stack := range []string{"plain", "batching"} {
		for _, failing := range []string{"tables/node-Company/data/", "tables/node-Company/state/"} {
			t.Run(stack+"/"+failing, func(t *testing.T) {
				ctx := context.Background()
				f := storage.NewFaulty(storage.NewMem())
				var st storage.Store = f
				if stack == "batching" {
					st = storage.NewBatching(f)
				}
				engFixtureOn(t, st)
				// States as objects, so that one can fail.
				h := mustOpen(t, st, Options{NoAutoCompact: true, InlineStateBytes: -1})
				entered := holdFirstBatch(t, h, 3)
				type write struct{ name, query string }
				writes := []write{{"p1", "insert_person"}, {"bad", "insert_company"}, {"p2", "insert_person"}}
				errs := make([]error, len(writes))
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := h.Mutate(ctx, "main", engPlan(t, h, "insert_person"), map[string]any{"name": "P0", "age": 1}, MutateOptions{}); err != nil {
						t.Error(err)
					}
				}()
				<-entered
				remove := f.Inject(storage.Fault{Prefix: failing, Err: errDiskFull})
				for i, w := range writes {
					wg.Add(1)
					done := make(chan struct{})
					go func() {
						defer wg.Done()
						defer close(done)
						params := map[string]any{"name": w.name}
						if w.query == "insert_person" {
							params["age"] = 2
						}
						_, errs[i] = h.Mutate(ctx, "main", engPlan(t, h, w.query), params, MutateOptions{})
					}()
					waitQueuedOr(t, h, "main", i+1, done)
				}
				wg.Wait()
				remove()
				if !errors.Is(errs[1], storage.ErrNoSpace) {
					t.Fatalf("left-out write: %v, want ErrNoSpace", errs[1])
				}
				// Plain puts fail inside the failing write's staging, which is
				// left out. Behind batching they fail at the chain's flush,
				// before its CAS: the whole batch fails, and deletes all.
				persons := 5
				for _, i := range []int{0, 2} {
					switch {
					case errs[i] == nil:
						persons++
					case stack == "plain" || !errors.Is(errs[i], storage.ErrNoSpace):
						t.Fatalf("chained write %s: %v", writes[i].name, errs[i])
					}
				}
				if u := unreachable(t, st); u != (integrity.Counts{}) {
					t.Fatalf("unreachable %+v", u)
				}
				if p, c := engNodes(t, h, "Person", ""), engNodes(t, h, "Company", ""); len(p) != persons || len(c) != 2 {
					t.Fatalf("persons %v, companies %v: want %d persons", p, c, persons)
				}
			})
		}
	}
}
