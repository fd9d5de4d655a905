package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/server"
)

// runCLI runs the CLI in-process and returns exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// freshHome points OMNIGRAPH_HOME at an empty directory, with no profile
// selected, for the test; it returns the directory.
func freshHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("OMNIGRAPH_HOME", home)
	t.Setenv("OMNIGRAPH_PROFILE", "")
	return home
}

// serve runs internal/server with cfg for the test and returns its address.
func serve(t *testing.T, cfg server.Config) string {
	t.Helper()
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const exampleDir = "../../examples/social"

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "omnigraph ") || !strings.HasPrefix(lines[1], "internal-schema ") {
		t.Fatalf("version output = %q", out)
	}
	for _, flag := range []string{"-v", "--version"} {
		code, out, _ = runCLI(t, flag)
		if code != 0 || out != "omnigraph "+Version+"\n" {
			t.Fatalf("%s: exit %d, out %q", flag, code, out)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown command", []string{"frobnicate"}},
		{"unknown flag", []string{"version", "--nope"}},
		{"extra arg", []string{"version", "x"}},
		{"lint without --query", []string{"lint", "--schema", "s.pg"}},
		{"lint with --server", []string{"lint", "--server", "http://x", "--schema", "s.pg", "--query", "q.gq"}},
		{"global after verb not accepted", []string{"version", "--as", "bob"}},
		{"global before verb not accepted", []string{"--as", "bob", "version"}},
		{"lint without --schema", []string{"lint", "--query", "q.gq"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, "error:") {
				t.Fatalf("stderr lacks an error line: %q", errOut)
			}
		})
	}
}

func TestLintExample(t *testing.T) {
	for _, q := range []string{"queries.gq", "mutations.gq"} {
		code, out, errOut := runCLI(t, "lint", "--schema", filepath.Join(exampleDir, "schema.pg"), "--query", filepath.Join(exampleDir, q), "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", q, code, out, errOut)
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: bad JSON: %v\n%s", q, err, out)
		}
		for _, k := range []string{"status", "schema_source", "query_path", "queries_processed", "errors", "warnings", "infos", "results", "findings"} {
			if _, ok := rep[k]; !ok {
				t.Errorf("%s: JSON lacks %q: %s", q, k, out)
			}
		}
		if rep["status"] != "ok" {
			t.Errorf("%s: status %v", q, rep["status"])
		}
	}
	// Human output names every query.
	code, out, _ := runCLI(t, "lint", "--schema", filepath.Join(exampleDir, "schema.pg"), "--query", filepath.Join(exampleDir, "queries.gq"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"get_person", "friends_of", "friend_counts", "unemployed"} {
		if !strings.Contains(out, name) {
			t.Errorf("human output lacks %s:\n%s", name, out)
		}
	}
}

func TestLintShims(t *testing.T) {
	for _, pre := range [][]string{{"check"}, {"query", "lint"}, {"query", "check"}} {
		args := append(pre, "--schema", filepath.Join(exampleDir, "schema.pg"), "--query", filepath.Join(exampleDir, "queries.gq"))
		if code, out, errOut := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", pre, code, out, errOut)
		}
	}
}

func TestLintErrors(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(exampleDir, "schema.pg")
	tests := []struct {
		name     string
		schema   string
		query    string
		wantCode int
		want     string // substring of stdout+stderr
	}{
		{"garbage query", schema, "\x00\xff garbage {{{", 1, "Q000"},
		{"type error", schema, "query q() { match { $p: Nobody } return { $p.name } }", 1, "T1"},
		{"bad schema", "node {", "", 1, "parse error"},
		{"missing query file", schema, "", 1, "no such file"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.schema
			if tc.name == "bad schema" {
				sp = writeFile(t, dir, "bad.pg", tc.schema)
			}
			qp := filepath.Join(dir, "missing.gq")
			if tc.query != "" {
				qp = writeFile(t, dir, "q"+string(rune('a'+i))+".gq", tc.query)
			}
			if tc.name == "bad schema" {
				qp = filepath.Join(exampleDir, "queries.gq")
			}
			code, out, errOut := runCLI(t, "lint", "--schema", sp, "--query", qp, "--json")
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.wantCode, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("output lacks %q\nstdout %s\nstderr %s", tc.want, out, errOut)
			}
		})
	}
}
