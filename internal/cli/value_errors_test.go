package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestSameBadValueSameError: one bad value gets the same words from every
// path that converts values — `load` (JSONL input), `mutate --params` and
// `query --params` — because all three run internal/value's one converter.
// Only the subject differs, as the language spec words it ("property 'x'"
// for input, "param 'x':" for parameters); the part after it must match.
func TestSameBadValueSameError(t *testing.T) {
	dir := t.TempDir()
	schemaFile := writeFile(t, dir, "s.pg", `
node Item { name: String @key  n: I32?  f: F32?  d: Date?  ts: DateTime?  b: Blob? }
`)
	queries := writeFile(t, dir, "q.gq", `
query set_n($name: String, $v: I32) { update Item set { n: $v } where name = $name }
query set_f($name: String, $v: F32) { update Item set { f: $v } where name = $name }
query set_d($name: String, $v: Date) { update Item set { d: $v } where name = $name }
query set_ts($name: String, $v: DateTime) { update Item set { ts: $v } where name = $name }
query get_n($v: I32) { match { $i: Item  $i.n = $v } return { $i.name } }
query get_f($v: F32) { match { $i: Item  $i.f = $v } return { $i.name } }
query get_d($v: Date) { match { $i: Item  $i.d = $v } return { $i.name } }
query get_ts($v: DateTime) { match { $i: Item  $i.ts = $v } return { $i.name } }
query get_b($v: Blob) { match { $i: Item } return { $i.name } }
`)
	g := filepath.Join(dir, "g.omni")
	if code, _, stderr := runCLI(t, "init", "--schema", schemaFile, g, "--quiet"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	seed := writeFile(t, dir, "seed.jsonl", `{"type":"Item","data":{"name":"a"}}`+"\n")
	if code, _, stderr := runCLI(t, "load", "--data", seed, "--mode", "overwrite", g, "--quiet"); code != 0 {
		t.Fatalf("load seed: %d %s", code, stderr)
	}
	tests := []struct {
		name, prop, raw string // raw: the bad value as JSON
		reason          string
	}{
		{"int out of range", "n", `3000000000`, "value 3000000000 exceeds Int32 range"},
		{"int with fraction", "n", `30.5`, "expects an integer for I32, got 30.5"},
		{"float out of range", "f", `1e39`, "value 1e39 exceeds Float32 range"},
		{"bad date", "d", `"2024-13-01"`, `invalid Date '2024-13-01' (expected "YYYY-MM-DD" or integer days)`},
		{"bad datetime", "ts", `"noon"`, "invalid DateTime 'noon' (expected RFC3339 or integer milliseconds)"},
		// Mutations cannot take Blob parameters (T7), so a bad blob has two paths.
		{"bad blob", "b", `"just text"`, `expects "base64:<payload>" or a URI for Blob`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := writeFile(t, dir, tc.prop+".jsonl", fmt.Sprintf(`{"type":"Item","data":{"name":"x","%s":%s}}`+"\n", tc.prop, tc.raw))
			paths := []struct {
				path, subject string
				args          []string
			}{
				{"load", "property '" + tc.prop + "' ", []string{"load", "--data", data, "--mode", "append", g}},
				{"mutate --params", "param 'v': ", []string{"mutate", "set_" + tc.prop, "--query", queries,
					"--params", fmt.Sprintf(`{"name":"a","v":%s}`, tc.raw), "--store", g}},
				{"query --params", "param 'v': ", []string{"query", "get_" + tc.prop, "--query", queries,
					"--params", fmt.Sprintf(`{"v":%s}`, tc.raw), "--store", g}},
			}
			for _, p := range paths {
				if tc.prop == "b" && p.path == "mutate --params" {
					continue
				}
				code, _, stderr := runCLI(t, p.args...)
				if code == 0 {
					t.Fatalf("%s accepted %s", p.path, tc.raw)
				}
				if want := p.subject + tc.reason; !strings.Contains(stderr, want) {
					t.Errorf("%s: stderr %q does not contain %q", p.path, stderr, want)
				}
			}
		})
	}
}
