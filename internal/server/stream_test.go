package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
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
	uri := filepath.Join(t.TempDir(), "g.omni")
	g, err := omnigraph.Init(ctx, uri, "schema.pg", testSchema, "test", omnigraph.Options{QueryMemoryBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 90)
	name := func(i int) string { return fmt.Sprintf("p%04d-%s", i, pad) }
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"type":"Person","data":{"name":%q,"age":%d}}`+"\n", name(i), i%90)
	}
	if _, err := g.Load(ctx, strings.NewReader(b.String()), omnigraph.LoadOptions{Mode: omnigraph.Overwrite, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, Config{Unauthenticated: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Graphs: []GraphConfig{{ID: "g", Graph: g, URI: g.URI()}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{t: t, s: s, g: g}
	ts.hs = httptest.NewServer(s.Handler())
	t.Cleanup(ts.hs.Close)

	src := `query pairs() { match { $a: Person  $b: Person } return { $a.name, $b.name, $a.age } }`
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
	dec := json.NewDecoder(bufio.NewReaderSize(cr, 64<<10))
	dec.UseNumber()
	var keys []string
	rows := 0
	tok := func() json.Token {
		t.Helper()
		tk, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	if tok() != json.Delim('{') {
		t.Fatal("not an object")
	}
	for dec.More() {
		k := tok().(string)
		keys = append(keys, k)
		switch k {
		case "row_count":
			var c int
			if err := dec.Decode(&c); err != nil || c != n*n {
				t.Fatalf("row_count %d (%v), want %d", c, err, n*n)
			}
		case "rows":
			if tok() != json.Delim('[') {
				t.Fatal("rows is not an array")
			}
			for dec.More() {
				var r map[string]any
				if err := dec.Decode(&r); err != nil {
					t.Fatal(err)
				}
				i, j := rows/n, rows%n
				if rows%9973 == 0 || rows == n*n-1 {
					if r["a.name"] != name(i) || r["b.name"] != name(j) || r["a.age"] != json.Number(fmt.Sprint(i%90)) {
						t.Fatalf("row %d = %v, want a=%s b=%s", rows, r, name(i), name(j))
					}
				}
				rows++
			}
			tok()
		default:
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
	}
	tok()
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("data after the document: %v", err)
	}
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
