package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

// TestRouteStatuses drives every route through its documented statuses on
// an open server (auth and policy statuses are in auth_test.go).
func TestRouteStatuses(t *testing.T) {
	type tc struct {
		name         string
		method, path string
		body         any
		hdr          []string
		// setup runs first and may return header values or paths computed
		// from the graph (e.g. a commit id) via the testServer.
		setup  func(ts *testServer) (path string, hdr []string)
		status int
		code   string
		check  func(t *testing.T, ts *testServer, r resp)
	}
	q := func(src string) map[string]any { return map[string]any{"query": src} }
	ndjson := []string{"Content-Type", "application/x-ndjson"}
	cases := []tc{
		{name: "healthz", method: "GET", path: "/healthz", status: 200, check: func(t *testing.T, _ *testServer, r resp) {
			var h HealthOutput
			r.decode(t, &h)
			if h.Status != "ok" || h.Version == "" || h.InternalSchemaVersion <= 0 {
				t.Errorf("health = %+v", h)
			}
		}},
		{name: "openapi", method: "GET", path: "/openapi.json", status: 200},
		{name: "graphs", method: "GET", path: "/graphs", status: 200, check: func(t *testing.T, _ *testServer, r resp) {
			var g GraphListResponse
			r.decode(t, &g)
			if len(g.Graphs) != 1 || g.Graphs[0].GraphID != "g" || g.Graphs[0].URI == "" {
				t.Errorf("graphs = %+v", g)
			}
		}},
		{name: "flat protected path", method: "GET", path: "/snapshot", status: 404, code: codeNotFound},
		{name: "unknown graph", method: "GET", path: "/graphs/nope/snapshot", status: 404, code: codeNotFound},
		{name: "invalid graph id", method: "GET", path: "/graphs/a_b/snapshot", status: 400, code: codeBadRequest},
		{name: "reserved graph id", method: "GET", path: "/graphs/healthz/snapshot", status: 400, code: codeBadRequest},
		{name: "method not allowed", method: "PUT", path: "/graphs/g/query", status: 405, code: codeMethodNotAllowed,
			check: func(t *testing.T, _ *testServer, r resp) {
				if r.header.Get("Allow") != "POST" {
					t.Errorf("Allow = %q", r.header.Get("Allow"))
				}
			}},
		{name: "unrouted feature", method: "GET", path: "/graphs/g/runs", status: 404, code: codeNotFound},

		{name: "snapshot", method: "GET", path: "/graphs/g/snapshot?branch=main", status: 200, check: func(t *testing.T, _ *testServer, r resp) {
			var s SnapshotOutput
			r.decode(t, &s)
			if s.GraphBranch != "main" || len(s.Datasets) != 4 || s.Datasets[0].TypeName != "Person" || s.Datasets[0].EntityCount != 4 {
				t.Errorf("snapshot = %+v", s)
			}
		}},
		{name: "snapshot unknown branch", method: "GET", path: "/graphs/g/snapshot?branch=nope", status: 404, code: codeNotFound},
		{name: "snapshot branch and snapshot", method: "GET", path: "/graphs/g/snapshot?branch=main&snapshot=x", status: 400, code: codeBadRequest},
		{name: "snapshot unknown param", method: "GET", path: "/graphs/g/snapshot?brnch=main", status: 400, code: codeBadRequest},
		{name: "snapshot repeated param", method: "GET", path: "/graphs/g/snapshot?branch=main&branch=x", status: 400, code: codeBadRequest},
		{name: "snapshot malformed query string", method: "GET", path: "/graphs/g/snapshot?branch=%zz", status: 400, code: codeBadRequest},
		{name: "schema", method: "GET", path: "/graphs/g/schema", status: 200, check: func(t *testing.T, _ *testServer, r resp) {
			var s SchemaOutput
			r.decode(t, &s)
			if !strings.Contains(s.SchemaSource, "node Person") {
				t.Errorf("schema = %q", s.SchemaSource)
			}
		}},

		{name: "query", method: "POST", path: "/graphs/g/query", body: map[string]any{"query": findPerson, "params": map[string]any{"name": "Alice"}, "branch": "main"}, status: 200,
			check: func(t *testing.T, ts *testServer, r resp) {
				var out struct {
					QueryName     string           `json:"query_name"`
					Target        ReadTargetOutput `json:"target"`
					RowCount      int              `json:"row_count"`
					Columns       []string         `json:"columns"`
					Rows          []map[string]any `json:"rows"`
					GraphCommitID string           `json:"graph_commit_id"`
				}
				r.decode(t, &out)
				if out.QueryName != "find" || out.RowCount != 1 || out.Rows[0]["p.name"] != "Alice" || out.Rows[0]["p.age"] != 30.0 ||
					deref(out.Target.Branch) != "main" || out.GraphCommitID != ts.head("main") {
					t.Errorf("query = %s", r.body)
				}
			}},
		{name: "query snapshot", method: "POST", path: "/graphs/g/query", status: 200,
			setup: func(ts *testServer) (string, []string) { return "", nil },
			body:  map[string]any{"query": allPeople, "snapshot": "SNAP"},
		},
		{name: "query parse error", method: "POST", path: "/graphs/g/query", body: q("this is not gq"), status: 400, code: codeBadRequest},
		{name: "query type error", method: "POST", path: "/graphs/g/query", body: q(`query x() { match { $p: Nope } return { $p.name } }`), status: 400, code: codeBadRequest},
		{name: "query is a mutation", method: "POST", path: "/graphs/g/query", body: q(addPerson), status: 400, code: codeBadRequest},
		{name: "query ambiguous source", method: "POST", path: "/graphs/g/query", body: q(findPerson + "\n" + allPeople), status: 400, code: codeBadRequest},
		{name: "query unknown name", method: "POST", path: "/graphs/g/query", body: map[string]any{"query": findPerson, "name": "nope"}, status: 400, code: codeBadRequest},
		{name: "query missing param", method: "POST", path: "/graphs/g/query", body: q(findPerson), status: 400, code: codeBadRequest},
		{name: "query bad param type", method: "POST", path: "/graphs/g/query", body: map[string]any{"query": findPerson, "params": map[string]any{"name": 3}}, status: 400, code: codeBadRequest},
		{name: "query params not an object", method: "POST", path: "/graphs/g/query", body: map[string]any{"query": findPerson, "params": []int{1}}, status: 400, code: codeBadRequest},
		{name: "query missing source", method: "POST", path: "/graphs/g/query", body: map[string]any{}, status: 400, code: codeBadRequest},
		{name: "query malformed json", method: "POST", path: "/graphs/g/query", body: `{"query":`, status: 400, code: codeBadRequest},
		{name: "query trailing json", method: "POST", path: "/graphs/g/query", body: `{"query":"x"} {}`, status: 400, code: codeBadRequest},
		{name: "query no content type", method: "POST", path: "/graphs/g/query", body: []byte(`{"query":"x"}`), status: 415, code: codeBadRequest},
		{name: "query unknown branch", method: "POST", path: "/graphs/g/query", body: map[string]any{"query": allPeople, "branch": "nope"}, status: 404, code: codeNotFound},
		{name: "query unknown snapshot", method: "POST", path: "/graphs/g/query", body: map[string]any{"query": allPeople, "snapshot": "01HXXXXXXXXXXXXXXXXXXXXXXX"}, status: 404, code: codeNotFound},
		{name: "query body too large", method: "POST", path: "/graphs/g/query", body: map[string]any{"query": strings.Repeat(" ", 2<<20)}, status: 413,
			check: func(t *testing.T, _ *testServer, r resp) {
				if e := r.errOut(t); e.ResourceLimit == nil || e.ResourceLimit.Limit != DefaultBodyBytes {
					t.Errorf("resource_limit = %+v", e.ResourceLimit)
				}
			}},
		{name: "query refuses if-graph-commit", method: "POST", path: "/graphs/g/query", body: q(allPeople), hdr: []string{ifGraphCommitHeader, "01HXXXXXXXXXXXXXXXXXXXXXXX"}, status: 400, code: codeBadRequest},
		{name: "read deprecated", method: "POST", path: "/graphs/g/read", body: map[string]any{"query_source": findPerson, "query_name": "find", "params": map[string]any{"name": "Alice"}}, status: 200,
			check: func(t *testing.T, _ *testServer, r resp) {
				checkDeprecated(t, r, "query")
				if bytes.Contains(r.body, []byte("graph_commit_id")) || !bytes.Contains(r.body, []byte(`"p.name":"Alice"`)) {
					t.Errorf("read = %s", r.body)
				}
			}},
		{name: "read parse error", method: "POST", path: "/graphs/g/read", body: map[string]any{"query_source": "this is not gq"}, status: 400, code: codeBadRequest},

		{name: "mutate", method: "POST", path: "/graphs/g/mutate", body: map[string]any{"query": addPerson, "params": map[string]any{"name": "Eve", "age": 22}}, status: 200,
			check: func(t *testing.T, ts *testServer, r resp) {
				var out ChangeOutput
				r.decode(t, &out)
				if out.QueryName != "add" || out.Branch != "main" || out.AffectedNodes != 1 || out.Commit == nil || out.Commit.GraphCommitID != ts.head("main") {
					t.Errorf("mutate = %s", r.body)
				}
			}},
		{name: "mutate legacy field names", method: "POST", path: "/graphs/g/mutate", body: map[string]any{"query_source": addPerson, "query_name": "add", "params": map[string]any{"name": "Eve", "age": 22}}, status: 200},
		{name: "mutate read query", method: "POST", path: "/graphs/g/mutate", body: q(allPeople), status: 400, code: codeBadRequest},
		{name: "mutate parse error", method: "POST", path: "/graphs/g/mutate", body: q("insert"), status: 400, code: codeBadRequest},
		{name: "mutate unknown branch", method: "POST", path: "/graphs/g/mutate", body: map[string]any{"query": addPerson, "params": map[string]any{"name": "E", "age": 1}, "branch": "nope"}, status: 404, code: codeNotFound},
		{name: "mutate refuses if-graph-commit", method: "POST", path: "/graphs/g/mutate", body: q(addPerson), hdr: []string{ifGraphCommitHeader, "x"}, status: 400, code: codeBadRequest},
		{name: "mutate if-graph-commit", method: "POST", path: "/graphs/g/mutate/if-graph-commit", body: map[string]any{"query": setAge, "params": map[string]any{"name": "Bob", "age": 26}}, status: 200,
			setup: func(ts *testServer) (string, []string) { return "", []string{ifGraphCommitHeader, ts.head("main")} }},
		{name: "mutate if-graph-commit stale", method: "POST", path: "/graphs/g/mutate/if-graph-commit", body: map[string]any{"query": setAge, "params": map[string]any{"name": "Bob", "age": 26}},
			hdr: []string{ifGraphCommitHeader, "01HXXXXXXXXXXXXXXXXXXXXXXX"}, status: 412,
			check: func(t *testing.T, ts *testServer, r resp) {
				e := r.errOut(t)
				if e.Code != "" || e.PreconditionFailure == nil || e.PreconditionFailure.Expected != "01HXXXXXXXXXXXXXXXXXXXXXXX" || deref(e.PreconditionFailure.Actual) != ts.head("main") {
					t.Errorf("412 = %s", r.body)
				}
			}},
		{name: "mutate if-graph-commit missing", method: "POST", path: "/graphs/g/mutate/if-graph-commit", body: q(setAge), status: 400, code: codeBadRequest},
		{name: "mutate if-graph-commit etag syntax", method: "POST", path: "/graphs/g/mutate/if-graph-commit", body: q(setAge), hdr: []string{ifGraphCommitHeader, `"abc"`}, status: 400, code: codeBadRequest},
		{name: "mutate if-graph-commit star", method: "POST", path: "/graphs/g/mutate/if-graph-commit", body: q(setAge), hdr: []string{ifGraphCommitHeader, "*"}, status: 400, code: codeBadRequest},
		{name: "change deprecated", method: "POST", path: "/graphs/g/change", body: map[string]any{"query_source": addPerson, "params": map[string]any{"name": "Eve", "age": 22}}, status: 200,
			check: func(t *testing.T, _ *testServer, r resp) { checkDeprecated(t, r, "mutate") }},

		{name: "queries", method: "GET", path: "/graphs/g/queries", status: 200, check: func(t *testing.T, _ *testServer, r resp) {
			var out QueriesCatalogOutput
			r.decode(t, &out)
			if len(out.Queries) != 3 || out.Queries[0].Name != "add" || !out.Queries[0].Mutation || deref(out.Queries[0].Description) != "Add a person." ||
				len(out.Queries[0].Params) != 2 || out.Queries[0].Params[1].Kind != "int" || out.Queries[1].Name != "find" || out.Queries[1].Mutation {
				t.Errorf("queries = %s", r.body)
			}
		}},
		{name: "invoke read", method: "POST", path: "/graphs/g/queries/find", body: map[string]any{"params": map[string]any{"name": "Bob"}}, status: 200,
			check: func(t *testing.T, _ *testServer, r resp) {
				if !bytes.Contains(r.body, []byte(`"row_count":1`)) {
					t.Errorf("invoke = %s", r.body)
				}
			}},
		{name: "invoke without body", method: "POST", path: "/graphs/g/queries/people", status: 200},
		{name: "invoke mutation", method: "POST", path: "/graphs/g/queries/add", body: map[string]any{"params": map[string]any{"name": "Eve", "age": 3}, "expect_mutation": true}, status: 200,
			check: func(t *testing.T, _ *testServer, r resp) {
				var out ChangeOutput
				r.decode(t, &out)
				if out.AffectedNodes != 1 || out.Commit == nil {
					t.Errorf("invoke = %s", r.body)
				}
			}},
		{name: "invoke unknown", method: "POST", path: "/graphs/g/queries/nope", status: 404, code: codeNotFound},
		{name: "invoke expect mismatch", method: "POST", path: "/graphs/g/queries/find", body: map[string]any{"expect_mutation": true}, status: 400, code: codeBadRequest},
		{name: "invoke mutation with snapshot", method: "POST", path: "/graphs/g/queries/add", body: map[string]any{"snapshot": "x"}, status: 400, code: codeBadRequest},
		{name: "invoke bad param", method: "POST", path: "/graphs/g/queries/find", body: map[string]any{"params": map[string]any{"name": true}}, status: 400, code: codeBadRequest},
		{name: "invoke refuses if-graph-commit", method: "POST", path: "/graphs/g/queries/find", hdr: []string{ifGraphCommitHeader, "x"}, status: 400, code: codeBadRequest},
		{name: "invoke if-graph-commit", method: "POST", path: "/graphs/g/queries/add/if-graph-commit", body: map[string]any{"params": map[string]any{"name": "Eve", "age": 3}}, status: 200,
			setup: func(ts *testServer) (string, []string) { return "", []string{ifGraphCommitHeader, ts.head("main")} }},
		{name: "invoke if-graph-commit stale", method: "POST", path: "/graphs/g/queries/add/if-graph-commit", body: map[string]any{"params": map[string]any{"name": "Eve", "age": 3}},
			hdr: []string{ifGraphCommitHeader, "01HXXXXXXXXXXXXXXXXXXXXXXX"}, status: 412},
		{name: "invoke if-graph-commit read query", method: "POST", path: "/graphs/g/queries/find/if-graph-commit", hdr: []string{ifGraphCommitHeader, "x"}, status: 400, code: codeBadRequest},

		{name: "load", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": `{"type":"Person","data":{"name":"Eve","age":5}}` + "\n", "mode": "append"}, status: 200,
			check: func(t *testing.T, ts *testServer, r resp) {
				var out IngestOutput
				r.decode(t, &out)
				if out.Branch != "main" || out.Mode != "append" || out.TotalEntities != 1 || len(out.Nodes) != 1 || out.Nodes[0].Name != "Person" || out.URI == "" || out.Commit == nil {
					t.Errorf("load = %s", r.body)
				}
			}},
		{name: "load fork", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": `{"type":"Person","data":{"name":"Eve"}}`, "branch": "feat", "from": "main"}, status: 200,
			check: func(t *testing.T, ts *testServer, r resp) {
				var out IngestOutput
				r.decode(t, &out)
				if !out.BranchCreated || deref(out.BaseBranch) != "main" || out.Mode != "merge" {
					t.Errorf("load = %s", r.body)
				}
			}},
		{name: "load missing branch", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": `{"type":"Person","data":{"name":"Eve"}}`, "branch": "feat"}, status: 404, code: codeNotFound},
		{name: "load bad line", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": `{"type":"Nope","data":{}}`}, status: 400, code: codeBadRequest},
		{name: "load bad json line", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": `{"type":`}, status: 400, code: codeBadRequest},
		{name: "load bad mode", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": "", "mode": "upsert"}, status: 400, code: codeBadRequest},
		{name: "load key conflict", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": `{"type":"Person","data":{"name":"Alice"}}`, "mode": "append"}, status: 409, code: codeConflict,
			check: func(t *testing.T, _ *testServer, r resp) {
				if e := r.errOut(t); e.KeyConflict == nil || deref(e.KeyConflict.EntityID) == "" {
					t.Errorf("key_conflict = %s", r.body)
				}
			}},
		{name: "load dangling edge", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": `{"edge":"Knows","from":"Alice","to":"Nobody"}`}, status: 400, code: codeBadRequest},
		{name: "load body too large", method: "POST", path: "/graphs/g/load", body: map[string]any{"data": strings.Repeat(" ", 33<<20)}, status: 413},
		{name: "load ndjson", method: "POST", path: "/graphs/g/load/ndjson?mode=append", body: []byte(`{"type":"Person","data":{"name":"Eve"}}` + "\n" + `{"edge":"Knows","from":"Eve","to":"Alice"}`), hdr: ndjson, status: 200,
			check: func(t *testing.T, _ *testServer, r resp) {
				var out GraphBatchLoadOutput
				r.decode(t, &out)
				if out.TotalEntities != 2 || len(out.Edges) != 1 || bytes.Contains(r.body, []byte(`"uri"`)) {
					t.Errorf("load ndjson = %s", r.body)
				}
			}},
		{name: "load ndjson fork", method: "POST", path: "/graphs/g/load/ndjson?branch=feat&from=main", body: []byte(`{"type":"Person","data":{"name":"Eve"}}`), hdr: ndjson, status: 200},
		{name: "load ndjson wrong type", method: "POST", path: "/graphs/g/load/ndjson", body: []byte(`{}`), hdr: []string{"Content-Type", "text/plain"}, status: 415},
		{name: "load ndjson json type", method: "POST", path: "/graphs/g/load/ndjson", body: `{}`, status: 415},
		{name: "load ndjson missing branch", method: "POST", path: "/graphs/g/load/ndjson?branch=feat", body: []byte(`{"type":"Person","data":{"name":"Eve"}}`), hdr: ndjson, status: 404},
		{name: "load ndjson bad mode", method: "POST", path: "/graphs/g/load/ndjson?mode=x", body: []byte(``), hdr: ndjson, status: 400},
		{name: "load ndjson too large", method: "POST", path: "/graphs/g/load/ndjson", body: bigNDJSON(33 << 20), hdr: ndjson, status: 413},
		{name: "ingest deprecated", method: "POST", path: "/graphs/g/ingest", body: map[string]any{"data": `{"type":"Person","data":{"name":"Eve"}}`, "branch": "new"}, status: 200,
			check: func(t *testing.T, _ *testServer, r resp) {
				checkDeprecated(t, r, "load")
				var out IngestOutput
				r.decode(t, &out)
				if !out.BranchCreated || out.Branch != "new" {
					t.Errorf("ingest = %s", r.body)
				}
			}},

		{name: "export", method: "POST", path: "/graphs/g/export", body: map[string]any{"branch": "main"}, status: 200,
			check: func(t *testing.T, ts *testServer, r resp) {
				if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
					t.Errorf("content type %q", ct)
				}
				n := 0
				sc := bufio.NewScanner(bytes.NewReader(r.body))
				for sc.Scan() {
					if !json.Valid(sc.Bytes()) {
						t.Errorf("line %q", sc.Text())
					}
					n++
				}
				if n != 11 {
					t.Errorf("export has %d lines, want 11", n)
				}
			}},
		{name: "export types", method: "POST", path: "/graphs/g/export", body: map[string]any{"type_names": []string{"Company"}}, status: 200,
			check: func(t *testing.T, ts *testServer, r resp) {
				if bytes.Count(r.body, []byte("\n")) != 2 {
					t.Errorf("export = %s", r.body)
				}
			}},
		{name: "export unknown type", method: "POST", path: "/graphs/g/export", body: map[string]any{"type_names": []string{"Nope"}}, status: 400, code: codeBadRequest},
		{name: "export unknown field", method: "POST", path: "/graphs/g/export", body: map[string]any{"table_keys": []string{"x"}}, status: 400, code: codeBadRequest},
		{name: "export unknown branch", method: "POST", path: "/graphs/g/export", body: map[string]any{"branch": "nope"}, status: 404, code: codeNotFound},
		{name: "export wrong content type", method: "POST", path: "/graphs/g/export", body: []byte(`{}`), hdr: []string{"Content-Type", "application/x-ndjson"}, status: 415},

		{name: "branches", method: "GET", path: "/graphs/g/branches", status: 200, check: func(t *testing.T, _ *testServer, r resp) {
			if string(r.body) != `{"branches":["main"]}`+"\n" {
				t.Errorf("branches = %s", r.body)
			}
		}},
		{name: "branch create", method: "POST", path: "/graphs/g/branches", body: map[string]any{"name": "feat", "from": "main"}, status: 200,
			check: func(t *testing.T, ts *testServer, r resp) {
				var out BranchCreateOutput
				r.decode(t, &out)
				if out.Name != "feat" || out.From != "main" {
					t.Errorf("create = %s", r.body)
				}
				if l := ts.req("GET", "/graphs/g/branches", nil); !bytes.Contains(l.body, []byte(`"feat"`)) {
					t.Errorf("list after create = %s", l.body)
				}
			}},
		{name: "branch create exists", method: "POST", path: "/graphs/g/branches", body: map[string]any{"name": "main"}, status: 409, code: codeConflict},
		{name: "branch create invalid", method: "POST", path: "/graphs/g/branches", body: map[string]any{"name": "bad name"}, status: 400, code: codeBadRequest},
		{name: "branch create missing name", method: "POST", path: "/graphs/g/branches", body: map[string]any{}, status: 400, code: codeBadRequest},
		{name: "branch create from missing", method: "POST", path: "/graphs/g/branches", body: map[string]any{"name": "x", "from": "nope"}, status: 404, code: codeNotFound},
		{name: "branch delete", method: "DELETE", path: "/graphs/g/branches/feat", status: 200,
			setup: func(ts *testServer) (string, []string) {
				ts.req("POST", "/graphs/g/branches", map[string]any{"name": "feat"})
				return "", nil
			},
			check: func(t *testing.T, ts *testServer, r resp) {
				if l := ts.req("GET", "/graphs/g/branches", nil); bytes.Contains(l.body, []byte(`"feat"`)) {
					t.Errorf("list after delete = %s", l.body)
				}
			}},
		{name: "branch delete nested name", method: "DELETE", path: "/graphs/g/branches/team/feat", status: 200,
			setup: func(ts *testServer) (string, []string) {
				if r := ts.req("POST", "/graphs/g/branches", map[string]any{"name": "team/feat"}); r.status != 200 {
					ts.t.Fatalf("create team/feat: %s", r.body)
				}
				return "", nil
			}},
		{name: "branch delete missing", method: "DELETE", path: "/graphs/g/branches/nope", status: 404, code: codeNotFound},
		{name: "branch delete main", method: "DELETE", path: "/graphs/g/branches/main", status: 409, code: codeConflict},
		{name: "merge fast forward then up to date", method: "POST", path: "/graphs/g/branches/merge", body: map[string]any{"source": "feat", "target": "main"}, status: 200,
			setup: func(ts *testServer) (string, []string) {
				ts.req("POST", "/graphs/g/branches", map[string]any{"name": "feat"})
				return "", nil
			},
			check: func(t *testing.T, ts *testServer, r resp) {
				var out BranchMergeOutput
				r.decode(t, &out)
				if out.Outcome != "fast_forward" && out.Outcome != "already_up_to_date" {
					t.Errorf("merge = %s", r.body)
				}
				again := ts.req("POST", "/graphs/g/branches/merge", map[string]any{"source": "feat", "target": "main", "delete_branch": true})
				var o2 BranchMergeOutput
				again.decode(t, &o2)
				if o2.Outcome != "already_up_to_date" || o2.BranchDeleted == nil || !*o2.BranchDeleted || o2.BranchDeleteError != nil {
					t.Errorf("merge again = %s", again.body)
				}
			}},
		{name: "merge merged", method: "POST", path: "/graphs/g/branches/merge", body: map[string]any{"source": "feat"}, status: 200,
			setup: diverged(addPerson, map[string]any{"name": "Eve", "age": 1}, map[string]any{"name": "Fay", "age": 1}),
			check: func(t *testing.T, ts *testServer, r resp) {
				var out BranchMergeOutput
				r.decode(t, &out)
				if out.Outcome != "merged" || out.Commit == nil || out.Commit.MergedParentCommitID == nil {
					t.Errorf("merge = %s", r.body)
				}
			}},
		{name: "merge conflicts", method: "POST", path: "/graphs/g/branches/merge", body: map[string]any{"source": "feat"}, status: 409, code: codeConflict,
			setup: diverged(setAge, map[string]any{"name": "Bob", "age": 1}, map[string]any{"name": "Bob", "age": 2}),
			check: func(t *testing.T, _ *testServer, r resp) {
				e := r.errOut(t)
				if len(e.MergeConflicts) != 1 || e.MergeConflicts[0].Kind != "divergent_update" || deref(e.MergeConflicts[0].EntityID) != "Bob" {
					t.Errorf("merge conflicts = %s", r.body)
				}
			}},
		{name: "merge same branch", method: "POST", path: "/graphs/g/branches/merge", body: map[string]any{"source": "main"}, status: 400, code: codeBadRequest},
		{name: "merge missing source", method: "POST", path: "/graphs/g/branches/merge", body: map[string]any{"source": "nope"}, status: 404, code: codeNotFound},

		{name: "commits", method: "GET", path: "/graphs/g/commits?branch=main", status: 200, check: func(t *testing.T, ts *testServer, r resp) {
			var out CommitListOutput
			r.decode(t, &out)
			if len(out.Commits) != 2 || out.Commits[0].GraphCommitID != ts.head("main") || out.Commits[0].CreatedAt < out.Commits[1].CreatedAt ||
				deref(out.Commits[0].ParentCommitID) != out.Commits[1].GraphCommitID {
				t.Errorf("commits = %s", r.body)
			}
		}},
		{name: "commits unknown branch", method: "GET", path: "/graphs/g/commits?branch=nope", status: 404, code: codeNotFound},
		{name: "commit", method: "GET", path: "/graphs/g/commits/HEAD", status: 200, setup: func(ts *testServer) (string, []string) {
			return "/graphs/g/commits/" + ts.head("main"), nil
		}},
		{name: "commit unknown", method: "GET", path: "/graphs/g/commits/01HXXXXXXXXXXXXXXXXXXXXXXX", status: 404, code: codeNotFound},
		{name: "commit garbage id", method: "GET", path: "/graphs/g/commits/..%2F..%2Fetc", status: 404, code: codeNotFound},
		{name: "commit changes", method: "GET", path: "/graphs/g/commits/HEAD/changes", status: 200, setup: func(ts *testServer) (string, []string) {
			return "/graphs/g/commits/" + ts.head("main") + "/changes", nil
		}, check: func(t *testing.T, ts *testServer, r resp) {
			var out CommitChangesOutput
			r.decode(t, &out)
			if len(out.Changes) != 11 || out.Cause.GraphCommitID != ts.head("main") || out.Cause.AuthoredBranch != "main" || out.NextPageToken != nil ||
				out.Changes[0].Op != "insert" || out.Changes[0].After == nil {
				t.Errorf("changes = %s", r.body)
			}
		}},
		{name: "commit changes paged", method: "GET", path: "/graphs/g/commits/HEAD/changes", status: 200, setup: func(ts *testServer) (string, []string) {
			return "/graphs/g/commits/" + ts.head("main") + "/changes?limit=4&kind=node", nil
		}, check: func(t *testing.T, ts *testServer, r resp) {
			var ids []string
			page := r
			for i := 0; ; i++ {
				var out CommitChangesOutput
				page.decode(t, &out)
				for _, c := range out.Changes {
					if c.Kind != "node" {
						t.Errorf("kind filter let %s through", c.Kind)
					}
					ids = append(ids, c.ID)
				}
				if out.NextPageToken == nil {
					break
				}
				if i > 3 {
					t.Fatal("paging does not end")
				}
				page = ts.req("GET", "/graphs/g/commits/"+ts.head("main")+"/changes?limit=4&kind=node&page_token="+*out.NextPageToken, nil)
				if page.status != 200 {
					t.Fatalf("page %d: %s", i+1, page.body)
				}
				if tok := ts.req("GET", "/graphs/g/commits/"+ts.head("main")+"/changes?limit=4&page_token="+*out.NextPageToken, nil); tok.status != 400 {
					t.Errorf("token replayed under another filter: %d", tok.status)
				}
			}
			if len(ids) != 6 {
				t.Errorf("paged node changes = %v", ids)
			}
		}},
		{name: "commit changes genesis", method: "GET", path: "/graphs/g/commits/G/changes", status: 409, code: codeConflict, setup: func(ts *testServer) (string, []string) {
			log, _ := ts.g.Log(context.Background(), "main", 0)
			return "/graphs/g/commits/" + log[len(log)-1].ID + "/changes", nil
		}, check: func(t *testing.T, _ *testServer, r resp) {
			if e := r.errOut(t); e.ChangeDiffRefusal == nil || e.ChangeDiffRefusal.Reason != "parentless_commit" {
				t.Errorf("refusal = %s", r.body)
			}
		}},
		{name: "commit changes bad token", method: "GET", path: "/graphs/g/commits/HEAD/changes", status: 400, code: codeBadRequest, setup: func(ts *testServer) (string, []string) {
			return "/graphs/g/commits/" + ts.head("main") + "/changes?page_token=!!", nil
		}},
		{name: "commit changes bad limit", method: "GET", path: "/graphs/g/commits/HEAD/changes", status: 400, code: codeBadRequest, setup: func(ts *testServer) (string, []string) {
			return "/graphs/g/commits/" + ts.head("main") + "/changes?limit=0", nil
		}},
		{name: "commit changes bad kind", method: "GET", path: "/graphs/g/commits/HEAD/changes", status: 400, code: codeBadRequest, setup: func(ts *testServer) (string, []string) {
			return "/graphs/g/commits/" + ts.head("main") + "/changes?kind=vertex", nil
		}},
		{name: "commit changes unknown", method: "GET", path: "/graphs/g/commits/01HXXXXXXXXXXXXXXXXXXXXXXX/changes", status: 404, code: codeNotFound},
		{name: "commit changes over the page limit", method: "GET", path: "/graphs/g/commits/HEAD/changes", status: 413, setup: func(ts *testServer) (string, []string) {
			return "/graphs/g/commits/" + ts.head("main") + "/changes?limit=8193", nil
		}, check: func(t *testing.T, _ *testServer, r resp) {
			if e := r.errOut(t); e.ResourceLimit == nil || e.ResourceLimit.Resource != "commit_changes_page_changes" || e.ResourceLimit.Limit != 8192 || e.ResourceLimit.Actual != 8193 {
				t.Errorf("resource limit = %s", r.body)
			}
		}},
		{name: "changes poll from the beginning", method: "GET", path: "/graphs/g/changes?start=beginning", status: 200, check: func(t *testing.T, ts *testServer, r resp) {
			var out ChangeFeedOutput
			r.decode(t, &out)
			if len(out.Blocks) == 0 || out.Cursor == nil || out.CaughtUp == nil || !*out.CaughtUp || out.Blocks[len(out.Blocks)-1].Cause.GraphCommitID != ts.head("main") {
				t.Errorf("feed = %s", r.body)
			}
			// Resuming from the cursor: nothing new, caught up.
			again := ts.req("GET", "/graphs/g/changes?cursor="+*out.Cursor, nil)
			var next ChangeFeedOutput
			again.decode(t, &next)
			if again.status != 200 || len(next.Blocks) != 0 || next.CaughtUp == nil || !*next.CaughtUp {
				t.Errorf("resume = %d %s", again.status, again.body)
			}
		}},
		{name: "changes poll bad cursor", method: "GET", path: "/graphs/g/changes?cursor=!!", status: 400, code: codeBadRequest},
		{name: "changes poll other branch cursor", method: "GET", path: "/graphs/g/changes", status: 400, code: codeBadRequest, setup: func(ts *testServer) (string, []string) {
			if err := ts.g.CreateBranch(context.Background(), "feature", "", ""); err != nil {
				t.Fatal(err)
			}
			r := ts.req("GET", "/graphs/g/changes?start=now", nil)
			var out ChangeFeedOutput
			_ = json.Unmarshal(r.body, &out)
			return "/graphs/g/changes?branch=feature&cursor=" + *out.Cursor, nil
		}},
		{name: "changes baseline", method: "POST", path: "/graphs/g/changes/baseline", body: map[string]any{}, status: 200, check: func(t *testing.T, ts *testServer, r resp) {
			lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, `"baseline"`) || !strings.Contains(last, ts.head("main")) || len(lines) < 2 {
				t.Errorf("baseline = %s", r.body)
			}
		}},
		{name: "schema apply on a cluster graph", method: "POST", path: "/graphs/g/schema/apply", body: map[string]any{"schema_source": "node A { n: String }"}, status: 409, code: codeConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts := open(t)
			path, hdr := c.path, c.hdr
			if c.setup != nil {
				if p, h := c.setup(ts); p != "" || h != nil {
					if p != "" {
						path = p
					}
					hdr = append(append([]string(nil), hdr...), h...)
				}
			}
			body := c.body
			if m, ok := body.(map[string]any); ok && m["snapshot"] == "SNAP" {
				m["snapshot"] = ts.head("main")
			}
			r := ts.req(c.method, path, body, hdr...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if r.status >= 400 {
				e := r.errOut(t)
				if e.Code != c.code && c.code != "" {
					t.Errorf("code %q, want %q (%s)", e.Code, c.code, e.Error)
				}
			}
			if r.header.Get(requestIDHeader) == "" {
				t.Error("no request id")
			}
			if c.check != nil {
				c.check(t, ts, r)
			}
		})
	}
}

func checkDeprecated(t *testing.T, r resp, successor string) {
	t.Helper()
	if r.header.Get("Deprecation") != "true" || r.header.Get("Link") != "<"+successor+`>; rel="successor-version"` {
		t.Errorf("deprecation headers: %q %q", r.header.Get("Deprecation"), r.header.Get("Link"))
	}
}

func bigNDJSON(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":"p%d-%s"}}`+"\n", i, strings.Repeat("x", 100))
	}
	return b.Bytes()
}

// diverged is a setup that branches feat off main, then runs the mutation
// src with feat's parameters on feat and with main's on main.
func diverged(src string, feat, main map[string]any) func(ts *testServer) (string, []string) {
	return func(ts *testServer) (string, []string) {
		ts.req("POST", "/graphs/g/branches", map[string]any{"name": "feat"})
		ts.req("POST", "/graphs/g/mutate", map[string]any{"query": src, "params": feat, "branch": "feat"})
		ts.req("POST", "/graphs/g/mutate", map[string]any{"query": src, "params": main})
		return "", nil
	}
}

// TestRequiredBodyFields: a body that leaves a required field empty (absent
// or "") is a 400 naming the field, and the route does nothing.
func TestRequiredBodyFields(t *testing.T) {
	ts := open(t)
	for _, c := range []struct{ path, field string }{
		{"/graphs/g/branches", "name"},
		{"/graphs/g/branches/merge", "source"},
		{"/graphs/g/schema/apply", "schema_source"},
		{"/graphs/g/mutate", "query"},
	} {
		for _, body := range []map[string]any{{}, {c.field: ""}} {
			r := ts.req("POST", c.path, body)
			want := "field '" + c.field + "' is required"
			if e := r.errOut(t); r.status != 400 || e.Code != codeBadRequest || e.Error != want {
				t.Errorf("POST %s %v: %d %+v, want 400 %q", c.path, body, r.status, e, want)
			}
		}
	}
	if l := ts.req("GET", "/graphs/g/branches", nil); string(l.body) != `{"branches":["main"]}`+"\n" {
		t.Errorf("branches after refusals = %s", l.body)
	}
}

// TestChangeLimitBounds: POST /diff and the merge preview hold a request to
// the commit-changes page bounds (1..omnigraph.MaxPageChanges), with the
// spec's statuses and texts, and the route docs state those bounds.
func TestChangeLimitBounds(t *testing.T) {
	ts := open(t)
	ts.req("POST", "/graphs/g/branches", map[string]any{"name": "feat"})
	over := omnigraph.MaxPageChanges + 1
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		text               string
	}{
		{"diff over", "POST", "/graphs/g/diff", map[string]any{"from": map[string]any{}, "to": map[string]any{}, "limit": over}, 413,
			"diff limit exceeds the maximum of 8192 changes"},
		{"diff zero", "POST", "/graphs/g/diff", map[string]any{"from": map[string]any{}, "to": map[string]any{}, "limit": 0}, 400,
			"limit must be a positive integer"},
		{"preview over", "GET", fmt.Sprintf("/graphs/g/branches/merge/preview?source=feat&limit=%d", over), nil, 400,
			"limit must be an integer from 1 to 8192"},
		{"preview zero", "GET", "/graphs/g/branches/merge/preview?source=feat&limit=0", nil, 400,
			"limit must be an integer from 1 to 8192"},
	} {
		r := ts.req(c.method, c.path, c.body)
		if e := r.errOut(t); r.status != c.status || e.Error != c.text {
			t.Errorf("%s: %d %q, want %d %q", c.name, r.status, e.Error, c.status, c.text)
		} else if c.status == 413 && (e.ResourceLimit == nil || *e.ResourceLimit != (ResourceLimitOutput{"diff_changes", omnigraph.MaxPageChanges, int64(over)})) {
			t.Errorf("%s: resource_limit %+v", c.name, e.ResourceLimit)
		}
	}
	for _, ok := range []string{"/graphs/g/branches/merge/preview?source=feat", fmt.Sprintf("/graphs/g/branches/merge/preview?source=feat&limit=%d", omnigraph.MaxPageChanges)} {
		if r := ts.req("GET", ok, nil); r.status != 200 {
			t.Errorf("GET %s: %d %s", ok, r.status, r.body)
		}
	}
	bounds := fmt.Sprintf("1..%d, default %d", omnigraph.MaxPageChanges, omnigraph.DefaultPageChanges)
	if !strings.Contains(reviewLimitParam.desc, bounds) || !strings.Contains(changeQueryParams[0].desc, bounds) {
		t.Errorf("limit docs %q, %q do not state %q", reviewLimitParam.desc, changeQueryParams[0].desc, bounds)
	}
}
