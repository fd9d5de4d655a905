package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/server"
)

// TestBlobCommands: blob get and blob stat (spec/surfaces.md §1.3) on an
// embedded graph and through a server, with the same outputs.
func TestBlobCommands(t *testing.T) {
	freshHome(t)
	dir := t.TempDir()
	schema := writeFile(t, dir, "s.pg", "node Doc { slug: String @key  body: Blob?}\nedge Cites: Doc -> Doc { note: Blob? }\n")
	uri := filepath.Join(dir, "g.omni")
	if code, _, errs := runCLI(t, "init", "--schema", schema, uri, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	// "hello world" and "note!". (External blob URIs are refused at ingest
	// unless a cluster allows their base, so blob get never meets one here.)
	data := writeFile(t, dir, "d.jsonl", `{"type":"Doc","data":{"slug":"a","body":"base64:aGVsbG8gd29ybGQ="}}`+"\n"+
		`{"type":"Doc","data":{"slug":"b"}}`+"\n"+`{"edge":"Cites","from":"a","to":"b","data":{"id":"c1","note":"base64:bm90ZSE="}}`+"\n")
	if code, _, errs := runCLI(t, "load", "--data", data, "--mode", "overwrite", uri, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	srvURL := serve(t, server.Config{
		Graphs: []server.GraphConfig{{ID: "g", URI: uri}}, Tokens: []server.Token{{Actor: "act", Token: "tk"}}, Authorizer: server.AllowAll{},
	})
	t.Setenv("OMNIGRAPH_BEARER_TOKEN", "tk")
	out := filepath.Join(dir, "out.bin")
	for _, scope := range [][]string{{"--store", uri}, {"--server", srvURL, "--graph", "g"}} {
		name := scope[0]
		for _, tc := range []struct {
			name string
			args []string
			code int
			out  string
			err  string
		}{
			{"get", []string{"blob", "get", "node", "Doc", "a", "body"}, 0, "hello world", ""},
			{"get range", []string{"blob", "get", "node", "Doc", "a", "body", "--offset", "6", "--length", "3"}, 0, "wor", ""},
			{"get to the end", []string{"blob", "get", "node", "Doc", "a", "body", "--offset", "6"}, 0, "world", ""},
			{"edge blob", []string{"blob", "get", "edge", "Cites", "c1", "note"}, 0, "note!", ""},
			{"stat json", []string{"blob", "stat", "node", "Doc", "a", "body", "--json"}, 0, `"kind": "managed",
  "size": 11,
  "etag": "\"b94d27b9934d3e08a52e52d7da7dabfa\""`, ""},
			{"stat text", []string{"blob", "stat", "node", "Doc", "a", "body"}, 0, "node a Doc.body: managed, 11 bytes, etag", ""},
			{"null blob", []string{"blob", "get", "node", "Doc", "b", "body"}, 1, "", "has no body"},
			{"unknown id", []string{"blob", "get", "node", "Doc", "zz", "body"}, 1, "", "no node 'zz'"},
			{"not a blob", []string{"blob", "get", "node", "Doc", "a", "slug"}, 1, "", "not Blob"},
			{"bad entity", []string{"blob", "get", "vertex", "Doc", "a", "body"}, 2, "", "ENTITY must be node or edge"},
			{"zero length", []string{"blob", "get", "node", "Doc", "a", "body", "--length", "0"}, 2, "", "--length must be greater than 0"},
			{"too few args", []string{"blob", "stat", "node", "Doc", "a"}, 2, "", "ENTITY TYPE ID PROPERTY"},
			{"branch and snapshot", []string{"blob", "get", "node", "Doc", "a", "body", "--branch", "main", "--snapshot", "main"}, 2, "", "--branch and --snapshot cannot be used together"},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, append(tc.args, scope...)...)
				if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.err) {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q", code, stdout, stderr, tc.code, tc.out, tc.err)
				}
			})
		}
		os.Remove(out)
		if code, _, stderr := runCLI(t, append([]string{"blob", "get", "node", "Doc", "a", "body", "--out", out}, scope...)...); code != 0 {
			t.Fatal(stderr)
		}
		if b, err := os.ReadFile(out); err != nil || string(b) != "hello world" {
			t.Fatalf("--out wrote %q, %v", b, err)
		}
	}
}
