package boot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/boot/boottest"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// The two binaries a user runs, built once per test process.
var (
	cliBinary    = &fixture.Binary{Pkg: "../../cmd/omnigraph", Name: "omnigraph"}
	serverBinary = &fixture.Binary{Pkg: "../../cmd/omnigraph-server", Name: "omnigraph-server"}
)

// buildBinaries returns the two binaries (skipped under -short).
func buildBinaries(t *testing.T) (cli, srv string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	return cliBinary.Path(t), serverBinary.Path(t)
}

func runBin(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	r, err := fixture.Run(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return r.Code, r.Stdout, r.Stderr
}

// TestBinariesClusterToServer does what a user does: cluster validate,
// import and apply with the CLI, then two omnigraph-server processes on the
// one cluster directory, both taking writes through the CLI's served mode
// and over HTTP. Every acknowledged write is present afterwards and the
// history of main is linear.
func TestBinariesClusterToServer(t *testing.T) {
	cliBin, srvBin := buildBinaries(t)
	t.Run("local", func(t *testing.T) { clusterToServer(t, cliBin, srvBin, "") })
	t.Run("s3", func(t *testing.T) {
		base := os.Getenv("OMNIGRAPH_TEST_S3")
		if base == "" {
			t.Skip("no S3 server: set OMNIGRAPH_TEST_S3 and AWS_* (scripts/test.sh starts VersityGW)")
		}
		clusterToServer(t, cliBin, srvBin, fmt.Sprintf("%s/clusters/e2e-%d-%d", base, os.Getpid(), time.Now().UnixNano()))
	})
}

// clusterToServer runs the flow with the cluster's storage root in the config
// directory (storage == "") or at a storage URI, which the servers then boot
// from directly, without the config directory.
func clusterToServer(t *testing.T, cliBin, srvBin, storage string) {
	dir := applyClusterFiles(t)
	source := dir
	if storage != "" {
		cfg, err := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), append([]byte("storage: "+storage+"\n"), cfg...), 0o644); err != nil {
			t.Fatal(err)
		}
		source = storage
	}
	home := t.TempDir()
	base := []string{"OMNIGRAPH_HOME=" + home}
	for _, step := range [][]string{
		{"cluster", "validate", "--config", dir},
		{"cluster", "import", "--config", dir},
		{"cluster", "plan", "--config", dir},
		{"--as", "act-op", "cluster", "apply", "--config", dir},
	} {
		if code, out, errs := runBin(t, cliBin, base, step...); code != 0 {
			t.Fatalf("omnigraph %v: exit %d\n%s\n%s", step, code, out, errs)
		}
	}
	if code, out, _ := runBin(t, cliBin, base, "policy", "validate", "--cluster", dir); code != 0 || !strings.Contains(out, "bundle 'base'") {
		t.Fatalf("policy validate: %d %s", code, out)
	}

	tokens := `{"act-writer":"tw","act-reader":"tr"}`
	env := append(base, "OMNIGRAPH_SERVER_BEARER_TOKENS_JSON="+tokens)
	// Refusal: a cluster with policies and no tokens does not start.
	if code, _, errs := runBin(t, srvBin, base, "--cluster", source, "--bind", "127.0.0.1:0"); code != 1 || !strings.Contains(errs, "no bearer tokens") {
		t.Fatalf("policy without tokens: exit %d\n%s", code, errs)
	}
	s1 := boottest.Start(t, srvBin, env, "--cluster", source, "--bind", "127.0.0.1:0")
	s2 := boottest.Start(t, srvBin, env, "--cluster", source, "--bind", "127.0.0.1:0")

	// The CLI's served mode, as a user would run it.
	cliEnv := append(base, "OMNIGRAPH_BEARER_TOKEN=tw")
	code, out, errs := runBin(t, cliBin, cliEnv, "mutate", "add_person", "--server", s1.URL, "--graph", "knowledge", "--params", `{"name":"via-cli"}`, "--json")
	if code != 0 || !strings.Contains(out, `"affected_nodes": 1`) {
		t.Fatalf("served stored mutation: %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs = runBin(t, cliBin, append(base, "OMNIGRAPH_BEARER_TOKEN=tr"), "mutate", "add_person", "--server", s2.URL, "--graph", "knowledge", "--params", `{"name":"denied"}`); code != 1 || !strings.Contains(errs, "not permitted") {
		t.Fatalf("reader mutation: %d %s", code, errs)
	}

	// Concurrent writers on both processes.
	const perClient = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked []string
	for i, s := range []*boottest.Server{s1, s2, s1, s2} {
		wg.Add(1)
		go func(i int, url string) {
			defer wg.Done()
			for j := 0; j < perClient; j++ {
				name := fmt.Sprintf("p%d-%d", i, j)
				body, _ := json.Marshal(map[string]any{"params": map[string]any{"name": name}})
				req, _ := http.NewRequest("POST", url+"/graphs/knowledge/queries/add_person", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer tw")
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("write %s: status %d", name, resp.StatusCode)
					continue
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
			}
		}(i, s.URL)
	}
	wg.Wait()
	if len(acked) != 4*perClient {
		t.Fatalf("acknowledged %d of %d writes", len(acked), 4*perClient)
	}

	// Every acknowledged write is visible from both servers and the CLI.
	for _, s := range []*boottest.Server{s1, s2} {
		code, out, errs := runBin(t, cliBin, cliEnv, "query", "--server", s.URL, "--graph", "knowledge",
			"-e", "query all() { match { $p: Person } return { $p.name } }", "--format", "csv")
		if code != 0 {
			t.Fatalf("query: %s", errs)
		}
		for _, n := range append(acked, "via-cli") {
			if !strings.Contains(out, "\n"+n+"\n") {
				t.Fatalf("write %s missing from %s", n, s.URL)
			}
		}
	}
	// Linear history: every commit has one parent, the next one down.
	code, out, errs = runBin(t, cliBin, cliEnv, "commit", "list", "--server", s2.URL, "--graph", "knowledge", "--json")
	if code != 0 {
		t.Fatalf("commit list: %s", errs)
	}
	var log struct {
		Commits []struct {
			ID           string  `json:"graph_commit_id"`
			Parent       *string `json:"parent_commit_id"`
			MergedParent *string `json:"merged_parent_commit_id"`
			Actor        *string `json:"actor_id"`
		} `json:"commits"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	// Automatic compaction adds maintenance commits (no actor) in between.
	writes := 0
	for _, c := range log.Commits {
		if c.Actor != nil && *c.Actor == "act-writer" {
			writes++
		}
	}
	if want := 1 + 4*perClient; writes != want {
		t.Fatalf("%d commits by act-writer, want %d", writes, want)
	}
	if last := log.Commits[len(log.Commits)-1]; last.Actor == nil || *last.Actor != "act-op" || last.Parent != nil {
		t.Fatalf("history does not start at the apply's init commit: %+v", last)
	}
	for i, c := range log.Commits {
		if c.MergedParent != nil {
			t.Fatalf("commit %s has a merge parent", c.ID)
		}
		if i+1 < len(log.Commits) && (c.Parent == nil || *c.Parent != log.Commits[i+1].ID) {
			t.Fatalf("history forks at %s", c.ID)
		}
	}
	s1.Stop(t)
	s2.Stop(t)
}

// applyClusterFiles lays out the test cluster's config directory.
func applyClusterFiles(t *testing.T) string {
	t.Helper()
	return fixture.WriteFiles(t, t.TempDir(), map[string]string{
		"cluster.yaml": clusterYAML, "knowledge.pg": schemaSrc, "queries/people.gq": queriesSrc,
		"base.policy.yaml": graphPolicy, "server.policy.yaml": serverPolicy,
	})
}
