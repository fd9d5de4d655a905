package server

import (
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/console"
)

// TestConsoleMounted pins the console's auth behaviour: its files are
// public on a server that requires tokens (they hold no data), while the
// API calls the page makes still need the bearer token.
func TestConsoleMounted(t *testing.T) {
	ts := start(t, Config{Tokens: []Token{{Actor: "a", Token: "t"}}})
	for _, tc := range []struct {
		name, method, path, auth string
		status                   int
	}{
		{"page without a token", "GET", "/ui/", "", 200},
		{"module without a token", "GET", "/ui/js/api.js", "", 200},
		{"bare prefix (redirected to /ui/)", "GET", "/ui", "", 200},
		{"unknown asset", "GET", "/ui/secret", "", 404},
		{"api without a token", "GET", "/graphs/g/branches", "", 401},
		{"api with a wrong token", "GET", "/graphs/g/branches", "Bearer nope", 401},
		{"api with the token", "GET", "/graphs/g/branches", "Bearer t", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts.tok = ""
			r := ts.req(tc.method, tc.path, nil, "Authorization", tc.auth)
			if r.status != tc.status {
				t.Fatalf("%s %s = %d %s", tc.method, tc.path, r.status, r.body)
			}
			isUI := strings.HasPrefix(tc.path, "/ui")
			if got := r.header.Get("Content-Security-Policy"); isUI != (got == console.ContentSecurityPolicy) {
				t.Fatalf("CSP = %q", got)
			}
		})
	}
}
