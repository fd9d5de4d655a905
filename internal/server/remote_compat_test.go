package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// TestRemoteClientCompat drives the CLI's served-mode client
// (internal/remote) against this server, so the two halves of the wire
// contract are checked against each other, not only against the spec.
func TestRemoteClientCompat(t *testing.T) {
	ts := start(t, Config{Authorizer: AllowAll{}}, withTokens(Token{Actor: "ops", Token: "tok-ops"}))
	ctx := context.Background()
	c := remote.New(ts.hs.URL, "g", "tok-ops", ts.hs.Client())
	ok := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	gs, err := c.Graphs(ctx)
	ok("graphs", err)
	if len(gs) != 1 || gs[0].GraphID != "g" {
		t.Errorf("graphs %+v", gs)
	}
	ro, err := c.Query(ctx, remote.QueryRequest{Query: findPerson, Params: map[string]any{"name": "Alice"}})
	ok("query", err)
	if ro.RowCount != 1 || string(ro.Rows[0]["p.name"]) != `"Alice"` || ro.GraphCommitID != ts.head("main") {
		t.Errorf("query %+v", ro)
	}
	raw, err := c.Mutate(ctx, remote.ChangeRequest{Query: addPerson, Params: map[string]any{"name": "Eve", "age": 3}}, "")
	ok("mutate", err)
	if !bytes.Contains(raw, []byte(`"affected_nodes":1`)) || !bytes.Contains(raw, []byte(`"actor_id":"ops"`)) {
		t.Errorf("mutate %s", raw)
	}
	_, err = c.Mutate(ctx, remote.ChangeRequest{Query: setAge, Params: map[string]any{"name": "Bob", "age": 1}}, "01HXXXXXXXXXXXXXXXXXXXXXXX")
	var re *remote.Error
	if !errors.As(err, &re) || re.Status != 412 || re.Body == nil || re.Body.PreconditionFailure == nil || re.Body.PreconditionFailure.Expected != "01HXXXXXXXXXXXXXXXXXXXXXXX" {
		t.Errorf("stale conditional mutate: %v", err)
	}
	_, err = c.Mutate(ctx, remote.ChangeRequest{Query: setAge, Params: map[string]any{"name": "Bob", "age": 1}}, ts.head("main"))
	ok("conditional mutate", err)
	raw, err = c.InvokeQuery(ctx, "find", remote.InvokeRequest{Params: map[string]any{"name": "Bob"}}, "")
	ok("invoke", err)
	if !bytes.Contains(raw, []byte(`"p.age":1`)) {
		t.Errorf("invoke %s", raw)
	}
	raw, err = c.Queries(ctx)
	ok("queries", err)
	if !bytes.Contains(raw, []byte(`"tool_name":"find"`)) {
		t.Errorf("queries %s", raw)
	}
	src, err := c.Schema(ctx)
	ok("schema", err)
	if !strings.Contains(src, "node Person") {
		t.Errorf("schema %q", src)
	}
	raw, err = c.LoadNDJSON(ctx, strings.NewReader(`{"type":"Person","data":{"name":"Lin"}}`+"\n"), "team/x", "main", "append")
	ok("load", err)
	if !bytes.Contains(raw, []byte(`"branch_created":true`)) {
		t.Errorf("load %s", raw)
	}
	var out bytes.Buffer
	ok("export", c.Export(ctx, remote.ExportRequest{Branch: "team/x", TypeNames: []string{"Person"}}, &out))
	if !strings.Contains(out.String(), `"Lin"`) {
		t.Errorf("export %q", out.String())
	}
	names, err := c.Branches(ctx)
	ok("branches", err)
	if len(names) != 2 {
		t.Errorf("branches %v", names)
	}
	raw, err = c.Merge(ctx, remote.MergeRequest{Source: "team/x", DeleteBranch: true})
	ok("merge", err)
	if !bytes.Contains(raw, []byte(`"branch_deleted":true`)) {
		t.Errorf("merge %s", raw)
	}
	_, err = c.CreateBranch(ctx, "team/y", "")
	ok("create", err)
	_, err = c.DeleteBranch(ctx, "team/y")
	ok("delete nested branch name", err)
	raw, err = c.Commits(ctx, "main")
	ok("commits", err)
	var cl CommitListOutput
	if err := json.Unmarshal(raw, &cl); err != nil || len(cl.Commits) < 4 {
		t.Fatalf("commits %s", raw)
	}
	_, err = c.Commit(ctx, cl.Commits[0].GraphCommitID)
	ok("commit", err)
	raw, err = c.CommitChanges(ctx, cl.Commits[0].GraphCommitID, url.Values{"limit": {"10"}})
	ok("changes", err)
	if !bytes.Contains(raw, []byte(`"cause"`)) {
		t.Errorf("changes %s", raw)
	}
	raw, err = c.Snapshot(ctx, "main")
	ok("snapshot", err)
	if !bytes.Contains(raw, []byte(`"graph_branch":"main"`)) {
		t.Errorf("snapshot %s", raw)
	}
	// Errors surface as the server's ErrorOutput.
	_, err = c.Query(ctx, remote.QueryRequest{Query: "this is not gq"})
	if !errors.As(err, &re) || re.Status != 400 || re.Body == nil || re.Body.Code != "bad_request" {
		t.Errorf("bad query: %v", err)
	}
	bad := remote.New(ts.hs.URL, "g", "wrong", ts.hs.Client())
	if _, err := bad.Branches(ctx); !errors.As(err, &re) || re.Status != 401 {
		t.Errorf("wrong token: %v", err)
	}
}
