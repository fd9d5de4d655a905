package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression tests through the binary for issue 17 item 7.

// TestDeleteNestedBranchFreesParentName: deleting branch a/b leaves nothing
// that blocks creating branch a.
func TestDeleteNestedBranchFreesParentName(t *testing.T) {
	dir := newSocialGraph(t)
	mustRun(t, "branch", "create", "a/b", "--uri", dir, "--json", "--quiet")
	if r := runBin(t, "branch", "create", "a", "--uri", dir, "--json", "--quiet"); r.code == 0 {
		t.Fatal("branch a created while a/b is live")
	}
	mustRun(t, "branch", "delete", "a/b", "--uri", dir, "--json", "--quiet")
	if _, err := os.Stat(filepath.Join(dir, "refs", "heads", "a")); err == nil {
		t.Fatal("refs/heads/a/ left behind after deleting a/b")
	}
	mustRun(t, "branch", "create", "a", "--uri", dir, "--json", "--quiet")
	mustRun(t, "branch", "delete", "a", "--uri", dir, "--json", "--quiet")
	mustRun(t, "branch", "create", "a/b/c", "--uri", dir, "--json", "--quiet")
}

// TestEmptySnapshotIsAnError: --snapshot ” is a usage error, never the head.
func TestEmptySnapshotIsAnError(t *testing.T) {
	dir := newSocialGraph(t)
	for _, args := range [][]string{
		{"snapshot", dir, "--snapshot", ""},
		{"export", dir, "--snapshot="},
		{"query", "get_person", "--query", filepath.Join(exampleDir, "queries.gq"), "--params", `{"name":"Alice"}`, "--store", dir, "--snapshot", ""},
		{"export", dir, "--branch", ""},
	} {
		r := runBin(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "needs a value") || r.stdout != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want a usage error", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestDeletedStateIsNotCleanup: a table state deleted by hand is reported as
// a missing object (corruption naming the commit and the state), not as
// "removed by cleanup", both for a time-travel read and for the head.
func TestDeletedStateIsNotCleanup(t *testing.T) {
	separateObjects(t)
	dir := newSocialGraph(t)
	old := headCommitFile(t, dir, "main")
	oldID := strings.TrimSuffix(strings.TrimPrefix(old, "commits/"), ".json")
	more := writeFile(t, t.TempDir(), "more.jsonl", `{"type":"Person","data":{"name":"Eve","age":41}}`+"\n")
	mustRun(t, "load", "--data", more, "--mode", "append", dir, "--json", "--quiet")
	state := headState(t, dir, "node:Person") // the new head's Person state
	oldState := ""
	{
		b, _ := os.ReadFile(filepath.Join(dir, old))
		s := string(b)
		i := strings.Index(s, `"node:Person":"`) + len(`"node:Person":"`)
		oldState = s[i : i+strings.Index(s[i:], `"`)]
	}
	if err := os.Remove(filepath.Join(dir, oldState)); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, "export", dir, "--snapshot", oldID)
	if r.code != 1 || strings.Contains(r.stderr, "data was removed by cleanup") || !strings.Contains(r.stderr, oldState) ||
		!strings.Contains(r.stderr, "not removed by cleanup") {
		t.Fatalf("time travel to a commit with a deleted state: exit %d %q", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, state)); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, "export", dir)
	if r.code != 1 || !strings.Contains(r.stderr, state) || !strings.Contains(r.stderr, "corrupt object commits/") {
		t.Fatalf("head with a deleted state: exit %d %q", r.code, r.stderr)
	}
	v, _ := runVerify(t, dir)
	missing := map[string]bool{}
	for _, p := range v.Problems {
		if p.Kind == "missing" {
			missing[p.Object] = true
		}
	}
	if !missing[state] || !missing[oldState] {
		t.Fatalf("verify problems %+v, want both states missing", v.Problems)
	}
}

// TestSchemaIdentifierLimits: a 1,000,000-character type name is refused by
// lint and init with a short message; so is a property named id, by lint
// as well as init.
func TestSchemaIdentifierLimits(t *testing.T) {
	tmp := t.TempDir()
	long := writeFile(t, tmp, "long.pg", "node "+strings.Repeat("A", 1_000_000)+" { name: String @key }\n")
	idProp := writeFile(t, tmp, "id.pg", "node Person { id: String name: String @key }\n")
	gq := writeFile(t, tmp, "q.gq", "query q() { match { $p: Person } return { $p.name } }\n")
	tests := []struct {
		file, want string
	}{
		{long, "identifier is 1000000 bytes long; at most 128 are allowed"},
		{idProp, "property name 'id' on node Person is reserved"},
	}
	for _, tt := range tests {
		for _, args := range [][]string{
			{"lint", "--schema", tt.file, "--query", gq, "--json"},
			{"init", "--schema", tt.file, filepath.Join(tmp, "g"+filepath.Base(tt.file)), "--json"},
		} {
			r := runBin(t, args...)
			out := r.stdout + r.stderr
			if r.code != 1 || !strings.Contains(out, tt.want) || len(out) > 2000 {
				t.Fatalf("%v: exit %d, %d bytes of output: %.300s", args[0], r.code, len(out), out)
			}
		}
		if _, err := os.Stat(filepath.Join(tmp, "g"+filepath.Base(tt.file), "refs")); err == nil {
			t.Fatalf("init of %s created a graph", tt.file)
		}
	}
}

// TestInvalidTextRefused is the reproduction 4: invalid UTF-8 and
// lone surrogates are refused with an error naming line and field, in JSONL
// data, params, schema and query files, and change nothing.
func TestInvalidTextRefused(t *testing.T) {
	dir := newSocialGraph(t)
	tmp := t.TempDir()
	before := runBin(t, "export", dir).stdout
	for _, tt := range []struct{ name, data, want string }{
		{"invalid utf8", "{\"type\":\"Person\",\"data\":{\"name\":\"Ok\"}}\n{\"type\":\"Person\",\"data\":{\"name\":\"X\xff\xfeY\"}}\n",
			"line 2, field 'data.name': invalid UTF-8 in string"},
		{"lone surrogate", `{"type":"Person","data":{"name":"X\ud800Y"}}` + "\n", `line 1, field 'data.name': lone surrogate \uD800`},
	} {
		data := writeFile(t, tmp, "bad.jsonl", tt.data)
		for _, mode := range []string{"merge", "append"} {
			r := runBin(t, "load", "--data", data, "--mode", mode, dir, "--json", "--quiet")
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("%s (%s): exit %d %q, want %q", tt.name, mode, r.code, r.stderr, tt.want)
			}
		}
	}
	q := filepath.Join(exampleDir, "queries.gq")
	for _, params := range []string{"{\"name\":\"X\xffY\"}", `{"name":"\udfff"}`} {
		r := runBin(t, "query", "get_person", "--query", q, "--params", params, "--store", dir, "--json")
		if r.code != 2 || !strings.Contains(r.stderr, "field 'name'") || !strings.Contains(r.stderr, "invalid --params") {
			t.Fatalf("params %q: exit %d %q", params, r.code, r.stderr)
		}
	}
	if got := runBin(t, "export", dir).stdout; got != before {
		t.Fatal("a refused input changed the graph")
	}
	badPG := writeFile(t, tmp, "bad.pg", "node Person {\n  name: String @key @description(\"X\xff\")\n}\n")
	if r := runBin(t, "lint", "--schema", badPG, "--query", q, "--json"); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "bad.pg:2:") ||
		!strings.Contains(r.stdout+r.stderr, "invalid UTF-8") {
		t.Fatalf("schema with invalid UTF-8: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	badGQ := writeFile(t, tmp, "bad.gq", "query q() {\n match { $p: Person { name: \"X\xff\" } }\n return { $p.name }\n}\n")
	if r := runBin(t, "query", "--query", badGQ, "--store", dir, "--json"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "invalid UTF-8") ||
		!strings.Contains(r.stdout+r.stderr, "2:") {
		t.Fatalf("query with invalid UTF-8: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestLoadEndlessLineStops is the issue's reproduction 5: `load --data
// /dev/zero` stops with an error once the line limit is passed instead of
// reading forever.
func TestLoadEndlessLineStops(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := newSocialGraph(t)
	before := runBin(t, "export", dir).stdout
	r := runBin(t, "load", "--data", "/dev/zero", "--mode", "append", dir, "--json", "--quiet")
	if r.code != 1 || !strings.Contains(r.stderr, "line 1: line exceeds") {
		t.Fatalf("load /dev/zero: exit %d %q", r.code, r.stderr)
	}
	if got := runBin(t, "export", dir).stdout; got != before {
		t.Fatal("a refused load changed the graph")
	}
}

// TestRevisions (issue 18 item 2): commit prefixes, BRANCH~N and BRANCH^
// work wherever a commit is taken, through the binary; an ambiguous prefix
// lists its candidates.
func TestRevisions(t *testing.T) {
	dir := newSocialGraph(t)
	more := writeFile(t, t.TempDir(), "more.jsonl", `{"type":"Person","data":{"name":"Eve","age":41}}`+"\n")
	mustRun(t, "load", "--data", more, "--mode", "append", dir, "--json", "--quiet")
	head := strings.TrimSuffix(strings.TrimPrefix(headCommitFile(t, dir, "main"), "commits/"), ".json")
	q := filepath.Join(exampleDir, "queries.gq")
	count := func(rev string) int {
		t.Helper()
		m := mustRun(t, "query", "get_person", "--query", q, "--params", `{"name":"Eve"}`, "--store", dir, "--snapshot", rev, "--json")
		return len(rowsOf(t, m))
	}
	for rev, want := range map[string]int{
		head:                       1,
		strings.ToLower(head[:20]): 1,
		"main":                     1,
		"main~1":                   0,
		"main^":                    0,
		head[:20] + "~1":           0,
	} {
		if got := count(rev); got != want {
			t.Errorf("--snapshot %s: %d rows for Eve, want %d", rev, got, want)
		}
	}
	show := mustRun(t, "commit", "show", "main^", "--uri", dir, "--json")
	if id, _ := show["graph_commit_id"].(string); id == "" || id == head {
		t.Errorf("commit show main^ = %v", show)
	}
	mustRun(t, "branch", "create", "back", "--from", "main~1", "--uri", dir, "--json", "--quiet")
	for _, tc := range []struct{ rev, msg string }{
		{head[:5], "is ambiguous: it matches"}, // genesis, load and append share their first characters
		{"main~9", "commit not found"},
		{"nosuch~1", "commit not found"},
	} {
		r := runBin(t, "query", "get_person", "--query", q, "--params", `{"name":"Eve"}`, "--store", dir, "--snapshot", tc.rev)
		if r.code != 1 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("--snapshot %s: exit %d, stderr %q; want %q", tc.rev, r.code, r.stderr, tc.msg)
		}
	}
}

// runBinIn is runBin with stdin.
func runBinIn(t *testing.T, stdin string, args ...string) runResult {
	t.Helper()
	r, err := procRunIn(omnigraphBin(t), nil, strings.NewReader(stdin), args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDailyCLIFindings (issue 18): standard input as "-", the messages
// scripts grep for, and usage hints that point at the subcommand.
func TestDailyCLIFindings(t *testing.T) {
	dir := newSocialGraph(t)
	q := filepath.Join(exampleDir, "queries.gq")
	data, err := os.ReadFile(filepath.Join(exampleDir, "data.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"load from stdin", string(data), []string{"load", "--data", "-", "--mode", "overwrite", dir, "--quiet"}, 0, "11 entities", ""},
		{"query from stdin", `query q() { match { $p: Person } return { count($p) as n } }`,
			[]string{"query", "--query", "-", "--store", dir, "--json"}, 0, `"n": 4`, ""},
		{"params from stdin", `{"name":"Alice"}`,
			[]string{"query", "get_person", "--query", q, "--params-file", "-", "--store", dir, "--json"}, 0, `"Alice"`, ""},
		{"two stdin flags", `{}`,
			[]string{"query", "get_person", "--query", "-", "--params-file", "-", "--store", dir}, 2, "", "both want standard input"},
		{"missing --mode", "", []string{"load", "--data", "x.jsonl", dir}, 2, "", "--mode is required\nRun 'omnigraph load --help' for usage."},
		{"typo in a command", "", []string{"qurey"}, 2, "", `unknown command "qurey" for "omnigraph"; did you mean query?`},
		{"typo in a subcommand", "", []string{"branch", "craete", "x"}, 2, "", "did you mean create?\nRun 'omnigraph branch --help' for usage."},
		{"exclusive flags", "", []string{"query", "-e", "query q() { match { $p: Person } return { $p.name } }", "--store", dir, "--branch", "main", "--snapshot", "main"}, 2, "",
			"--branch and --snapshot cannot be used together"},
		{"empty query", "", []string{"query", "-e", "", "--store", dir}, 2, "", "must not be empty"},
		{"several queries, no name", "", []string{"query", "--query", q, "--store", dir}, 1, "", "multiple queries"},
		{"misspelt parameter", "", []string{"query", "get_person", "--query", q, "--params", `{"nme":"Alice"}`, "--store", dir}, 1, "",
			"parameter 'name' not provided (the query does not declare 'nme')"},
		{"misspelt mutation parameter", "", []string{"mutate", "-e", `query m($n: String) { insert Person { name: $n } }`, "--params", `{"nn":"Zed"}`, "--store", dir, "--quiet"}, 1, "",
			"parameter 'n' not provided (the query does not declare 'nn')"},
		{"type error located", "query q() {\n  match { $p: Person }\n  return { $p.nme }\n}\n",
			[]string{"query", "--query", "-", "--store", dir}, 1, "", "has no property `nme`; did you mean `name`? (at line 3, column 15)"},
		{"ingest is load with merge", `{"type":"Person","data":{"name":"Zed"}}`, []string{"ingest", "--data", "-", dir},
			0, "on branch main with merge: 1 entities", "warning: `omnigraph ingest` is deprecated; use `omnigraph load --mode merge`\nomnigraph ingest → "},
		{"ingest forks a missing branch from main", `{"type":"Person","data":{"name":"Zed"}}`, []string{"ingest", "--data", "-", "--branch", "side", dir, "--json", "--quiet"},
			0, `"base_branch": "main"`, ""},
		{"ingest is hidden", "", []string{"--help"}, 0, "", ""},
		{"create main", "", []string{"branch", "create", "main", "--store", dir}, 1, "", `branch "main": branch already exists: main exists in every graph`},
		{"graph as an extra argument", "", []string{"branch", "create", "what-if", dir}, 2, "",
			"omnigraph branch create does not take the graph as a positional argument: name it with --store " + dir},
		{"graph where a query NAME goes", "", []string{"query", dir, "-e", "query q() { match { $p: Person } return { $p.name } }"}, 2, "",
			"omnigraph query does not take the graph as a positional argument: name it with --store " + dir},
		{"graph after branch list", "", []string{"branch", "list", dir}, 2, "", "name it with --store " + dir},
		{"no graph for a scoped command", "", []string{"query", "-e", "query q() { match { $p: Person } return { $p.name } }"}, 2, "",
			"no graph selected: give --store URI (or set defaults.store in "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBinIn(t, tc.stdin, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", r.code, tc.code, r.stdout, tc.stdout, r.stderr, tc.stderr)
			}
			if tc.name == "ingest is hidden" && strings.Contains(r.stdout, "ingest") {
				t.Fatalf("--help lists the deprecated ingest:\n%s", r.stdout)
			}
		})
	}
}

// TestOptimizeText (issue 18): optimize names only the tables it changed
// and what it did to each; a second run says there was nothing to do.
func TestOptimizeText(t *testing.T) {
	dir := newSocialGraph(t)
	// Two single-row writes: small fragments, not yet enough for automatic
	// compaction (a third would trigger it, leaving nothing to do).
	for i := 0; i < 2; i++ {
		runBinIn(t, "", "mutate", "-e", fmt.Sprintf(`query m() { insert Person { name: "n%d" } }`, i), "--store", dir, "--quiet")
	}
	r := runBinIn(t, "", "optimize", dir, "--quiet")
	// No "fragments indexed": every fragment carries its own index, so
	// optimize builds no key index (docs/maintenance.md).
	if r.code != 0 || strings.Contains(r.stdout, "compacted into 0") || strings.Contains(r.stdout, "fragments indexed") ||
		!strings.Contains(r.stdout, " of 4 tables, commit ") {
		t.Fatalf("first optimize: exit %d\n%q%s", r.code, r.stdout, r.stderr)
	}
	if r := runBinIn(t, "", "optimize", dir, "--quiet"); r.code != 0 || r.stdout != "already optimized: nothing to do\n" {
		t.Fatalf("second optimize: exit %d %q", r.code, r.stdout)
	}
}

// TestHistoryText (issue 18): text `snapshot` names its commit, and
// `commit list` marks each commit's kind and a merge's second parent.
func TestHistoryText(t *testing.T) {
	dir := newSocialGraph(t)
	mustRun(t, "branch", "create", "f", "--uri", dir, "--json", "--quiet")
	add := func(branch, name string) {
		t.Helper()
		mustRun(t, "mutate", "-e", `query m($n: String) { insert Person { name: $n } }`, "--params", fmt.Sprintf(`{"n":%q}`, name), "--store", dir, "--branch", branch, "--json", "--quiet")
	}
	add("f", "Zed")
	add("main", "Ann")
	mustRun(t, "branch", "merge", "f", "--uri", dir, "--json", "--quiet")
	head := strings.TrimSuffix(strings.TrimPrefix(headCommitFile(t, dir, "main"), "commits/"), ".json")
	if r := runBin(t, "snapshot", dir); r.code != 0 || !strings.Contains(r.stdout, "graph_commit_id: "+head+"\n") {
		t.Fatalf("snapshot: exit %d\n%s", r.code, r.stdout)
	}
	r := runBin(t, "commit", "list", dir)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 5 {
		t.Fatalf("commit list: exit %d\n%s", r.code, r.stdout)
	}
	if !strings.HasPrefix(lines[0], head) || !strings.Contains(lines[0], " merge ") || !strings.Contains(lines[0], "merged=") {
		t.Errorf("merge line %q", lines[0])
	}
	for i, kind := range []string{"mutate", "mutate", "load", "init"} {
		if !strings.Contains(lines[i+1], " "+kind+" ") || strings.Contains(lines[i+1], "merged=") {
			t.Errorf("line %d %q: want kind %s", i+1, lines[i+1], kind)
		}
	}
}

// TestLintShowsEveryError (issue 18): lint lists every error of every
// query with its position, nothing behind "(and N more errors)".
func TestLintShowsEveryError(t *testing.T) {
	dir := newSocialGraph(t)
	q := writeFile(t, t.TempDir(), "q.gq", "query a() { match { $p: Person } return { $p.name } }\n"+
		"query b() { match { $p: Persn } return { $p.name } }\n"+
		"query c() { match { $p: Person } return { $p.agee, $p.x } }\n")
	r := runBin(t, "lint", "--query", q, "--store", dir)
	for _, want := range []string{
		"ok     a (read)",
		"unknown node type `Persn`; did you mean `Person`? (at line 2, column 25)",
		"has no property `agee`; did you mean `age`? (at line 3, column 46)",
		"has no property `x` (at line 3, column 55)",
		": 3 queries, 2 errors (3 diagnostics), 0 warnings",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lint output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.code != 1 || strings.Contains(r.stdout, "more error") || strings.Contains(r.stdout, "`x`; did you mean") {
		t.Errorf("exit %d\n%s", r.code, r.stdout)
	}
}

// TestLoadProgress (issue 18): on a terminal, loading a file shows its
// bytes against the file's size, and the bar is cleared before the result
// line (which is never printed onto it).
func TestLoadProgress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g.omni")
	mustRun(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), dir, "--json")
	var b strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":"p%d","age":%d}}`+"\n", i, i%90)
	}
	data := writeFile(t, t.TempDir(), "big.jsonl", b.String())
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"load", "--data", data, "--mode", "append", dir, "--quiet"},
		&IO{In: strings.NewReader(""), Out: &out, Err: &errb, StderrTTY: true})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "loading") || !strings.Contains(errb.String(), "% |") || !strings.Contains(errb.String(), "/1.5 MB") {
		t.Errorf("no byte progress with a percentage on stderr: %q", errb.String())
	}
	if strings.Contains(errb.String(), "records/s") {
		t.Errorf("a file load shows a records rate: %q", errb.String())
	}
	if !strings.HasPrefix(out.String(), "loaded ") {
		t.Errorf("result line %q", out.String())
	}
}

// TestNearMissAnnotations (issue 18): an unknown annotation one typo from a
// known one is legal metadata, so the schema compiles, but lint, init and
// schema plan warn with a suggestion; a far-off name stays silent.
func TestNearMissAnnotations(t *testing.T) {
	tmp := t.TempDir()
	pg := writeFile(t, tmp, "near.pg", "node P {\n  name: String @kee\n  age: I32? @idnex @default(3) @colour(\"x\")\n}\n")
	gq := writeFile(t, tmp, "q.gq", "query q() { match { $p: P } return { $p.name } }\n")
	lint := runBin(t, "lint", "--schema", pg, "--query", gq)
	for _, want := range []string{
		"warning S001: " + pg + ":2:16: unknown annotation @kee has no effect; did you mean @key?",
		"warning S001: " + pg + ":3:13: unknown annotation @idnex has no effect; did you mean @index?",
		"@default has no effect: schemas have no default values",
		"1 queries, 0 errors, 3 warnings",
	} {
		if !strings.Contains(lint.stdout, want) {
			t.Errorf("lint lacks %q:\n%s", want, lint.stdout)
		}
	}
	if lint.code != 0 || strings.Contains(lint.stdout, "colour") {
		t.Errorf("lint exit %d:\n%s", lint.code, lint.stdout)
	}
	// init, schema plan and schema apply print the warnings of the compile
	// the engine does, naming the file as given, one line each.
	want := "warning: " + pg + ":2:16: unknown annotation @kee has no effect; did you mean @key?\n" +
		"warning: " + pg + ":3:13: unknown annotation @idnex has no effect; did you mean @index?\n" +
		"warning: " + pg + ":3:20: @default has no effect: schemas have no default values (a missing value is null; make the property nullable or give it in every load)\n"
	g := filepath.Join(tmp, "g")
	for _, args := range [][]string{
		{"init", "--schema", pg, g, "--quiet"},
		{"schema", "plan", "--schema", pg, g, "--quiet"},
		{"schema", "apply", "--schema", pg, g, "--quiet"},
	} {
		if r := runBin(t, args...); r.code != 0 || r.stderr != want {
			t.Errorf("%v: exit %d, stderr\n%s\nwant\n%s", args[:2], r.code, r.stderr, want)
		}
	}
}

// TestEnumParamsChecked (issue 18): a read query's String parameter
// compared with an enum property is checked like a write's value, so a
// typo fails with the enum's values instead of silently matching nothing.
func TestEnumParamsChecked(t *testing.T) {
	tmp := t.TempDir()
	pg := writeFile(t, tmp, "e.pg", "node T { name: String @key\n  st: enum(open, closed) }\n")
	dir := filepath.Join(tmp, "g")
	runBin(t, "init", "--schema", pg, dir, "--quiet")
	runBinIn(t, `{"type":"T","data":{"name":"x","st":"open"}}`+"\n", "load", "--data", "-", "--mode", "overwrite", dir, "--quiet")
	bad := "parameter 's': invalid enum value 'opn' for T.st (expected: closed, open)"
	for _, tc := range []struct {
		name, cmd, src, params string
		code                   int
		out, err               string
	}{
		{"match", "query", `query q($s: String) { match { $t: T { st: $s } } return { $t.name } }`, `{"s":"opn"}`, 1, "", bad},
		{"filter !=", "query", `query q($s: String) { match { $t: T  $t.st != $s } return { $t.name } }`, `{"s":"opn"}`, 1, "", bad},
		{"valid value", "query", `query q($s: String) { match { $t: T { st: $s } } return { $t.name } }`, `{"s":"open"}`, 0, "x", ""},
		{"mutation where", "mutate", `query m($s: String) { delete T where st = $s }`, `{"s":"opn"}`, 1, "", bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, tc.cmd, "-e", tc.src, "--params", tc.params, "--store", dir, "--quiet")
			if r.code != tc.code || !strings.Contains(r.stdout, tc.out) || !strings.Contains(r.stderr, tc.err) {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestOutputDefaults (issue 18): the operator config's defaults.output,
// table_max_column_width and table_cell_layout apply to embedded reads;
// --format still wins.
func TestOutputDefaults(t *testing.T) {
	dir := newSocialGraph(t)
	home := t.TempDir()
	q := `query q() { match { $p: Person { name: "Alice" } } return { $p.name } }`
	run := func(cfg string, args ...string) string {
		t.Helper()
		writeFile(t, home, "config.yaml", cfg)
		r, err := procRun(omnigraphBin(t), []string{"OMNIGRAPH_HOME=" + home}, append([]string{"query", "-e", q, "--store", dir}, args...)...)
		if err != nil || r.code != 0 {
			t.Fatalf("%v %+v", err, r)
		}
		return r.stdout
	}
	if got := run("defaults:\n  output: csv\n"); got != "p.name\nAlice\n" {
		t.Errorf("defaults.output csv: %q", got)
	}
	if got := run("defaults:\n  output: csv\n", "--format", "kv"); !strings.Contains(got, "p.name: Alice") {
		t.Errorf("--format kv over the default: %q", got)
	}
	if got := run("defaults:\n  table_max_column_width: 3\n"); !strings.Contains(got, "\nAl…\n") {
		t.Errorf("width 3, truncate: %q", got)
	}
	if got := run("defaults:\n  table_max_column_width: 3\n  table_cell_layout: wrap\n"); !strings.Contains(got, "\nAli\nce\n") {
		t.Errorf("width 3, wrap: %q", got)
	}
}

// TestJSONErrorBodies (issue 18): under --json every failure prints the
// error body of spec/surfaces.md §2.5 on standard output (the same body the
// server answers with), keeps its exit code, and still says it on stderr.
func TestJSONErrorBodies(t *testing.T) {
	dir := newSocialGraph(t)
	dup := writeFile(t, t.TempDir(), "dup.jsonl", `{"type":"Person","data":{"name":"Alice"}}`+"\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // a JSON fragment of the body
	}{
		{"not found", []string{"branch", "delete", "nope", "--store", dir, "--json", "--quiet"}, 1, `"code": "not_found"`},
		{"exists", []string{"branch", "create", "main", "--store", dir, "--json", "--quiet"}, 1, `"code": "conflict"`},
		{"type error", []string{"query", "-e", "query q() { match { $p: Persn } return { $p.name } }", "--store", dir, "--json"}, 1, `"code": "bad_request"`},
		{"usage", []string{"load", "--data", dup, dir, "--json"}, 2, `"error": "--mode is required"`},
		{"missing file", []string{"load", "--data", "/nonexistent.jsonl", "--mode", "append", dir, "--json", "--quiet"}, 1, `"code": "bad_request"`},
		{"key conflict", []string{"load", "--data", dup, "--mode", "append", dir, "--json", "--quiet"}, 1, `"key_conflict": {`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, tc.args...)
			var body map[string]any
			if r.code != tc.code || json.Unmarshal([]byte(r.stdout), &body) != nil || body["error"] == nil ||
				!strings.Contains(r.stdout, tc.want) || !strings.Contains(r.stderr, "error: ") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}
	r := runBin(t, "load", "--data", dup, "--mode", "append", dir, "--quiet")
	if !strings.Contains(r.stderr, "node type 'Person' already has this id: 'Alice'") || r.stdout != "" {
		t.Errorf("key conflict text: %q %q", r.stdout, r.stderr)
	}
}

// TestCommitListBranchLabels (issue 18): commit list --json labels each
// commit with the branch it was published on, as commit show does, not
// with the branch being listed.
func TestCommitListBranchLabels(t *testing.T) {
	dir := newSocialGraph(t)
	mustRun(t, "branch", "create", "side", "--store", dir, "--json", "--quiet")
	mustRun(t, "mutate", "-e", `query m() { insert Person { name: "Side" } }`, "--store", dir, "--branch", "side", "--json", "--quiet")
	mustRun(t, "branch", "merge", "side", "--store", dir, "--json", "--quiet")
	list := mustRun(t, "commit", "list", "--store", dir, "--json")
	labels := map[string]bool{}
	for _, c := range list["commits"].([]any) {
		c := c.(map[string]any)
		labels[c["graph_branch"].(string)] = true
		show := mustRun(t, "commit", "show", c["graph_commit_id"].(string), "--store", dir, "--json")
		if got := show["graph_branch"]; got != c["graph_branch"] {
			t.Errorf("commit %s: list says %v, show says %v", c["graph_commit_id"], c["graph_branch"], got)
		}
	}
	if !labels["side"] || !labels["main"] {
		t.Errorf("labels %v, want main and side", labels)
	}
}

// TestCleanupGrace (issue 18): the grace period is configurable; after
// quick commits the default hour protects everything, --grace 0s reclaims.
func TestCleanupGrace(t *testing.T) {
	dir := newSocialGraph(t)
	for i := 0; i < 5; i++ {
		mustRun(t, "mutate", "-e", fmt.Sprintf(`query m() { update Person set { age: %d } where name = "Alice" }`, 40+i), "--store", dir, "--json", "--quiet")
	}
	def := mustRun(t, "cleanup", dir, "--keep", "1", "--json", "--quiet")
	none := mustRun(t, "cleanup", dir, "--keep", "1", "--grace", "0s", "--json", "--quiet")
	if def["files_removed"].(float64) != 0 || none["files_removed"].(float64) == 0 || none["commits_reclaimed"].(float64) == 0 {
		t.Fatalf("default grace %v, --grace 0s %v", def, none)
	}
	if r := runBin(t, "cleanup", dir, "--keep", "1", "--grace", "soon"); r.code != 2 || !strings.Contains(r.stderr, "--grace: invalid duration") {
		t.Fatalf("bad --grace: exit %d %s", r.code, r.stderr)
	}
}

// TestCompletion (issue 18): shell completion offers branch names and the
// query names of the --query file, not only flags.
func TestCompletion(t *testing.T) {
	dir := newSocialGraph(t)
	mustRun(t, "branch", "create", "feature", "--store", dir, "--json", "--quiet")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "branch", "delete", "--store", dir, ""}, "feature\nmain\n:4\n"},
		{[]string{"__complete", "query", "--store", dir, "--branch", ""}, "feature\nmain\n:4\n"},
		{[]string{"__complete", "query", "--query", filepath.Join(exampleDir, "queries.gq"), "--store", dir, ""}, "get_person\nfriends_of\nfriend_counts\nunemployed\n:4\n"},
		{[]string{"__complete", "branch", "delete", "--store", filepath.Join(dir, "missing"), ""}, ":4\n"},
	} {
		if r := runBin(t, tc.args...); r.stdout != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, r.stdout, tc.want)
		}
	}
}
