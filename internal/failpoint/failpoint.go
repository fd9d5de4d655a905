// Package failpoint is a tiny registry of named fault-injection points.
//
// Code marks every durable step with
//
//	if err := failpoint.Hit("commit/before-cas"); err != nil { return err }
//
// Inactive points cost one atomic load. Tests enable a point with Enable; crash
// tests in a subprocess enable points through the OMNIGRAPH_FAILPOINTS
// environment variable, e.g. "commit/before-cas=exit,table/after-fragment=error".
//
// Names follow "<package>/<step>". This registry is the one piece of
// process-global mutable state the project allows: it is inert unless enabled.
package failpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EnvVar names the environment variable read at process start.
const EnvVar = "OMNIGRAPH_FAILPOINTS"

// ExitCode is the status a process exits with when an "exit" failpoint fires,
// so crash tests can tell an injected crash from a real failure.
const ExitCode = 77

// ErrInjected is wrapped by every error an "error" failpoint returns.
var ErrInjected = errors.New("injected failure")

// Action says what a fired failpoint does.
type Action uint8

const (
	// Error makes Hit return an error wrapping ErrInjected.
	Error Action = iota + 1
	// Panic makes Hit panic.
	Panic
	// Exit terminates the process immediately with ExitCode, without running
	// deferred functions: the closest in-process stand-in for kill -9.
	Exit
	// Sleep makes Hit sleep for 200ms, widening race windows.
	Sleep
	// Barrier makes Hit announce its arrival and wait for the test's
	// release, so processes meet at one point for certain (BarrierEnv).
	Barrier
)

// BarrierEnv names the directory a Barrier point uses: Hit creates
// "arrived-<pid>-<n>" in it, then waits until a file "go" exists there (at
// most a minute, then it returns an error wrapping ErrInjected).
const BarrierEnv = "OMNIGRAPH_FAILPOINT_BARRIER"

func parseAction(s string) (Action, error) {
	switch s {
	case "error":
		return Error, nil
	case "panic":
		return Panic, nil
	case "exit":
		return Exit, nil
	case "sleep":
		return Sleep, nil
	case "barrier":
		return Barrier, nil
	}
	return 0, fmt.Errorf("failpoint: unknown action %q (want error, panic, exit, sleep or barrier)", s)
}

var (
	active atomic.Bool
	mu     sync.Mutex
	points = map[string]Action{}
	hits   = map[string]int{}
)

func init() {
	if spec := os.Getenv(EnvVar); spec != "" {
		if err := EnableSpec(spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}

// EnableSpec enables the points of a comma-separated "name=action" list.
func EnableSpec(spec string) error {
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, act, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("failpoint: %q is not name=action", part)
		}
		a, err := parseAction(act)
		if err != nil {
			return err
		}
		Enable(name, a)
	}
	return nil
}

// Enable arms a point and returns a function that disarms it.
func Enable(name string, a Action) (disable func()) {
	mu.Lock()
	points[name] = a
	active.Store(true)
	mu.Unlock()
	return func() { Disable(name) }
}

// Disable disarms a point.
func Disable(name string) {
	mu.Lock()
	delete(points, name)
	active.Store(len(points) > 0)
	mu.Unlock()
}

// Hits reports how many times an armed point has fired (tests use it to prove
// a point is actually on the exercised path).
func Hits(name string) int {
	mu.Lock()
	defer mu.Unlock()
	return hits[name]
}

// Hit fires the named point if armed. It returns nil when the point is not armed.
func Hit(name string) error {
	if !active.Load() {
		return nil
	}
	mu.Lock()
	a, ok := points[name]
	n := 0
	if ok {
		hits[name]++
		n = hits[name]
	}
	mu.Unlock()
	if !ok {
		return nil
	}
	switch a {
	case Error:
		return fmt.Errorf("failpoint %s: %w", name, ErrInjected)
	case Panic:
		panic("failpoint " + name)
	case Exit:
		os.Exit(ExitCode)
	case Sleep:
		time.Sleep(200 * time.Millisecond)
	case Barrier:
		return barrier(name, n)
	}
	return nil
}

func barrier(name string, n int) error {
	dir := os.Getenv(BarrierEnv)
	if dir == "" {
		return fmt.Errorf("failpoint %s: barrier without %s: %w", name, BarrierEnv, ErrInjected)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("arrived-%d-%d", os.Getpid(), n)), nil, 0o644); err != nil {
		return fmt.Errorf("failpoint %s: %w: %w", name, ErrInjected, err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			return nil
		}
	}
	return fmt.Errorf("failpoint %s: barrier never released: %w", name, ErrInjected)
}
