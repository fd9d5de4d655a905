package storage_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const envHotWriter = "OMNIGRAPH_HOT_WRITER_DIR"

// TestHotWriterProcess is not a test: it is the writer process of
// TestGetHotSeesOtherProcessWrites. Each stdin line "put N" or "del" is
// done on refs/heads/main, then acknowledged with "ok".
func TestHotWriterProcess(t *testing.T) {
	dir := os.Getenv(envHotWriter)
	if dir == "" {
		t.Skip("helper process for TestGetHotSeesOtherProcessWrites")
	}
	l, err := storage.NewLocal(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd := in.Text()
		if n, ok := strings.CutPrefix(cmd, "put "); ok {
			_, err = l.Put(t.Context(), "refs/heads/main", []byte("v"+n))
		} else {
			err = l.Delete(t.Context(), "refs/heads/main")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println("ok")
	}
	os.Exit(0)
}

// TestGetHotSeesOtherProcessWrites: a GetHot started after another
// process's put returned sees that put, however quickly puts of the same
// size follow each other (the inode of a replaced file may be reused by
// the next put, and timestamps are coarse: only the open file GetHot keeps
// makes the inode comparison exact), and a delete, also through Batching.
func TestGetHotSeesOtherProcessWrites(t *testing.T) {
	dir := t.TempDir()
	l, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestHotWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHotWriter+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer: %v", err)
		}
	}()
	acks := bufio.NewScanner(stdout)
	do := func(c string) {
		t.Helper()
		if _, err := io.WriteString(stdin, c+"\n"); err != nil {
			t.Fatal(err)
		}
		if !acks.Scan() || acks.Text() != "ok" {
			t.Fatalf("writer did not acknowledge %q: %v", c, acks.Err())
		}
	}
	ctx := t.Context()
	for round := range 300 {
		do(fmt.Sprintf("put %06d", round))
		// The second read answers from the kept file; the public API reads
		// a local directory through Batching, which forwards GetHot.
		for _, hs := range []storage.HotGetter{l, storage.NewBatching(l)} {
			got, info, err := hs.GetHot(ctx, "refs/heads/main")
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("v%06d", round)
			if string(got) != want {
				t.Fatalf("round %d: GetHot %q after the put of %q was acknowledged", round, got, want)
			}
			_, ginfo, err := l.Get(ctx, "refs/heads/main")
			if err != nil || ginfo != info {
				t.Fatalf("round %d: GetHot info %+v, Get %+v (%v)", round, info, ginfo, err)
			}
			got[0] = 'x' // the caller's copy
		}
		if round%50 == 49 {
			do("del")
			if _, _, err := l.GetHot(ctx, "refs/heads/main"); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("round %d: GetHot after a delete: %v", round, err)
			}
		}
	}
}
