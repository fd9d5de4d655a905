package commit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Environment of a re-executed test binary.
const (
	dirEnv   = "OMNIGRAPH_COMMIT_TEST_DIR"   // graph directory (local backend)
	countEnv = "OMNIGRAPH_COMMIT_TEST_COUNT" // race role: commits to publish
	tagEnv   = "OMNIGRAPH_COMMIT_TEST_TAG"   // race role: message prefix
	casFPEnv = "OMNIGRAPH_COMMIT_TEST_CASFP" // crash role: storage failpoint armed only around the ref CAS
	gateEnv  = "OMNIGRAPH_COMMIT_TEST_GATE"  // race role: barrier directory
)

// gateWait announces readiness in the barrier directory gate and waits until
// the parent opens it, so all writers start racing at once.
func gateWait(gate, tag string) error {
	if err := os.WriteFile(filepath.Join(gate, "ready-"+tag), nil, 0o644); err != nil {
		return err
	}
	for {
		if _, err := os.Stat(filepath.Join(gate, "go")); err == nil {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

// gateOpen waits for n ready writers and releases them, or gives up when
// abort closes (a writer died before reaching the gate).
func gateOpen(gate string, n int, abort <-chan struct{}) error {
	for {
		select {
		case <-abort:
			return errors.New("a writer exited before the start gate")
		default:
		}
		ents, err := os.ReadDir(gate)
		if err != nil {
			return err
		}
		if len(ents) >= n {
			return os.WriteFile(filepath.Join(gate, "go"), nil, 0o644)
		}
		time.Sleep(time.Millisecond)
	}
}

// crashMessage marks the commit a crash subprocess tries to publish.
const crashMessage = "crash-write"

// runRole runs a subprocess role and returns its exit code.
func runRole(role string) int {
	ctx := context.Background()
	st, err := storage.NewLocal(os.Getenv(dirEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var code int
	switch role {
	case "race":
		code = roleRace(ctx, st)
	case "crash":
		code = roleCrash(ctx, st)
	case "init":
		if _, _, err := Init(ctx, st, InitRequest{Schema: []byte(testSchema)}, Options{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown role", role)
		code = 2
	}
	return code
}

// roleRace publishes COUNT commits on main, rebasing on every lost CAS, and
// prints the id of each successful publish.
func roleRace(ctx context.Context, st storage.Store) int {
	n, _ := strconv.Atoi(os.Getenv(countEnv))
	r, err := Open(ctx, st, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if gate := os.Getenv(gateEnv); gate != "" {
		if err := gateWait(gate, os.Getenv(tagEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ids, _, err := publishMany(ctx, r, os.Getenv(tagEnv), n)
	for _, id := range ids {
		fmt.Println(id)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// publishMany publishes n commits on main, each rebased onto the current head
// after a lost CAS, with a generous retry bound so a bug cannot hang the test.
func publishMany(ctx context.Context, r *Repo, tag string, n int) (out []ID, lost int, err error) {
	head, err := r.Head(ctx, MainBranch)
	if err != nil {
		return nil, 0, err
	}
	for i := range n {
		for attempt := 0; ; attempt++ {
			if attempt == 10000 {
				return out, lost, fmt.Errorf("%s-%d: retry budget exhausted", tag, i)
			}
			h, c, err := r.Publish(ctx, PublishRequest{
				Branch:  MainBranch,
				Base:    head,
				Kind:    KindMutate,
				Message: fmt.Sprintf("%s-%d", tag, i),
				Tables:  map[string]string{"node:" + tag: fmt.Sprintf("tables/node:%s/state/%d.json", tag, i)},
			})
			var hm *HeadMovedError
			if errors.As(err, &hm) {
				head = hm.Actual
				lost++
				continue
			}
			if err != nil {
				return out, lost, err
			}
			out = append(out, c.ID)
			head = h
			break
		}
	}
	return out, lost, nil
}

// roleCrash writes one row and publishes it; a failpoint from the
// environment kills the process (exit 77) somewhere on the way.
func roleCrash(ctx context.Context, st storage.Store) int {
	// Faulty adds the request-level failpoints (storage/before-put, …).
	var s storage.Store = storage.NewFaulty(st)
	if fp := os.Getenv(casFPEnv); fp != "" {
		s = &armAroundCAS{Store: s, fp: fp, action: failpoint.Exit}
	}
	r, err := Open(ctx, s, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	head, err := r.Head(ctx, MainBranch)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	state, err := writeOneRow(ctx, s, "node:Person", 99)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, c, err := r.Publish(ctx, PublishRequest{Branch: MainBranch, Base: head, Kind: KindMutate,
		Message: crashMessage, Tables: map[string]string{"node:Person": state}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(c.ID)
	return 0
}

// armAroundCAS arms a storage failpoint only for the duration of the ref
// compare-and-swap, so storage-level points fire at the commit point rather
// than at the first data file.
type armAroundCAS struct {
	storage.Store
	fp     string
	action failpoint.Action
}

func (a *armAroundCAS) PutIfMatch(ctx context.Context, key string, data []byte, etag string) (storage.Info, error) {
	disable := failpoint.Enable(a.fp, a.action)
	defer disable()
	return a.Store.PutIfMatch(ctx, key, data, etag)
}

// subprocess re-executes the test binary in role with extra environment and
// returns its exit code and stdout.
func subprocess(t testing.TB, role, dir string, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{roleEnv + "=" + role, dirEnv + "=" + dir}, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %s: %v", role, err)
		}
		code = ee.ExitCode()
	}
	if code != 0 && code != failpoint.ExitCode {
		t.Logf("%s subprocess stderr: %s", role, stderr.String())
	}
	return code, string(out)
}
