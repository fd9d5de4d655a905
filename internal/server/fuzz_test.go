package server

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzSeeds are requests to every route, good and bad.
var fuzzSeeds = []struct {
	method, path, ctype, body string
}{
	{"GET", "/healthz", "", ""},
	{"GET", "/openapi.json", "", ""},
	{"GET", "/graphs", "", ""},
	{"GET", "/graphs/g/snapshot?branch=main", "", ""},
	{"GET", "/graphs/g/snapshot?snapshot=01HXXXXXXXXXXXXXXXXXXXXXXX", "", ""},
	{"GET", "/graphs/g/schema", "", ""},
	{"POST", "/graphs/g/query", "application/json", `{"query":"query find($name: String) { match { $p: Person { name: $name } } return { $p.name, $p.age } }","params":{"name":"Alice"}}`},
	{"POST", "/graphs/g/query", "application/json", `{"query":"query q($n: I64) { match { $p: Person } return { $p.name } limit $n }","params":{"n":"99999999999999999999"}}`},
	{"POST", "/graphs/g/read", "application/json", `{"query_source":"query q() { match { $p: Person } return { count($p) } }"}`},
	{"POST", "/graphs/g/mutate", "application/json", `{"query":"query a($name: String) { insert Person { name: $name } }","params":{"name":"Zed"}}`},
	{"POST", "/graphs/g/mutate", "application/json", `{"query":"query d() { delete Person where name = \"Dave\" }"}`},
	{"POST", "/graphs/g/mutate/if-graph-commit", "application/json", `{"query":"query u() { update Person set { age: 1 } where name = \"Bob\" }"}`},
	{"POST", "/graphs/g/change", "application/json", `{"query_source":"query a() { insert Company { name: \"X\" } }"}`},
	{"GET", "/graphs/g/queries", "", ""},
	{"POST", "/graphs/g/queries/find", "application/json", `{"params":{"name":"Bob"},"branch":"main"}`},
	{"POST", "/graphs/g/queries/add", "application/json", `{"params":{"name":"Q","age":2147483648}}`},
	{"POST", "/graphs/g/queries/add/if-graph-commit", "application/json", `{}`},
	{"POST", "/graphs/g/load", "application/json", `{"data":"{\"type\":\"Person\",\"data\":{\"name\":\"L\",\"age\":\"x\"}}","mode":"append"}`},
	{"POST", "/graphs/g/load/ndjson?branch=f&from=main&mode=merge", "application/x-ndjson", `{"edge":"Knows","from":"Alice","to":"Bob","data":{"since":"2020-13-01"}}`},
	{"POST", "/graphs/g/ingest", "application/json", `{"data":"{\"type\":\"Company\",\"data\":{\"name\":\"I\"}}\n"}`},
	{"POST", "/graphs/g/export", "application/json", `{"branch":"main","type_names":["Person"]}`},
	{"GET", "/graphs/g/branches", "", ""},
	{"POST", "/graphs/g/branches", "application/json", `{"name":"fz","from":"main"}`},
	{"POST", "/graphs/g/branches/merge", "application/json", `{"source":"fz","target":"main","delete_branch":true}`},
	{"DELETE", "/graphs/g/branches/fz", "", ""},
	{"GET", "/graphs/g/commits?branch=main", "", ""},
	{"GET", "/graphs/g/blob?entity=node&type=Person&id=Alice&property=name", "", ""},
	{"HEAD", "/graphs/g/blob?entity=edge&type=Knows&id=x&property=since&snapshot=01HXXXXXXXXXXXXXXXXXXXXXXX", "", ""},
	{"GET", "/graphs/g/commits/01HXXXXXXXXXXXXXXXXXXXXXXX", "", ""},
	{"GET", "/graphs/g/commits/01HXXXXXXXXXXXXXXXXXXXXXXX/changes?limit=2&kind=node&op=insert&type=Person", "", ""},
}

// fuzzServer is a policy-enabled server that allows everything, so fuzzed
// requests with the token reach every handler.
func fuzzServer(t testing.TB) *Server {
	ts := start(t, Config{Authorizer: AllowAll{}}, withTokens(Token{Actor: "fuzz", Token: "tok-fuzz"}))
	return ts.s
}

// checkFuzzResponse runs one request in process and checks the contract:
// never a 5xx, every error an ErrorOutput, nothing but 401 (or a routing
// 404/405) without a valid token on a protected route.
func checkFuzzResponse(t *testing.T, s *Server, method, path, ctype, auth, hname, hval string, body []byte) {
	req, err := http.NewRequest(method, "http://omnigraph.test"+path, strings.NewReader(string(body)))
	if err != nil || req.URL.Path == "" || !strings.HasPrefix(req.URL.Path, "/") {
		return
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if hname != "" && validHeaderName(hname) && !strings.ContainsAny(hval, "\r\n\x00") {
		req.Header.Set(hname, hval)
	}
	rec := httptest.NewRecorder()
	func() {
		defer func() {
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				t.Fatalf("%s %s: panic %v", method, path, p)
			}
		}()
		s.Handler().ServeHTTP(rec, req)
	}()
	st := rec.Code
	if st >= 500 {
		t.Fatalf("%s %s (ct %q, body %q): status %d: %s", method, path, ctype, body, st, rec.Body.Bytes())
	}
	if st >= 400 && method != http.MethodHead {
		var e ErrorOutput
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
			t.Fatalf("%s %s: status %d without an ErrorOutput: %q", method, path, st, rec.Body.Bytes())
		}
	}
	// A redirect to the cleaned path (ServeMux) carries no data.
	if auth != "Bearer tok-fuzz" && st < 300 {
		p := req.URL.Path
		if p != "/healthz" && p != "/openapi.json" {
			t.Fatalf("%s %s served %d without a valid token", method, path, st)
		}
	}
}

func validHeaderName(n string) bool {
	for _, r := range n {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return false
		}
	}
	return n != ""
}

func FuzzRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s.method, s.path, s.ctype, true, "", "", []byte(s.body))
		f.Add(s.method, s.path, s.ctype, false, "", "", []byte(s.body))
	}
	f.Add("POST", "/graphs/g/mutate/if-graph-commit", "application/json", true, ifGraphCommitHeader, "W/\"x\"", []byte(`{"query":"x"}`))
	f.Add("GET", "/graphs/g/branches", "", true, "X-Request-Id", strings.Repeat("r", 300), []byte(nil))
	s := fuzzServer(f)
	f.Fuzz(func(t *testing.T, method, path, ctype string, token bool, hname, hval string, body []byte) {
		auth := ""
		if token {
			auth = "Bearer tok-fuzz"
		}
		checkFuzzResponse(t, s, method, path, ctype, auth, hname, hval, body)
	})
}

// TestMutatedRequests is the fuzz contract over a fixed,
// seeded set of mutations of every seed request: paths, query strings,
// headers and bodies corrupted byte by byte, truncated, retyped.
func TestMutatedRequests(t *testing.T) {
	s := fuzzServer(t)
	rng := rand.New(rand.NewPCG(1, 2))
	mutate := func(b string) string {
		if b == "" {
			return b
		}
		r := []byte(b)
		switch rng.IntN(6) {
		case 0:
			return b[:rng.IntN(len(b))]
		case 1:
			r[rng.IntN(len(r))] = byte(rng.IntN(256))
		case 2:
			i := rng.IntN(len(r))
			return b[:i] + []string{`"`, "{", "}", "[", "null", "1e999", `\u0000`, "%", "?", "&", "/../", "%2F"}[rng.IntN(12)] + b[i:]
		case 3:
			return strings.Replace(b, `"`, ``, 1)
		case 4:
			return strings.ReplaceAll(b, "main", []string{"", "nope", "../main", "main/", "a b", strings.Repeat("m", 300)}[rng.IntN(6)])
		case 5:
			return strings.Replace(b, ":", ":[", 1)
		}
		return string(r)
	}
	auths := []string{"Bearer tok-fuzz", "", "Bearer tok-fuzzz", "Bearer  tok-fuzz", "bearer tok-fuzz"}
	ctypes := []string{"application/json", "application/x-ndjson", "", "text/plain", "application/json; charset=utf-8", "application/json;;"}
	methods := []string{"GET", "POST", "DELETE", "PUT", "HEAD", "PATCH", "OPTIONS"}
	for i := 0; i < 1500; i++ {
		sd := fuzzSeeds[rng.IntN(len(fuzzSeeds))]
		method, path, ctype, body := sd.method, sd.path, sd.ctype, sd.body
		switch rng.IntN(5) {
		case 0:
			path = mutate(path)
		case 1:
			body = mutate(body)
		case 2:
			ctype = ctypes[rng.IntN(len(ctypes))]
		case 3:
			method = methods[rng.IntN(len(methods))]
		case 4:
			body, path = mutate(body), mutate(path)
		}
		auth := auths[0]
		if rng.IntN(4) == 0 {
			auth = auths[rng.IntN(len(auths))]
		}
		hname, hval := "", ""
		if rng.IntN(5) == 0 {
			hname = []string{ifGraphCommitHeader, "X-Request-Id", "Content-Length", "Authorization"}[rng.IntN(4)]
			hval = mutate("01HXXXXXXXXXXXXXXXXXXXXXXX")
		}
		checkFuzzResponse(t, s, method, path, ctype, auth, hname, hval, []byte(body))
	}
}
