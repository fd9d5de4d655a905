package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Schema evolution through the real binary: every row of the change table
// of spec/languages.md §3, the schema-apply acceptance scenarios of
// spec/engine.md §10 (65–71), and a matrix of step kinds × (empty, loaded)
// × (main, branch).

const evBase = `interface Named { label: String? }
node Person implements Named {
  name: String @key
  age: I32?
  mood: enum(happy, sad)?
}
node Company @description("a firm") { name: String @key }
edge Knows: Person -> Person
edge WorksAt: Person -> Company @card(0..1)
`

const evData = `{"type":"Person","data":{"name":"Alice","age":30,"mood":"happy"}}
{"type":"Person","data":{"name":"Bob","age":25}}
{"type":"Company","data":{"name":"Acme"}}
{"edge":"Knows","from":"Alice","to":"Bob"}
{"edge":"WorksAt","from":"Alice","to":"Acme"}
`

// evGraph initializes a graph with evBase (loaded with evData if loaded).
func evGraph(t *testing.T, loaded bool) string {
	t.Helper()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "g.omni")
	mustRun(t, "init", "--schema", writeFile(t, tmp, "base.pg", evBase), dir, "--json")
	if loaded {
		mustRun(t, "load", "--data", writeFile(t, tmp, "data.jsonl", evData), "--mode", "overwrite", dir, "--json", "--quiet")
	}
	return dir
}

func edit(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("edit: " + old + " not in schema")
		}
		return strings.Replace(s, old, new, 1)
	}
}

func planOf(t *testing.T, dir, desired string, extra ...string) map[string]any {
	t.Helper()
	p := writeFile(t, t.TempDir(), "desired.pg", desired)
	return mustRun(t, append([]string{"schema", "plan", dir, "--schema", p, "--json"}, extra...)...)
}

func stepKinds(plan map[string]any) []string {
	var out []string
	for _, s := range plan["steps"].([]any) {
		m := s.(map[string]any)
		k := m["kind"].(string)
		if c, ok := m["code"].(string); ok {
			k += ":" + c
		}
		if mode, ok := m["mode"].(string); ok {
			k += ":" + mode
		}
		out = append(out, k)
	}
	return out
}

// TestE2ESchemaChangeTable runs every row of spec/languages.md §3's change
// table through `schema plan --json` (and the human line where the spec
// gives one).
func TestE2ESchemaChangeTable(t *testing.T) {
	dir := evGraph(t, true)
	rows := []struct {
		change string
		edit   func(string) string
		flags  []string
		want   string // comma-joined step kinds
		human  string // a line of the human plan, if pinned
	}{
		{"new node", edit("edge Knows", "node City { name: String @key }\nedge Knows"), nil, "add_type", "add node type 'City'"},
		{"new edge", edit("edge Knows", "edge Likes: Person -> Person\nedge Knows"), nil, "add_type", "add edge type 'Likes'"},
		{"new interface", edit("interface Named", "interface Aged { years: I32? }\ninterface Named"), nil, "add_type", "add interface type 'Aged'"},
		{"rename node via @rename_from", func(s string) string {
			s = strings.Replace(s, "node Person implements", `node Human @rename_from("Person") implements`, 1)
			return renamePH(s)
		}, nil, "rename_type", "rename node type 'Person' -> 'Human'"},
		{"rename interface", func(s string) string {
			return strings.Replace(strings.Replace(s, "interface Named", "interface Labelled", 1), "implements Named", "implements Labelled", 1)
		}, nil, "add_type,unsupported_change,unsupported_change", ""},
		{"remove node type", dropCompany, nil, "drop_type:soft,drop_type:soft", "drop node type 'Company' (soft mode)"},
		{"remove node type, allow data loss", dropCompany, []string{"--allow-data-loss"}, "drop_type:hard,drop_type:hard", ""},
		{"remove interface", func(s string) string {
			return strings.Replace(strings.Replace(s, "interface Named { label: String? }\n", "", 1), " implements Named", "", 1)
		}, nil, "unsupported_change,unsupported_change,unsupported_change", ""},
		{"add nullable property", edit("age: I32?", "age: I32?\n  nick: String?"), nil, "add_property", "add property 'Person.nick' (String?) on node 'Person'"},
		{"add non-nullable property", edit("age: I32?", "age: I32?\n  email: String"), nil, "unsupported_change:OG-MF-103", "unsupported change on node:Person.email [OG-MF-103, validated]: adding required property 'Person.email' requires a backfill"},
		{"rename property via @rename_from", edit("age: I32?", `years: I32? @rename_from("age")`), nil, "rename_property", "rename property 'Person.age' -> 'Person.years' on node 'Person'"},
		{"remove property", edit("  age: I32?\n", ""), nil, "drop_property:soft", "drop property 'Person.age' of node 'Person' (soft mode)"},
		{"type change I32 -> I64", edit("age: I32?", "age: I64?"), nil, "unsupported_change:OG-MF-106", "unsupported change on node:Person.age [OG-MF-106, destructive]: changing property type for 'Person.age' is not supported"},
		{"nullability change T? -> T", edit("age: I32?", "age: I32"), nil, "unsupported_change:OG-MF-106", ""},
		{"enum narrowing", edit("enum(happy, sad)", "enum(happy)"), nil, "unsupported_change:OG-MF-106", ""},
		{"enum to String", edit("enum(happy, sad)?", "String?"), nil, "unsupported_change:OG-MF-106", ""},
		{"enum widening", edit("enum(happy, sad)", "enum(happy, sad, calm)"), nil, "extend_enum", "extend enum 'Person.mood' (+calm) on node 'Person'"},
		{"enum reorder", edit("enum(happy, sad)", "enum(sad, happy)"), nil, "", ""},
		{"add @index (property)", edit("age: I32?", "age: I32? @index"), nil, "add_constraint", "add constraint @index(age) on node 'Person'"},
		{"add @index (body)", edit("mood: enum(happy, sad)?", "mood: enum(happy, sad)?\n  @index(age, mood)"), nil, "add_constraint", ""},
		{"add @key", edit(`node Company @description("a firm") { name: String @key }`, `node Company @description("a firm") { name: String @key }
node Tag { t: String }`), nil, "add_type", ""},
		{"add @unique (validated against data)", edit("age: I32?", "age: I32? @unique"), nil, "add_constraint", ""},
		{"add @range (validated against data)", edit("mood: enum(happy, sad)?", "mood: enum(happy, sad)?\n  @range(age, 0..150)"), nil, "add_constraint", ""},
		{"add @check (validated against data)", edit("mood: enum(happy, sad)?", "mood: enum(happy, sad)?\n  @check(name, \"^[A-Z]\")"), nil, "add_constraint", ""},
		{"remove a constraint", edit("@card(0..1)", ""), nil, "unsupported_change", ""},
		{"change @embed", edit("age: I32?", "age: I32?\n  text: String?"), nil, "add_property", ""},
		{"change implements", edit(" implements Named", ""), nil, "unsupported_change,unsupported_change", ""},
		{"change edge endpoints", edit("edge Knows: Person -> Person", "edge Knows: Person -> Company"), nil, "unsupported_change", ""},
		{"change @card", edit("@card(0..1)", "@card(0..2)"), nil, "unsupported_change", ""},
		{"change @description (type)", edit(`@description("a firm")`, `@description("a company")`), nil, "update_type_metadata", "update metadata of node type 'Company' (@description)"},
		{"change @description (property)", edit("age: I32?", `age: I32? @description("years")`), nil, "update_property_metadata", ""},
		{"change a custom annotation", edit(`node Company @description("a firm")`, `node Company @description("a firm") @team("x")`), nil, "unsupported_change", ""},
	}
	for _, r := range rows {
		t.Run(r.change, func(t *testing.T) {
			t.Parallel()
			desired := r.edit(evBase)
			plan := planOf(t, dir, desired, r.flags...)
			if got := strings.Join(stepKinds(plan), ","); got != r.want {
				t.Fatalf("steps = %s, want %s\n%v", got, r.want, plan)
			}
			if want := !strings.Contains(r.want, "unsupported"); plan["supported"] != want {
				t.Fatalf("supported = %v", plan["supported"])
			}
			if r.human != "" {
				p := writeFile(t, t.TempDir(), "desired.pg", desired)
				h := runBin(t, append([]string{"schema", "plan", dir, "--schema", p}, r.flags...)...)
				if h.code != 0 || !strings.Contains(h.stdout, r.human) {
					t.Fatalf("human plan (exit %d):\n%s\nwant a line %q", h.code, h.stdout, r.human)
				}
			}
		})
	}
	// @embed source change.
	embBase := "node Doc { text: String?  body: String?  v: Vector(2)? @embed(text) }\n"
	edir := filepath.Join(t.TempDir(), "e.omni")
	mustRun(t, "init", "--schema", writeFile(t, t.TempDir(), "e.pg", embBase), edir, "--json")
	if p := planOf(t, edir, strings.Replace(embBase, "@embed(text)", "@embed(body)", 1)); p["supported"] != false {
		t.Fatalf("@embed change: %v", p)
	}
}

// dropCompany removes Company from evBase, with WorksAt, the one edge type
// that needs it.
func dropCompany(s string) string {
	return strings.Replace(strings.Replace(s, `node Company @description("a firm") { name: String @key }`, "", 1), "edge WorksAt: Person -> Company @card(0..1)\n", "", 1)
}

// renamePH renames the Person endpoints of evBase's edges to Human.
func renamePH(s string) string {
	return strings.NewReplacer("Person -> Person", "Human -> Human", "Person -> Company", "Human -> Company").Replace(s)
}

func queryRows(t *testing.T, dir, target, src string) []map[string]any {
	t.Helper()
	args := []string{"query", "--store", dir, "-e", src, "--json"}
	if target != "" {
		args = append(args, strings.Fields(target)...)
	}
	return rowsOf(t, mustRun(t, args...))
}

func headOf(t *testing.T, dir, branch string) (string, int) {
	t.Helper()
	cs := mustRun(t, "commit", "list", dir, "--branch", branch, "--json")["commits"].([]any)
	return cs[0].(map[string]any)["graph_commit_id"].(string), len(cs)
}

func applySchema(t *testing.T, dir, desired string, extra ...string) runResult {
	t.Helper()
	p := writeFile(t, t.TempDir(), "desired.pg", desired)
	return runBin(t, append([]string{"schema", "apply", dir, "--schema", p, "--json", "--quiet"}, extra...)...)
}

// TestE2ESchemaApplyScenarios: spec/engine.md §10 scenarios 65–71.
func TestE2ESchemaApplyScenarios(t *testing.T) {
	people := `query q() { match { $p: Person } return { $p.name } order { $p.name asc } }`
	t.Run("65 add nullable property, with a branch live, then reapply", func(t *testing.T) {
		dir := evGraph(t, true)
		mustRun(t, "branch", "create", "--uri", dir, "feature", "--json")
		desired := edit("age: I32?", "age: I32?\n  nickname: String?")(evBase)
		r := applySchema(t, dir, desired)
		if r.code != 0 || !strings.Contains(r.stdout, `"applied": true`) {
			t.Fatalf("apply with a live branch (we allow it): exit %d %s %s", r.code, r.stdout, r.stderr)
		}
		if got := queryRows(t, dir, "", `query q() { match { $p: Person } return { $p.name, $p.nickname } order { $p.name asc } }`); len(got) != 2 || got[0]["p.nickname"] != nil {
			t.Fatalf("rows = %v", got)
		}
		// The branch keeps its schema.
		if show := runBin(t, "schema", "show", dir, "--branch", "feature"); strings.Contains(show.stdout, "nickname") {
			t.Fatal("feature got main's schema")
		}
		r = applySchema(t, dir, desired)
		if r.code != 0 || !strings.Contains(r.stdout, `"applied": false`) || !strings.Contains(r.stdout, `"steps": []`) {
			t.Fatalf("reapply: %s", r.stdout)
		}
	})
	t.Run("66 unsupported changes leave the graph as it was", func(t *testing.T) {
		dir := evGraph(t, true)
		head, _ := headOf(t, dir, "main")
		r := applySchema(t, dir, edit("age: I32?", "age: I64?")(evBase))
		if r.code != 1 || !strings.Contains(r.stderr, "changing property type") || !strings.Contains(r.stderr, "[OG-MF-106]") {
			t.Fatalf("I32 -> I64: exit %d %s", r.code, r.stderr)
		}
		r = applySchema(t, dir, edit("age: I32?", "age: I32?\n  email: String")(evBase))
		if r.code != 1 || !strings.Contains(r.stderr, "[OG-MF-103]") {
			t.Fatalf("required property: exit %d %s", r.code, r.stderr)
		}
		if h, _ := headOf(t, dir, "main"); h != head {
			t.Fatal("a refused apply moved the head")
		}
		mustRun(t, "load", "--data", writeFile(t, t.TempDir(), "x.jsonl", `{"type":"Person","data":{"name":"Zed"}}`), "--mode", "append", dir, "--json", "--quiet")
	})
	t.Run("67 soft drop of Company and WorksAt", func(t *testing.T) {
		dir := evGraph(t, true)
		before, _ := headOf(t, dir, "main")
		desired := dropCompany(evBase)
		if r := applySchema(t, dir, desired); r.code != 0 || strings.Count(r.stdout, `"mode": "soft"`) != 2 {
			t.Fatalf("apply: %d %s %s", r.code, r.stdout, r.stderr)
		}
		snap := mustRun(t, "snapshot", dir, "--json")
		for _, d := range snap["datasets"].([]any) {
			if n := d.(map[string]any)["type_name"]; n == "Company" || n == "WorksAt" {
				t.Fatalf("current snapshot still lists %v", n)
			}
		}
		old := queryRows(t, dir, "--snapshot "+before, `query q() { match { $c: Company } return { $c.name } }`)
		if len(old) != 1 {
			t.Fatalf("pre-drop Company rows = %v", old)
		}
	})
	t.Run("68 drop a property, hard and soft", func(t *testing.T) {
		for _, hard := range []bool{true, false} {
			dir := evGraph(t, true)
			before, _ := headOf(t, dir, "main")
			var extra []string
			mode := "soft"
			if hard {
				extra, mode = []string{"--allow-data-loss"}, "hard"
			}
			r := applySchema(t, dir, edit("  age: I32?\n", "")(evBase), extra...)
			if r.code != 0 || !strings.Contains(r.stdout, `"mode": "`+mode+`"`) {
				t.Fatalf("drop age (%s): %d %s %s", mode, r.code, r.stdout, r.stderr)
			}
			if show := runBin(t, "schema", "show", dir); strings.Contains(show.stdout, "age") {
				t.Fatal("schema still has age")
			}
			// History keeps the column until cleanup reclaims the old commit.
			if old := queryRows(t, dir, "--snapshot "+before, `query q() { match { $p: Person { name: "Alice" } } return { $p.age } }`); len(old) != 1 || old[0]["p.age"] != 30.0 {
				t.Fatalf("pre-drop age (%s) = %v", mode, old)
			}
			if got := queryRows(t, dir, "", people); len(got) != 2 {
				t.Fatalf("rows after the drop = %v", got)
			}
		}
	})
	t.Run("69 pure rename Person -> Human", func(t *testing.T) {
		dir := evGraph(t, true)
		before, _ := headOf(t, dir, "main")
		desired := renamePH(strings.Replace(evBase, "node Person implements", `node Human @rename_from("Person") implements`, 1))
		r := applySchema(t, dir, desired)
		if r.code != 0 || !strings.Contains(r.stdout, `"kind": "rename_type"`) || !strings.Contains(r.stdout, `"step_count": 1`) {
			t.Fatalf("rename: %d %s %s", r.code, r.stdout, r.stderr)
		}
		if got := queryRows(t, dir, "", `query q() { match { $p: Human } return { $p.name } }`); len(got) != 2 {
			t.Fatalf("Human rows = %v", got)
		}
		if r := runBin(t, "query", "--store", dir, "-e", people); r.code == 0 {
			t.Fatal("Person still addressable after the rename")
		}
		if old := queryRows(t, dir, "--snapshot "+before, people); len(old) != 2 {
			t.Fatalf("pre-rename Person rows = %v", old)
		}
		// The rename changed no entity: the commit's changes are empty.
		head, _ := headOf(t, dir, "main")
		if ch := mustRun(t, "commit", "changes", "--uri", dir, head, "--json"); len(ch["changes"].([]any)) != 0 {
			t.Fatalf("rename changes = %v", ch)
		}
	})
	t.Run("70 drop then re-add mints a new type id", func(t *testing.T) {
		dir := evGraph(t, false)
		noCompany := dropCompany(evBase)
		for _, s := range []string{noCompany, evBase} {
			if r := applySchema(t, dir, s); r.code != 0 {
				t.Fatalf("apply: %s", r.stderr)
			}
		}
		m := mustRun(t, "load", "--data", writeFile(t, t.TempDir(), "c.jsonl", `{"type":"Company","data":{"name":"Initech"}}`), "--mode", "append", dir, "--json", "--quiet")
		id := m["commit"].(map[string]any)["graph_commit_id"].(string)
		ch := mustRun(t, "commit", "changes", "--uri", dir, id, "--json")["changes"].([]any)
		if got := ch[0].(map[string]any)["entity_type"].(map[string]any)["id"]; got != "node:Company~2" {
			t.Fatalf("re-added type id = %v", got)
		}
	})
	t.Run("71 index and enum widening are metadata-only", func(t *testing.T) {
		dir := evGraph(t, true)
		files := func() int {
			n := 0
			_ = filepath.Walk(filepath.Join(dir, "tables"), func(p string, info os.FileInfo, err error) error {
				if err == nil && strings.Contains(p, "/data/") {
					n++
				}
				return nil
			})
			return n
		}
		f0 := files()
		_, c0 := headOf(t, dir, "main")
		if r := applySchema(t, dir, edit("age: I32?", "age: I32? @index")(evBase)); r.code != 0 {
			t.Fatal(r.stderr)
		}
		widened := edit("enum(happy, sad)", "enum(happy, sad, calm)")(edit("age: I32?", "age: I32? @index")(evBase))
		if r := applySchema(t, dir, widened); r.code != 0 {
			t.Fatal(r.stderr)
		}
		if _, c := headOf(t, dir, "main"); c != c0+2 || files() != f0 {
			t.Fatalf("commits %d -> %d, data files %d -> %d", c0, c, f0, files())
		}
		ok := writeFile(t, t.TempDir(), "ok.jsonl", `{"type":"Person","data":{"name":"Cy","mood":"calm"}}`)
		mustRun(t, "load", "--data", ok, "--mode", "append", dir, "--json", "--quiet")
		bad := writeFile(t, t.TempDir(), "bad.jsonl", `{"type":"Person","data":{"name":"Di","mood":"bogus"}}`)
		if r := runBin(t, "load", "--data", bad, "--mode", "append", dir, "--quiet"); r.code != 1 {
			t.Fatal("an out-of-set enum value was accepted")
		}
		if r := applySchema(t, dir, edit("enum(happy, sad, calm)", "enum(happy)")(widened)); r.code != 1 || !strings.Contains(r.stderr, "OG-MF-106") {
			t.Fatalf("narrowing: %s", r.stderr)
		}
		mustRun(t, "load", "--data", writeFile(t, t.TempDir(), "z.jsonl", `{"type":"Person","data":{"name":"Zo"}}`), "--mode", "append", dir, "--json", "--quiet")
	})
}

// TestE2ESchemaMatrix applies each step kind to an empty and a loaded
// graph, on main and on a branch: the step applies, the other branch keeps
// its schema, and the target's rows read under the new schema.
func TestE2ESchemaMatrix(t *testing.T) {
	steps := []struct {
		kind  string
		edit  func(string) string
		typ   string // node type to count afterwards
		prop  string // a property to project
		count int    // loaded rows of typ
	}{
		{"add_type", edit("edge Knows", "node City { name: String @key }\nedge Knows"), "Person", "name", 2},
		{"rename_type", func(s string) string {
			return renamePH(strings.Replace(s, "node Person implements", `node Human @rename_from("Person") implements`, 1))
		}, "Human", "name", 2},
		{"add_property", edit("age: I32?", "age: I32?\n  nick: String?"), "Person", "nick", 2},
		{"rename_property", edit("age: I32?", `years: I32? @rename_from("age")`), "Person", "years", 2},
		{"add_constraint", edit("age: I32?", "age: I32? @index"), "Person", "age", 2},
		{"extend_enum", edit("enum(happy, sad)", "enum(happy, sad, calm)"), "Person", "mood", 2},
		{"update_type_metadata", edit(`@description("a firm")`, `@description("a company")`), "Company", "name", 1},
		{"drop_property", edit("  age: I32?\n", ""), "Person", "name", 2},
		{"drop_type", dropCompany, "Person", "name", 2},
	}
	for _, st := range steps {
		for _, loaded := range []bool{false, true} {
			for _, branch := range []string{"main", "b"} {
				t.Run(fmt.Sprintf("%s/loaded=%v/%s", st.kind, loaded, branch), func(t *testing.T) {
					t.Parallel()
					dir := evGraph(t, loaded)
					mustRun(t, "branch", "create", "--uri", dir, "b", "--json")
					other := map[string]string{"main": "b", "b": "main"}[branch]
					desired := st.edit(evBase)
					r := applySchema(t, dir, desired, "--branch", branch)
					if r.code != 0 || !strings.Contains(r.stdout, `"applied": true`) || !strings.Contains(r.stdout, `"kind": "`+st.kind+`"`) {
						t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
					}
					if got := runBin(t, "schema", "show", dir, "--branch", branch).stdout; got != desired {
						t.Fatalf("schema of %s:\n%s", branch, got)
					}
					if got := runBin(t, "schema", "show", dir, "--branch", other).stdout; got != evBase {
						t.Fatalf("schema of %s changed:\n%s", other, got)
					}
					want := 0
					if loaded {
						want = st.count
					}
					rows := queryRows(t, dir, "--branch "+branch, fmt.Sprintf(`query q() { match { $x: %s } return { $x.%s } }`, st.typ, st.prop))
					if len(rows) != want {
						t.Fatalf("%s rows on %s = %v, want %d", st.typ, branch, rows, want)
					}
					// The target stays writable under its new schema.
					mustRun(t, "load", "--data", writeFile(t, t.TempDir(), "w.jsonl", fmt.Sprintf(`{"type":"%s","data":{"name":"New"}}`, st.typ)),
						"--mode", "append", "--branch", branch, dir, "--json", "--quiet")
				})
			}
		}
	}
}
