package storage_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

const envHotWriter = "OMNIGRAPH_HOT_WRITER_DIR"

// TestHotWriterProcess is not a test: it is the writer process of
// TestGetHotSeesOtherProcessWrites. Each stdin line "put N" or "del" is
// done on refs/heads/main, and "redir N" replaces its directory with a
// new one holding "vN"; each is then acknowledged with "ok".
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
		} else if n, ok := strings.CutPrefix(cmd, "redir "); ok {
			// What no Local does but a user may: the ref's directory
			// removed and made again (rm -r, restore from a copy).
			if err = os.RemoveAll(filepath.Join(dir, "refs", "heads")); err == nil {
				_, err = l.Put(t.Context(), "refs/heads/main", []byte("v"+n))
			}
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
// makes the inode comparison exact), a delete, and the ref's directory
// replaced by a new one (GetHot stats the name inside the directory it
// holds open: a removed directory must not keep answering), also through
// Batching.
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
		if round%50 == 25 {
			do(fmt.Sprintf("redir %06d", round))
		} else {
			do(fmt.Sprintf("put %06d", round))
		}
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

// TestGetHotSharedSameSlice: GetHotShared returns the same slice while
// the key names the same file (what lets commit.Repo skip comparing the
// bytes of an unchanged ref), and another after a put, which the stat of
// the held directory sees; GetHot's copy is the caller's.
func TestGetHotSharedSameSlice(t *testing.T) {
	l, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, key := range []string{"refs/heads/main", "refs/heads/team/x"} {
		if _, err := l.Put(ctx, key, []byte("one")); err != nil {
			t.Fatal(err)
		}
		a, _, err := l.GetHotShared(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := l.GetHotShared(ctx, key)
		if err != nil || &a[0] != &b[0] || string(b) != "one" {
			t.Fatalf("%s: second read %q (%v), same slice %v", key, b, err, &a[0] == &b[0])
		}
		c, _, err := l.GetHot(ctx, key)
		if err != nil || &c[0] == &a[0] || string(c) != "one" {
			t.Fatalf("%s: GetHot %q (%v) shares the kept slice: %v", key, c, err, &c[0] == &a[0])
		}
		if _, err := l.Put(ctx, key, []byte("two")); err != nil {
			t.Fatal(err)
		}
		d, _, err := l.GetHotShared(ctx, key)
		if err != nil || string(d) != "two" || string(a) != "one" {
			t.Fatalf("%s: after a put %q (%v); the old slice now %q", key, d, err, a)
		}
	}
}

// TestGetHotConcurrentWithPuts: readers probing a key while puts replace
// it (so the kept file and directory are closed and opened again under
// them) each see a whole value some put wrote, never an error, and the
// kept set is race-free (-race).
func TestGetHotConcurrentWithPuts(t *testing.T) {
	l, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const key = "refs/heads/main"
	if _, err := l.Put(ctx, key, []byte("v0000")); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				data, _, err := l.GetHotShared(ctx, key)
				if err != nil || len(data) != 5 || data[0] != 'v' {
					errs <- fmt.Errorf("GetHotShared %q, %v", data, err)
					return
				}
			}
		}()
	}
	for i := range 200 {
		if _, err := l.Put(ctx, key, fmt.Appendf(nil, "v%04d", i)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
