package s3

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

const fakeBucket = "test-bucket"

// fakeServer is an in-process gofakes3 with one bucket. handler, if set,
// sees each request first (fault injection); returning true means it
// answered.
type fakeServer struct {
	*httptest.Server
	inner   http.Handler
	handler atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(fakeBucket); err != nil {
		t.Fatal(err)
	}
	fs := &fakeServer{}
	inner := gofakes3.New(be, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	fs.inner = inner
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := fs.handler.Load(); h != nil && (*h)(w, r) {
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) setHandler(h func(w http.ResponseWriter, r *http.Request) bool) {
	if h == nil {
		fs.handler.Store(nil)
		return
	}
	fs.handler.Store(&h)
}

var prefixSeq atomic.Int64

// fakeConfig addresses a fresh prefix of the fake server's bucket.
func fakeConfig(fs *fakeServer) Config {
	return Config{
		Bucket: fakeBucket, Prefix: fmt.Sprintf("t%d/graph", prefixSeq.Add(1)),
		Region: "us-east-1", Endpoint: fs.URL, AllowHTTP: true, PathStyle: true,
		AccessKeyID: "test", SecretAccessKey: "test",
		BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
		ConfirmMissingOn412: true,
	}
}

func newFakeStore(t *testing.T, fs *fakeServer) *Store {
	t.Helper()
	s, err := New(fakeConfig(fs))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serverURI returns the s3:// address of a real server configured by
// scripts/test.sh (OMNIGRAPH_TEST_S3 plus the AWS_* variables), or skips.
func serverURI(t *testing.T) string {
	t.Helper()
	uri := os.Getenv("OMNIGRAPH_TEST_S3")
	if uri == "" {
		t.Skip("no S3 server: set OMNIGRAPH_TEST_S3=s3://bucket/prefix and AWS_* (scripts/test.sh starts VersityGW)")
	}
	return uri
}

// newServerStore opens a fresh prefix on the real server.
func newServerStore(t *testing.T) *Store {
	t.Helper()
	uri := serverURI(t)
	cfg, err := ConfigFromEnv(fmt.Sprintf("%s/%s-%d-%d", uri, t.Name(), os.Getpid(), prefixSeq.Add(1)), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, 20*time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
