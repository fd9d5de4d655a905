package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// Crash tests through the real binary (docs/invariants.md, "Crashes through
// the binary"). A subprocess is killed at a named failpoint
// (OMNIGRAPH_FAILPOINTS=<point>=exit, which exits at once with code 77 and
// runs no deferred code) or by a real SIGKILL, and the graph is then checked
// from the outside, with the CLI: it opens, every branch head is exactly the
// old or the new commit (never a mix), reads work, the next write of the same
// kind succeeds, and cleanup afterwards leaves every branch readable.

// crashPoints is every failpoint the omnigraph binary can reach outside init.
// TestCrashPointListComplete keeps it in step with the source.
var crashPoints = []string{
	// internal/exec write pipeline and the table package inside it
	"exec/before-write", "table/before-dv", "table/after-dv", "table/before-fragment", "table/after-fragment",
	"exec/after-table-data", "table/before-state", "table/after-state", "exec/after-table-state",
	"exec/before-publish",
	// a group commit's deferred fragment made for a read (no durable step;
	// a CLI write is a batch of one and never reaches it)
	"table/deferred-encode",
	// a batch taking the branch's turn to lead (every CLI write on a local
	// graph), and the steps of committing writes other processes handed
	// over (a CLI write alone has none: TestForwardedWrite kills a holder
	// at each of them)
	"exec/forward-turn", "exec/forward-claimed", "exec/forward-pending",
	// internal/commit publish
	"commit/before-commit-object", "commit/after-commit-object", "commit/before-cas", "commit/after-cas",
	"exec/after-publish",
	// merge
	"exec/merge-before-write", "exec/merge-after-table-state", "exec/merge-before-publish", "exec/merge-after-publish",
	"exec/merge-before-fast-forward", "exec/merge-after-fast-forward",
	// optimize (also reached by the automatic compaction after a write)
	"exec/optimize-after-data", "exec/optimize-after-state", "exec/optimize-before-publish", "exec/optimize-after-publish",
	// schema apply
	"exec/apply-before-states", "exec/apply-after-state", "exec/apply-before-schema",
	// cleanup
	"exec/cleanup-before-delete", "exec/cleanup-after-commits", "exec/cleanup-after-states", "exec/cleanup-after-data",
	// the local backend's publish of every put
	"storage/before-publish", "storage/after-publish",
}

// crashShortPoints is the -short subset: one point per durable phase.
var crashShortPoints = map[string]bool{
	"exec/before-write": true, "table/after-dv": true, "table/after-fragment": true, "exec/before-publish": true,
	"commit/after-commit-object": true, "commit/after-cas": true, "exec/merge-before-publish": true,
	"exec/merge-before-fast-forward": true, "exec/optimize-before-publish": true, "exec/cleanup-after-states": true,
	"exec/apply-after-state": true,
	"storage/before-publish": true, "storage/after-publish": true,
}

// TestCrashPointListComplete fails when a failpoint is added to a package the
// binary uses without being added to crashPoints. Excluded: init's points
// (TestInitKilled covers them) and the Faulty store's per-op points (the
// binary never wraps its store in Faulty).
func TestCrashPointListComplete(t *testing.T) {
	lit := regexp.MustCompile(`"((?:exec|commit|table|storage)/[a-z][a-z-]*)"`)
	found := map[string]bool{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllStringSubmatch(string(src), -1) {
			found[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range found {
		if strings.HasPrefix(name, "commit/init-") || strings.HasSuffix(name, "/") {
			continue
		}
		if !slices.Contains(crashPoints, name) {
			t.Errorf("failpoint %q is not in crashPoints", name)
		}
	}
	for _, name := range crashPoints {
		if !found[name] {
			t.Errorf("crashPoints lists %q, which no source file names", name)
		}
	}
}

// procRun is runBin without a *testing.T, for goroutines.
func procRun(bin string, env []string, args ...string) (runResult, error) {
	return procRunIn(bin, env, nil, args...)
}

// procRunIn is procRun with standard input (nil: none).
func procRunIn(bin string, env []string, stdin io.Reader, args ...string) (runResult, error) {
	procCount.Add(1)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(procEnviron(), env...)
	cmd.Stdin = stdin
	r, err := fixture.Run(cmd)
	return runResult{r.Code, r.Stdout, r.Stderr}, err
}

var procCount atomic.Int64

// procEnviron is the test's environment without armed failpoints.
func procEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, failpoint.EnvVar+"=") {
			env = append(env, kv)
		}
	}
	return env
}

func crashMust(t *testing.T, args ...string) runResult {
	t.Helper()
	r := runBinEnv(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("omnigraph %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

func crashJSON(t *testing.T, r runResult, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("bad JSON %v:\n%s", err, r.stdout)
	}
}

// crashCommit is one entry of `commit list --json`.
type crashCommit struct {
	ID     string  `json:"graph_commit_id"`
	Parent *string `json:"parent_commit_id"`
	Merged *string `json:"merged_parent_commit_id"`
	Actor  *string `json:"actor_id"`
}

func crashLog(t *testing.T, dir, branch string) []crashCommit {
	t.Helper()
	var out struct {
		Commits []crashCommit `json:"commits"`
	}
	crashJSON(t, crashMust(t, "commit", "list", dir, "--branch", branch, "--json"), &out)
	if len(out.Commits) == 0 {
		t.Fatalf("branch %s has no commits", branch)
	}
	return out.Commits
}

// crashNormExport canonicalizes `export` output: lines sorted, and edge ids
// dropped (a rerun of an edge insert mints fresh ids; everything else in an
// image is deterministic).
func crashNormExport(t *testing.T, out string) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("export line %q: %v", l, err)
		}
		if _, ok := m["edge"]; ok {
			if d, ok := m["data"].(map[string]any); ok {
				delete(d, "id")
			}
		}
		b, _ := json.Marshal(m) // map keys sorted
		lines = append(lines, string(b))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// crashExport is the normalized content of a branch ("branch:NAME") or a
// commit ("snapshot:ID").
func crashExport(t *testing.T, dir, target string) string {
	t.Helper()
	kind, name, _ := strings.Cut(target, ":")
	return crashNormExport(t, crashMust(t, "export", dir, "--"+kind, name).stdout)
}

// crashOpen opens a fresh handle, as a new process would: the sweeps below
// (every branch, every commit) read in process to keep the test fast; the
// primary old-or-new verdicts use the binary.
func crashOpen(t *testing.T, dir string) *omnigraph.Graph {
	t.Helper()
	g, err := omnigraph.Open(t.Context(), dir, omnigraph.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return g
}

// crashRead is the normalized content of a target, read in process.
func crashRead(t *testing.T, g *omnigraph.Graph, target omnigraph.Target) string {
	t.Helper()
	var b strings.Builder
	if err := g.Export(t.Context(), target, nil, &b); err != nil {
		t.Fatalf("export %+v: %v", target, err)
	}
	return crashNormExport(t, b.String())
}

// crashView is every branch and its content, read in process.
func crashView(t *testing.T, dir string) map[string]string {
	t.Helper()
	g := crashOpen(t, dir)
	names, err := g.Branches(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	img := map[string]string{}
	for _, b := range names {
		img[b] = crashRead(t, g, omnigraph.Target{Branch: b})
	}
	return img
}

func crashCopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// crashAge makes every file of the graph look two hours old, so that a
// cleanup with the default one-hour grace may delete whatever is garbage.
// Commit times are unchanged, so every commit stays retained ("replaced as
// head less than the grace ago"): only unreferenced objects can go.
func crashAge(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-2 * time.Hour)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

type crashCleanupResult struct {
	CommitsRemoved   int `json:"commits_removed"`
	CommitsReclaimed int `json:"commits_reclaimed"`
	FilesRemoved     int `json:"files_removed"`
}

func crashCleanup(t *testing.T, dir string, args ...string) crashCleanupResult {
	t.Helper()
	var res crashCleanupResult
	crashJSON(t, crashMust(t, append([]string{"cleanup", dir, "--json", "--quiet"}, args...)...), &res)
	return res
}

const (
	crashInsertPair = `query add($n: String, $age: I32, $to: String) { insert Person { name: $n, age: $age } insert Knows { from: $n, to: $to } }`
	crashDelete     = `query del($n: String) { delete Person where name = $n }`
)

func crashMutate(t *testing.T, dir, branch, src, params string) {
	t.Helper()
	crashMust(t, "mutate", "--store", dir, "--branch", branch, "-e", src, "--params", params, "--json", "--quiet")
}

// crashTemplate builds the graph every crash case starts from:
//
//	main:    social + P1, P2 (Person holds three small fragments, so the next
//	         write to it compacts inline and optimize has work)
//	feature: forked before P1; + Fred (with a Knows edge), Bob's age 26 — a
//	         three-way merge into main, both sides changed Person
//	ahead:   main + Gina — a fast-forward into main
//
// plus garbage: the commit and data of a deleted branch and the objects of
// a write killed before its CAS.
func crashTemplate(t *testing.T) string {
	t.Helper()
	dir := newSocialGraph(t)
	crashMust(t, "branch", "create", "--uri", dir, "feature", "--json")
	crashMutate(t, dir, "feature", crashInsertPair, `{"n":"Fred","age":50,"to":"Alice"}`)
	crashMutate(t, dir, "feature", setAge, `{"name":"Bob","age":26}`)
	crashMutate(t, dir, "main", insertPerson, `{"name":"P1","age":41}`)
	crashMutate(t, dir, "main", insertPerson, `{"name":"P2","age":42}`)
	crashMust(t, "branch", "create", "--uri", dir, "ahead", "--json")
	crashMutate(t, dir, "ahead", insertPerson, `{"name":"Gina","age":33}`)
	crashMust(t, "branch", "create", "--uri", dir, "gone", "--json")
	crashMutate(t, dir, "gone", insertPerson, `{"name":"Gone","age":1}`)
	crashMust(t, "branch", "delete", "--uri", dir, "gone", "--json")
	r := runBinEnv(t, []string{failpoint.EnvVar + "=commit/before-cas=exit"},
		"mutate", "--store", dir, "-e", insertPerson, "--params", `{"name":"Lost","age":1}`, "--quiet")
	if r.code != failpoint.ExitCode {
		t.Fatalf("template crash: exit %d %s", r.code, r.stderr)
	}
	return dir
}

// crashCase is one command of the crash matrix.
type crashCase struct {
	name string
	// branch is the branch whose head the command moves ("" = none).
	branch string
	args   []string
	// next is the next write of the same kind; it must succeed whether the
	// crashed command took effect or not.
	next []string
	// converge: after next, branch's content equals the reference run's.
	converge bool
	// aged: the graph's files are made old before the command (cleanup).
	aged bool
	// mustFire are points that must be on this command's path.
	mustFire []string
}

func crashCases(t *testing.T, tmp string) []crashCase {
	t.Helper()
	file := func(name string, lines ...string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	appendA := file("append-a.jsonl",
		`{"type":"Person","data":{"name":"N1","age":61}}`,
		`{"type":"Person","data":{"name":"N2","age":62}}`,
		`{"edge":"Knows","from":"N1","to":"N2"}`,
		`{"edge":"Knows","from":"N2","to":"Alice"}`,
		`{"edge":"WorksAt","from":"N1","to":"Acme"}`)
	appendB := file("append-b.jsonl",
		`{"type":"Person","data":{"name":"M1","age":71}}`,
		`{"edge":"Knows","from":"M1","to":"Alice"}`)
	merge := file("merge.jsonl",
		`{"type":"Person","data":{"name":"Alice","age":31}}`,
		`{"type":"Person","data":{"name":"Bob","age":26}}`,
		`{"type":"Person","data":{"name":"N3","age":63}}`,
		`{"edge":"Knows","from":"N3","to":"Bob","data":{"id":"k-n3-bob"}}`)
	overwrite := file("overwrite.jsonl",
		`{"type":"Company","data":{"name":"Acme"}}`,
		`{"type":"Company","data":{"name":"Globex"}}`,
		`{"type":"Company","data":{"name":"Initech"}}`,
		`{"edge":"Knows","from":"Alice","to":"Bob"}`,
		`{"edge":"Knows","from":"Bob","to":"Charlie"}`)
	load := func(path, mode string) []string {
		return []string{"load", "--data", path, "--mode", mode, "--json", "--quiet"}
	}
	// A schema apply that renames a property, adds one and drops one hard
	// (so it also rewrites the Knows fragments). The type rename is killed
	// in TestCrashSIGKILLSchemaApply (the checks here read Person).
	evolved := file("evolved.pg", `node Person { name: String @key  years: I32? @rename_from("age")  nickname: String? }`,
		`node Company { name: String @key }`, `edge Knows: Person -> Person`, `edge WorksAt: Person -> Company`)
	apply := []string{"schema", "apply", "--schema", evolved, "--allow-data-loss", "--json", "--quiet"}
	mutate := func(src, params string) []string {
		return []string{"mutate", "-e", src, "--params", params, "--json", "--quiet"}
	}
	write := []string{"exec/before-write", "table/after-fragment", "table/after-state", "exec/before-publish",
		"commit/before-commit-object", "commit/before-cas", "commit/after-cas", "exec/after-publish"}
	withDV := append(slices.Clone(write), "table/before-dv", "table/after-dv")
	deletes := slices.DeleteFunc(slices.Clone(withDV), func(p string) bool { return strings.Contains(p, "fragment") })
	return []crashCase{
		{name: "load-append", branch: "main", args: load(appendA, "append"), next: load(appendB, "append"),
			// Its inline compaction is staged into the same CAS as the
			// write (one chain), so its data and state points are on the
			// path and its own publish point is not.
			mustFire: append(slices.Clone(write), "exec/optimize-after-data", "exec/optimize-after-state")},
		{name: "load-merge", branch: "main", args: load(merge, "merge"), next: load(merge, "merge"), converge: true, mustFire: withDV},
		{name: "load-overwrite", branch: "main", args: load(overwrite, "overwrite"), next: load(overwrite, "overwrite"), converge: true, mustFire: write},
		{name: "mutate-insert", branch: "main", args: mutate(crashInsertPair, `{"n":"Ivy","age":23,"to":"Alice"}`),
			next: mutate(crashInsertPair, `{"n":"Jay","age":24,"to":"Alice"}`), mustFire: write},
		{name: "mutate-update", branch: "main", args: mutate(setAge, `{"name":"Charlie","age":99}`),
			next: mutate(setAge, `{"name":"Charlie","age":99}`), converge: true, mustFire: withDV},
		{name: "mutate-delete-cascade", branch: "main", args: mutate(crashDelete, `{"n":"Alice"}`),
			next: mutate(crashDelete, `{"n":"Alice"}`), converge: true, mustFire: deletes},
		{name: "merge-three-way", branch: "main", args: []string{"branch", "merge", "feature", "--into", "main", "--json", "--quiet"},
			next: []string{"branch", "merge", "feature", "--into", "main", "--json", "--quiet"}, converge: true,
			mustFire: []string{"exec/merge-before-write", "exec/merge-after-table-state", "exec/merge-before-publish",
				"commit/before-cas", "commit/after-cas", "exec/merge-after-publish"}},
		{name: "merge-fast-forward", branch: "main", args: []string{"branch", "merge", "ahead", "--into", "main", "--json", "--quiet"},
			next: []string{"branch", "merge", "ahead", "--into", "main", "--json", "--quiet"}, converge: true,
			mustFire: []string{"exec/merge-before-fast-forward", "exec/merge-after-fast-forward"}},
		{name: "optimize", branch: "main", args: []string{"optimize", "--json", "--quiet"},
			next: []string{"optimize", "--json", "--quiet"}, converge: true,
			mustFire: []string{"exec/optimize-after-data", "exec/optimize-after-state", "exec/optimize-before-publish",
				"commit/before-cas", "exec/optimize-after-publish"}},
		{name: "schema-apply", branch: "main", args: apply, next: apply, converge: true,
			mustFire: []string{"exec/before-write", "exec/apply-before-states", "table/after-fragment", "table/after-state",
				"exec/apply-after-state", "exec/apply-before-schema", "exec/before-publish", "commit/before-cas", "commit/after-cas", "exec/after-publish"}},
		{name: "cleanup", args: []string{"cleanup", "--keep", "1", "--confirm", "--json", "--quiet"},
			next: []string{"cleanup", "--keep", "1", "--confirm", "--json", "--quiet"}, aged: true,
			mustFire: []string{"exec/cleanup-before-delete", "exec/cleanup-after-commits", "exec/cleanup-after-states", "exec/cleanup-after-data"}},
		{name: "branch-create", args: []string{"branch", "create", "newbr", "--from", "main", "--json", "--quiet"},
			next:     []string{"branch", "create", "newbr2", "--from", "main", "--json", "--quiet"},
			mustFire: []string{"storage/before-publish", "storage/after-publish"}},
		{name: "branch-delete", args: []string{"branch", "delete", "ahead", "--json", "--quiet"},
			next: []string{"branch", "delete", "feature", "--json", "--quiet"}},
	}
}

// crashArgs addresses the graph at dir: --store works for every command.
func crashArgs(args []string, dir string) []string {
	return append(slices.Clone(args), "--store", dir)
}

// crashRef is what every run of one command is compared with.
type crashRef struct {
	before, after map[string]string // branch → content, from the template and a clean run
	oldHeads      map[string]string // branch → head commit in the template
}

// TestCrashEveryFailpoint kills the binary at every failpoint of every write
// path (load append/merge/overwrite, mutate insert/update/delete with
// cascade, three-way and fast-forward merge, optimize, cleanup --confirm,
// branch create/delete) and checks, from fresh processes, that nothing
// half-done is visible and that the graph keeps working. A point that is
// not on a command's path lets it succeed; then the state must be the new
// one. -short runs one point per durable phase.
func TestCrashEveryFailpoint(t *testing.T) {
	tmpl := crashTemplate(t)
	before := crashView(t, tmpl)
	oldHeads := map[string]string{}
	for b := range before {
		oldHeads[b] = crashLog(t, tmpl, b)[0].ID
	}
	cases := crashCases(t, t.TempDir())

	var mu sync.Mutex
	fired := map[string][]string{}
	t.Cleanup(func() {
		for _, c := range cases {
			got := fired[c.name]
			sort.Strings(got)
			t.Logf("%s: crashed at %v (%d processes)", c.name, got, procCount.Load())
			for _, p := range c.mustFire {
				if (!testing.Short() || crashShortPoints[p]) && !slices.Contains(got, p) && !t.Failed() {
					t.Errorf("%s: failpoint %s is not on its path", c.name, p)
				}
			}
		}
	})

	fresh := func(t *testing.T, c crashCase) string {
		dir := filepath.Join(t.TempDir(), "g")
		crashCopyTree(t, tmpl, dir)
		if c.aged {
			crashAge(t, dir)
		}
		return dir
	}
	// The reference runs: each command with no failpoint.
	refs := make([]crashRef, len(cases))
	crashPool(t, len(cases), func(i int) {
		c := cases[i]
		t.Run("reference/"+c.name, func(t *testing.T) {
			dir := fresh(t, c)
			crashMust(t, crashArgs(c.args, dir)...)
			refs[i] = crashRef{before: before, after: crashView(t, dir), oldHeads: oldHeads}
		})
	})
	if t.Failed() {
		return
	}
	type job struct {
		c     crashCase
		ref   crashRef
		point string
	}
	var jobs []job
	for i, c := range cases {
		for _, p := range crashPoints {
			if !testing.Short() || crashShortPoints[p] {
				jobs = append(jobs, job{c, refs[i], p})
			}
		}
	}
	crashPool(t, len(jobs), func(i int) {
		j := jobs[i]
		t.Run(j.c.name+"/"+strings.ReplaceAll(j.point, "/", "-"), func(t *testing.T) {
			dir := fresh(t, j.c)
			r := runBinEnv(t, []string{failpoint.EnvVar + "=" + j.point + "=exit"}, crashArgs(j.c.args, dir)...)
			switch r.code {
			case 0:
			case failpoint.ExitCode:
				mu.Lock()
				fired[j.c.name] = append(fired[j.c.name], j.point)
				mu.Unlock()
			default:
				t.Fatalf("exit %d (want 0 or %d)\nstdout: %s\nstderr: %s", r.code, failpoint.ExitCode, r.stdout, r.stderr)
			}
			crashCheck(t, j.c, dir, j.ref, r.code == failpoint.ExitCode)
		})
	})
}

// crashWorkers bounds the cases run at once. Each case is a chain of short
// processes that mostly wait for fsync, so more than one per core pays.
const crashWorkers = 6

// crashPool runs f(0..n-1) on crashWorkers goroutines; f may call t.Run
// (subtests may run concurrently from several goroutines).
func crashPool(t *testing.T, n int, f func(i int)) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, crashWorkers)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// crashCheck asserts the invariants after one run of c, crashed or not.
func crashCheck(t *testing.T, c crashCase, dir string, ref crashRef, crashed bool) {
	t.Helper()
	// The moved branch, through the binary: its head is the old commit with
	// the old content, or it moved and holds the new content.
	var log []crashCommit
	if b := c.branch; b != "" {
		got := crashExport(t, dir, "branch:"+b)
		if !crashed {
			if got != ref.after[b] {
				t.Fatalf("command succeeded but %s holds\n%s\nwant\n%s", b, got, ref.after[b])
			}
			return // the state is the new one
		}
		log = crashLog(t, dir, b)
		switch {
		case log[0].ID == ref.oldHeads[b]:
			if got != ref.before[b] {
				t.Fatalf("head is the old commit but content differs:\n%s\nwant:\n%s", got, ref.before[b])
			}
		case got != ref.after[b]:
			t.Fatalf("head moved to %s but content is neither old nor new:\n%s\nwant:\n%s\nold:\n%s", log[0].ID, got, ref.after[b], ref.before[b])
		}
	}
	// Every branch, in process: the branch set is the old or the new one, a
	// branch the command does not write is untouched, and a created one holds
	// its new content.
	view := crashView(t, dir)
	switch {
	case maps.Equal(view, ref.after):
	case crashed && maps.Equal(view, ref.before):
	case crashed && c.branch != "" && crashSameBranches(view, ref.before):
		for b, got := range view {
			if b != c.branch && got != ref.before[b] {
				t.Fatalf("branch %s changed although the command does not write it:\n%s\nwant:\n%s", b, got, ref.before[b])
			}
		}
	default:
		t.Fatalf("graph is neither the old nor the new one: branches %v, before %v, after %v",
			sortedMapKeys(view), sortedMapKeys(ref.before), sortedMapKeys(ref.after))
	}
	if !crashed {
		return
	}
	// Every commit on the first-parent chain above the old head holds the
	// new content: no intermediate commit exposes a mix.
	if b := c.branch; b != "" && log[0].ID != ref.oldHeads[b] {
		g := crashOpen(t, dir)
		byID := map[string]crashCommit{}
		for _, cm := range log {
			byID[cm.ID] = cm
		}
		for id, n := log[0].ID, 0; id != ref.oldHeads[b]; n++ {
			cm, ok := byID[id]
			if !ok || cm.Parent == nil || n > len(log) {
				t.Fatalf("old head %s is not on the first-parent chain of %s: %+v", ref.oldHeads[b], log[0].ID, log)
			}
			if got := crashRead(t, g, omnigraph.Target{Snapshot: id}); got != ref.after[b] {
				t.Fatalf("commit %s above the old head holds\n%s\nwant\n%s", id, got, ref.after[b])
			}
			id = *cm.Parent
		}
	}
	// Reads work; the next write of the same kind succeeds.
	personNames(t, dir, "main")
	crashMust(t, crashArgs(c.next, dir)...)
	img := crashView(t, dir)
	for b, got := range img {
		if want, ok := ref.before[b]; ok && b != c.branch && got != want {
			t.Fatalf("branch %s changed although no command wrote it:\n%s\nwant:\n%s", b, got, want)
		}
	}
	if c.converge && c.branch != "" && img[c.branch] != ref.after[c.branch] {
		t.Fatalf("after the next %s, content differs from the reference:\n%s\nwant:\n%s", c.name, img[c.branch], ref.after[c.branch])
	}
	// verify finds no damage: the crash left only unreachable leftovers.
	verifyOK(t, dir)
	// Cleanup with the grace deletes nothing young. Once every file is old
	// it deletes the garbage, the crash's leftovers among it, and every
	// branch still reads the same; so does every commit of the moved
	// branch's history, which the grace retains.
	if res := crashCleanup(t, dir, "--keep", "1", "--confirm"); res.FilesRemoved != 0 && !c.aged {
		t.Fatalf("cleanup within the grace removed %d files", res.FilesRemoved)
	}
	crashAge(t, dir)
	if res := crashCleanup(t, dir, "--keep", "1", "--confirm"); res.CommitsReclaimed != 0 {
		t.Fatalf("cleanup reclaimed %d commits made less than the grace ago", res.CommitsReclaimed)
	}
	if got := crashView(t, dir); !maps.Equal(got, img) {
		t.Fatalf("cleanup changed what branches read:\n%v\nwant:\n%v", got, img)
	}
	if b := c.branch; b != "" {
		g := crashOpen(t, dir)
		hist, err := g.Log(t.Context(), b, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range hist {
			crashRead(t, g, omnigraph.Target{Snapshot: cm.ID})
		}
		if got := crashRead(t, g, omnigraph.Target{Snapshot: ref.oldHeads[b]}); got != ref.before[b] {
			t.Fatalf("old head reads\n%s\nafter cleanup, want\n%s", got, ref.before[b])
		}
	}
}

// crashDelays runs args(dir) to completion on a copy of tmpl, as the
// reference, and returns the graph it leaves, its run time and iters (2
// with -short)
// kill delays drawn from seed, from 0 to 1.2× the reference's run time:
// some land before any write, some mid-write, some after the CAS, some
// after the exit.
func crashDelays(t *testing.T, tmpl string, args func(dir string) []string, seed int64, iters int) (map[string]string, time.Duration, []time.Duration) {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "ref")
	crashCopyTree(t, tmpl, ref)
	start := time.Now()
	crashMust(t, args(ref)...)
	took := time.Since(start)
	if testing.Short() {
		iters = 2
	}
	rng := rand.New(rand.NewSource(seed))
	delays := make([]time.Duration, iters)
	for i := range delays {
		delays[i] = time.Duration(rng.Float64() * 1.2 * float64(took))
	}
	return crashView(t, ref), took, delays
}

func crashSameBranches(a, b map[string]string) bool {
	return slices.Equal(sortedMapKeys(a), sortedMapKeys(b))
}

// crashKillAfter starts the binary, SIGKILLs it after delay (unless it has
// finished) and reports whether it exited successfully on its own.
func crashKillAfter(t *testing.T, delay time.Duration, args ...string) (finished bool) {
	t.Helper()
	cmd := exec.Command(omnigraphBin(t), args...)
	cmd.Env = procEnviron()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	procCount.Add(1)
	timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	err := cmd.Wait()
	timer.Stop()
	if err == nil {
		return true
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return false
		}
	}
	t.Fatalf("omnigraph %v: %v (not killed)", args, err)
	return false
}

// TestCrashSIGKILLLoad kills a 20,000-entity load with a real SIGKILL at
// pseudo-random points of its run (fixed seed, delays scaled to a measured
// clean run): the branch reads exactly the old or the new content, the load
// rerun in merge mode succeeds and converges, and an aged cleanup leaves it
// readable.
func TestCrashSIGKILLLoad(t *testing.T) {
	tmpl := newSocialGraph(t)
	var lines []string
	const persons, edges = 15000, 5000
	for i := 0; i < persons; i++ {
		lines = append(lines, fmt.Sprintf(`{"type":"Person","data":{"name":"B%05d","age":%d}}`, i, i%100))
	}
	for i := 0; i < edges; i++ {
		lines = append(lines, fmt.Sprintf(`{"edge":"Knows","from":"B%05d","to":"B%05d","data":{"id":"kb%05d"}}`, i, i+1, i))
	}
	big := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(big, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(dir, mode string) []string {
		return []string{"load", dir, "--data", big, "--mode", mode, "--quiet", "--json"}
	}
	before := crashView(t, tmpl)
	oldHead := crashLog(t, tmpl, "main")[0].ID

	after, took, delays := crashDelays(t, tmpl, func(dir string) []string { return load(dir, "append") }, 7, 6)
	if n := strings.Count(after["main"], "\n") + 1; n != 11+persons+edges {
		t.Fatalf("reference load holds %d entities", n)
	}

	var sawOld, sawNew int
	for i, delay := range delays {
		dir := filepath.Join(t.TempDir(), fmt.Sprint("g", i))
		crashCopyTree(t, tmpl, dir)
		finished := crashKillAfter(t, delay, load(dir, "append")...)
		got := crashView(t, dir)
		log := crashLog(t, dir, "main")
		switch {
		case maps.Equal(got, before) && log[0].ID == oldHead && !finished:
			sawOld++
		case maps.Equal(got, after) && log[0].ID != oldHead:
			sawNew++
			if p := log[0].Parent; p == nil || *p != oldHead {
				t.Fatalf("kill after %v: new head %s does not sit on the old head", delay, log[0].ID)
			}
		default:
			t.Fatalf("kill after %v (finished %v): main is neither the old nor the new content (head %s)", delay, finished, log[0].ID)
		}
		personNames(t, dir, "main")
		crashMust(t, load(dir, "merge")...)
		if got := crashView(t, dir); !maps.Equal(got, after) {
			t.Fatalf("kill after %v: the merge rerun does not converge", delay)
		}
		crashAge(t, dir)
		crashCleanup(t, dir, "--keep", "1", "--confirm")
		verifyOK(t, dir)
		if got := crashView(t, dir); !maps.Equal(got, after) {
			t.Fatalf("kill after %v: cleanup changed the content", delay)
		}
	}
	t.Logf("clean load %v; %d kills left the old state, %d the new", took, sawOld, sawNew)
}

// TestCrashSIGKILLMutations runs a sequence of two-table mutations (a
// person and its edge) one process after another and SIGKILLs the running
// one after a pseudo-random delay (fixed seed), several times over: every
// acknowledged mutation is present, at most one more (the killed one) is,
// and no person is ever visible without its edge. Then the next mutation
// succeeds.
func TestCrashSIGKILLMutations(t *testing.T) {
	dir := newSocialGraph(t)
	rng := rand.New(rand.NewSource(11))
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	next := 0 // mutations S0..S<next-1> are known present
	for round := 0; round < rounds; round++ {
		delay := time.Duration(50+rng.Intn(400)) * time.Millisecond
		deadline := time.Now().Add(delay)
		acked := next
		for {
			args := []string{"mutate", "--store", dir, "-e", crashInsertPair, "--json", "--quiet",
				"--params", fmt.Sprintf(`{"n":"S%03d","age":%d,"to":"Alice"}`, acked, acked%100)}
			if !crashKillAfter(t, time.Until(deadline), args...) {
				break
			}
			acked++
		}
		// The killed mutation (S<acked>) is present or absent as a whole.
		img := crashView(t, dir)["main"]
		present := 0
		for i := 0; i <= acked; i++ {
			person := strings.Contains(img, fmt.Sprintf(`"name":"S%03d"`, i))
			edge := strings.Contains(img, fmt.Sprintf(`"from":"S%03d","to":"Alice"`, i))
			if person != edge {
				t.Fatalf("round %d: S%03d person %v but edge %v: a half-visible mutation", round, i, person, edge)
			}
			if person {
				present++
			}
			if i < acked && !person {
				t.Fatalf("round %d: acknowledged mutation S%03d is lost", round, i)
			}
		}
		if strings.Contains(img, fmt.Sprintf(`"name":"S%03d"`, acked+1)) {
			t.Fatalf("round %d: S%03d present but never run", round, acked+1)
		}
		next = present
		t.Logf("round %d: killed after %v; %d acknowledged, killed one landed: %v", round, delay, acked, present > acked)
		// The next mutation succeeds.
		crashMust(t, "mutate", "--store", dir, "-e", crashInsertPair, "--json", "--quiet",
			"--params", fmt.Sprintf(`{"n":"S%03d","age":1,"to":"Alice"}`, next))
		next++
	}
	if got := strings.Count(crashView(t, dir)["main"], `"to":"Alice"`); got < next {
		t.Fatalf("%d edges to Alice, want at least %d", got, next)
	}
}

// TestCrashLoadFromFork kills `load --branch staged --from main` at the
// points of its write. The load's publish creates the branch ref pointing at
// its commit (commit.PublishRequest.NewBranch), so creating the branch and
// loading into it are one atomic step: a crash leaves either no branch or
// the loaded branch, and rerunning the load converges.
func TestCrashLoadFromFork(t *testing.T) {
	tmpl := newSocialGraph(t)
	data := filepath.Join(t.TempDir(), "eve.jsonl")
	if err := os.WriteFile(data, []byte(`{"type":"Person","data":{"name":"Eve","age":22}}`+"\n"+`{"edge":"Knows","from":"Eve","to":"Alice","data":{"id":"k-eve"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(dir, mode string) []string {
		return []string{"load", dir, "--data", data, "--mode", mode, "--branch", "staged", "--from", "main", "--json", "--quiet"}
	}
	args := func(dir string) []string { return load(dir, "append") }
	base := crashView(t, tmpl)["main"]
	ref := filepath.Join(t.TempDir(), "ref")
	crashCopyTree(t, tmpl, ref)
	crashMust(t, args(ref)...)
	loaded := crashView(t, ref)["staged"]
	for _, p := range []string{"exec/before-write", "exec/before-publish", "commit/before-cas", "commit/after-cas"} {
		t.Run(strings.ReplaceAll(p, "/", "-"), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "g")
			crashCopyTree(t, tmpl, dir)
			if r := runBinEnv(t, []string{failpoint.EnvVar + "=" + p + "=exit"}, args(dir)...); r.code != failpoint.ExitCode {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			view := crashView(t, dir)
			// The branch is created by the load's own publish, so a crash
			// leaves either no branch (old) or the loaded branch (new).
			switch got, ok := view["staged"]; {
			case !ok:
			case got == loaded:
				if p != "commit/after-cas" {
					t.Fatalf("%s: the load is visible although the process died before its publish", p)
				}
			default:
				t.Fatalf("staged exists but is not the loaded state (a fork without its load, or a mix):\n%s", got)
			}
			if view["main"] != base {
				t.Fatalf("main changed")
			}
			crashMust(t, load(dir, "merge")...)
			if got := crashView(t, dir)["staged"]; got != loaded {
				t.Fatalf("rerun holds\n%s\nwant\n%s", got, loaded)
			}
		})
	}
}

// TestCrashSIGKILLSchemaApply kills a schema apply that rewrites a table
// (a hard property drop over 20,000 rows, with a rename and an added
// property) with a real SIGKILL at pseudo-random points of its run (fixed
// seed, delays scaled to a clean run): the graph opens with exactly the old
// schema and content or the new ones, and the apply rerun converges.
func TestCrashSIGKILLSchemaApply(t *testing.T) {
	tmpl := newSocialGraph(t)
	var lines []string
	for i := 0; i < 20000; i++ {
		lines = append(lines, fmt.Sprintf(`{"type":"Person","data":{"name":"S%05d","age":%d}}`, i, i%100))
	}
	big := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(big, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	crashMust(t, "load", tmpl, "--data", big, "--mode", "append", "--quiet", "--json")
	evolved := filepath.Join(t.TempDir(), "evolved.pg")
	desired := "node Human @rename_from(\"Person\") { name: String @key  nickname: String? }\nnode Company { name: String @key }\nedge Knows: Human -> Human { since: Date? }\nedge WorksAt: Human -> Company\n"
	if err := os.WriteFile(evolved, []byte(desired), 0o644); err != nil {
		t.Fatal(err)
	}
	apply := func(dir string) []string {
		return []string{"schema", "apply", dir, "--schema", evolved, "--allow-data-loss", "--quiet", "--json"}
	}
	oldSchema := crashMust(t, "schema", "show", tmpl).stdout
	before := crashView(t, tmpl)
	after, took, delays := crashDelays(t, tmpl, apply, 5, 5)

	var sawOld, sawNew int
	for i, delay := range delays {
		dir := filepath.Join(t.TempDir(), fmt.Sprint("g", i))
		crashCopyTree(t, tmpl, dir)
		crashKillAfter(t, delay, apply(dir)...)
		schemaNow := crashMust(t, "schema", "show", dir).stdout
		got := crashView(t, dir)
		switch {
		case schemaNow == oldSchema && maps.Equal(got, before):
			sawOld++
		case schemaNow == desired && maps.Equal(got, after):
			sawNew++
		default:
			t.Fatalf("kill after %v: schema/content neither old nor new:\n%s", delay, schemaNow)
		}
		crashMust(t, apply(dir)...)
		if got := crashView(t, dir); !maps.Equal(got, after) {
			t.Fatalf("kill after %v: the rerun does not converge", delay)
		}
		verifyOK(t, dir)
	}
	t.Logf("clean apply %v; %d kills left the old schema, %d the new", took, sawOld, sawNew)
}
