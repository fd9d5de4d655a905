package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// S3 through the binary, against the S3 server scripts/test.sh starts
// (OMNIGRAPH_TEST_S3 + AWS_*); each test skips without one.

var s3Seq atomic.Int64

func s3GraphURI(t *testing.T) string {
	t.Helper()
	base := os.Getenv("OMNIGRAPH_TEST_S3")
	if base == "" {
		t.Skip("no S3 server: set OMNIGRAPH_TEST_S3 and AWS_* (scripts/test.sh starts VersityGW)")
	}
	return fmt.Sprintf("%s/cli/%s-%d-%d", base, strings.ReplaceAll(t.Name(), "/", "-"), os.Getpid(), s3Seq.Add(1))
}

var edgeIDs = regexp.MustCompile(`"id":"[0-9A-Z]{26}"`)

// volatile JSON fields: addresses, ids, clocks.
var volatileKeys = map[string]bool{"uri": true, "graph_commit_id": true, "parent_commit_id": true,
	"merged_parent_commit_id": true, "created_at": true, "snapshot": true}

func normalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if !volatileKeys[k] {
				out[k] = normalizeJSON(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	}
	return v
}

// TestS3SameAsLocal runs one scenario of every direct command on a local
// directory and on s3:// and requires the same results.
func TestS3SameAsLocal(t *testing.T) {
	s3uri := s3GraphURI(t)
	local := filepath.Join(t.TempDir(), "social.omni")
	dir := t.TempDir()
	q := writeFile(t, dir, "q.gq", `query people() {
    match { $p: Person }
    return { $p.name, $p.age }
    order { $p.name }
}
query add($name: String, $age: I32) {
    insert Person { name: $name, age: $age }
}
`)
	run := func(uri string) []string {
		var outs []string
		var firstCommit string
		step := func(args ...string) map[string]any {
			t.Helper()
			full := append(args, "--json")
			m := mustRun(t, full...)
			if c, ok := m["commit"].(map[string]any); ok && firstCommit == "" {
				firstCommit, _ = c["graph_commit_id"].(string)
			}
			b, _ := json.Marshal(normalizeJSON(m))
			outs = append(outs, strings.Join(args[:1], " ")+" "+string(b))
			return m
		}
		step("init", "--schema", filepath.Join(exampleDir, "schema.pg"), uri)
		step("load", "--data", filepath.Join(exampleDir, "data.jsonl"), "--mode", "overwrite", "--yes", "--quiet", uri)
		step("query", "--query", q, "people", "--store", uri)
		step("mutate", "--query", q, "add", "--params", `{"name":"Zed","age":44}`, "--store", uri)
		step("branch", "create", "--uri", uri, "feature", "--quiet")
		step("mutate", "--query", q, "add", "--params", `{"name":"Yan","age":22}`, "--branch", "feature", "--store", uri)
		step("branch", "merge", "--uri", uri, "feature", "--into", "main", "--quiet")
		step("branch", "delete", "--uri", uri, "feature", "--yes", "--quiet")
		step("query", "--query", q, "people", "--store", uri)
		step("query", "--query", q, "people", "--snapshot", firstCommit, "--store", uri)
		step("snapshot", uri)
		step("optimize", uri, "--quiet")
		step("cleanup", "--keep", "1", "--confirm", "--yes", "--quiet", uri)
		step("query", "--query", q, "people", "--store", uri)
		r := runBin(t, "export", uri)
		if r.code != 0 {
			t.Fatalf("export %s: %s", uri, r.stderr)
		}
		// Edge ids are generated at load time: equal content, other ids.
		lines := strings.Split(strings.TrimSpace(edgeIDs.ReplaceAllString(r.stdout, `"id":"<id>"`)), "\n")
		slices.Sort(lines)
		outs = append(outs, "export "+strings.Join(lines, "\n"))
		return outs
	}
	want := run(local)
	got := run(s3uri)
	if len(got) != len(want) {
		t.Fatalf("%d steps on s3, %d locally", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d differs:\n local: %s\n    s3: %s", i, want[i], got[i])
		}
	}
	// init refuses a prefix that holds a graph, on s3 as locally.
	r := runBin(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), s3uri)
	if r.code == 0 || !strings.Contains(r.stderr, "already initialized") {
		t.Fatalf("second init on s3: exit %d %s", r.code, r.stderr)
	}
	// Destructive writes on a remote graph need --yes (nothing done without).
	r = runBin(t, "branch", "delete", "--uri", s3uri, "nope")
	if r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("branch delete without --yes on s3: exit %d %s", r.code, r.stderr)
	}
}

// TestS3DiskCacheSecondRun: a second cold process with the same cache
// directory reads the graph's immutable objects from disk, not from S3.
func TestS3DiskCacheSecondRun(t *testing.T) {
	uri := s3GraphURI(t)
	cache := t.TempDir()
	mustRun(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), uri, "--json")
	mustRun(t, "load", "--data", filepath.Join(exampleDir, "data.jsonl"), "--mode", "append", uri, "--json", "--quiet")
	q := writeFile(t, t.TempDir(), "q.gq", `query people() { match { $p: Person } return { $p.name } }`)
	first := mustRun(t, "query", "--query", q, "--store", uri, "--cache-dir", cache, "--json")
	var files int
	filepath.Walk(cache, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Fatal("first run cached nothing")
	}
	// Same answer from the cache, in a process of its own, via the env var.
	r, err := procRun(omnigraphBin(t), []string{"OMNIGRAPH_CACHE_DIR=" + cache}, "query", "--query", q, "--store", uri, "--json")
	if err != nil || r.code != 0 {
		t.Fatalf("second run: %v %s", err, r.stderr)
	}
	var second map[string]any
	json.Unmarshal([]byte(r.stdout), &second)
	if fmt.Sprint(rowsOf(t, first)) != fmt.Sprint(rowsOf(t, second)) {
		t.Fatalf("cached run answered %v, first %v", second, first)
	}
}

// TestS3ConcurrentWriters: 8 OS processes insert into one branch of one
// s3:// graph; every acknowledged insert is present and history is linear.
func TestS3ConcurrentWriters(t *testing.T) {
	uri := s3GraphURI(t)
	bin := omnigraphBin(t)
	dir := t.TempDir()
	schema := writeFile(t, dir, "s.pg", procsSchema)
	q := writeFile(t, dir, "q.gq", `query add($name: String, $w: I32) { insert Item { name: $name, writer: $w } }
query all() { match { $i: Item } return { $i.name } }
`)
	mustRun(t, "init", "--schema", schema, uri, "--json")
	const writers, each = 8, 6
	var l procsLog
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				name := fmt.Sprintf("w%d-%d", w, i)
				r, ok := procsRun(bin, &l, "mutate", "--query", q, "add", "--params", fmt.Sprintf(`{"name":%q,"w":%d}`, name, w), "--store", uri, "--json")
				if !ok {
					return
				}
				if r.code == 0 {
					mu.Lock()
					acked[name] = true
					mu.Unlock()
				} else if !containsAny(r.stderr, procsBudgetMarks) {
					l.add("writer %d insert %d: exit %d: %s", w, i, r.code, r.stderr)
				}
			}
		})
	}
	wg.Wait()
	l.report(t)
	if len(acked) < writers {
		t.Fatalf("only %d inserts acknowledged", len(acked))
	}
	got := map[string]bool{}
	for _, row := range rowsOf(t, mustRun(t, "query", "--query", q, "all", "--store", uri, "--json")) {
		got[fmt.Sprint(row["i.name"])] = true
	}
	for name := range acked {
		if !got[name] {
			t.Errorf("acknowledged insert %s missing", name)
		}
	}
	checkLinear(t, uri)
}

// checkLinear: the first-parent chain of main is every commit of main, with
// no merge parents (one linear history).
func checkLinear(t *testing.T, uri string) {
	t.Helper()
	m := mustRun(t, "commit", "list", "--uri", uri, "--json")
	raw, _ := json.Marshal(m["commits"])
	var commits []map[string]any
	json.Unmarshal(raw, &commits)
	for i, c := range commits {
		if c["merged_parent_commit_id"] != nil {
			t.Fatalf("commit %v has a merge parent", c["graph_commit_id"])
		}
		if i+1 < len(commits) && c["parent_commit_id"] != commits[i+1]["graph_commit_id"] {
			t.Fatalf("history not linear at %d: parent %v, next %v", i, c["parent_commit_id"], commits[i+1]["graph_commit_id"])
		}
	}
}

func containsAny(s string, marks []string) bool {
	for _, m := range marks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// countItems returns the number of Items on a branch of the graph.
func countItems(t *testing.T, uri, q, branch string) int {
	t.Helper()
	args := []string{"query", "--query", q, "all", "--store", uri, "--json"}
	if branch != "" {
		args = append(args, "--branch", branch)
	}
	return len(rowsOf(t, mustRun(t, args...)))
}

// TestS3KillWriters: kill -9 of a process loading or merging into an
// s3:// graph at random moments leaves exactly the old or the new state,
// and the next write succeeds.
func TestS3KillWriters(t *testing.T) {
	uri := s3GraphURI(t)
	bin := omnigraphBin(t)
	dir := t.TempDir()
	schema := writeFile(t, dir, "s.pg", procsSchema)
	q := writeFile(t, dir, "q.gq", `query all() { match { $i: Item } return { $i.name } }
query add($name: String) { insert Item { name: $name, writer: 0 } }
`)
	mustRun(t, "init", "--schema", schema, uri, "--json")
	const batch = 3000
	kills := 0
	for round := 0; kills < 12 && round < 60; round++ {
		merge := round%2 == 1
		var data strings.Builder
		for i := range batch {
			fmt.Fprintf(&data, `{"type":"Item","data":{"name":"r%d-%d","writer":%d}}`+"\n", round, i, round)
		}
		file := writeFile(t, dir, fmt.Sprintf("r%d.jsonl", round), data.String())
		before := countItems(t, uri, q, "")
		args := []string{"load", "--data", file, "--mode", "append", uri, "--quiet"}
		if merge {
			// Prepare the branch, then kill the merge.
			br := fmt.Sprintf("b%d", round)
			mustRun(t, "load", "--data", file, "--mode", "append", "--branch", br, "--from", "main", uri, "--json", "--quiet")
			args = []string{"branch", "merge", "--uri", uri, br, "--into", "main", "--quiet"}
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = procEnviron()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Loads got faster (a 3,000-row load can end within 100 ms): kill early.
		time.Sleep(time.Duration(rand.IntN(80)) * time.Millisecond)
		killed := cmd.Process.Signal(syscall.SIGKILL) == nil
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
			kills++
		} else if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		_ = killed
		after := countItems(t, uri, q, "")
		if after != before && after != before+batch {
			t.Fatalf("round %d (merge %v): %d items after the kill, want %d or %d", round, merge, after, before, before+batch)
		}
		// The next write succeeds.
		mustRun(t, "mutate", "--query", q, "add", "--params", fmt.Sprintf(`{"name":"after-%d"}`, round), "--store", uri, "--json")
	}
	if kills < 10 {
		t.Fatalf("only %d processes were killed mid-run", kills)
	}
	t.Logf("%d kills", kills)
}

// TestS3ServerRestart: with the S3 server down, commands fail with a clear
// error and change nothing; after it is back, work resumes on intact data.
func TestS3ServerRestart(t *testing.T) {
	vgw := os.Getenv("OMNIGRAPH_TEST_VERSITYGW")
	if vgw == "" {
		t.Skip("no VersityGW binary: OMNIGRAPH_TEST_VERSITYGW (scripts/test.sh sets it)")
	}
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "bkt"), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var srv *exec.Cmd
	start := func() {
		srv = exec.Command(vgw, "--access", "k", "--secret", "s", "--port", addr, "--quiet", "posix", data)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		for range 200 {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatal("versitygw did not start")
	}
	stop := func() {
		srv.Process.Kill()
		srv.Wait()
	}
	start()
	t.Cleanup(func() { stop() })
	env := []string{"AWS_ACCESS_KEY_ID=k", "AWS_SECRET_ACCESS_KEY=s", "AWS_ENDPOINT_URL_S3=http://" + addr, "AWS_ALLOW_HTTP=true"}
	bin := omnigraphBin(t)
	run := func(args ...string) runResult {
		t.Helper()
		r, err := procRun(bin, env, args...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	uri := "s3://bkt/g"
	dir := t.TempDir()
	schema := writeFile(t, dir, "s.pg", procsSchema)
	q := writeFile(t, dir, "q.gq", `query all() { match { $i: Item } return { $i.name } }
query add($name: String) { insert Item { name: $name, writer: 0 } }
`)
	must := func(args ...string) {
		t.Helper()
		if r := run(args...); r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}
	must("init", "--schema", schema, uri, "--quiet")
	must("mutate", "--query", q, "add", "--params", `{"name":"before"}`, "--store", uri)
	stop()
	t0 := time.Now()
	for _, args := range [][]string{
		{"mutate", "--query", q, "add", "--params", `{"name":"while-down"}`, "--store", uri},
		{"query", "--query", q, "all", "--store", uri},
	} {
		r := run(args...)
		if r.code == 0 || !strings.Contains(r.stderr, "object store unavailable") || !strings.Contains(r.stderr, "cannot reach") {
			t.Fatalf("%v with the server down: exit %d %q", args[0], r.code, r.stderr)
		}
	}
	if el := time.Since(t0); el > 30*time.Second {
		t.Fatalf("failing with the server down took %v", el)
	}
	start()
	must("mutate", "--query", q, "add", "--params", `{"name":"after"}`, "--store", uri)
	r := run("query", "--query", q, "all", "--store", uri, "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("query after restart: %v %s", err, r.stderr)
	}
	var names []string
	for _, row := range rowsOf(t, m) {
		names = append(names, fmt.Sprint(row["i.name"]))
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"after", "before"}) {
		t.Fatalf("items after restart: %q", names)
	}
}
