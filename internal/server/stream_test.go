package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestQueryStreamsPastMemoryLimit: a /query result of ~100 MB of JSON is
// answered under an 8 MiB query memory limit (the rows are streamed; held
// whole they were charged ~35 MB and refused), chunked with no
// Content-Length, and decodes to every row in order.
func TestQueryStreamsPastMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MB response")
	}
	const n = 700
	ctx := context.Background()
	g := pairsGraph(t, n)
	s, err := New(ctx, Config{Unauthenticated: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Graphs: []GraphConfig{{ID: "g", Graph: g, URI: g.URI()}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s, g: g}
	ts.hs = httptest.NewServer(s.Handler())
	t.Cleanup(ts.hs.Close)

	src := fixture.PairsQuery
	// Held whole, the result is over the limit: the old answer, still
	// what the full-result API gives.
	if _, err := g.Query(ctx, omnigraph.Target{}, src, "", nil); err == nil || !strings.Contains(err.Error(), "query_memory_bytes") {
		t.Fatalf("Graph.Query under 8 MiB: %v, want a query_memory_bytes limit error", err)
	}
	body, err := json.Marshal(QueryRequest{Query: src})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ts.hs.Client().Post(ts.hs.URL+"/graphs/g/query", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.ContentLength != -1 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, length %d, type %q", res.StatusCode, res.ContentLength, res.Header.Get("Content-Type"))
	}
	cr := &countingReader{r: res.Body}
	keys, rows := fixture.CheckPairsDoc(t, bufio.NewReaderSize(cr, 64<<10), n)
	if rows != n*n {
		t.Fatalf("%d rows, want %d", rows, n*n)
	}
	if want := "query_name target row_count columns rows graph_commit_id"; strings.Join(keys, " ") != want {
		t.Fatalf("keys %v, want %s", keys, want)
	}
	if cr.n < 100<<20 {
		t.Fatalf("response of %d bytes; the test wants one over 100 MiB", cr.n)
	}
	t.Logf("%d rows, %d bytes under an 8 MiB query memory limit", rows, cr.n)
}

// pairsGraph is the pairs fixture's n people under an 8 MiB query memory
// limit.
func pairsGraph(t *testing.T, n int) *omnigraph.Graph {
	t.Helper()
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "g.omni")
	g, err := omnigraph.Init(ctx, uri, "schema.pg", testSchema, "test", omnigraph.Options{QueryMemoryBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(fixture.PairsData(n)), omnigraph.LoadOptions{Mode: omnigraph.Overwrite, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	return g
}

// cancelOnWrite ends the request's context when the response's first
// bytes are written: the error every later batch of a streamed response
// then meets stands for any failure after the status line (a deadline, a
// client gone).
type cancelOnWrite struct {
	http.ResponseWriter
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return w.ResponseWriter.Write(p)
}

// TestQueryStreamErrorCutsConnection: a query that fails after its
// response started cannot change the 200 already sent; the connection is
// cut, so the client reads part of the document and then an unexpected
// EOF — never a well-formed partial document, nor an error body appended
// to one. An error before the first byte is still an ordinary error
// response.
func TestQueryStreamErrorCutsConnection(t *testing.T) {
	g := pairsGraph(t, 100)
	s, err := New(context.Background(), Config{Unauthenticated: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Graphs: []GraphConfig{{ID: "g", Graph: g, URI: g.URI()}}})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		h.ServeHTTP(&cancelOnWrite{ResponseWriter: w, cancel: cancel}, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	post := func(src string) (*http.Response, []byte, error) {
		t.Helper()
		body, err := json.Marshal(QueryRequest{Query: src})
		if err != nil {
			t.Fatal(err)
		}
		res, err := hs.Client().Post(hs.URL+"/graphs/g/query", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res, b, err
	}
	// 5,000 rows of ~210 bytes: the first 64 KiB go out inside the first
	// batch, the next batch sees the ended context.
	res, b, err := post(`query q() { match { $a: Person  $b: Person } return { $a.name, $b.name } limit 5000 }`)
	if res.StatusCode != http.StatusOK || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("status %d, read error %v; want 200 and an unexpected EOF", res.StatusCode, err)
	}
	if len(b) < 64<<10 || !strings.HasPrefix(string(b), `{"query_name":"q","target":{"branch":"main"},"row_count":5000,`) || json.Valid(b) {
		t.Fatalf("got %d bytes (valid JSON: %v), starting %.100q", len(b), json.Valid(b), b)
	}
	// Over the budget, the error comes before any byte: a 413 body.
	res, b, err = post(`query q() { match { $a: Person  $b: Person  $c: Person } return { count($a) as n } }`)
	if err != nil || res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "query_memory_bytes") {
		t.Fatalf("status %d, body %q (%v); want a 413 resource_limit body", res.StatusCode, b, err)
	}
}
