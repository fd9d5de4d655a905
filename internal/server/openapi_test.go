package server

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

type openAPIDoc struct {
	Paths      map[string]map[string]map[string]any `json:"paths"`
	Components struct {
		Schemas         map[string]any `json:"schemas"`
		SecuritySchemes map[string]any `json:"securitySchemes"`
	} `json:"components"`
}

func fetchDoc(t *testing.T, ts *testServer) openAPIDoc {
	t.Helper()
	r := ts.req("GET", "/openapi.json", nil)
	if r.status != 200 {
		t.Fatalf("openapi: %d", r.status)
	}
	var d openAPIDoc
	r.decode(t, &d)
	return d
}

// TestOpenAPIMatchesRoutes: every operation of /openapi.json is served,
// every served route is in the document, and features without an engine
// implementation are in neither.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	ts := open(t)
	doc := fetchDoc(t, ts)
	var inDoc, inTable []string
	opIDs := map[string]bool{}
	for p, ops := range doc.Paths {
		for m, op := range ops {
			inDoc = append(inDoc, strings.ToUpper(m)+" "+p)
			id, _ := op["operationId"].(string)
			if opIDs[id] {
				t.Errorf("duplicate operationId %q", id)
			}
			opIDs[id] = true
			if strings.HasPrefix(p, "/graphs/{graph_id}/") != strings.HasPrefix(id, "cluster_") {
				t.Errorf("%s %s: operationId %q", m, p, id)
			}
			dep, _ := op["deprecated"].(bool)
			wantDep := strings.HasSuffix(p, "/read") || strings.HasSuffix(p, "/change") || strings.HasSuffix(p, "/ingest")
			if dep != wantDep {
				t.Errorf("%s %s: deprecated=%v", m, p, dep)
			}
		}
	}
	for _, rt := range ts.s.routes {
		inTable = append(inTable, rt.method+" "+openAPIPath(rt.path))
	}
	sort.Strings(inDoc)
	sort.Strings(inTable)
	if strings.Join(inDoc, "\n") != strings.Join(inTable, "\n") {
		t.Fatalf("document:\n%s\nroute table:\n%s", strings.Join(inDoc, "\n"), strings.Join(inTable, "\n"))
	}
	// Every documented operation is served: no catch-all 404, no 405.
	head := ts.head("main")
	for _, op := range inDoc {
		method, p, _ := strings.Cut(op, " ")
		p = strings.NewReplacer("{graph_id}", "g", "{name}", "find", "{branch}", "nope", "{commit_id}", head).Replace(p)
		r := ts.req(method, p, nil)
		if r.status == 405 || (r.status == 404 && strings.HasPrefix(r.errOut(t).Error, "no route")) {
			t.Errorf("%s is documented but not served: %d %s", op, r.status, r.body)
		}
	}
	// Served paths outside the table do not exist.
	for _, p := range []string{"/graphs/g/runs", "/query", "/graphs/g"} {
		for _, m := range []string{"GET", "POST"} {
			r := ts.req(m, p, nil)
			if r.status != 404 || !strings.HasPrefix(r.errOut(t).Error, "no route") {
				t.Errorf("%s %s: %d %s", m, p, r.status, r.body)
			}
		}
	}
	// Every $ref resolves.
	raw := ts.req("GET", "/openapi.json", nil).body
	for _, part := range strings.Split(string(raw), `"$ref": "#/components/schemas/`)[1:] {
		name := part[:strings.IndexByte(part, '"')]
		if doc.Components.Schemas[name] == nil {
			t.Errorf("dangling $ref %s", name)
		}
	}
}

func TestOpenAPISecurity(t *testing.T) {
	open := fetchDoc(t, open(t))
	if open.Components.SecuritySchemes != nil {
		t.Error("open server documents security schemes")
	}
	for p, ops := range open.Paths {
		for m, op := range ops {
			if op["security"] != nil {
				t.Errorf("open server: %s %s has security", m, p)
			}
		}
	}
	ts := start(t, Config{}, withTokens(Token{Actor: "a", Token: "t"}))
	ts.tok = ""
	sec := fetchDoc(t, ts)
	if sec.Components.SecuritySchemes["bearer_token"] == nil {
		t.Fatal("no bearer scheme")
	}
	for p, ops := range sec.Paths {
		for m, op := range ops {
			public := p == "/healthz" || p == "/openapi.json"
			if (op["security"] != nil) == public {
				t.Errorf("%s %s: security %v", m, p, op["security"])
			}
		}
	}
	// The document is valid JSON with the schemas the SDK generator needs.
	for _, name := range []string{"ErrorOutput", "ReadOutput", "ChangeOutput", "IngestOutput", "CommitOutput", "QueryRequest", "SnapshotOutput"} {
		if sec.Components.Schemas[name] == nil {
			t.Errorf("schema %s missing", name)
		}
	}
	b, _ := json.Marshal(sec.Components.Schemas["ChangeRequest"])
	if !strings.Contains(string(b), `"required":["query"]`) || strings.Contains(string(b), "query_source") {
		t.Errorf("ChangeRequest schema = %s", b)
	}
}
