package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression tests through the binary for issue 17 item 2: queries that
// used to take the process down (an 80 GB product, an all-pairs
// variable-length expansion) stop with a resource-limit error and exit 1,
// under an address-space limit of 3 GB so that an attempt to allocate past
// the budget would crash the child instead of passing.
func TestQueryLimitsThroughBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 20,000 nodes")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for ulimit")
	}
	dir := filepath.Join(t.TempDir(), "ring.omni")
	mustRun(t, "init", "--schema", filepath.Join(exampleDir, "schema.pg"), dir, "--json")
	const n = 20000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":"p%d","age":%d}}`+"\n", i, i%90)
	}
	for i := range n {
		fmt.Fprintf(&b, `{"edge":"Knows","from":"p%d","to":"p%d"}`+"\n", i, (i+1)%n)
	}
	data := writeFile(t, t.TempDir(), "ring.jsonl", b.String())
	mustRun(t, "load", "--data", data, "--mode", "overwrite", dir, "--json", "--quiet")

	bin := omnigraphBin(t)
	limited := func(args ...string) runResult {
		t.Helper()
		r, err := procRun("sh", nil, append([]string{"-c", `ulimit -v 3000000 && exec "$0" "$@"`, bin}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	q := func(src string, extra ...string) []string {
		return append([]string{"query", "-e", src, "--store", dir, "--json"}, extra...)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		resource string // in stderr when code is 1
		rows     int    // when code is 0
	}{
		{"product count over the default budget", q(`query q() { match { $a: Person  $b: Person } return { count($a) as n } }`), 1, "query_memory_bytes", 0},
		{"product with limit", q(`query q() { match { $a: Person  $b: Person } return { $a.name, $b.name } limit 10 }`), 0, "", 10},
		{"all-pairs expansion", q(`query q() { match { $a: Person  $a knows{1,100000} $b } return { count($b) as n } }`, "--memory-limit", "256MiB"), 1, "query_memory_bytes", 0},
		{"timeout", q(`query q() { match { $a: Person  $b: Person } return { count($a) as n } }`, "--timeout", "1ns"), 1, "query_time_ms", 0},
		{"within limits", q(`query q() { match { $a: Person { name: "p7" }  $a knows{1,3} $b } return { $b.name } }`, "--memory-limit", "64MiB", "--timeout", "1m"), 0, "", 3},
		{"bad size", q(`query q() { match { $a: Person } return { $a.name } }`, "--memory-limit", "lots"), 2, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := limited(tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %.2000s", r.code, tc.code, r.stderr)
			}
			if strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine ") {
				t.Fatalf("the process crashed:\n%.2000s", r.stderr)
			}
			switch tc.code {
			case 0:
				var m map[string]any
				if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
					t.Fatalf("bad JSON %v: %s", err, r.stdout)
				}
				if got := len(rowsOf(t, m)); got != tc.rows {
					t.Fatalf("%d rows, want %d", got, tc.rows)
				}
			case 1:
				// Under --json the body is the server's 413 shape
				// (spec/surfaces.md §2.5: resource_limit, no code).
				var body struct {
					Code          *string `json:"code"`
					ResourceLimit *struct {
						Resource string `json:"resource"`
					} `json:"resource_limit"`
				}
				if !strings.Contains(r.stderr, "resource limit exceeded: "+tc.resource) || json.Unmarshal([]byte(r.stdout), &body) != nil ||
					body.ResourceLimit == nil || body.ResourceLimit.Resource != tc.resource || body.Code != nil {
					t.Fatalf("stdout %q, stderr %q; want a %s resource-limit error", r.stdout, r.stderr, tc.resource)
				}
			}
		})
	}
	// The environment sets the default the flag overrides.
	r, err := procRun(bin, []string{envQueryMemory + "=1KiB"}, q(`query q() { match { $a: Person } return { $a.name } }`)...)
	if err != nil || r.code != 1 || !strings.Contains(r.stderr, "query_memory_bytes (limit 1024") {
		t.Fatalf("%s=1KiB: exit %d, stderr %q (%v)", envQueryMemory, r.code, r.stderr, err)
	}
}
