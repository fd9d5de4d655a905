// Package boottest runs omnigraph-server as a subprocess, for the tests
// that drive the built binaries (cmd/omnigraph-server, internal/boot):
// Start waits for the one line the server prints on standard output,
// OMNIGRAPH_LISTEN_ADDR=host:port, and reports any later stdout line as a
// test error; Stop ends the server with SIGTERM and wants a clean exit.
package boottest

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// announceTimeout bounds the wait for the listen line (a cold cluster
// boot opens every graph first).
const announceTimeout = 60 * time.Second

// exitTimeout bounds the wait for an exit after SIGTERM or a drain.
const exitTimeout = 30 * time.Second

// Server is a running omnigraph-server process.
type Server struct {
	// URL is the server's base URL, http://host:port.
	URL string

	cmd    *exec.Cmd
	stderr lockedBuilder
	done   chan struct{} // closed once the process has exited
	err    error         // the exit status; set before done is closed
}

// Start runs bin with args, env added to the test process's environment,
// and waits for its listen line; a server that cannot start or does not
// announce itself fails t. A server still running when t ends is killed.
func Start(t testing.TB, bin string, env []string, args ...string) *Server {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		for sc.Scan() {
			t.Errorf("extra stdout line from the server: %q", sc.Text())
		}
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case l := <-first:
		addr, ok := strings.CutPrefix(l, "OMNIGRAPH_LISTEN_ADDR=")
		if !ok {
			t.Fatalf("first stdout line %q; stderr:\n%s", l, s.Stderr())
		}
		s.URL = "http://" + addr
	case <-time.After(announceTimeout):
		t.Fatalf("server did not announce its address; stderr:\n%s", s.Stderr())
	}
	return s
}

// Stderr is what the server has written to standard error so far.
func (s *Server) Stderr() string { return s.stderr.String() }

// Signal sends sig to the server.
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Stop sends SIGTERM and waits for the exit; an unclean exit is a test
// error.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.WaitExit(t, t.Errorf, "SIGTERM")
}

// WaitExit waits for the server to end after the named signal or drain:
// an unclean exit is reported through report (t.Errorf or t.Fatalf), no
// exit within 30 s fails t.
func (s *Server) WaitExit(t testing.TB, report func(format string, args ...any), after string) {
	t.Helper()
	select {
	case <-s.done:
		if s.err != nil {
			report("server exit after %s: %v; stderr:\n%s", after, s.err, s.Stderr())
		}
	case <-time.After(exitTimeout):
		t.Fatal("no exit after " + after)
	}
}

// lockedBuilder is a strings.Builder the process's stderr copier writes
// while the test reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedBuilder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuilder) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
