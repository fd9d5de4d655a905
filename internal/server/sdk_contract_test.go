package server

import (
	"bytes"
	"strings"
	"testing"
)

// TestSDKContract replays the assertions of the reference TypeScript SDK's
// end-to-end suite (spec/surfaces.md §5.4) against the v0.10 routes under
// /graphs/{id}, with a bearer token and a policy that grants everything.
func TestSDKContract(t *testing.T) {
	ts := start(t, Config{Authorizer: AllowAll{}}, withTokens(Token{Actor: "ci", Token: "ci-token"}))
	g := "/graphs/g"
	must := func(r resp, status int) resp {
		t.Helper()
		if r.status != status {
			t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
		}
		return r
	}
	// 1. health
	var h HealthOutput
	must(ts.req("GET", "/healthz", nil), 200).decode(t, &h)
	if h.Status != "ok" || h.Version == "" {
		t.Errorf("health %+v", h)
	}
	// 2. snapshot: Person has at least 4 rows.
	var snap SnapshotOutput
	must(ts.req("GET", g+"/snapshot?branch=main", nil), 200).decode(t, &snap)
	if snap.GraphBranch != "main" || len(snap.Datasets) == 0 || snap.Datasets[0].TypeName != "Person" || snap.Datasets[0].EntityCount < 4 {
		t.Errorf("snapshot %+v", snap)
	}
	// 3. branches: create, list, delete.
	must(ts.req("POST", g+"/branches", map[string]any{"name": "sdk-e2e", "from": "main"}), 200)
	if r := must(ts.req("GET", g+"/branches", nil), 200); !bytes.Contains(r.body, []byte(`"sdk-e2e"`)) || !bytes.Contains(r.body, []byte(`"main"`)) {
		t.Errorf("branches %s", r.body)
	}
	// 4. merge of an unchanged fork, twice.
	var m BranchMergeOutput
	must(ts.req("POST", g+"/branches/merge", map[string]any{"source": "sdk-e2e", "target": "main"}), 200).decode(t, &m)
	if m.Outcome != "fast_forward" && m.Outcome != "already_up_to_date" {
		t.Errorf("merge %+v", m)
	}
	must(ts.req("POST", g+"/branches/merge", map[string]any{"source": "sdk-e2e", "target": "main"}), 200).decode(t, &m)
	if m.Outcome != "already_up_to_date" {
		t.Errorf("second merge %+v", m)
	}
	must(ts.req("DELETE", g+"/branches/sdk-e2e", nil), 200)
	if r := must(ts.req("GET", g+"/branches", nil), 200); bytes.Contains(r.body, []byte(`"sdk-e2e"`)) {
		t.Errorf("deleted branch listed: %s", r.body)
	}
	// 5. reads through the deprecated /read and /query.
	find := "query find($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }"
	r := must(ts.req("POST", g+"/read", map[string]any{"query_source": find, "query_name": "find", "params": map[string]any{"name": "Alice"}, "branch": "main"}), 200)
	if !bytes.Contains(r.body, []byte(`"row_count":1`)) || !bytes.Contains(r.body, []byte(`"p.name":"Alice"`)) {
		t.Errorf("read %s", r.body)
	}
	adults := "query adults() {\n  match {\n    $p: Person\n    $p.age > 25\n  }\n  return { $p.name }\n}"
	var ro ReadOutput
	must(ts.req("POST", g+"/query", map[string]any{"query": adults}), 200).decode(t, &ro)
	if ro.RowCount < 2 {
		t.Errorf("adults: %d rows", ro.RowCount)
	}
	// 6. a change on a fresh branch.
	must(ts.req("POST", g+"/branches", map[string]any{"name": "sdk-change"}), 200)
	var co ChangeOutput
	must(ts.req("POST", g+"/change", map[string]any{"query_source": `query add() { insert Person { name: "Zoe", age: 33 } }`, "branch": "sdk-change"}), 200).decode(t, &co)
	if co.AffectedNodes < 1 {
		t.Errorf("change %+v", co)
	}
	// 7. ingest into a new branch, then read it back there.
	var io IngestOutput
	must(ts.req("POST", g+"/ingest", map[string]any{"branch": "sdk-ingest", "from": "main", "mode": "merge", "data": `{"type":"Person","data":{"name":"Yuri","age":50}}` + "\n"}), 200).decode(t, &io)
	if io.Branch != "sdk-ingest" || len(io.Nodes) == 0 {
		t.Errorf("ingest %+v", io)
	}
	r = must(ts.req("POST", g+"/read", map[string]any{"query_source": find, "params": map[string]any{"name": "Yuri"}, "branch": "sdk-ingest"}), 200)
	if !bytes.Contains(r.body, []byte(`"row_count":1`)) {
		t.Errorf("read after ingest %s", r.body)
	}
	// 8. commits: list, round-trip one, unknown is 404.
	var cl CommitListOutput
	must(ts.req("GET", g+"/commits?branch=main", nil), 200).decode(t, &cl)
	if len(cl.Commits) == 0 || cl.Commits[0].GraphCommitID == "" {
		t.Fatalf("commits %+v", cl)
	}
	var c CommitOutput
	must(ts.req("GET", g+"/commits/"+cl.Commits[0].GraphCommitID, nil), 200).decode(t, &c)
	if c.GraphCommitID != cl.Commits[0].GraphCommitID {
		t.Errorf("commit %+v", c)
	}
	if e := must(ts.req("GET", g+"/commits/01HXXXXXXXXXXXXXXXXXXXXXXX", nil), 404).errOut(t); e.Code != codeNotFound {
		t.Errorf("unknown commit %+v", e)
	}
	// 9. schema.
	var so SchemaOutput
	must(ts.req("GET", g+"/schema", nil), 200).decode(t, &so)
	if !strings.Contains(so.SchemaSource, "node Person") {
		t.Errorf("schema %q", so.SchemaSource)
	}
	// 10. export: at least 4 NDJSON lines.
	if r := must(ts.req("POST", g+"/export", map[string]any{"branch": "main"}), 200); bytes.Count(r.body, []byte("\n")) < 4 {
		t.Errorf("export %q", r.body)
	}
	// 11. a wrong token is 401; bad source is 400 bad_request.
	ts.tok = "wrong"
	must(ts.req("GET", g+"/branches", nil), 401)
	ts.tok = "ci-token"
	if e := must(ts.req("POST", g+"/read", map[string]any{"query_source": "this is not gq"}), 400).errOut(t); e.Code != codeBadRequest {
		t.Errorf("bad source %+v", e)
	}
}
