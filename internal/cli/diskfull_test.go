package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory, or skips the
// test where that is not allowed (not root, no mount(8), a container
// without the capability).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a filler file in dir until the file system is full but
// for about leave bytes, and returns its path (remove it to free the space).
func fillDisk(t *testing.T, dir string, leave int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(dir, &sfs); err != nil {
		t.Fatal(err)
	}
	free := int64(sfs.Bavail) * int64(sfs.Bsize)
	chunk := make([]byte, 4096)
	for written := int64(0); written+int64(len(chunk)) <= free-leave; written += int64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	return path
}

// graphFiles lists the files of a local graph but its lock files.
func graphFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == ".locks" {
				return filepath.SkipDir
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiskFullTmpfs runs load, mutate, branch merge and optimize through
// the binary on a graph in a real 16 MiB tmpfs: with the disk full (or, for
// a load, with less space left than its fragment needs) each exits 1
// saying the disk is full, leaves exactly the files there were, the graph
// reads as before
// and verify finds nothing unreachable; once the filler is removed the same
// command succeeds.
func TestDiskFullTmpfs(t *testing.T) {
	mnt := mountTmpfs(t, 16<<20)
	g := filepath.Join(mnt, "g.omni")
	ex := "../../examples/social/"
	mustRun(t, "init", "--schema", ex+"schema.pg", g, "--json")
	mustRun(t, "load", "--data", ex+"data.jsonl", "--mode", "overwrite", g, "--json")
	mustRun(t, "branch", "create", "--from", "main", "feature", "--store", g, "--json")
	mustRun(t, "mutate", "set_age", "--query", ex+"mutations.gq", "--params", `{"name":"Bob","age":61}`, "--branch", "feature", "--store", g, "--json")
	mustRun(t, "mutate", "set_age", "--query", ex+"mutations.gq", "--params", `{"name":"Alice","age":62}`, "--store", g, "--json")
	// A load bigger than the space left: about 1.5 MB of rows whose names
	// do not compress (hex of a hash chain), so its fragment cannot fit.
	var big strings.Builder
	h := sha256.Sum256([]byte("bulk"))
	for i := range 6000 {
		var name strings.Builder
		for range 6 {
			h = sha256.Sum256(h[:])
			name.WriteString(hex.EncodeToString(h[:]))
		}
		fmt.Fprintf(&big, `{"type":"Person","data":{"name":"bulk-%05d-%s","age":%d}}`+"\n", i, name.String()[:200], i%90)
	}
	bigPath := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(bigPath, []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		leave int64 // bytes left free
		args  []string
	}{
		{"load bigger than the space left", 300 << 10, []string{"load", "--data", bigPath, "--mode", "append", g}},
		{"load", 0, []string{"load", "--data", ex + "data.jsonl", "--mode", "merge", g}},
		{"mutate", 0, []string{"mutate", "add_person", "--query", ex + "mutations.gq", "--params", `{"name":"Eve","age":41}`, "--store", g}},
		{"merge", 0, []string{"branch", "merge", "feature", "--into", "main", "--store", g}},
		{"optimize", 0, []string{"optimize", g}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := graphFiles(t, g)
			snap := runBin(t, "snapshot", "--store", g, "--json").stdout
			filler := fillDisk(t, mnt, tc.leave)
			r := runBin(t, tc.args...)
			if r.code != 1 || !strings.Contains(r.stderr, "no space left") || !strings.Contains(r.stderr, "the disk") {
				t.Fatalf("exit %d, want 1 with a disk-full message\nstderr: %s", r.code, r.stderr)
			}
			if after := graphFiles(t, g); !slices.Equal(after, before) {
				t.Fatalf("the failed command left files behind or removed some:\nbefore %v\nafter  %v", before, after)
			}
			if got := runBin(t, "snapshot", "--store", g, "--json").stdout; got != snap {
				t.Fatalf("the graph reads differently:\n%s\nwant\n%s", got, snap)
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Unreachable map[string]int `json:"unreachable"`
				Problems    []any          `json:"problems"`
			}
			if err := json.Unmarshal([]byte(runBin(t, "verify", g, "--json").stdout), &rep); err != nil {
				t.Fatal(err)
			}
			for k, n := range rep.Unreachable {
				if n != 0 {
					t.Fatalf("verify: %d unreachable %s (%v)", n, k, rep.Unreachable)
				}
			}
			if len(rep.Problems) != 0 {
				t.Fatalf("verify problems: %v", rep.Problems)
			}
			if r := runBin(t, tc.args...); r.code != 0 {
				t.Fatalf("after freeing space: exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}
