package commit

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// crashPoint is one place a publish can stop, and what the head must be after.
type crashPoint struct {
	name  string // failpoint
	atCAS bool   // storage point armed only around the ref CAS
	// landed: the ref names the new commit afterwards.
	landed bool
	// orphan: a commit object was written that no ref reaches.
	orphan bool
	// inProcessOK: with the error action Publish still reports success
	// (the CAS landed and Publish confirmed it by re-reading the ref).
	inProcessOK bool
}

var crashPoints = []crashPoint{
	{name: FPBeforeCommitObject},
	{name: FPAfterCommitObject, orphan: true},
	{name: FPBeforeCAS, orphan: true},
	{name: FPAfterCAS, landed: true},
	// Request-level points of storage.Faulty: the first plain put is the data
	// fragment; the only conditional put is the ref CAS.
	{name: "storage/before-put"},
	{name: "storage/after-put"},
	{name: "storage/before-put_if_match", orphan: true},
	{name: "storage/after-put_if_match", landed: true, inProcessOK: true},
	// The local backend's own points fire at its first publish (the fragment)...
	{name: "storage/before-publish"},
	{name: "storage/after-publish"},
	// ... and, armed around the ref CAS only, between its ETag compare and its
	// rename, and between the rename and the directory fsync.
	{name: "storage/before-publish", atCAS: true, orphan: true},
	{name: "storage/after-publish", atCAS: true, landed: true, inProcessOK: true},
}

func (p crashPoint) String() string {
	if p.atCAS {
		return p.name + "@cas"
	}
	return p.name
}

// TestCrashInProcess fires each publish-path failpoint with the error action,
// then reopens: the head is exactly the old or the new commit, never a mix;
// leftovers are unreferenced and unread; the next publish succeeds.
func TestCrashInProcess(t *testing.T) {
	ctx := context.Background()
	for _, p := range crashPoints {
		t.Run(p.String(), func(t *testing.T) {
			st := localStore(t, t.TempDir())
			w, h0 := initGraph(t, st)
			old, _ := publishPerson(t, w, h0, 1)
			var s storage.Store = storage.NewFaulty(st)
			if p.atCAS {
				s = &armAroundCAS{Store: s, fp: p.name, action: failpoint.Error}
			}
			r := openRepo(t, s)
			var disable func()
			if !p.atCAS {
				disable = failpoint.Enable(p.name, failpoint.Error)
			}
			state, err := writeOneRow(ctx, s, "node:Person", 2)
			if err == nil {
				_, _, err = r.Publish(ctx, PublishRequest{Branch: MainBranch, Base: old, Kind: KindMutate,
					Message: crashMessage, Tables: map[string]string{"node:Person": state}})
			}
			if disable != nil {
				disable()
			}
			if p.inProcessOK {
				if err != nil {
					t.Fatalf("publish whose CAS landed reported %v", err)
				}
			} else if !errors.Is(err, failpoint.ErrInjected) {
				t.Fatalf("publish err = %v, want injected failure", err)
			}
			checkAfterCrash(t, st, old, p)
		})
	}
}

// TestCrashSubprocess kills a writer process (exit action, no deferred code
// runs) at each publish-path failpoint, then checks the graph as above.
func TestCrashSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	type run struct {
		p    crashPoint
		st   storage.Store
		old  Head
		code int
	}
	runs := make([]*run, len(crashPoints))
	var wg sync.WaitGroup
	for i, p := range crashPoints {
		dir := t.TempDir()
		st := localStore(t, dir)
		w, h0 := initGraph(t, st)
		old, _ := publishPerson(t, w, h0, 1)
		runs[i] = &run{p: p, st: st, old: old}
		// The writers run in parallel; the checks run one by one below.
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := failpoint.EnvVar + "=" + p.name + "=exit"
			if p.atCAS {
				env = casFPEnv + "=" + p.name
			}
			runs[i].code, _ = subprocess(t, "crash", dir, env)
		}()
	}
	wg.Wait()
	for _, rn := range runs {
		t.Run(rn.p.String(), func(t *testing.T) {
			if rn.code != failpoint.ExitCode {
				t.Fatalf("writer exited %d, want %d (failpoint not on the path?)", rn.code, failpoint.ExitCode)
			}
			checkAfterCrash(t, rn.st, rn.old, rn.p)
		})
	}
}

// checkAfterCrash reopens st and checks the outcome of an interrupted publish
// on top of old.
func checkAfterCrash(t *testing.T, st storage.Store, old Head, p crashPoint) {
	t.Helper()
	ctx := context.Background()
	rec := &recordingStore{Store: st}
	r, err := Open(ctx, rec, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	rec.reset()
	head, c, err := r.Resolve(ctx, MainBranch)
	if err != nil {
		t.Fatalf("resolve after crash: %v", err)
	}
	// Head resolution reads the ref and the head commit, nothing else: a
	// leftover object can never be picked up. (The two reads go out side
	// by side — the commit the ref named at open is fetched while the ref
	// is read — so their order is not fixed.)
	got, want := rec.keys(), []string{RefKey(MainBranch), CommitKey(head.Commit)}
	slices.Sort(got)
	slices.Sort(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("resolve read %v, want %v", got, want)
	}
	switch {
	case p.landed:
		if c.Parents[0] != old.Commit || c.Message != crashMessage || head.Seq != old.Seq+1 {
			t.Fatalf("head %s (parents %v, %q) is not the new commit on %s", c.ID, c.Parents, c.Message, old.Commit)
		}
	default:
		if head != old {
			t.Fatalf("head %+v, want the old head %+v", head, old)
		}
	}

	// Leftovers: commit objects no ref reaches.
	reachable := map[ID]bool{}
	branches, err := r.Branches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range branches {
		for _, c := range branchLog(t, r, b) {
			reachable[c.ID] = true
		}
	}
	var orphans []string
	if err := st.List(ctx, commitPrefix, "", func(info storage.Info) error {
		if storage.IsTemp(info.Key[strings.LastIndex(info.Key, "/")+1:]) {
			return nil
		}
		id, err := ParseID(strings.TrimSuffix(strings.TrimPrefix(info.Key, commitPrefix), ".json"))
		if err != nil {
			return err
		}
		if !reachable[id] {
			orphans = append(orphans, info.Key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{true: 1, false: 0}[p.orphan]; len(orphans) != want {
		t.Fatalf("unreferenced commits %v, want %d", orphans, want)
	}

	// The graph is not wedged: the next write publishes normally.
	if _, _, err := publishOne(ctx, r, head, "node:Person", 3); err != nil {
		t.Fatalf("publish after crash: %v", err)
	}
	linearChain(t, r, MainBranch)
}

// recordingStore records the keys read by Get.
type recordingStore struct {
	storage.Store
	mu  sync.Mutex
	got []string
}

func (s *recordingStore) Get(ctx context.Context, key string) ([]byte, storage.Info, error) {
	s.mu.Lock()
	s.got = append(s.got, key)
	s.mu.Unlock()
	return s.Store.Get(ctx, key)
}

func (s *recordingStore) reset() {
	s.mu.Lock()
	s.got = nil
	s.mu.Unlock()
}

func (s *recordingStore) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}
