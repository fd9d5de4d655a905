package storage_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

// The helper process protocol: the parent re-executes this test binary with
// -test.run=^TestHelperProcess$ and these variables; the child waits for its
// stdin to close (a start barrier for all children), works, and prints one
// result line per goroutine on stdout.
const (
	envMode    = "OMNIGRAPH_STORAGE_HELPER" // "cas", "absent" or "put-once"
	envDir     = "OMNIGRAPH_STORAGE_DIR"
	envID      = "OMNIGRAPH_STORAGE_ID"
	envN       = "OMNIGRAPH_STORAGE_N"
	procs      = 4 // OS processes
	procGorout = 4 // goroutines per process
)

// TestHelperProcess is not a test: it is the body of the child processes.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envMode)
	if mode == "" {
		t.Skip("helper process for the multi-process tests")
	}
	io.Copy(io.Discard, os.Stdin) // barrier: wait for the parent to release all children
	if err := helperMain(t, mode); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func helperMain(t *testing.T, mode string) error {
	ctx := t.Context()
	l, err := storage.NewLocal(os.Getenv(envDir))
	if err != nil {
		return err
	}
	id := os.Getenv(envID)
	n, _ := strconv.Atoi(os.Getenv(envN))
	if mode == "put-shared-once" {
		return l.PutShared(ctx, sharedKeys, []byte(id))
	}
	if mode == "put-once" {
		_, err := l.PutIfAbsent(ctx, "refs/crash", []byte(id))
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := range procGorout {
		racer := fmt.Sprintf("%s.%d", id, g)
		wg.Go(func() {
			var line string
			var err error
			switch mode {
			case "cas":
				var rounds []int
				rounds, err = storagetest.CASWorker(ctx, l, "refs/heads/main", racer, n)
				line = racer + " " + joinInts(rounds)
			case "absent":
				var won []int
				for r := range n {
					ok, e := storagetest.RacePutIfAbsent(ctx, l, fmt.Sprintf("race/%04d", r), racer)
					if e != nil {
						err = e
						break
					}
					if ok {
						won = append(won, r)
					}
				}
				line = racer + " " + joinInts(won)
			}
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
			fmt.Println(line)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func parseResult(line string) (string, []int, error) {
	id, list, ok := strings.Cut(line, " ")
	list = strings.Trim(list, "[]")
	if !ok {
		return "", nil, fmt.Errorf("bad helper line %q", line)
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f == "" {
			continue
		}
		x, err := strconv.Atoi(f)
		if err != nil {
			return "", nil, fmt.Errorf("bad helper line %q", line)
		}
		out = append(out, x)
	}
	return id, out, nil
}

// runHelpers starts procs children in mode on dir, releases them together, and
// returns each goroutine's result (id -> ints).
func runHelpers(t *testing.T, mode, dir string, n int) map[string][]int {
	t.Helper()
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   bytes.Buffer
		err   bytes.Buffer
	}
	children := make([]*child, procs)
	for p := range procs {
		c := &child{cmd: exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$")}
		c.cmd.Env = append(os.Environ(), envMode+"="+mode, envDir+"="+dir, envID+"="+fmt.Sprintf("p%d", p), envN+"="+strconv.Itoa(n))
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.err
		var err error
		if c.stdin, err = c.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[p] = c
	}
	for _, c := range children {
		c.stdin.Close() // start barrier
	}
	results := make(map[string][]int)
	for p, c := range children {
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("helper p%d: %v\nstderr:\n%s", p, err, c.err.String())
		}
		sc := bufio.NewScanner(&c.out)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "p") || !strings.Contains(line, " [") {
				continue // test framework chatter
			}
			id, xs, err := parseResult(line)
			if err != nil {
				t.Fatal(err)
			}
			results[id] = xs
		}
	}
	if len(results) != procs*procGorout {
		t.Fatalf("got %d helper results, want %d", len(results), procs*procGorout)
	}
	return results
}

// TestCASChainProcesses: 4 processes × 4 goroutines advance one ref on one
// directory by Get + PutIfMatch. Every round has exactly one winner and the
// final chain holds every successful write once, in order.
func TestCASChainProcesses(t *testing.T) {
	const perRacer = 10
	l := newLocal(t)
	if _, err := l.PutIfAbsent(t.Context(), "refs/heads/main", nil); err != nil {
		t.Fatal(err)
	}
	won := runHelpers(t, "cas", l.Root(), perRacer)
	data, _, err := l.Get(t.Context(), "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	if err := storagetest.CheckChain(storagetest.ParseChain(data), won, perRacer); err != nil {
		t.Fatal(err)
	}
}

// TestPutIfAbsentProcesses: 4 processes × 4 goroutines each try to create the
// same keys; every key has exactly one winner, whose body it holds.
func TestPutIfAbsentProcesses(t *testing.T) {
	const rounds = 100
	l := newLocal(t)
	won := runHelpers(t, "absent", l.Root(), rounds)
	winner := make(map[int]string)
	for id, rs := range won {
		for _, r := range rs {
			if prev, dup := winner[r]; dup {
				t.Fatalf("round %d won by both %s and %s", r, prev, id)
			}
			winner[r] = id
		}
	}
	for r := range rounds {
		b, _, err := l.Get(t.Context(), fmt.Sprintf("race/%04d", r))
		if err != nil {
			t.Fatal(err)
		}
		if winner[r] == "" || string(b) != winner[r] {
			t.Fatalf("round %d: object %q, reported winner %q", r, b, winner[r])
		}
	}
}

// crashHelper runs one helper process in mode on l's directory with the
// failpoint at point set to exit, and checks that it died there.
func crashHelper(t *testing.T, l *storage.Local, mode, point string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envDir+"="+l.Root(), envID+"=crasher",
		failpoint.EnvVar+"="+point+"=exit")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != failpoint.ExitCode {
		t.Fatalf("helper: %v, want exit %d\n%s", err, failpoint.ExitCode, out)
	}
}

// TestCrashAtPublish kills a writer process (failpoint exit, the stand-in for
// kill -9) right before and right after it publishes. Before: nothing is
// visible, only a temp file remains, which List hides, IsTemp recognises, and
// which blocks nothing. After: the object is there.
func TestCrashAtPublish(t *testing.T) {
	for _, tc := range []struct {
		point       string
		wantVisible bool
		wantTemp    bool
	}{
		{"storage/before-publish", false, true},
		{"storage/after-publish", true, true},
	} {
		t.Run(tc.point, func(t *testing.T) {
			ctx := t.Context()
			l := newLocal(t)
			crashHelper(t, l, "put-once", tc.point)
			_, err := l.Stat(ctx, "refs/crash")
			if visible := err == nil; visible != tc.wantVisible {
				t.Fatalf("visible = %v, want %v (err %v)", visible, tc.wantVisible, err)
			}
			var temps []string
			for _, f := range files(t, l.Root()) {
				if storage.IsTemp(filepath.Base(f)) {
					temps = append(temps, f)
				}
			}
			if (len(temps) > 0) != tc.wantTemp {
				t.Fatalf("temp files %q, want some: %v", temps, tc.wantTemp)
			}
			var listed []string
			l.List(ctx, "", "", func(i storage.Info) error { listed = append(listed, i.Key); return nil })
			if tc.wantVisible != (len(listed) == 1) || (len(listed) > 1) {
				t.Fatalf("List = %q", listed)
			}
			// The store keeps working: the next writer wins (or loses) cleanly.
			_, err = l.PutIfAbsent(ctx, "refs/crash", []byte("next"))
			if tc.wantVisible != errors.Is(err, storage.ErrExists) || (!tc.wantVisible && err != nil) {
				t.Fatalf("PutIfAbsent after crash: %v", err)
			}
		})
	}
}
