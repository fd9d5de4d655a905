package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnigraph-go/omnigraph/internal/server"
)

// TestMCPStdio runs `omnigraph mcp` as an MCP host does, a subprocess of
// the built binary speaking over stdin and stdout, with the SDK's client:
// on an embedded graph with stored queries from a .gq file, and against a
// server through --server, where the server's policy refuses a write.
func TestMCPStdio(t *testing.T) {
	freshHome(t)
	dir := newSocialGraph(t)
	queries := filepath.Join(exampleDir, "queries.gq")

	srvURL := serve(t, server.Config{
		Graphs:     []server.GraphConfig{{ID: "social", URI: newSocialGraph(t), Queries: []server.StoredQuery{{Name: "unemployed", Source: readFile(t, queries), Query: "unemployed"}}}},
		Tokens:     []server.Token{{Actor: "reader", Token: "tr"}},
		Authorizer: readAndInvoke{},
	})

	type call struct {
		tool     string
		args     map[string]any
		isError  bool
		contains string
	}
	cases := []struct {
		name  string
		args  []string
		env   []string
		tools []string // stored-query tools expected besides the built-ins
		calls []call
	}{
		{name: "embedded", args: []string{"mcp", "--store", dir, "--queries", queries, "--as", "agent-1"},
			tools: []string{"friend_counts", "friends_of", "get_person", "unemployed"},
			calls: []call{
				{tool: "get_person", args: map[string]any{"name": "Alice"}, contains: `"Alice" | 30`},
				{tool: "friends_of", args: map[string]any{"name": 7}, isError: true, contains: `"code":"bad_request"`},
				{tool: "mutate", args: map[string]any{"query": `query add() { insert Person { name: "Mo" } }`}, contains: "1 node"},
				{tool: "commits_list", contains: "by agent-1"},
				{tool: "query", args: map[string]any{"query": "query q( {"}, isError: true, contains: `"code":"bad_request"`},
				{tool: "branches_list", contains: "branches: main"},
			}},
		{name: "served", args: []string{"mcp", "--server", srvURL, "--graph", "social"}, env: []string{"OMNIGRAPH_BEARER_TOKEN=tr"},
			tools: []string{"unemployed"},
			calls: []call{
				{tool: "unemployed", contains: "unemployed: 2 rows"},
				{tool: "mutate", args: map[string]any{"query": `query add() { insert Person { name: "Mo" } }`}, isError: true, contains: `"code":"forbidden"`},
				{tool: "branches_create", args: map[string]any{"name": "x"}, isError: true, contains: `"code":"forbidden"`},
				{tool: "schema_get", contains: "node Person"},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(omnigraphBin(t), c.args...)
			cmd.Env = append(procEnviron(), c.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			client := sdk.NewClient(&sdk.Implementation{Name: "omnigraph-test", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("initialize: %v\nstderr: %s", err, stderr.String())
			}
			defer cs.Close()
			if cs.InitializeResult().ServerInfo.Name != "omnigraph" {
				t.Fatalf("server info: %+v", cs.InitializeResult().ServerInfo)
			}
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			for _, want := range append([]string{"schema_get", "query", "mutate", "load", "diff", "changes_poll"}, c.tools...) {
				if !slices.Contains(names, want) {
					t.Errorf("tool %s missing from %v", want, names)
				}
			}
			for _, k := range c.calls {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: k.tool, Arguments: k.args})
				if err != nil {
					t.Fatalf("%s: protocol error %v", k.tool, err)
				}
				body, _ := json.Marshal(res.StructuredContent)
				text := ""
				for _, ct := range res.Content {
					if tc, ok := ct.(*sdk.TextContent); ok {
						text += tc.Text
					}
				}
				if res.IsError != k.isError || !strings.Contains(text+string(body), k.contains) {
					t.Errorf("%s %v: IsError=%v text %q body %s; want IsError=%v and %q", k.tool, k.args, res.IsError, text, body, k.isError, k.contains)
				}
			}
		})
	}
}

// readAndInvoke allows reads and stored-query invokes, nothing else.
type readAndInvoke struct{}

func (readAndInvoke) Authorize(_ context.Context, r server.AuthzRequest) (server.Decision, error) {
	ok := r.Action == server.ActionRead || r.Action == server.ActionInvokeQuery
	return server.Decision{Allowed: ok, RuleID: "read-and-invoke"}, nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
