package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// The merge truth table of spec/engine.md §3.6, run through the binary: for
// each (source op, target op) the merge outcome, or the single conflict, and
// main's state afterwards.

// truthSchema and truthData are the table's setup, shared with the engine's
// merge tests.
const (
	truthSchema = fixture.TruthSchema
	truthData   = fixture.TruthData
)

// truthOps are the mutations of one op, each a separate commit.
// In addNode×addNode the source inserts Eve aged 21 and the target 22; in
// setProperty×setProperty the source sets Alice to 31 and the target 32;
// everywhere else the values are 22 and 31.
func truthOps(op, other string, src bool) []struct{ q, params string } {
	type m = struct{ q, params string }
	eveAge, aliceAge := "22", "31"
	if op == other && !src {
		aliceAge = "32"
	}
	if op == other && src {
		eveAge = "21"
	}
	switch op {
	case "noop":
		return nil
	case "addNode":
		return []m{{`query q($a: I32) { insert Person { name: "Eve", age: $a } }`, `{"a":` + eveAge + `}`}}
	case "removeNode":
		return []m{{`query q() { delete Person where name = "Alice" }`, ``}}
	case "addEdge":
		return []m{{`query q() { insert Knows { from: "Alice", to: "Carol" } }`, ``}}
	case "removeEdge":
		return []m{{`query q() { delete Knows where from = "Bob" }`, ``}}
	case "setProperty":
		return []m{{`query q($a: I32) { update Person set { age: $a } where name = "Alice" }`, `{"a":` + aliceAge + `}`}}
	case "netZeroEdge":
		return []m{
			{`query q() { insert Knows { from: "Alice", to: "Carol" } }`, ``},
			{`query q() { delete Knows where from = "Alice" }`, ``},
		}
	}
	panic(op)
}

// truthWant is one cell: an outcome with main's state "P5 K1 A30 +E", or a
// conflict "DivergentInsert node:Person Eve".
type truthWant struct{ outcome, state string }

var truthOpsOrder = []string{"noop", "addNode", "removeNode", "addEdge", "removeEdge", "setProperty", "netZeroEdge"}

// truthTable[source][target], transcribed from spec/engine.md §3.6. The
// setProperty×setProperty, addNode×addNode values differ per side as the
// spec says (source 31/21, target 32/22).
var truthTable = map[string][]truthWant{
	"noop":        {{"UTD", ""}, {"UTD", ""}, {"UTD", ""}, {"UTD", ""}, {"UTD", ""}, {"UTD", ""}, {"UTD", ""}},
	"addNode":     {{"FF", "P5 K1 A30 +E"}, {"divergent_insert", "node:Person Eve"}, {"M", "P4 K1 A– +E"}, {"M", "P5 K2 A30 +E"}, {"M", "P5 K0 A30 +E"}, {"M", "P5 K1 A31 +E"}, {"M", "P5 K1 A30 +E"}},
	"removeNode":  {{"FF", "P3 K1 A–"}, {"M", "P4 K1 A– +E"}, {"M", "P3 K1 A–"}, {"orphan_edge", "edge:Knows"}, {"M", "P3 K0 A–"}, {"delete_vs_update", "node:Person Alice"}, {"M", "P3 K1 A–"}},
	"addEdge":     {{"FF", "P4 K2 A30"}, {"M", "P5 K2 A30 +E"}, {"orphan_edge", "edge:Knows"}, {"M", "P4 K3 A30"}, {"M", "P4 K1 A30"}, {"M", "P4 K2 A31"}, {"M", "P4 K2 A30"}},
	"removeEdge":  {{"FF", "P4 K0 A30"}, {"M", "P5 K0 A30 +E"}, {"M", "P3 K0 A–"}, {"M", "P4 K1 A30"}, {"M", "P4 K0 A30"}, {"M", "P4 K0 A31"}, {"M", "P4 K0 A30"}},
	"setProperty": {{"FF", "P4 K1 A31"}, {"M", "P5 K1 A31 +E"}, {"delete_vs_update", "node:Person Alice"}, {"M", "P4 K2 A31"}, {"M", "P4 K0 A31"}, {"divergent_update", "node:Person Alice"}, {"M", "P4 K1 A31"}},
	"netZeroEdge": {{"FF", "P4 K1 A30"}, {"M", "P5 K1 A30 +E"}, {"M", "P3 K1 A–"}, {"M", "P4 K2 A30"}, {"M", "P4 K0 A30"}, {"M", "P4 K1 A31"}, {"M", "P4 K1 A30"}},
}

var outcomeNames = map[string]string{"UTD": "already_up_to_date", "FF": "fast_forward", "M": "merged"}

// mainState renders main as "P<n> K<n> A<age|–>[ +E]".
func mainState(t *testing.T, dir string) string {
	t.Helper()
	people := rowsOf(t, mustRun(t, "query", "--store", dir, "--json", "-e",
		`query q() { match { $p: Person } return { $p.name, $p.age } }`))
	// Count edge entities (parallel edges included) from the snapshot.
	knows := "?"
	for _, d := range mustRun(t, "snapshot", dir, "--json")["datasets"].([]any) {
		if d := d.(map[string]any); d["type_name"] == "Knows" {
			knows = fmt.Sprint(d["entity_count"])
		}
	}
	alice, eve := "–", false
	for _, r := range people {
		switch r["p.name"] {
		case "Alice":
			alice = fmt.Sprint(r["p.age"])
		case "Eve":
			eve = true
		}
	}
	s := fmt.Sprintf("P%d K%s A%s", len(people), knows, alice)
	if eve {
		s += " +E"
	}
	return s
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

func TestE2EMergeTruthTable(t *testing.T) {
	if testing.Short() {
		t.Skip("49 cells through the binary")
	}
	tmp := t.TempDir()
	schema := filepath.Join(tmp, "truth.pg")
	data := filepath.Join(tmp, "truth.jsonl")
	if err := os.WriteFile(schema, []byte(truthSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, []byte(truthData), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(tmp, "base.omni")
	mustRun(t, "init", "--schema", schema, base, "--json")
	mustRun(t, "load", "--data", data, "--mode", "overwrite", base, "--json", "--quiet")
	mustRun(t, "branch", "create", "--uri", base, "feature", "--json", "--quiet")

	for _, src := range truthOpsOrder {
		for ti, tgt := range truthOpsOrder {
			want := truthTable[src][ti]
			t.Run(src+"×"+tgt, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "g.omni")
				copyDir(t, base, dir)
				for _, m := range truthOps(src, tgt, true) {
					args := []string{"mutate", "--store", dir, "--branch", "feature", "-e", m.q, "--json"}
					if m.params != "" {
						args = append(args, "--params", m.params)
					}
					mustRun(t, args...)
				}
				for _, m := range truthOps(tgt, src, false) {
					args := []string{"mutate", "--store", dir, "-e", m.q, "--json"}
					if m.params != "" {
						args = append(args, "--params", m.params)
					}
					mustRun(t, args...)
				}
				targetOnly := mainState(t, dir)
				r := runBin(t, "branch", "merge", "--uri", dir, "feature", "--json", "--quiet")
				if name, ok := outcomeNames[want.outcome]; ok {
					if r.code != 0 {
						t.Fatalf("merge: exit %d\n%s%s", r.code, r.stdout, r.stderr)
					}
					var out map[string]any
					if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
						t.Fatal(err)
					}
					if out["outcome"] != name {
						t.Fatalf("outcome %v, want %s", out["outcome"], name)
					}
					if want.state != "" {
						if got := mainState(t, dir); got != want.state {
							t.Fatalf("main = %s, want %s", got, want.state)
						}
					}
					return
				}
				// A conflict: exactly one, of the right kind and entity; main unchanged.
				if r.code != 1 {
					t.Fatalf("merge: exit %d, want a conflict\n%s%s", r.code, r.stdout, r.stderr)
				}
				var out struct {
					Conflicts []map[string]any `json:"merge_conflicts"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
					t.Fatalf("conflict JSON: %v\n%s", err, r.stdout)
				}
				if len(out.Conflicts) != 1 {
					t.Fatalf("%d conflicts, want 1: %v", len(out.Conflicts), out.Conflicts)
				}
				c := out.Conflicts[0]
				parts := strings.Fields(want.state)
				if c["kind"] != want.outcome || fmt.Sprint(c["entity_kind"], ":", c["type_name"]) != parts[0] {
					t.Fatalf("conflict %v, want %s on %s", c, want.outcome, parts[0])
				}
				if len(parts) > 1 && c["entity_id"] != parts[1] {
					t.Fatalf("conflict entity %v, want %s", c["entity_id"], parts[1])
				}
				if got := mainState(t, dir); got != targetOnly {
					t.Fatalf("main after a refused merge = %s, want the target-only state %s", got, targetOnly)
				}
			})
		}
	}
}
