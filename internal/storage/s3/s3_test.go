package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/storage/storagetest"
)

// TestConformanceFake runs the shared suite on gofakes3 in process.
func TestConformanceFake(t *testing.T) {
	fs := newFakeServer(t)
	storagetest.Run(t, func(t *testing.T) storage.Store { return newFakeStore(t, fs) })
}

// TestConformanceServer runs the shared suite on a real S3 server
// (VersityGW in scripts/test.sh).
func TestConformanceServer(t *testing.T) {
	serverURI(t)
	storagetest.Run(t, func(t *testing.T) storage.Store { return newServerStore(t) })
}

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri, bucket, prefix string
		bad                 bool
	}{
		{"s3://b", "b", "", false},
		{"s3://b/", "b", "", false},
		{"s3://b/p/q", "b", "p/q", false},
		{"s3://b/p/q/", "b", "p/q", false},
		{"s3://", "", "", true},
		{"s3:///p", "", "", true},
		{"s3://b/p//q", "", "", true},
		{"s3://b/../q", "", "", true},
		{"s3://b/p?x=1", "", "", true},
		{"/local/dir", "", "", true},
	} {
		b, p, err := ParseURI(tc.uri)
		if tc.bad {
			if !errors.Is(err, ErrConfig) {
				t.Errorf("ParseURI(%q) = %q %q %v, want ErrConfig", tc.uri, b, p, err)
			}
			continue
		}
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("ParseURI(%q) = %q %q %v, want %q %q", tc.uri, b, p, err, tc.bucket, tc.prefix)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	base := map[string]string{EnvAccessKeyID: "k", EnvSecretAccessKey: "s"}
	with := func(extra map[string]string) func(string) string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantErr  string
		endpoint string
		region   string
		path     bool
	}{
		{"aws defaults", nil, "", "", "us-east-1", false},
		{"region", map[string]string{EnvRegion: "eu-west-1", EnvDefaultRegion: "x"}, "", "", "eu-west-1", false},
		{"default region", map[string]string{EnvDefaultRegion: "ap-south-1"}, "", "", "ap-south-1", false},
		{"s3 endpoint wins", map[string]string{EnvEndpointS3: "https://s3.example", EnvEndpoint: "https://other"}, "", "https://s3.example", "us-east-1", false},
		{"generic endpoint", map[string]string{EnvEndpoint: "https://r2.example"}, "", "https://r2.example", "us-east-1", false},
		{"force path style", map[string]string{EnvEndpoint: "https://minio.example", EnvForcePathStyle: "true"}, "", "https://minio.example", "us-east-1", true},
		{"ip endpoint implies path style", map[string]string{EnvEndpoint: "https://10.0.0.1:9000"}, "", "https://10.0.0.1:9000", "us-east-1", true},
		{"plain http refused", map[string]string{EnvEndpoint: "http://127.0.0.1:7070"}, EnvAllowHTTP, "", "", false},
		{"plain http allowed", map[string]string{EnvEndpoint: "http://127.0.0.1:7070", EnvAllowHTTP: "true"}, "", "http://127.0.0.1:7070", "us-east-1", true},
		{"bad bool", map[string]string{EnvAllowHTTP: "yes please"}, EnvAllowHTTP, "", "", false},
		{"bad endpoint", map[string]string{EnvEndpoint: "127.0.0.1:7070"}, "not an http(s)", "", "", false},
		{"no key", map[string]string{EnvAccessKeyID: ""}, "needs credentials", "", "", false},
		{"no secret", map[string]string{EnvSecretAccessKey: ""}, "needs credentials", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConfigFromEnv("s3://bkt/g", with(tc.env))
			if tc.wantErr != "" {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrConfig mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Endpoint != tc.endpoint || c.Region != tc.region || c.PathStyle != tc.path || c.Bucket != "bkt" || c.Prefix != "g" {
				t.Fatalf("config = %+v", c)
			}
		})
	}
}

// TestPutIfMatchEmptyETag: an empty ETag never turns into an unconditional put.
func TestPutIfMatchEmptyETag(t *testing.T) {
	fs := newFakeServer(t)
	s := newFakeStore(t, fs)
	ctx := t.Context()
	if _, err := s.Put(ctx, "ref", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfMatch(ctx, "ref", []byte("v2"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("err = %v, want ErrPrecondition", err)
	}
	if b, _, _ := s.Get(ctx, "ref"); string(b) != "v1" {
		t.Fatalf("ref = %q", b)
	}
}

// dropFirstResponse makes the server apply the first request matching
// method (and, if set, header) and then cut the connection instead of
// answering: the client cannot know whether it was applied.
func dropFirstResponse(t *testing.T, fs *fakeServer, method, header string) *atomic.Int64 {
	t.Helper()
	var dropped atomic.Int64
	fs.setHandler(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != method || (header != "" && r.Header.Get(header) == "") || !dropped.CompareAndSwap(0, 1) {
			return false
		}
		fs.inner.ServeHTTP(&discardWriter{h: http.Header{}}, r)
		hj, ok := w.(http.Hijacker)
		if !ok {
			t.Error("cannot hijack")
			return false
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	})
	return &dropped
}

type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(s int)           { d.status = s }

// TestRetriedConditionalPutThatWon: the first attempt is applied but its
// answer is lost; the retry gets 412, and the read-back recognises our own
// bytes, so the put succeeds instead of reporting a conflict.
func TestRetriedConditionalPutThatWon(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		put    func(ctx context.Context, s *Store, etag, data string) (storage.Info, error)
	}{
		{"PutIfAbsent", "If-None-Match", func(ctx context.Context, s *Store, _, data string) (storage.Info, error) {
			return s.PutIfAbsent(ctx, "refs/new", []byte(data))
		}},
		{"PutIfMatch", "If-Match", func(ctx context.Context, s *Store, etag, data string) (storage.Info, error) {
			return s.PutIfMatch(ctx, "refs/old", []byte(data), etag)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t)
			s := newFakeStore(t, fs)
			ctx := t.Context()
			v1, err := s.Put(ctx, "refs/old", []byte("v1"))
			if err != nil {
				t.Fatal(err)
			}
			dropped := dropFirstResponse(t, fs, http.MethodPut, tc.header)
			before := s.Attempts()
			info, err := tc.put(ctx, s, v1.ETag, "mine")
			if err != nil {
				t.Fatalf("put that won on its first attempt: %v", err)
			}
			if dropped.Load() != 1 {
				t.Fatal("no response was dropped")
			}
			// First attempt (dropped), retry (412), read-back GET.
			if n := s.Attempts() - before; n != 3 {
				t.Fatalf("%d HTTP requests, want 3", n)
			}
			b, got, err := s.Get(ctx, info.Key)
			if err != nil || string(b) != "mine" || got.ETag != info.ETag {
				t.Fatalf("after put: %q %v %v (info %v)", b, got, err, info)
			}
			// A genuine loser still loses after an ambiguous attempt.
			dropFirstResponse(t, fs, http.MethodPut, tc.header)
			if _, err := tc.put(ctx, s, v1.ETag, "theirs"); !errors.Is(err, storage.ErrExists) && !errors.Is(err, storage.ErrPrecondition) {
				t.Fatalf("second put: %v, want a lost condition", err)
			}
		})
	}
}

// TestTypedErrors: each failure mode is a typed, clear error after bounded
// retries, and writes nothing.
func TestTypedErrors(t *testing.T) {
	fs := newFakeServer(t)
	respond := func(status int, code string) func(w http.ResponseWriter, r *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(status)
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>injected</Message></Error>`)
			return true
		}
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String()
	closed.Close()
	for _, tc := range []struct {
		name     string
		handler  func(w http.ResponseWriter, r *http.Request) bool
		endpoint string
		want     error
		attempts int64
		msg      string
	}{
		{"auth", respond(403, "InvalidAccessKeyId"), "", storage.ErrAccessDenied, 1, "refused the credentials"},
		{"signature", respond(403, "SignatureDoesNotMatch"), "", storage.ErrAccessDenied, 1, "AWS_SECRET_ACCESS_KEY"},
		{"no bucket", respond(404, "NoSuchBucket"), "", storage.ErrBucketNotFound, 1, "does not exist"},
		{"throttled", respond(503, "SlowDown"), "", storage.ErrThrottled, 4, "after 4 attempts"},
		{"server errors", respond(500, "InternalError"), "", storage.ErrUnavailable, 4, "kept failing"},
		{"unreachable", nil, deadURL, storage.ErrUnavailable, 4, "cannot reach"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs.setHandler(tc.handler)
			defer fs.setHandler(nil)
			cfg := fakeConfig(fs)
			cfg.MaxAttempts = 4
			if tc.endpoint != "" {
				cfg.Endpoint = tc.endpoint
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			before := s.Attempts()
			_, err = s.PutIfAbsent(t.Context(), "refs/heads/main", []byte("x"))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
			if n := s.Attempts() - before; n != tc.attempts {
				t.Fatalf("%d attempts, want %d", n, tc.attempts)
			}
			var se *storage.Error
			if !errors.As(err, &se) || se.Key != "refs/heads/main" {
				t.Fatalf("err %#v does not name the key", err)
			}
			fs.setHandler(nil)
			ok, _ := New(fakeConfig(fs))
			ok.root = s.root
			if _, err := ok.Stat(t.Context(), "refs/heads/main"); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("something was written: %v", err)
			}
		})
	}
}

// TestTransientThenSuccess: a few 503s are retried transparently.
func TestTransientThenSuccess(t *testing.T) {
	fs := newFakeServer(t)
	s := newFakeStore(t, fs)
	var n atomic.Int64
	fs.setHandler(func(w http.ResponseWriter, r *http.Request) bool {
		if n.Add(1) > 2 {
			return false
		}
		w.WriteHeader(503)
		return true
	})
	before := s.Attempts()
	if _, err := s.Put(t.Context(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if got := s.Attempts() - before; got != 3 {
		t.Fatalf("%d attempts, want 3", got)
	}
}

// TestCancelDuringBackoff: cancelling the caller's context ends the retry
// loop at once with context.Canceled.
func TestCancelDuringBackoff(t *testing.T) {
	fs := newFakeServer(t)
	cfg := fakeConfig(fs)
	cfg.BackoffBase, cfg.BackoffMax = time.Hour, time.Hour
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fs.setHandler(func(w http.ResponseWriter, r *http.Request) bool { w.WriteHeader(503); return true })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := s.Put(ctx, "k", []byte("v")); done <- err }()
	for s.Attempts() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestMultipart: big puts go through a multipart upload and read back
// whole and by range; a conditional multipart put keeps its condition.
func TestMultipart(t *testing.T) {
	testMultipart(t, fakeConfig(newFakeServer(t)), false)
}

// TestMultipartServer also checks that CompleteMultipartUpload honours
// If-None-Match (gofakes3 ignores it).
func TestMultipartServer(t *testing.T) {
	serverURI(t)
	testMultipart(t, newServerStore(t).cfg, true)
}

// testMultipart runs the multipart checks on a store of cfg with 5 MiB
// parts from 6 MiB on.
func testMultipart(t *testing.T, cfg Config, conditional bool) {
	cfg.PartSize, cfg.MultipartThreshold = 5<<20, 6<<20
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	data := bytes.Repeat([]byte("0123456789abcdef"), (11<<20)/16+7) // 3 parts
	before := s.Attempts()
	info, err := s.Put(ctx, "big/frag.parquet", data)
	if err != nil {
		t.Fatal(err)
	}
	// create + 3 parts + complete
	if n := s.Attempts() - before; n != 5 {
		t.Fatalf("%d requests for a 3-part upload, want 5", n)
	}
	got, ginfo, err := s.Get(ctx, "big/frag.parquet")
	// gofakes3 reports a different ETag from Complete than from GET.
	if err != nil || !bytes.Equal(got, data) || (conditional && ginfo.ETag != info.ETag) || ginfo.Size != int64(len(data)) {
		t.Fatalf("Get: %d bytes, %v, %v vs %v", len(got), err, ginfo, info)
	}
	part, err := s.GetRange(ctx, "big/frag.parquet", 5<<20-3, 10)
	if err != nil || !bytes.Equal(part, data[5<<20-3:5<<20+7]) {
		t.Fatalf("GetRange across a part boundary: %q %v", part, err)
	}
	if _, err := s.PutIfAbsent(ctx, "big/new", data); err != nil {
		t.Fatal(err)
	}
	if !conditional {
		return
	}
	other := bytes.Repeat([]byte("x"), len(data))
	if _, err := s.PutIfAbsent(ctx, "big/new", other); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("conditional multipart over an existing key: %v, want ErrExists", err)
	}
	small, err := s.Put(ctx, "small", []byte("small"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfMatch(ctx, "big/new", other, small.ETag); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("multipart If-Match with a stale ETag: %v, want ErrPrecondition", err)
	}
	if got, _, _ := s.Get(ctx, "big/new"); !bytes.Equal(got, data) {
		t.Fatal("a losing conditional multipart upload replaced the object")
	}
}

// TestAuthServer: wrong credentials against the real server are a typed
// error naming the key.
func TestAuthServer(t *testing.T) {
	s := newServerStore(t)
	c := s.cfg
	c.SecretAccessKey = "wrong-" + c.SecretAccessKey
	c.MaxAttempts = 2
	bad, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bad.Get(t.Context(), "anything"); !errors.Is(err, storage.ErrAccessDenied) {
		t.Fatalf("Get with a wrong secret: %v, want ErrAccessDenied", err)
	}
	if _, err := bad.PutIfAbsent(t.Context(), "refs/heads/main", []byte("x")); !errors.Is(err, storage.ErrAccessDenied) {
		t.Fatalf("PutIfAbsent with a wrong secret: %v", err)
	}
	if _, err := s.Stat(t.Context(), "refs/heads/main"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("refused put wrote something: %v", err)
	}
	c = s.cfg
	c.Bucket = "no-such-bucket-omnigraph"
	nb, _ := New(c)
	if _, _, err := nb.Get(t.Context(), "x"); !errors.Is(err, storage.ErrBucketNotFound) {
		t.Fatalf("Get from a missing bucket: %v, want ErrBucketNotFound", err)
	}
}
