package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// diffGraph is the social example with a branch "feature" that updated
// Bob, inserted Eve and her Knows edge to Alice, and deleted Diana (and
// with her the edge Bob -> Diana); main updated Bob differently.
func diffGraph(t *testing.T) (dir string, featureCommits []string) {
	t.Helper()
	dir = newSocialGraph(t)
	m := filepath.Join(exampleDir, "mutations.gq")
	mustRun(t, "branch", "create", "feature", "--store", dir, "--json", "--quiet")
	mustRun(t, "mutate", "set_age", "--query", m, "--params", `{"name":"Bob","age":26}`, "--store", dir, "--json")
	for _, step := range []struct{ name, params string }{
		{"set_age", `{"name":"Bob","age":27}`},
		{"add_person", `{"name":"Eve","age":22}`},
		{"add_friend", `{"from":"Eve","to":"Alice"}`},
		{"remove_person", `{"name":"Diana"}`},
	} {
		out := mustRun(t, "mutate", step.name, "--query", m, "--branch", "feature", "--params", step.params, "--store", dir, "--json")
		featureCommits = append(featureCommits, out["commit"].(map[string]any)["graph_commit_id"].(string))
	}
	return dir, featureCommits
}

// bodyLines drops the diff header (it names the resolved commit ids).
func bodyLines(t *testing.T, stdout string) string {
	t.Helper()
	header, body, _ := strings.Cut(stdout, "\n")
	if !regexp.MustCompile(`^diff \S+ \([0-9A-Z]{26}\) → \S+ \([0-9A-Z]{26}\)$`).MatchString(header) {
		t.Fatalf("diff header %q", header)
	}
	return body
}

// TestDiffCommand: entity- and property-level changes between branches and
// revisions, edges by their endpoints, --type/--kind/--op, --stat, and
// typed errors for bad revisions and types.
func TestDiffCommand(t *testing.T) {
	dir, fc := diffGraph(t)
	all := `delete edge:Knows Bob -> Diana
insert edge:Knows Eve -> Alice
update node:Person Bob: age 26 → 27
delete node:Person Diana
insert node:Person Eve {age: 22, name: "Eve"}
5 changes: 2 inserted, 1 updated, 2 deleted
`
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string // the body after the header line, exactly
		stderr string // a substring of stderr
	}{
		{"branches", []string{"diff", "main", "feature", dir}, 0, all, ""},
		{"--store and a commit prefix", []string{"diff", "main", fc[3][:12], "--store", dir}, 0, all, ""},
		{"first-parent steps", []string{"diff", "feature~3", "feature~1", "--uri", dir}, 0, `insert edge:Knows Eve -> Alice
insert node:Person Eve {age: 22, name: "Eve"}
2 changes: 2 inserted, 0 updated, 0 deleted
`, ""},
		{"reverse", []string{"diff", "feature", "feature^", dir, "--type", "Knows"}, 0, `insert edge:Knows Bob -> Diana
1 change: 1 inserted, 0 updated, 0 deleted
`, ""},
		{"--type as printed by --stat", []string{"diff", "main", "feature", dir, "--type", "node:Person", "--op", "update"}, 0, `update node:Person Bob: age 26 → 27
1 change: 0 inserted, 1 updated, 0 deleted
`, ""},
		{"--kind", []string{"diff", "main", "feature", dir, "--kind", "edge"}, 0, `delete edge:Knows Bob -> Diana
insert edge:Knows Eve -> Alice
2 changes: 1 inserted, 0 updated, 1 deleted
`, ""},
		{"--stat", []string{"diff", "main", "feature", dir, "--stat"}, 0, `type         inserted   updated   deleted
edge:Knows          1         0         1
node:Person         1         1         1
total               2         1         2
`, ""},
		{"same commit", []string{"diff", "feature", fc[3], dir}, 0, "(no changes)\n", ""},
		{"unchanged type", []string{"diff", "main", "feature", dir, "--type", "Company", "--stat"}, 0, "(no changes)\n", ""},
		{"bad FROM", []string{"diff", "nope", "main", dir}, 1, "", `error: commit not found: nope`},
		{"bad TO", []string{"diff", "main", "main~99", dir}, 1, "", `error: commit not found: main~99`},
		{"unknown type", []string{"diff", "main", "feature", dir, "--type", "Persn"}, 1, "", `unknown type "Persn"`},
		{"bad op", []string{"diff", "main", "feature", dir, "--op", "upsert"}, 2, "", `invalid --op "upsert"`},
		{"one revision", []string{"diff", "main", "--store", dir}, 2, "", "Run 'omnigraph diff --help'"},
		{"no served form", []string{"diff", "main", "feature", "--server", "http://127.0.0.1:1", "--graph", "g"}, 2, "", "--server cannot be used with `omnigraph diff`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.code != 0 {
				if r.stdout != "" {
					t.Fatalf("failure printed %q on stdout", r.stdout)
				}
				return
			}
			if got := bodyLines(t, r.stdout); got != tc.stdout {
				t.Fatalf("stdout\n%s\nwant\n%s", got, tc.stdout)
			}
		})
	}
}

// TestDiffJSON: the --json shape: both sides' revisions and commits,
// counts per type, change objects with endpoints and changed_properties.
func TestDiffJSON(t *testing.T) {
	dir, fc := diffGraph(t)
	var out struct {
		From, To struct {
			Revision string `json:"revision"`
			Commit   struct {
				ID     string `json:"graph_commit_id"`
				Branch string `json:"graph_branch"`
			} `json:"commit"`
		}
		Stats struct {
			Inserts, Updates, Deletes int
			Types                     []map[string]any `json:"types"`
		} `json:"stats"`
		Changes []struct {
			Kind       string `json:"kind"`
			EntityType struct {
				Name string `json:"name"`
			} `json:"entity_type"`
			ID      string                     `json:"id"`
			Op      string                     `json:"op"`
			Before  map[string]json.RawMessage `json:"before"`
			After   map[string]json.RawMessage `json:"after"`
			Changed []string                   `json:"changed_properties"`
		} `json:"changes"`
	}
	r := runBin(t, "diff", "main", "feature", dir, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.From.Revision != "main" || out.To.Revision != "feature" || out.To.Commit.ID != fc[3] || out.To.Commit.Branch != "feature" {
		t.Fatalf("sides %+v %+v", out.From, out.To)
	}
	if out.Stats.Inserts != 2 || out.Stats.Updates != 1 || out.Stats.Deletes != 2 || len(out.Stats.Types) != 2 ||
		out.Stats.Types[0]["type"] != "Knows" || out.Stats.Types[1]["updates"] != 1.0 {
		t.Fatalf("stats %+v", out.Stats)
	}
	compact := func(raw json.RawMessage) string {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	var got []string
	for _, c := range out.Changes {
		line := c.Op + " " + c.Kind + ":" + c.EntityType.Name + " " + c.ID
		if c.Kind == "edge" {
			img := c.After
			if img == nil {
				img = c.Before
			}
			line = c.Op + " " + c.Kind + ":" + c.EntityType.Name + " " + compact(img["endpoints"])
		}
		if len(c.Changed) > 0 {
			line += " changed=" + strings.Join(c.Changed, ",") + " " + compact(c.Before["properties"]) + " " + compact(c.After["properties"])
		}
		got = append(got, line)
	}
	want := []string{
		`delete edge:Knows {"from":"Bob","to":"Diana"}`,
		`insert edge:Knows {"from":"Eve","to":"Alice"}`,
		`update node:Person Bob changed=age {"age":26,"name":"Bob"} {"age":27,"name":"Bob"}`,
		`delete node:Person Diana`,
		`insert node:Person Eve`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// --stat --json keeps the counts and leaves the changes out.
	var stat map[string]any
	r = runBin(t, "diff", "main", "feature", dir, "--json", "--stat")
	if err := json.Unmarshal([]byte(r.stdout), &stat); err != nil || stat["changes"] != nil || stat["stats"] == nil {
		t.Fatalf("--stat --json: %v %s", err, r.stdout)
	}
}

// TestCommitChangesText: the text output of `commit changes` names the
// properties an update changed and shows edges by their endpoints.
func TestCommitChangesText(t *testing.T) {
	dir, fc := diffGraph(t)
	cases := []struct {
		name, commit, want string
	}{
		{"update", fc[0], "update node:Person Bob: age 25 → 27\n"},
		{"insert", fc[1], "insert node:Person Eve {age: 22, name: \"Eve\"}\n"},
		{"edge insert by endpoints", fc[2], "insert edge:Knows Eve -> Alice\n"},
		{"cascading delete", fc[3], "delete node:Person Diana\ndelete edge:Knows Bob -> Diana\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, "commit", "changes", tc.commit, "--uri", dir)
			if r.code != 0 || r.stdout != tc.want {
				t.Fatalf("exit %d\nstdout %q\nwant %q\nstderr %s", r.code, r.stdout, tc.want, r.stderr)
			}
		})
	}
}

// TestMergeConflictReport: a refused merge prints each conflict once, at
// property level (the property, its base value and both sides'), with the
// way forward; --json keeps the merge_conflicts shape of spec/surfaces.md
// §2.5 and carries the same detail in the message.
func TestMergeConflictReport(t *testing.T) {
	dir, _ := diffGraph(t)
	r := runBin(t, "branch", "merge", "feature", "--store", dir, "--quiet")
	detail := "divergent update of node type 'Person' id 'Bob': source and target changed it differently (age: base 25, source 27, target 26)"
	if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "divergent update") != 1 || !strings.Contains(r.stderr, "conflict: "+detail) ||
		!strings.Contains(r.stderr, "error: merging feature into main found 1 conflict; nothing was written") ||
		!strings.Contains(r.stderr, "hint: make the two branches agree") || !strings.Contains(r.stderr, "'omnigraph branch merge feature --into main' again") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, "branch", "merge", "feature", "--store", dir, "--quiet", "--json")
	var body struct {
		Error     string              `json:"error"`
		Conflicts []map[string]string `json:"merge_conflicts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &body); err != nil || r.code != 1 || len(body.Conflicts) != 1 {
		t.Fatalf("exit %d %v\n%s", r.code, err, r.stdout)
	}
	c := body.Conflicts[0]
	if len(c) != 5 || c["kind"] != "divergent_update" || c["entity_kind"] != "node" || c["type_name"] != "Person" ||
		c["entity_id"] != "Bob" || c["message"] != detail {
		t.Fatalf("conflict %v", c)
	}
	if strings.Contains(r.stderr, "divergent") {
		t.Fatalf("--json printed the conflict on stderr too: %s", r.stderr)
	}
}
