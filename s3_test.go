package omnigraph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// testS3URI returns a fresh s3:// graph address on the server scripts/test.sh
// started (OMNIGRAPH_TEST_S3 + AWS_*), or skips.
func testS3URI(t testing.TB, name string) string {
	t.Helper()
	base := os.Getenv("OMNIGRAPH_TEST_S3")
	if base == "" {
		t.Skip("no S3 server: set OMNIGRAPH_TEST_S3 and AWS_* (scripts/test.sh starts VersityGW)")
	}
	return fmt.Sprintf("%s/root/%s-%d-%d", base, name, os.Getpid(), uriSeq.Add(1))
}

var uriSeq atomic.Int64

const costSchema = `node Person {
    name: String @key
    age: I32?
}
node Company {
    name: String @key
}
edge Knows: Person -> Person
edge WorksAt: Person -> Company
`

const costData = `{"type": "Person", "data": {"name": "Alice", "age": 30}}
{"type": "Person", "data": {"name": "Bob", "age": 25}}
{"type": "Company", "data": {"name": "Acme"}}
{"edge": "Knows", "from": "Alice", "to": "Bob"}
{"edge": "WorksAt", "from": "Alice", "to": "Acme"}
`

const costQueries = `query person($name: String) {
    match { $p: Person { name: $name } }
    return { $p.name, $p.age }
}
query add($name: String) {
    insert Person { name: $name, age: 40 }
}
`

// deepen appends depth commits to main without touching data, the fast way:
// the graph's objects are copied into memory, the commits published there,
// and the new objects copied back with concurrent puts (history depth is
// what matters, not how it was made).
func deepen(t testing.TB, st storage.Store, depth int) {
	t.Helper()
	ctx := context.Background()
	mem := storage.NewMem()
	before := map[string]bool{}
	if err := st.List(ctx, "", "", func(in storage.Info) error {
		b, _, err := st.Get(ctx, in.Key)
		if err == nil {
			_, err = mem.Put(ctx, in.Key, b)
		}
		before[in.Key] = true
		return err
	}); err != nil {
		t.Fatal(err)
	}
	repo, err := commit.Open(ctx, mem, commit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := repo.Head(ctx, commit.MainBranch)
	if err != nil {
		t.Fatal(err)
	}
	for range depth {
		if h, _, err = repo.Publish(ctx, commit.PublishRequest{Branch: commit.MainBranch, Base: h, Kind: commit.KindMaintenance}); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	if err := mem.List(ctx, "commits/", "", func(in storage.Info) error {
		if !before[in.Key] {
			keys = append(keys, in.Key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if l, ok := st.(*storage.Local); ok {
		// Test set-up only: plain files, no fsync (the objects are the same).
		for _, k := range keys {
			b, _, _ := mem.Get(ctx, k)
			p := filepath.Join(l.Root(), filepath.FromSlash(k))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		keys = nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	sem := make(chan struct{}, 64)
	for _, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			b, _, err := mem.Get(ctx, k)
			if err == nil {
				_, err = st.Put(ctx, k, b)
			}
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	ref, _, err := mem.Get(ctx, commit.RefKey(commit.MainBranch))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, commit.RefKey(commit.MainBranch), ref); err != nil {
		t.Fatal(err)
	}
}

// opCosts runs the hot operations on a warm handle and returns the
// requests each made, per kind ("get=1 put=2 ...").
func opCosts(t *testing.T, uri string, depth int, objectCache bool, backend storage.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	var cnt *storage.Counting
	opts := Options{noObjectCache: !objectCache, wrapBackend: func(s storage.Store) storage.Store {
		if backend != nil {
			s = backend
		}
		cnt = storage.NewCounting(s)
		return cnt
	}}
	g, err := Init(ctx, uri, "cost.pg", costSchema, "act", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(costData), LoadOptions{Mode: Append}); err != nil {
		t.Fatal(err)
	}
	if depth > 0 {
		deepen(t, cnt.Inner(), depth)
	}
	g, err = Open(ctx, uri, opts)
	if err != nil {
		t.Fatal(err)
	}
	costs := map[string]string{}
	measure := func(name string, fn func() error) {
		t.Helper()
		cnt.Reset()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := cnt.Snapshot()
		var parts []string
		for _, op := range storage.Ops() {
			if n := s[op].Requests; n > 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", op, n))
			}
		}
		costs[name] = strings.Join(parts, " ")
		costs[name+" (requests)"] = fmt.Sprint(s.Requests())
		costs[name+" (writes)"] = fmt.Sprint(s[storage.OpPut].Requests + s[storage.OpPutIfAbsent].Requests + s[storage.OpPutIfMatch].Requests + s[storage.OpDelete].Requests + s[storage.OpCopyIfAbsent].Requests)
	}
	query := func() error {
		res, err := g.Query(ctx, Target{}, costQueries, "person", map[string]any{"name": "Alice"})
		if err == nil && len(res.Rows) != 1 {
			err = fmt.Errorf("%d rows", len(res.Rows))
		}
		return err
	}
	measure("cold query", query)
	measure("warm query", query)
	n := 0
	insert := func() error {
		n++
		_, _, err := g.Mutate(ctx, "", costQueries, "add", map[string]any{"name": fmt.Sprintf("new-%d", n)}, MutateOptions{})
		return err
	}
	measure("first insert", insert)
	measure("insert 1 row", insert)
	measure("branch create", func() error { return g.CreateBranch(ctx, "feature", "main", "act") })
	measure("insert on branch", func() error {
		_, _, err := g.Mutate(ctx, "feature", costQueries, "add", map[string]any{"name": "on-branch"}, MutateOptions{})
		return err
	})
	measure("merge", func() error { _, err := g.Merge(ctx, "feature", "main", "act"); return err })
	measure("branch delete", func() error { return g.DeleteBranch(ctx, "feature", "act") })
	measure("query after writes", query)
	return costs
}

// TestRequestCountsS3MatchLocal pins the request cost of every hot
// operation on the S3 backend (against a real server) to exactly its cost
// on a local directory, at history depth 10 and 10,000; with the object
// cache of a real s3:// handle it is never more, and writes are the same.
// Absolute figures on a warm handle: a read resolves the head with 1
// request; with the object cache a single-row insert is the head GET, one
// batch of 2 puts (its fragment and its commit) and the CAS (4 requests,
// 3 round trips). A local directory writes a write's commit and its inline
// compaction's as one chain object where other stores write two. On a store that
// copies server-side (S3 with conditional copies; "copying" here) branch
// create is one copy beside the clash listing (2 requests, 1 round trip),
// every other operation costing what it does locally.
func TestRequestCountsS3MatchLocal(t *testing.T) {
	s3base := os.Getenv("OMNIGRAPH_TEST_S3")
	results := map[string]map[string]string{}
	for _, depth := range []int{10, 10000} {
		for _, backend := range []string{"local", "s3", "s3+cache", "copying"} {
			if backend == "s3+cache" && depth > 10 {
				continue // the cache does not interact with history depth
			}
			name := fmt.Sprintf("%s/depth=%d", backend, depth)
			t.Run(name, func(t *testing.T) {
				uri := filepath.Join(t.TempDir(), "g")
				var inner storage.Store
				switch backend {
				case "copying":
					// A store that copies server-side (as S3 with
					// conditional copies): memory, whose copy is atomic.
					inner = storage.NewMem()
				case "s3", "s3+cache":
					if s3base == "" {
						t.Skip("no S3 server")
					}
					uri = testS3URI(t, fmt.Sprintf("cost-%d", depth))
				}
				results[name] = opCosts(t, uri, depth, backend == "s3+cache", inner)
				for _, op := range slices.Sorted(maps.Keys(results[name])) {
					if !strings.HasSuffix(op, ")") {
						t.Logf("%-20s %-60s (%s requests)", op, results[name][op], results[name][op+" (requests)"])
					}
				}
			})
		}
	}
	ref := results["local/depth=10"]
	if ref == nil {
		t.Fatal("no local figures")
	}
	for _, want := range []struct{ op, cost string }{
		{"branch create", "get=1 put_if_absent=1 list=1"},
		{"branch delete", "stat=1 delete=1"},
	} {
		if got := ref[want.op]; got != want.cost {
			t.Errorf("local %s: %q, want %q", want.op, got, want.cost)
		}
	}
	// A warm read resolves the head with one GET (the rest are ranged reads
	// of indexes, which a local handle does not cache).
	if got := ref["warm query"]; !strings.HasPrefix(got, "get=1 ") && got != "get=1" {
		t.Errorf("local warm query: %q, want one GET (the ref)", got)
	}
	// The table state rides in the commit (commit format 2), the fragment's
	// index in the state (table-state format 5).
	if got := ref["insert 1 row (writes)"]; got != "3" {
		t.Errorf("local insert 1 row: %s writes, want 3 (fragment, commit, CAS)", got)
	}
	// localWrites is the writes a store without chain objects makes where
	// the local directory made ref's: a chain object (one put_shared) of a
	// write and its inline compaction is their two commit objects there.
	localWrites := func(op string) string {
		w := ref[op]
		if strings.Contains(ref[strings.TrimSuffix(op, " (writes)")], "put_shared=1") {
			w = fmt.Sprint(atoi(w) + 2)
		}
		return w
	}
	// Likewise for requests: one put_shared there, two puts elsewhere.
	localRequests := func(op string) string {
		r := ref[op]
		if strings.Contains(ref[strings.TrimSuffix(op, " (requests)")], "put_shared=1") {
			r = fmt.Sprint(atoi(r) + 1)
		}
		return r
	}
	for _, name := range slices.Sorted(maps.Keys(results)) {
		cached := strings.HasPrefix(name, "s3+cache")
		for op, cost := range results[name] {
			switch {
			case !cached && strings.HasSuffix(op, "(writes)") && !strings.HasPrefix(name, "local/") && localWrites(op) != cost:
				t.Errorf("%s %s: %s writes, local %s (+2 for a chain object)", name, op, cost, ref[op])
			case !cached && strings.HasSuffix(op, "(writes)") && strings.HasPrefix(name, "local/") && ref[op] != cost:
				t.Errorf("%s %s: %s writes, local %s", name, op, cost, ref[op])
			case !cached && strings.HasSuffix(op, "(requests)") && atoi(cost) > atoi(localRequests(op)):
				// Fewer is allowed: a batching store serves reads of a
				// write's own objects from its batch, and concurrent
				// ranged reads of one object may share one request.
				t.Errorf("%s %s costs %s requests, more than local/depth=10's %s", name, op, cost, ref[op])
			case !cached && !strings.HasSuffix(op, ")") && ref[op] != cost:
				t.Logf("%s %s costs %q, local/depth=10 %q", name, op, cost, ref[op])
			case cached && strings.HasSuffix(op, "(writes)") && localWrites(op) != cost:
				t.Errorf("%s %s: %s writes, local %s (+2 for a chain object)", name, op, cost, ref[op])
			case cached && strings.HasSuffix(op, "(requests)") && atoi(cost) > atoi(localRequests(op)):
				t.Errorf("%s %s: %s requests, more than local's %s", name, op, cost, ref[op])
			}
		}
	}
	// On a store that copies server-side, branch create is one copy of the
	// source's ref beside the clash listing, at every depth.
	for _, depth := range []int{10, 10000} {
		if got := results[fmt.Sprintf("copying/depth=%d", depth)]["branch create"]; got != "list=1 copy_if_absent=1" {
			t.Errorf("copying/depth=%d branch create: %q, want one copy and the listing", depth, got)
		}
	}
	if c := results["s3+cache/depth=10"]; c != nil {
		for _, want := range []struct{ op, cost string }{
			{"warm query", "get=1"},
			// The head GET, one batch of two puts (fragment and commit:
			// the index rides in the state, the state in the commit), the
			// CAS.
			{"insert 1 row", "get=1 put=2 put_if_match=1"},
			{"branch create", "get=1 put_if_absent=1 list=1"},
		} {
			if got := c[want.op]; got != want.cost {
				t.Errorf("s3+cache %s: %q, want %q", want.op, got, want.cost)
			}
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestS3FormatStampAndInit: on S3 as locally, Open refuses a graph of
// another format version without writing, and Init refuses a prefix that
// holds a graph.
func TestS3FormatStampAndInit(t *testing.T) {
	uri := testS3URI(t, "stamp")
	ctx := context.Background()
	var cnt *storage.Counting
	opts := Options{wrapBackend: func(s storage.Store) storage.Store { cnt = storage.NewCounting(s); return cnt }}
	if _, err := Init(ctx, uri, "cost.pg", costSchema, "act", opts); err != nil {
		t.Fatal(err)
	}
	if _, err := Init(ctx, uri, "cost.pg", costSchema, "act", opts); !errors.Is(err, ErrAlreadyInitialized) {
		t.Fatalf("second Init: %v, want ErrAlreadyInitialized", err)
	}
	future := []byte(`{"format":"omnigraph","version":99,"created_at":1}` + "\n")
	if _, err := cnt.Inner().Put(ctx, commit.StampKey, future); err != nil {
		t.Fatal(err)
	}
	cnt.Reset()
	_, err := Open(ctx, uri, opts)
	var fe *commit.FormatError
	if !errors.As(err, &fe) || fe.Found != 99 {
		t.Fatalf("Open of a version-99 graph: %v, want *FormatError", err)
	}
	s := cnt.Snapshot()
	if w := s[storage.OpPut].Requests + s[storage.OpPutIfAbsent].Requests + s[storage.OpPutIfMatch].Requests + s[storage.OpDelete].Requests; w != 0 {
		t.Fatalf("refused Open wrote %d objects", w)
	}
}
