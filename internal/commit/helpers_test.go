package commit

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestMain(m *testing.M) {
	// Subprocess roles (crash and race tests re-exec this binary) run instead
	// of the test suite.
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	goleak.VerifyTestMain(m)
}

// roleEnv marks a re-executed test binary with the job it must do.
const roleEnv = "OMNIGRAPH_COMMIT_TEST_ROLE"

const testSchema = "node Person { name: String @key }\n"

// fixedClock returns a clock that advances 1 ms per call, so commit times are
// distinct and deterministic.
func fixedClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// initGraph initializes a graph with two tables on st.
// backendStore is an empty store of the named backend: "local" (a
// temporary directory) or "mem".
func backendStore(t testing.TB, backend string) storage.Store {
	if backend != "local" {
		return storage.NewMem()
	}
	return localStore(t, t.TempDir())
}

// localStore is the local store in dir.
func localStore(t testing.TB, dir string) *storage.Local {
	t.Helper()
	st, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func initGraph(t testing.TB, st storage.Store) (*Repo, Head) {
	t.Helper()
	ctx := context.Background()
	r, h, err := Init(ctx, st, InitRequest{
		Schema:  []byte(testSchema),
		Tables:  map[string]string{"node:Person": "tables/node:Person/state/empty.json", "node:Company": "tables/node:Company/state/empty.json"},
		Message: "init",
	}, Options{Now: fixedClock()})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() {
		// The history layer must be consistent after every test.
		chk, err := Open(ctx, st, Options{})
		if err != nil {
			t.Errorf("check: open: %v", err)
			return
		}
		if _, err := chk.Check(ctx); err != nil {
			t.Errorf("check: %v", err)
		}
	})
	return r, h
}

// deepen publishes depth commits on main after h, directly (commits only,
// no data objects), and returns the new head.
func deepen(t testing.TB, w *Repo, h Head, depth int) Head {
	t.Helper()
	var err error
	for i := range depth {
		if h, _, err = w.Publish(context.Background(), PublishRequest{Branch: MainBranch, Base: h, Kind: KindMutate,
			Tables: map[string]string{"node:Person": fmt.Sprintf("tables/node:Person/state/%d.json", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// writeOneRow simulates the table layer's work for a 1-row change: one
// fragment and one table state, both under fresh names, via plain Puts. It
// returns the new state key.
func writeOneRow(ctx context.Context, st storage.Store, table string, n int) (string, error) {
	frag := fmt.Sprintf("tables/%s/data/%s-%d.parquet", table, newID(time.Now()), n)
	if _, err := st.Put(ctx, frag, []byte("fragment bytes")); err != nil {
		return "", err
	}
	state := fmt.Sprintf("tables/%s/state/%s-%d.json", table, newID(time.Now()), n)
	if _, err := st.Put(ctx, state, []byte(`{"fragments":["`+frag+`"]}`)); err != nil {
		return "", err
	}
	return state, nil
}

// publishOne writes a 1-row change to table and publishes it on base.
func publishOne(ctx context.Context, r *Repo, base Head, table string, n int) (Head, *Commit, error) {
	state, err := writeOneRow(ctx, r.store, table, n)
	if err != nil {
		return Head{}, nil, err
	}
	return r.Publish(ctx, PublishRequest{
		Branch:  base.Branch,
		Base:    base,
		Tables:  map[string]string{table: state},
		Kind:    KindMutate,
		Message: fmt.Sprintf("write %d", n),
	})
}

// publishPerson is publishOne of row n of node:Person on base, failing
// the test on an error.
func publishPerson(t testing.TB, r *Repo, base Head, n int) (Head, *Commit) {
	t.Helper()
	h, c, err := publishOne(context.Background(), r, base, "node:Person", n)
	if err != nil {
		t.Fatal(err)
	}
	return h, c
}

// historyGraph initialises a graph in st and publishes n writes on main
// (publishOne with rows 0 … n-1); it returns the repo and main's head.
func historyGraph(t testing.TB, st storage.Store, n int) (*Repo, Head) {
	t.Helper()
	r, h := initGraph(t, st)
	for i := range n {
		h, _ = publishPerson(t, r, h, i)
	}
	return r, h
}

// oneWrite initialises a graph in st and publishes one write on main
// (publishOne); it returns the repo, the new head and its commit.
func oneWrite(t testing.TB, st storage.Store) (*Repo, Head, *Commit) {
	t.Helper()
	r, h := initGraph(t, st)
	h, c := publishPerson(t, r, h, 1)
	return r, h, c
}

// branchLog returns the log from the head of branch, newest first.
func branchLog(t testing.TB, r *Repo, branch string) []*Commit {
	t.Helper()
	ctx := context.Background()
	h, err := r.Head(ctx, branch)
	if err != nil {
		t.Fatal(err)
	}
	log, err := r.Log(ctx, h.Commit, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// linearChain returns the first-parent chain from the head of branch,
// newest first, checking every commit has exactly one parent except genesis.
func linearChain(t testing.TB, r *Repo, branch string) []*Commit {
	t.Helper()
	log := branchLog(t, r, branch)
	for i, c := range log {
		last := i == len(log)-1
		if last && len(c.Parents) != 0 || !last && (len(c.Parents) != 1 || c.Parents[0] != log[i+1].ID) {
			t.Fatalf("history not linear at %d (%s): parents %v", i, c.ID, c.Parents)
		}
		if c.Height != uint64(len(log)-1-i) {
			t.Fatalf("commit %s height %d, want %d", c.ID, c.Height, len(log)-1-i)
		}
	}
	return log
}

// writes counts mutating requests in a counts delta.
func writes(c storage.Counts) int64 {
	return c[storage.OpPut].Requests + c[storage.OpPutIfAbsent].Requests +
		c[storage.OpPutIfMatch].Requests + c[storage.OpDelete].Requests
}

// goldenRoundTrip pins c's encoding to golden byte for byte, decodes it
// back and checks the decoded commit re-encodes to the same bytes; it
// returns the decoded commit for the caller's own checks.
func goldenRoundTrip(t *testing.T, c *Commit, golden string) *Commit {
	t.Helper()
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != golden {
		t.Fatalf("encoding changed:\n got %s\nwant %s", b, golden)
	}
	d, err := Decode(CommitKey(c.ID), b)
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := Encode(d); string(b2) != golden {
		t.Fatalf("round trip changed bytes: %s", b2)
	}
	return d
}

// openRepo opens the graph in st with default options, failing the test
// on an error.
func openRepo(t testing.TB, st storage.Store) *Repo {
	t.Helper()
	r, err := Open(context.Background(), st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
