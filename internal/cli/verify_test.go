package cli

import (
	"encoding/json"
	"github.com/omnigraph-go/omnigraph"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Verify and repair through the binary (issue 17 items 1 and 3).

type verifyOut struct {
	OK      bool `json:"ok"`
	Checked struct {
		Refs, Commits   int
		States          int `json:"table_states"`
		Fragments       int
		DeletionVectors int `json:"deletion_vectors"`
		Indexes         int
	} `json:"checked"`
	Problems []struct {
		Object, Kind, Detail, Via, Branch string
	} `json:"problems"`
}

func runVerify(t *testing.T, dir string, extra ...string) (verifyOut, runResult) {
	t.Helper()
	r := runBin(t, append([]string{"verify", dir, "--json"}, extra...)...)
	var v verifyOut
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("verify: exit %d, bad JSON %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if v.OK != (r.code == 0) || (!v.OK && r.code != 1) {
		t.Fatalf("verify ok=%v but exit %d", v.OK, r.code)
	}
	return v, r
}

// verifyClean fails the test unless verify (and verify --deep) find nothing.
func verifyClean(t *testing.T, dir string) verifyOut {
	t.Helper()
	var v verifyOut
	for _, deep := range []bool{false, true} {
		var extra []string
		if deep {
			extra = append(extra, "--deep")
		}
		var r runResult
		v, r = runVerify(t, dir, extra...)
		if !v.OK {
			t.Fatalf("verify %v found problems on a healthy graph:\n%s", extra, r.stdout)
		}
	}
	return v
}

// verifyOK fails the test unless a plain verify finds nothing.
func verifyOK(t *testing.T, dir string) {
	t.Helper()
	if v, r := runVerify(t, dir); !v.OK {
		t.Fatalf("verify found problems:\n%s", r.stdout)
	}
}

// integrityGraph is the social example with every object kind: two loads,
// an optimize (key index), a mutation (deletion vector) and a branch.
func integrityGraph(t *testing.T) string {
	t.Helper()
	separateObjects(t)
	dir := newSocialGraph(t)
	more := writeFile(t, t.TempDir(), "more.jsonl", `{"type":"Person","data":{"name":"Eve","age":41}}`+"\n"+`{"edge":"Knows","from":"Eve","to":"Alice"}`+"\n")
	mustRun(t, "load", "--data", more, "--mode", "append", dir, "--json", "--quiet")
	mustRun(t, "optimize", dir, "--json", "--quiet")
	mustRun(t, "mutate", "set_age", "--query", filepath.Join(exampleDir, "mutations.gq"), "--params", `{"name":"Bob","age":26}`, "--store", dir, "--json", "--quiet")
	mustRun(t, "branch", "create", "feature", "--uri", dir, "--json", "--quiet")
	mustRun(t, "mutate", "add_person", "--query", filepath.Join(exampleDir, "mutations.gq"), "--params", `{"name":"Fay","age":7}`,
		"--store", dir, "--branch", "feature", "--json", "--quiet")
	return dir
}

// separateObjects makes the binaries this test runs write every table state,
// deletion vector and fragment index as an object of its own (no inlining), for tests that
// damage or delete those objects one at a time.
func separateObjects(t *testing.T) {
	t.Setenv(omnigraph.EnvInlineStateBytes, "0")
	t.Setenv(omnigraph.EnvInlineDVBytes, "0")
	t.Setenv(omnigraph.EnvInlineIndexBytes, "0")
}

func headCommitFile(t *testing.T, dir, branch string) string {
	t.Helper()
	var ref struct{ Commit string }
	b, err := os.ReadFile(filepath.Join(dir, "refs", "heads", branch))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return "commits/" + ref.Commit + ".json"
}

// objectsUnder lists graph-relative keys under a prefix with a suffix.
func objectsUnder(t *testing.T, dir, prefix, suffix string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(dir, prefix), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) && !strings.HasPrefix(d.Name(), ".tmp-") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestVerifyHealthy(t *testing.T) {
	dir := integrityGraph(t)
	v := verifyClean(t, dir)
	c := v.Checked
	if c.Refs != 2 || c.Commits < 5 || c.States == 0 || c.Fragments == 0 || c.DeletionVectors == 0 || c.Indexes == 0 {
		t.Fatalf("verify checked %+v: the graph should hold every object kind", c)
	}
	// Read-only: verify changes no file.
	before := objectsUnder(t, dir, ".", "")
	runVerify(t, dir, "--deep")
	if after := objectsUnder(t, dir, ".", ""); strings.Join(before, ",") != strings.Join(after, ",") {
		t.Fatal("verify changed the graph's files")
	}
	// Human output.
	r := runBin(t, "verify", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "no problems found") {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestVerifyNamesDamage injects one kind of damage at a time and checks that
// verify names the damaged object (and that reads fail typed, not silently).
func TestVerifyNamesDamage(t *testing.T) {
	tmpl := integrityGraph(t)
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string) string // returns the object verify must name
		deep   bool                                  // only --deep finds it
		read   bool                                  // a read of main fails too
	}{
		{"commit table renamed (Knows→Knowt)", func(t *testing.T, dir string) string {
			key := headCommitFile(t, dir, "main")
			replaceIn(t, dir, key, `"edge:Knows"`, `"edge:Knowt"`)
			return key
		}, false, true},
		{"commit byte flipped", func(t *testing.T, dir string) string {
			key := headCommitFile(t, dir, "main")
			replaceIn(t, dir, key, `"kind":"mutate"`, `"kind":"mutatf"`)
			return key
		}, false, true},
		{"ref garbled", func(t *testing.T, dir string) string {
			// A fork continues its source's seq: garble whatever it is.
			ref, err := os.ReadFile(filepath.Join(dir, "refs", "heads", "feature"))
			if err != nil {
				t.Fatal(err)
			}
			seq := regexp.MustCompile(`"seq":[0-9]+`).Find(ref)
			if seq == nil {
				t.Fatalf("no seq in %s", ref)
			}
			replaceIn(t, dir, "refs/heads/feature", string(seq), `"seq":999`)
			return "refs/heads/feature"
		}, false, false},
		{"main ref deleted", func(t *testing.T, dir string) string {
			os.Remove(filepath.Join(dir, "refs", "heads", "main"))
			return "refs/heads/main"
		}, false, true},
		{"schema edited", func(t *testing.T, dir string) string {
			key := objectsUnder(t, dir, "schemas", ".pg")[0]
			replaceIn(t, dir, key, "Person", "Persom")
			return key
		}, false, true},
		{"table state truncated", func(t *testing.T, dir string) string {
			key := headState(t, dir, "node:Person")
			p := filepath.Join(dir, key)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
			return key
		}, false, true},
		{"table state deleted", func(t *testing.T, dir string) string {
			key := headState(t, dir, "edge:Knows")
			os.Remove(filepath.Join(dir, key))
			return key
		}, false, true},
		{"fragment deleted", func(t *testing.T, dir string) string {
			key := objectsUnder(t, dir, "tables/node-Company/data", ".parquet")[0]
			os.Remove(filepath.Join(dir, key))
			return key
		}, false, true},
		{"fragment truncated", func(t *testing.T, dir string) string {
			key := objectsUnder(t, dir, "tables/node-Company/data", ".parquet")[0]
			p := filepath.Join(dir, key)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-10], 0o644)
			return key
		}, false, true},
		{"deletion vector flipped", func(t *testing.T, dir string) string {
			key := objectsUnder(t, dir, "tables/node-Person/dv", ".dv")[0]
			flipByte(t, dir, key, 20)
			return key
		}, false, true},
		{"index flipped", func(t *testing.T, dir string) string {
			// A fragment's own index (compaction writes no key index over
			// fragments that carry one).
			key := objectsUnder(t, dir, "tables/node-Person/index", ".fidx")[0]
			flipByte(t, dir, key, 10)
			return key
		}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "g")
			crashCopyTree(t, tmpl, dir)
			obj := tt.damage(t, dir)
			var extra []string
			if tt.deep {
				extra = []string{"--deep"}
			}
			v, r := runVerify(t, dir, extra...)
			if v.OK {
				t.Fatalf("verify found nothing after damaging %s:\n%s", obj, r.stdout)
			}
			named := false
			for _, p := range v.Problems {
				named = named || p.Object == obj
			}
			if !named {
				t.Fatalf("verify did not name %s:\n%s", obj, r.stdout)
			}
			if tt.read {
				rr := runBin(t, "export", dir)
				if rr.code != 1 || !strings.Contains(rr.stderr, obj) {
					t.Fatalf("export after damaging %s: exit %d, stderr %q (want exit 1 naming it)", obj, rr.code, rr.stderr)
				}
			}
		})
	}
}

// TestKnowtIsCorruptionNotEmpty is the reproduction 1: a one-letter
// change of a table key in the head commit fails every read and every
// write, instead of reading as an empty table that the next write makes
// permanent.
//
// Graphs created before checksums are caught by the table-map check (the
// commit names a table its schema does not declare); graphs created since
// by the commit's checksum first.
func TestKnowtIsCorruptionNotEmpty(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "checksummed", true: "legacy"}[legacy], func(t *testing.T) { knowt(t, legacy) })
	}
}

// legacyRefHint matches a ref's hint, which refs written before checksums
// never had.
var legacyRefHint = regexp.MustCompile(`,"hint":\{"schema":"[^"]*","tables":\{[^}]*\}\}`)

func knowt(t *testing.T, legacy bool) {
	dir := newSocialGraph(t)
	key := headCommitFile(t, dir, "main")
	if legacy {
		// Rewrite the graph's stamp, refs and commits as written before checksums.
		for _, k := range append(objectsUnder(t, dir, "commits", ".json"), "_omnigraph.json", "refs/heads/main") {
			p := filepath.Join(dir, k)
			b, _ := os.ReadFile(p)
			s := string(b)
			if i := strings.Index(s, `,"sum":"`); i >= 0 {
				s = s[:i] + s[i+len(`,"sum":"`)+65:]
			}
			// Refs of that time carried no hint either (docs/format/commit.md).
			s = legacyRefHint.ReplaceAllString(s, "")
			os.WriteFile(p, []byte(s), 0o644)
		}
		verifyClean(t, dir)
	}
	replaceIn(t, dir, key, `"edge:Knows"`, `"edge:Knowt"`)
	want := "checksum mismatch"
	if legacy {
		want = `table map names "edge:Knowt"`
	}
	for _, args := range [][]string{
		{"snapshot", dir, "--json"},
		{"query", "--store", dir, "--json", "-e", `query q() { match { $a: Person $a knows $b } return { count($b) } }`},
		{"load", "--data", filepath.Join(exampleDir, "data.jsonl"), "--mode", "merge", dir, "--json", "--quiet"},
		{"mutate", "add_person", "--query", filepath.Join(exampleDir, "mutations.gq"), "--params", `{"name":"Zed","age":1}`, "--store", dir, "--json", "--quiet"},
	} {
		r := runBin(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "corrupt object "+key) || !strings.Contains(r.stderr, want) {
			t.Fatalf("%v: exit %d, stderr %q; want exit 1 naming %s", args[0], r.code, r.stderr, key)
		}
	}
	if got := headCommitFile(t, dir, "main"); got != key {
		t.Fatalf("a write moved main to %s on top of the damaged commit", got)
	}
}

// TestLostMainRefRepair is the reproduction 3: with refs/heads/main
// lost, commands point to verify/repair (never to init), init refuses the
// location, and repair restores main with its history.
func TestLostMainRefRepair(t *testing.T) {
	dir := integrityGraph(t)
	logBefore := runBin(t, "commit", "list", "--uri", dir, "--json").stdout
	exportBefore := runBin(t, "export", dir).stdout
	os.Remove(filepath.Join(dir, "refs", "heads", "main"))

	for _, args := range [][]string{{"snapshot", dir}, {"export", dir}, {"commit", "list", "--uri", dir}} {
		r := runBin(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "omnigraph verify") || !strings.Contains(r.stderr, "omnigraph repair") ||
			strings.Contains(r.stderr, "init again") {
			t.Fatalf("%v: exit %d, stderr %q: must point to verify/repair, not init", args, r.code, r.stderr)
		}
	}
	commitsBefore := objectsUnder(t, dir, "commits", ".json")
	r := runBin(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), dir, "--json")
	if r.code == 0 || !strings.Contains(r.stderr, "omnigraph repair") {
		t.Fatalf("init over history: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runBin(t, "init", "--force", "--schema", filepath.Join(exampleDir, "schema.pg"), dir, "--json"); r.code == 0 {
		t.Fatalf("init --force over history succeeded")
	}
	if got := objectsUnder(t, dir, "commits", ".json"); strings.Join(got, ",") != strings.Join(commitsBefore, ",") {
		t.Fatal("refused init wrote commits")
	}
	if _, err := os.Stat(filepath.Join(dir, "refs", "heads", "main")); err == nil {
		t.Fatal("refused init created main")
	}

	// Preview writes nothing; --confirm restores.
	r = runBin(t, "repair", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "would restore refs/heads/main") {
		t.Fatalf("repair preview: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "refs", "heads", "main")); err == nil {
		t.Fatal("repair preview created main")
	}
	m := mustRun(t, "repair", dir, "--confirm", "--json", "--quiet")
	if refs, _ := m["refs"].([]any); len(refs) != 1 || refs[0].(map[string]any)["done"] != true {
		t.Fatalf("repair: %v", m)
	}
	if got := runBin(t, "commit", "list", "--uri", dir, "--json").stdout; got != logBefore {
		t.Fatalf("history after repair:\n%s\nwant\n%s", got, logBefore)
	}
	if got := runBin(t, "export", dir).stdout; got != exportBefore {
		t.Fatal("content after repair differs")
	}
	verifyClean(t, dir)
	if r := runBin(t, "repair", dir); r.code != 0 || !strings.Contains(r.stdout, "nothing to repair") {
		t.Fatalf("repair of a healthy graph: exit %d\n%s", r.code, r.stdout)
	}
}

// TestRepairDamagedBranchRef restores a garbled branch ref; main is untouched.
func TestRepairDamagedBranchRef(t *testing.T) {
	dir := integrityGraph(t)
	mainRef, _ := os.ReadFile(filepath.Join(dir, "refs", "heads", "main"))
	os.WriteFile(filepath.Join(dir, "refs", "heads", "feature"), []byte("{not json"), 0o644)
	if r := runBin(t, "export", dir, "--branch", "feature"); r.code != 1 || !strings.Contains(r.stderr, "refs/heads/feature") {
		t.Fatalf("read of the damaged branch: exit %d %q", r.code, r.stderr)
	}
	mustRun(t, "repair", dir, "--confirm", "--json", "--quiet")
	verifyClean(t, dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "refs", "heads", "main")); string(b) != string(mainRef) {
		t.Fatal("repair rewrote the intact main ref")
	}
	if r := runBin(t, "export", dir, "--branch", "feature"); r.code != 0 {
		t.Fatalf("feature after repair: exit %d %s", r.code, r.stderr)
	}
}

func replaceIn(t *testing.T, dir, key, old, new string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q:\n%s", key, old, b)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, dir, key string, i int) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[i%len(b)] ^= 0x10
	os.WriteFile(p, b, 0o644)
}

// headState returns the state key of a table in main's head commit.
func headState(t *testing.T, dir, table string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, headCommitFile(t, dir, "main")))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Tables map[string]string }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Tables[table]
}
