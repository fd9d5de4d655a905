package storage_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const envSerial = "OMNIGRAPH_STORAGE_SERIAL_DIR"

// TestSerialHelper is not a test: it is the child of TestLocalSerialize,
// holding the turn until its stdin closes.
func TestSerialHelper(t *testing.T) {
	dir := os.Getenv(envSerial)
	if dir == "" {
		t.Skip("helper process of TestLocalSerialize")
	}
	l, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	release, err := l.Serialize(context.Background(), "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	release()
	os.Exit(0)
}

// TestLocalSerialize: processes take turns on a name; inside one process a
// second holder does not wait (a no-op turn), so no holder waits for itself;
// a wait ends with its context; a dead holder's turn is released.
func TestLocalSerialize(t *testing.T) {
	dir := t.TempDir()
	l, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := storage.SerializerOf(storage.NewBatching(storage.NewCounting(l)))
	if !ok {
		t.Fatal("SerializerOf does not find Local under its wrappers")
	}
	ctx := context.Background()
	r1, err := s.Serialize(ctx, "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := s.Serialize(ctx, "refs/heads/main") // same process: no wait
	if err != nil {
		t.Fatal(err)
	}
	r2()
	r1()

	cmd, stdin := startTurnHolder(t, dir)
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = s.Serialize(tctx, "refs/heads/main")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("turn held by another process: %v, want a wait ended by the context", err)
	}
	if r, err := s.Serialize(ctx, "refs/heads/other"); err != nil { // another name is free
		t.Fatal(err)
	} else {
		r()
	}
	// The holder dies without releasing: the kernel drops its flock.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	stdin.Close()
	// The wait cancelled above was still queued in the kernel: it is
	// granted now and must let go at once, or this wait never ends (the
	// bound only turns a hang into a failure).
	bctx, bcancel := context.WithTimeout(ctx, 30*time.Second)
	defer bcancel()
	r3, err := s.Serialize(bctx, "refs/heads/main")
	if err != nil {
		t.Fatalf("after the holder left: %v (a cancelled wait kept the turn?)", err)
	}
	r3()
}

// startTurnHolder starts a TestSerialHelper holding the turn on
// refs/heads/main of the store at dir, and returns once it holds it; it
// lets go when stdin is closed.
func startTurnHolder(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestSerialHelper$")
	cmd.Env = append(os.Environ(), envSerial+"="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("helper: %q %v", line, err)
	}
	return cmd, stdin
}
