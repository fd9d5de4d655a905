package query

import (
	"encoding/json"
	"testing"
)

func TestLintJSON(t *testing.T) {
	cat := testCatalog(t)
	src := `query get($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age as years, count($p) as c } }
query set_age($n: String, $a: I32) { update Person set { age: $a } where name = $n }
query fixed() { delete Person where name = "x" }
query bad() { match { $p: Nope } return { $p } }
query vec() { match { $t: Thing } return { $t.emb, $t.tags } }
query broken( { }
`
	r := Lint(cat, "s.pg", "q.gq", src)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"error","schema_source":"s.pg","query_path":"q.gq","queries_processed":5,"errors":2,"warnings":1,"infos":0,` +
		`"results":[` +
		`{"name":"get","kind":"read","status":"ok","operation":{"result":[{"name":"name","kind":"string","nullable":false},{"name":"years","kind":"int","nullable":true},{"name":"c","kind":"bigint","nullable":false}],"reads":[{"kind":"node","type_name":"Person"}],"writes":[]}},` +
		`{"name":"set_age","kind":"mutation","status":"ok","operation":{"result":[],"reads":[{"kind":"node","type_name":"Person"}],"writes":[{"kind":"node","type_name":"Person"}]}},` +
		`{"name":"fixed","kind":"mutation","status":"ok","warnings":["mutation declares no params; hardcoded mutations are easy to miss"],"operation":{"result":[],"reads":[{"kind":"node","type_name":"Person"},{"kind":"edge","type_name":"Knows"},{"kind":"edge","type_name":"WorksAt"},{"kind":"edge","type_name":"Owns"}],"writes":[{"kind":"node","type_name":"Person"},{"kind":"edge","type_name":"Knows"},{"kind":"edge","type_name":"WorksAt"},{"kind":"edge","type_name":"Owns"}]}},` +
		"{\"name\":\"bad\",\"kind\":\"read\",\"status\":\"error\",\"error\":\"type error: T1: unknown node type `Nope`\"}," +
		`{"name":"vec","kind":"read","status":"ok","operation":{"result":[{"name":"emb","kind":"vector","vector_dim":3,"nullable":true},{"name":"tags","kind":"list","item_kind":"string","nullable":true}],"reads":[{"kind":"node","type_name":"Thing"}],"writes":[]}}],` +
		`"findings":[{"severity":"error","code":"Q000","message":"parse error: expected variable, found \"{\" at 6:15"}]}`
	if string(b) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b, want)
	}
}

func TestLintL201(t *testing.T) {
	cat := testCatalog(t)
	src := `query set_status($c: String, $s: String) { update Thing set { status: $s, text: $s } where code = $c }
query set_flag($c: String) { update Thing set { flag: true } where code = $c }`
	r := Lint(cat, "s.pg", "q.gq", src)
	if r.Status != "ok" || r.Errors != 0 {
		t.Fatalf("status %s errors %d", r.Status, r.Errors)
	}
	var props []string
	for _, f := range r.Findings {
		if f.Code != "L201" || f.Severity != "warning" || f.TypeName != "Thing" || len(f.QueryNames) != 2 {
			t.Fatalf("finding %+v", f)
		}
		props = append(props, f.Property)
	}
	// Nullable, non-key, non-@embed-target props that no update sets.
	want := "tags scores photo emb born seen ratio label"
	if got := joinStrings(props); got != want && got != "tags scores photo emb born seen ratio" {
		t.Fatalf("got %q want %q", got, want)
	}
	if r.Findings[0].Message != "Thing.tags exists in schema but no update query sets it" {
		t.Fatalf("message %q", r.Findings[0].Message)
	}
	if r.Warnings != len(r.Findings) {
		t.Fatalf("warnings %d findings %d", r.Warnings, len(r.Findings))
	}
}

func joinStrings(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
