package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Processes racing each other through the real binary (docs/invariants.md,
// "Crashes through the binary"): writers, maintenance and merges in separate
// OS processes on one graph directory. Correctness never depends on how the
// processes interleave; the loops are bounded, so the tests are too.

// procsSchema gives every strict writer a table of its own: inserters add
// Items, updater k rewrites the one row of Acct<k>. No two writers read what
// another writes, so no ReadSetChanged is legitimate; maintenance (optimize,
// cleanup, inline compaction) rewrites every table and must never cause one.
const procsSchema = `
node Item {
    name: String @key
    writer: I32
}

node AcctA {
    name: String @key
    n: I32
}

node AcctB {
    name: String @key
    n: I32
}
`

// procsLog collects failures from goroutines, which must not call t.Fatal.
type procsLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *procsLog) add(format string, args ...any) {
	l.mu.Lock()
	l.errs = append(l.errs, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *procsLog) report(t *testing.T) {
	t.Helper()
	for _, e := range l.errs {
		t.Error(e)
	}
	if len(l.errs) > 0 {
		t.FailNow()
	}
}

// procsRun runs the binary from a goroutine; a failure to start is logged.
func procsRun(bin string, l *procsLog, args ...string) (runResult, bool) {
	r, err := procRun(bin, nil, args...)
	if err != nil {
		l.add("run %v: %v", args, err)
		return r, false
	}
	return r, true
}

// procsBudgetMarks identify a write that ran out of rebases: under sustained
// contention every attempt may lose its CAS to another process, and the
// engine gives up after Options.MaxRetries rebases with nothing published
// (writes: "too much contention" (*ContentionError); optimize: "gave up
// after N rebases"; merges: ReadSetChanged on the target's graph head,
// docs/branching.md). That is a bounded-retry outcome, not a conflict: the
// client runs the same command again.
var procsBudgetMarks = []string{"too much contention", "gave up after", "kept moving while this merge was planned"}

// procsWrite runs a write, retrying it while it runs out of rebases (at most
// 10 times); gaveUp counts those retries.
func procsWrite(bin string, l *procsLog, gaveUp *atomic.Int64, args ...string) (runResult, bool) {
	for try := 0; ; try++ {
		r, ok := procsRun(bin, l, args...)
		if !ok || r.code == 0 || try == 10 || !slices.ContainsFunc(procsBudgetMarks, func(m string) bool { return strings.Contains(r.stderr, m) }) {
			return r, ok
		}
		gaveUp.Add(1)
	}
}

// procsNames returns the sorted values of column col of a query's rows.
func procsNames(t *testing.T, args ...string) []string {
	t.Helper()
	var out []string
	for _, row := range rowsOf(t, mustRun(t, args...)) {
		out = append(out, fmt.Sprint(row["n.name"]))
	}
	sort.Strings(out)
	return out
}

// procsGraph initializes a graph of schema in a temporary directory and
// appends seed (load-format lines) to it, returning the graph's directory.
func procsGraph(t *testing.T, schema string, seed ...string) string {
	t.Helper()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "g")
	schemaPath := writeFile(t, tmp, "schema.pg", schema)
	seedPath := writeFile(t, tmp, "seed.jsonl", strings.Join(seed, "\n")+"\n")
	mustRun(t, "init", "--schema", schemaPath, dir, "--json")
	mustRun(t, "load", dir, "--data", seedPath, "--mode", "append", "--json", "--quiet")
	return dir
}

// procsEach is how many writes each racing process makes (fewer with -short).
func procsEach() int {
	if testing.Short() {
		return 4
	}
	return 8
}

// procsChain asserts that a branch's history is a chain: one parent each.
func procsChain(t *testing.T, log []crashCommit) {
	t.Helper()
	for i, c := range log {
		if c.Merged != nil {
			t.Fatalf("commit %s has two parents", c.ID)
		}
		if i+1 < len(log) && (c.Parent == nil || *c.Parent != log[i+1].ID) {
			t.Fatalf("history is not a chain at %s", c.ID)
		}
	}
}

// TestProcsWritersRaceMaintenance runs 4 inserting processes and 2 updating
// processes against processes looping optimize and cleanup --keep 2
// --confirm (default grace). Afterwards every acknowledged insert and the
// last acknowledged update are present, no writer failed (maintenance never
// causes a conflict), main's history is a chain, and every commit it lists
// is readable by --snapshot unless cleanup reported reclaiming commits, in
// which case an unreadable one fails with the clear reclaimed error.
func TestProcsWritersRaceMaintenance(t *testing.T) {
	bin := omnigraphBin(t)
	dir := procsGraph(t, procsSchema, `{"type":"AcctA","data":{"name":"a","n":0}}`, `{"type":"AcctB","data":{"name":"b","n":0}}`)

	const inserters, updaters = 4, 2
	each := procsEach()
	var l procsLog
	var gaveUp atomic.Int64
	var writers sync.WaitGroup
	inserted := make([][]string, inserters) // acknowledged, per writer
	for w := 0; w < inserters; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; i < each; i++ {
				name := fmt.Sprintf("w%d-%02d", w, i)
				r, ok := procsWrite(bin, &l, &gaveUp, "mutate", "--store", dir, "--json", "--quiet", "--params", fmt.Sprintf(`{"n":%q,"w":%d}`, name, w),
					"-e", `query add($n: String, $w: I32) { insert Item { name: $n, writer: $w } }`)
				if !ok {
					return
				}
				if r.code != 0 {
					l.add("inserter %d, %s: exit %d: %s", w, name, r.code, r.stderr)
					return
				}
				inserted[w] = append(inserted[w], name)
			}
		}()
	}
	lastUpdate := make([]int, updaters)
	for u := 0; u < updaters; u++ {
		typ, row := [...]string{"AcctA", "AcctB"}[u], [...]string{"a", "b"}[u]
		writers.Add(1)
		go func() {
			defer writers.Done()
			for v := 1; v <= each; v++ {
				r, ok := procsWrite(bin, &l, &gaveUp, "mutate", "--store", dir, "--json", "--quiet", "--params", fmt.Sprintf(`{"v":%d}`, v),
					"-e", fmt.Sprintf(`query set($v: I32) { update %s set { n: $v } where name = %q }`, typ, row))
				if !ok {
					return
				}
				if r.code != 0 {
					l.add("updater %s, value %d: exit %d (maintenance must never conflict with a writer): %s", typ, v, r.code, r.stderr)
					return
				}
				var m struct {
					Affected int `json:"affected_nodes"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || m.Affected != 1 {
					l.add("updater %s, value %d: %s", typ, v, r.stdout)
					return
				}
				lastUpdate[u] = v
			}
		}()
	}
	// Maintenance loops until the writers are done (bounded either way).
	var done atomic.Bool
	var reclaimed atomic.Int64
	var maint sync.WaitGroup
	loop := func(name string, args ...string) {
		maint.Add(1)
		go func() {
			defer maint.Done()
			for n := 0; n < 200 && !done.Load(); n++ {
				r, ok := procsWrite(bin, &l, &gaveUp, append(args, dir, "--json", "--quiet")...)
				if !ok {
					return
				}
				if r.code != 0 {
					l.add("%s: exit %d: %s", name, r.code, r.stderr)
					return
				}
				var res crashCleanupResult
				if name == "cleanup" {
					if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
						l.add("cleanup output %q: %v", r.stdout, err)
						return
					}
					reclaimed.Add(int64(res.CommitsReclaimed))
				}
			}
		}()
	}
	loop("optimize", "optimize")
	loop("cleanup", "cleanup", "--keep", "2", "--confirm")
	writers.Wait()
	done.Store(true)
	maint.Wait()
	l.report(t)

	// Every acknowledged insert is present, and nothing else.
	var want []string
	for _, names := range inserted {
		want = append(want, names...)
	}
	sort.Strings(want)
	if len(want) != inserters*each {
		t.Fatalf("%d inserts acknowledged, want %d", len(want), inserters*each)
	}
	got := procsNames(t, "query", "--store", dir, "--json", "-e", `query q() { match { $n: Item } return { $n.name } }`)
	if !slices.Equal(got, want) {
		t.Fatalf("items = %v\nwant %v", got, want)
	}
	// The last acknowledged update of each row is what it reads.
	for u, typ := range []string{"AcctA", "AcctB"} {
		rows := rowsOf(t, mustRun(t, "query", "--store", dir, "--json", "-e", fmt.Sprintf(`query q() { match { $x: %s } return { $x.n } }`, typ)))
		if len(rows) != 1 || rows[0]["x.n"] != float64(lastUpdate[u]) || lastUpdate[u] != each {
			t.Fatalf("%s = %v, last acknowledged update %d (of %d)", typ, rows, lastUpdate[u], each)
		}
	}
	// History is a chain; every listed commit reads, or is reported reclaimed.
	log := crashLog(t, dir, "main")
	procsChain(t, log)
	unreadable := 0
	for _, c := range log {
		r := runBin(t, "export", dir, "--snapshot", c.ID)
		switch {
		case r.code == 0:
		case reclaimed.Load() > 0 && r.code == 1 && strings.Contains(r.stderr, "no longer readable: its data was removed by cleanup"):
			unreadable++
		default:
			t.Fatalf("commit %s: exit %d %s (cleanup reported %d reclaimed)", c.ID, r.code, r.stderr, reclaimed.Load())
		}
	}
	t.Logf("%d commits, %d reclaimed by cleanup and unreadable (cleanup reported %d); %d writes ran out of rebases and were rerun",
		len(log), unreadable, reclaimed.Load(), gaveUp.Load())
	verifyClean(t, dir)
}

// TestProcsMergeRacesWriters runs one process merging feature into main over
// and over while other processes insert on main and on feature. Every merge
// succeeds with a valid outcome and brings every feature insert acknowledged
// before it started; nothing is lost; after a last merge main holds the
// union and feature only its own rows.
func TestProcsMergeRacesWriters(t *testing.T) {
	bin := omnigraphBin(t)
	dir := newSocialGraph(t)
	mustRun(t, "branch", "create", "--uri", dir, "feature", "--json")
	base := personNames(t, dir, "main")
	each := procsEach()
	var l procsLog
	var gaveUp atomic.Int64
	var mu sync.Mutex
	acked := map[string][]string{} // branch → acknowledged inserts
	ackedOn := func(branch string) []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(acked[branch])
	}
	var writers sync.WaitGroup
	for w, branch := range []string{"main", "main", "feature", "feature"} {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; i < each; i++ {
				name := fmt.Sprintf("%s%d-%02d", strings.ToUpper(branch[:1]), w, i)
				r, ok := procsWrite(bin, &l, &gaveUp, "mutate", "--store", dir, "--branch", branch, "-e", insertPerson,
					"--params", fmt.Sprintf(`{"name":%q,"age":%d}`, name, i), "--json", "--quiet")
				if !ok {
					return
				}
				if r.code != 0 {
					l.add("insert %s on %s: exit %d: %s", name, branch, r.code, r.stderr)
					return
				}
				mu.Lock()
				acked[branch] = append(acked[branch], name)
				mu.Unlock()
			}
		}()
	}
	type mergeRun struct {
		outcome, commit string
		required        []string // feature inserts acknowledged before it started
	}
	var merges []mergeRun
	var done atomic.Bool
	merger := make(chan struct{})
	merge := func() bool {
		required := ackedOn("feature")
		r, ok := procsWrite(bin, &l, &gaveUp, "branch", "merge", "--uri", dir, "feature", "--into", "main", "--json", "--quiet")
		if !ok {
			return false
		}
		var res struct {
			Outcome string `json:"outcome"`
			Commit  *struct {
				ID     string  `json:"graph_commit_id"`
				Parent *string `json:"parent_commit_id"`
				Merged *string `json:"merged_parent_commit_id"`
			} `json:"commit"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
			l.add("merge: exit %d: %s%s", r.code, r.stdout, r.stderr)
			return false
		}
		m := mergeRun{outcome: res.Outcome, required: required}
		switch res.Outcome {
		case "already_up_to_date":
		case "merged", "fast_forward":
			if res.Commit == nil || res.Commit.Parent == nil || res.Commit.Merged == nil {
				l.add("merge %s without a two-parent commit: %s", res.Outcome, r.stdout)
				return false
			}
			m.commit = res.Commit.ID
		default:
			l.add("merge outcome %q: %s", res.Outcome, r.stdout)
			return false
		}
		merges = append(merges, m)
		return true
	}
	go func() {
		defer close(merger)
		for n := 0; n < 100 && !done.Load(); n++ {
			if !merge() {
				return
			}
		}
	}()
	writers.Wait()
	done.Store(true)
	<-merger
	l.report(t)
	if !merge() { // the last one, with every writer done
		l.report(t)
	}

	// Each merge commit holds every feature insert acknowledged before the
	// merge started, and main, which only grows, holds them all.
	mainNow := personNames(t, dir, "main")
	counts := map[string]int{}
	for _, m := range merges {
		counts[m.outcome]++
		have := mainNow
		if m.commit != "" {
			have = procsNames(t, "query", "--store", dir, "--snapshot", m.commit, "--json",
				"-e", `query q() { match { $n: Person } return { $n.name } }`)
		}
		for _, name := range m.required {
			if !slices.Contains(have, name) {
				t.Fatalf("merge %s (%s) lacks %s, acknowledged on feature before it started", m.commit, m.outcome, name)
			}
		}
	}
	t.Logf("%d merges: %v; %d commands ran out of rebases and were rerun", len(merges), counts, gaveUp.Load())
	want := append(append(slices.Clone(base), ackedOn("main")...), ackedOn("feature")...)
	sort.Strings(want)
	if len(want) != len(base)+4*each {
		t.Fatalf("%d inserts acknowledged, want %d", len(want)-len(base), 4*each)
	}
	if !slices.Equal(mainNow, want) {
		t.Fatalf("main = %v\nwant the union %v", mainNow, want)
	}
	wantFeature := append(slices.Clone(base), ackedOn("feature")...)
	sort.Strings(wantFeature)
	if got := personNames(t, dir, "feature"); !slices.Equal(got, wantFeature) {
		t.Fatalf("feature = %v\nwant %v", got, wantFeature)
	}
	verifyClean(t, dir)
}
