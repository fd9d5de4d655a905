package mcp_test

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
	"github.com/omnigraph-go/omnigraph/internal/server"
)

// conformancePackage is the pinned MCP conformance suite. 0.1.8 is the
// newest release that runs on Node 20 (later ones need Node 22).
const conformancePackage = "@modelcontextprotocol/conformance@0.1.8"

// conformanceApplies lists the server scenarios that apply to a server
// whose tools, resources and prompts are its own. The others call the
// suite's fixture tools (test_simple_text, test_error_handling, …),
// resources (test://static-text) and prompts, which only the suite's
// reference server defines.
var conformanceApplies = []string{"server-initialize", "logging-set-level", "tools-list", "resources-list", "prompts-list"}

// TestConformanceSuite runs the npm MCP conformance suite against
// POST /graphs/{id}/mcp of an open server. It skips when npx is absent or
// the package cannot be fetched from the npm registry, and in -short mode.
func TestConformanceSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx not found")
	}
	ctx := context.Background()
	g, err := omnigraph.Init(ctx, filepath.Join(t.TempDir(), "g.omni"), "schema.pg", fixture.SocialSchema, "test", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(ctx, server.Config{Graphs: []server.GraphConfig{{ID: "social", Graph: g, Queries: stored}}, Unauthenticated: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	cmd := exec.Command(npx, "--yes", conformancePackage, "server", "--url", ts.URL+"/graphs/social/mcp")
	cmd.Dir = t.TempDir() // the suite writes results/ there
	out, _ := cmd.CombinedOutput()
	summary := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([✓✗]) ([a-z0-9-]+): `).FindAllStringSubmatch(string(out), -1) {
		summary[m[2]] = m[1] == "✓"
	}
	if len(summary) == 0 {
		t.Skipf("the conformance suite did not run (offline?):\n%s", tail(string(out), 2000))
	}
	for _, sc := range conformanceApplies {
		if pass, ok := summary[sc]; !ok || !pass {
			t.Errorf("scenario %s: ran %v, passed %v", sc, ok, pass)
		}
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", tail(string(out), 6000))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
