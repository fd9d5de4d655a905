package console

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestHandlerServesEveryAsset pins that each embedded file is served with
// its type, a content ETag and the security headers.
func TestHandlerServesEveryAsset(t *testing.T) {
	h := Handler()
	n := 0
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		name := strings.TrimPrefix(p, "assets/")
		want, _ := assets.ReadFile(p)
		w := get(t, h, "GET", Prefix+name)
		if w.Code != 200 || w.Body.String() != string(want) {
			t.Errorf("%s: %d, %d bytes (want %d)", name, w.Code, w.Body.Len(), len(want))
		}
		if got := w.Header().Get("Content-Security-Policy"); got != ContentSecurityPolicy {
			t.Errorf("%s: CSP %q", name, got)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("ETag") == "" {
			t.Errorf("%s: headers %v", name, w.Header())
		}
		return nil
	})
	if err != nil || n < 8 {
		t.Fatalf("walked %d assets: %v", n, err)
	}
}

func TestHandler(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		name, method, path string
		status             int
		ctype, location    string
	}{
		{name: "index", method: "GET", path: "/ui/", status: 200, ctype: "text/html; charset=utf-8"},
		{name: "bare prefix redirects", method: "GET", path: "/ui", status: 301, location: "/ui/"},
		{name: "module", method: "GET", path: "/ui/js/app.js", status: 200, ctype: "text/javascript; charset=utf-8"},
		{name: "stylesheet", method: "GET", path: "/ui/style.css", status: 200, ctype: "text/css; charset=utf-8"},
		{name: "head", method: "HEAD", path: "/ui/index.html", status: 200, ctype: "text/html; charset=utf-8"},
		{name: "unknown file", method: "GET", path: "/ui/nope.js", status: 404},
		{name: "directory", method: "GET", path: "/ui/js/", status: 404},
		{name: "escape", method: "GET", path: "/ui/../console.go", status: 404},
		{name: "post", method: "POST", path: "/ui/", status: 405},
		{name: "outside prefix", method: "GET", path: "/index.html", status: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, tc.method, tc.path)
			if w.Code != tc.status {
				t.Fatalf("%s %s = %d", tc.method, tc.path, w.Code)
			}
			if tc.ctype != "" && w.Header().Get("Content-Type") != tc.ctype {
				t.Errorf("Content-Type %q", w.Header().Get("Content-Type"))
			}
			if tc.location != "" && w.Header().Get("Location") != tc.location {
				t.Errorf("Location %q", w.Header().Get("Location"))
			}
			if w.Header().Get("Content-Security-Policy") != ContentSecurityPolicy {
				t.Errorf("CSP missing on %d", w.Code)
			}
		})
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h := Handler()
	w := get(t, h, "GET", "/ui/js/app.js")
	etag := w.Header().Get("ETag")
	if w.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("Cache-Control %q", w.Header().Get("Cache-Control"))
	}
	if w := get(t, h, "GET", "/ui/js/app.js", "If-None-Match", etag); w.Code != 304 {
		t.Fatalf("If-None-Match %s = %d", etag, w.Code)
	}
}

// TestPageLoadsNothingExternal pins the no-network promise at the source:
// no asset names another origin, and the page has no inline script or
// style for the CSP to refuse.
func TestPageLoadsNothingExternal(t *testing.T) {
	_ = fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := assets.ReadFile(p)
		// The SVG namespace is a name, not a fetch.
		s := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "")
		for _, bad := range []string{"http://", "https://", "@import", "url("} {
			if strings.Contains(s, bad) && !(bad == "url(" && strings.Contains(s, "url(#arrow)")) {
				t.Errorf("%s mentions %q", p, bad)
			}
		}
		if strings.HasSuffix(p, ".html") {
			for _, bad := range []string{"<script>", "style=", "onclick=", "<style"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s has inline %q", p, bad)
				}
			}
		}
		return nil
	})
}
