package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
)

const blobSchema = `
node Doc { slug: String @key  body: Blob?  title: String? }
edge Cites: Doc -> Doc { note: Blob? }
`

// "hello world" and "note!" base64-encoded.
const blobData = `{"type":"Doc","data":{"slug":"a","body":"base64:aGVsbG8gd29ybGQ=","title":"A"}}
{"type":"Doc","data":{"slug":"b"}}
{"edge":"Cites","from":"a","to":"b","data":{"id":"c1","note":"base64:bm90ZSE="}}
`

func blobServer(t *testing.T) *testServer {
	ctx := context.Background()
	g, err := omnigraph.Init(ctx, filepath.Join(t.TempDir(), "b.omni"), "s.pg", blobSchema, "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Load(ctx, strings.NewReader(blobData), omnigraph.LoadOptions{Mode: omnigraph.Overwrite}); err != nil {
		t.Fatal(err)
	}
	return open(t, func(c *Config) { c.Graphs = append(c.Graphs, GraphConfig{ID: "b", Graph: g}) })
}

func TestBlob(t *testing.T) {
	ts := blobServer(t)
	const doc = "/graphs/b/blob?entity=node&type=Doc&id=a&property=body"
	full := ts.req("GET", doc, nil)
	etag := full.header.Get("ETag")
	if full.status != 200 || string(full.body) != "hello world" || !strings.HasPrefix(etag, `"`) ||
		full.header.Get("Accept-Ranges") != "bytes" || full.header.Get(snapshotIDHeader) == "" ||
		full.header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("GET = %d %q %v", full.status, full.body, full.header)
	}
	cases := []struct {
		name, method, path string
		hdr                []string
		status             int
		body, crange       string
	}{
		{"head", "HEAD", doc, nil, 200, "", ""},
		{"head ignores range", "HEAD", doc, []string{"Range", "bytes=0-1"}, 200, "", ""},
		{"range", "GET", doc, []string{"Range", "bytes=1-3"}, 206, "ell", "bytes 1-3/11"},
		{"range open end", "GET", doc, []string{"Range", "bytes=6-"}, 206, "world", "bytes 6-10/11"},
		{"range past end", "GET", doc, []string{"Range", "bytes=6-100"}, 206, "world", "bytes 6-10/11"},
		{"suffix", "GET", doc, []string{"Range", "bytes=-3"}, 206, "rld", "bytes 8-10/11"},
		{"suffix longer than blob", "GET", doc, []string{"Range", "bytes=-30"}, 206, "hello world", "bytes 0-10/11"},
		{"unsatisfiable", "GET", doc, []string{"Range", "bytes=11-20"}, 416, "", "bytes */11"},
		{"zero suffix", "GET", doc, []string{"Range", "bytes=-0"}, 416, "", "bytes */11"},
		{"several ranges ignored", "GET", doc, []string{"Range", "bytes=0-1,3-4"}, 200, "hello world", ""},
		{"malformed range ignored", "GET", doc, []string{"Range", "bytes=x-1"}, 200, "hello world", ""},
		{"other unit ignored", "GET", doc, []string{"Range", "items=0-1"}, 200, "hello world", ""},
		{"if-range match", "GET", doc, []string{"Range", "bytes=0-4", "If-Range", "ETAG"}, 206, "hello", "bytes 0-4/11"},
		{"if-range mismatch", "GET", doc, []string{"Range", "bytes=0-4", "If-Range", `"other"`}, 200, "hello world", ""},
		{"if-none-match", "GET", doc, []string{"If-None-Match", "ETAG"}, 304, "", ""},
		{"if-none-match weak", "GET", doc, []string{"If-None-Match", `"x", W/ETAG`}, 304, "", ""},
		{"if-none-match star", "GET", doc, []string{"If-None-Match", "*"}, 304, "", ""},
		{"if-none-match other", "GET", doc, []string{"If-None-Match", `"x"`}, 200, "hello world", ""},
		{"if-match", "GET", doc, []string{"If-Match", `"x", ETAG`}, 200, "hello world", ""},
		{"if-match star", "GET", doc, []string{"If-Match", "*"}, 200, "hello world", ""},
		{"if-match other", "GET", doc, []string{"If-Match", `"x"`}, 412, "", ""},
		{"if-match weak is not strong", "GET", doc, []string{"If-Match", "W/ETAG"}, 412, "", ""},
		{"edge blob", "GET", "/graphs/b/blob?entity=edge&type=Cites&id=c1&property=note", nil, 200, "note!", ""},
		{"null blob", "GET", "/graphs/b/blob?entity=node&type=Doc&id=b&property=body", nil, 404, "", ""},
		{"unknown id", "GET", "/graphs/b/blob?entity=node&type=Doc&id=zz&property=body", nil, 404, "", ""},
		{"unknown edge id", "GET", "/graphs/b/blob?entity=edge&type=Cites&id=zz&property=note", nil, 404, "", ""},
		{"not a blob", "GET", "/graphs/b/blob?entity=node&type=Doc&id=a&property=title", nil, 400, "", ""},
		{"unknown property", "GET", "/graphs/b/blob?entity=node&type=Doc&id=a&property=nope", nil, 400, "", ""},
		{"unknown type", "GET", "/graphs/b/blob?entity=node&type=Nope&id=a&property=body", nil, 400, "", ""},
		{"edge type as node", "GET", "/graphs/b/blob?entity=node&type=Cites&id=c1&property=note", nil, 400, "", ""},
		{"bad entity", "GET", "/graphs/b/blob?entity=vertex&type=Doc&id=a&property=body", nil, 400, "", ""},
		{"missing selector", "GET", "/graphs/b/blob?entity=node&type=Doc&id=a", nil, 400, "", ""},
		{"unknown branch", "GET", doc + "&branch=nope", nil, 404, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := append([]string(nil), c.hdr...)
			for i := range hdr {
				hdr[i] = strings.ReplaceAll(hdr[i], "ETAG", etag)
			}
			r := ts.req(c.method, c.path, nil, hdr...)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.body != "" && string(r.body) != c.body {
				t.Errorf("body %q, want %q", r.body, c.body)
			}
			if got := r.header.Get("Content-Range"); got != c.crange {
				t.Errorf("Content-Range %q, want %q", got, c.crange)
			}
			switch {
			case c.method == "HEAD":
				if len(r.body) != 0 || r.header.Get("Content-Length") != "11" || r.header.Get("ETag") != etag {
					t.Errorf("HEAD: body %q headers %v", r.body, r.header)
				}
			case r.status == 416:
				if e := r.errOut(t); e.BlobRange == nil || e.BlobRange.Length != 11 || e.Code != "" {
					t.Errorf("416 body %s", r.body)
				}
			case r.status == 412:
				if e := r.errOut(t); e.Code != codeConflict {
					t.Errorf("412 body %s", r.body)
				}
			case r.status == 304:
				if len(r.body) != 0 || r.header.Get("ETag") != etag {
					t.Errorf("304: %q %v", r.body, r.header)
				}
			case r.status >= 400:
				r.errOut(t)
			}
		})
	}
	// The ETag is a content validator: the same bytes at a later commit keep it.
	if err := ts.s.graphs["b"].g.CreateBranch(context.Background(), "later", "main", ""); err != nil {
		t.Fatal(err)
	}
	if r := ts.req("GET", doc+"&branch=later", nil); r.header.Get("ETag") != etag {
		t.Errorf("etag changed across branches with the same bytes")
	}
}

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		h          string
		n          int64
		s, e       int64
		ok, satisf bool
	}{
		{"bytes=0-0", 1, 0, 1, true, true},
		{"bytes=0-", 0, 0, 0, true, false},
		{"bytes=-1", 0, 0, 0, true, false},
		{"bytes=5-2", 10, 0, 0, false, false},
		{"bytes= 1-2", 10, 1, 3, true, true},
		{"bytes=+1-2", 10, 0, 0, false, false},
		{"bytes=99999999999999999999-", 10, 0, 0, false, false},
	} {
		s, e, ok, sat := parseRange(c.h, c.n)
		if ok != c.ok || (ok && (s != c.s || e != c.e || sat != c.satisf)) {
			t.Errorf("parseRange(%q, %d) = %d %d %v %v", c.h, c.n, s, e, ok, sat)
		}
	}
}
