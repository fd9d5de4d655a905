package s3

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

// honourCopyCondition makes the fake server do what AWS does and gofakes3
// does not: refuse a CopyObject carrying If-None-Match: * with 412 when the
// destination exists. Every PUT is serialised so the check and the copy are
// atomic. copies counts the conditional copies it saw.
func honourCopyCondition(fs *fakeServer) (copies *atomic.Int64) {
	copies = new(atomic.Int64)
	var mu sync.Mutex
	fs.setHandler(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("X-Amz-Copy-Source") == "" || r.Header.Get("If-None-Match") != "*" {
			fs.inner.ServeHTTP(w, r)
			return true
		}
		copies.Add(1)
		head := httptest.NewRequest(http.MethodHead, r.URL.String(), nil)
		rec := httptest.NewRecorder()
		fs.inner.ServeHTTP(rec, head)
		if rec.Code == http.StatusOK {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusPreconditionFailed)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`))
			return true
		}
		fs.inner.ServeHTTP(w, r)
		return true
	})
	return copies
}

func copyStore(t *testing.T, fs *fakeServer) *Store {
	t.Helper()
	cfg := fakeConfig(fs)
	cfg.ConditionalCopy = true
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformanceFakeConditionalCopy runs the shared suite with the native
// copy on a fake server that honours the condition.
func TestConformanceFakeConditionalCopy(t *testing.T) {
	fs := newFakeServer(t)
	copies := honourCopyCondition(fs)
	storagetest.Run(t, func(t *testing.T) storage.Store { return copyStore(t, fs) })
	if copies.Load() == 0 {
		t.Fatal("the suite sent no conditional CopyObject")
	}
}

// TestCopyIfAbsentRequests pins the wire: one CopyObject for a copy, the
// typed answers, the read-back after a lost answer, and the fallback after
// a 501.
func TestCopyIfAbsentRequests(t *testing.T) {
	fs := newFakeServer(t)
	honourCopyCondition(fs)
	s := copyStore(t, fs)
	ctx := t.Context()
	if _, err := s.Put(ctx, "refs/heads/main", []byte("head")); err != nil {
		t.Fatal(err)
	}
	before := s.Attempts()
	info, err := s.CopyIfAbsent(ctx, "refs/heads/main", "refs/heads/a")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Attempts() - before; n != 1 {
		t.Fatalf("copy sent %d requests, want 1", n)
	}
	if st, _ := s.Stat(ctx, "refs/heads/a"); st.ETag != info.ETag || info.Size != -1 {
		t.Fatalf("copy info %+v, stat %+v", info, st)
	}
	if _, err := s.CopyIfAbsent(ctx, "refs/heads/main", "refs/heads/a"); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("copy onto an existing ref: %v, want ErrExists", err)
	}
	var se *storage.CopySourceError
	if _, err := s.CopyIfAbsent(ctx, "refs/heads/none", "refs/heads/b"); !errors.As(err, &se) {
		t.Fatalf("copy of a missing source: %v, want *CopySourceError", err)
	}

	// The answer of an applied copy is lost: the retry's 412 is read back
	// and recognised (copy, 412, GET dst, GET src).
	cond := fs.handler.Load()
	var dropped atomic.Int64
	fs.setHandler(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("X-Amz-Copy-Source") == "" || !dropped.CompareAndSwap(0, 1) {
			return (*cond)(w, r)
		}
		(*cond)(&discardWriter{h: http.Header{}}, r)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return true
	})
	before = s.Attempts()
	if _, err := s.CopyIfAbsent(ctx, "refs/heads/main", "refs/heads/c"); err != nil {
		t.Fatalf("copy whose first answer was lost: %v", err)
	}
	if n := s.Attempts() - before; n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}

	// A server without CopyObject conditions that says so: 501, and the
	// store stops offering the capability; storage.CopyIfAbsent falls back.
	fs.setHandler(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("X-Amz-Copy-Source") == "" {
			return (*cond)(w, r)
		}
		w.WriteHeader(http.StatusNotImplemented)
		_, _ = w.Write([]byte(`<Error><Code>NotImplemented</Code><Message>no</Message></Error>`))
		return true
	})
	if _, err := s.CopyIfAbsent(ctx, "refs/heads/main", "refs/heads/d"); !errors.Is(err, storage.ErrUnsupported) {
		t.Fatalf("copy on a server answering 501: %v, want ErrUnsupported", err)
	}
	if s.CopiesIfAbsent() {
		t.Fatal("capability still offered after a 501")
	}
	if _, err := storage.CopyIfAbsent(ctx, s, "refs/heads/main", "refs/heads/d"); err != nil {
		t.Fatalf("fallback copy: %v", err)
	}
	if b, _, err := s.Get(ctx, "refs/heads/d"); err != nil || string(b) != "head" {
		t.Fatalf("fallback copy holds %q, %v", b, err)
	}
}

func TestCopySource(t *testing.T) {
	got := copySource("b", "g/refs/heads/a b/c")
	if got != "b/g/refs/heads/a%20b/c" {
		t.Fatalf("copySource = %q", got)
	}
	if _, err := url.PathUnescape(strings.TrimPrefix(got, "b/")); err != nil {
		t.Fatal(err)
	}
}

// TestConditionalCopyDefault: the copy is used by default only on AWS; the
// environment overrides either way.
func TestConditionalCopyDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"aws", nil, true},
		{"custom endpoint", map[string]string{EnvEndpointS3: "https://s3.example.com"}, false},
		{"custom endpoint, declared", map[string]string{EnvEndpointS3: "https://s3.example.com", EnvConditionalCopy: "true"}, true},
		{"aws, disabled", map[string]string{EnvConditionalCopy: "false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{EnvAccessKeyID: "k", EnvSecretAccessKey: "s"}
			for k, v := range tc.env {
				env[k] = v
			}
			cfg, err := ConfigFromEnv("s3://b/p", func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ConditionalCopy != tc.want {
				t.Fatalf("ConditionalCopy = %v, want %v", cfg.ConditionalCopy, tc.want)
			}
		})
	}
	env := map[string]string{EnvAccessKeyID: "k", EnvSecretAccessKey: "s", EnvConditionalCopy: "maybe"}
	if _, err := ConfigFromEnv("s3://b/p", func(k string) string { return env[k] }); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad %s: %v, want ErrConfig", EnvConditionalCopy, err)
	}
}

// TestConditionalCopyServer finds out whether the real server honours
// If-None-Match: * on CopyObject. When it does, a copy onto an existing
// object is ErrExists and the object is unchanged. When it does not
// (VersityGW v1.8.0 copies over the object), the default configuration for
// its endpoint must leave the capability off, since a branch create by copy
// would then replace an existing branch.
func TestConditionalCopyServer(t *testing.T) {
	s := newServerStore(t)
	ctx := t.Context()
	for key, data := range map[string]string{"refs/heads/src": "src", "refs/heads/dst": "dst"} {
		if _, err := s.Put(ctx, key, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := s.cfg
	cfg.ConditionalCopy = true
	forced, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = forced.CopyIfAbsent(ctx, "refs/heads/src", "refs/heads/dst")
	b, _, gerr := s.Get(ctx, "refs/heads/dst")
	if gerr != nil {
		t.Fatal(gerr)
	}
	honoured := errors.Is(err, storage.ErrExists) && string(b) == "dst"
	t.Logf("server honours If-None-Match on CopyObject: %v (copy: %v; destination now %q)", honoured, err, b)
	if !honoured && s.cfg.ConditionalCopy {
		t.Fatalf("the server ignores the copy condition but %s is on for it", EnvConditionalCopy)
	}
}
