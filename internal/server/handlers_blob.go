package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph"
)

// blobChunk bounds one write of a blob body.
const blobChunk = 4 << 20

// snapshotIDHeader names the exact commit a blob was read at.
const snapshotIDHeader = "Omnigraph-Snapshot-Id"

var blobParams = []param{
	{name: "entity", required: true, enum: []string{"node", "edge"}, desc: "node or edge"},
	{name: "type", required: true, desc: "Node or edge type name."},
	{name: "id", required: true, desc: "Entity id."},
	{name: "property", required: true, desc: "A Blob property of the type."},
	branchParam, snapshotParam,
}

// handleBlob serves GET and HEAD /blob: one Blob cell with a strong
// content ETag, conditional requests and single byte ranges. An external
// blob is a 302 to its URI; the server never dereferences it.
func (s *Server) handleBlob(head bool) func(c *call) (*plan, error) {
	return func(c *call) (*plan, error) {
		q := c.r.URL.Query()
		entity := q.Get("entity")
		if entity != "node" && entity != "edge" {
			return nil, badRequest("entity must be node or edge")
		}
		t, branch, err := readTarget(optional(q, "branch"), optional(q, "snapshot"))
		if err != nil {
			return nil, err
		}
		cell := omnigraph.BlobCell{Edge: entity == "edge", Type: q.Get("type"), ID: q.Get("id"), Property: q.Get("property")}
		return &plan{checks: []check{{action: ActionRead, branch: branch}}, run: func() error {
			b, err := c.g.g.ReadBlob(c.r.Context(), t, cell)
			if err != nil {
				return err
			}
			return c.serveBlob(b, head)
		}}, nil
	}
}

func (c *call) serveBlob(b *omnigraph.Blob, head bool) error {
	h := c.w.Header()
	h.Set(snapshotIDHeader, b.Commit.ID)
	if b.Data == nil {
		h.Set("Location", b.URI)
		h.Set("Cache-Control", "no-store")
		c.writeHeader(http.StatusFound)
		return nil
	}
	etag := b.ETag()
	n := int64(len(b.Data))
	h.Set("ETag", etag)
	h.Set("Accept-Ranges", "bytes")
	if im := c.r.Header.Get("If-Match"); im != "" && !etagListMatches(im, etag, true) {
		return newAPIError(http.StatusPreconditionFailed, codeConflict, "If-Match does not match the blob's entity tag %s", etag)
	}
	if inm := c.r.Header.Get("If-None-Match"); inm != "" && etagListMatches(inm, etag, false) {
		h.Set("Content-Length", strconv.FormatInt(n, 10))
		c.writeHeader(http.StatusNotModified)
		return nil
	}
	start, end := int64(0), n // half-open
	status := http.StatusOK
	if rg := c.r.Header.Get("Range"); rg != "" && !head {
		if ir := c.r.Header.Get("If-Range"); ir == "" || ir == etag {
			s, e, ok, satisfiable := parseRange(rg, n)
			switch {
			case ok && !satisfiable:
				h.Set("Content-Range", fmt.Sprintf("bytes */%d", n))
				h.Del("Content-Length")
				return &apiError{status: http.StatusRequestedRangeNotSatisfiable, out: ErrorOutput{
					Error:     fmt.Sprintf("range %s is not satisfiable for a blob of %d bytes", rg, n),
					BlobRange: &BlobRangeOutput{Start: s, End: e, Length: n}}}
			case ok:
				start, end, status = s, e, http.StatusPartialContent
				h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", s, e-1, n))
			}
		}
	}
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(end-start, 10))
	c.writeHeader(status)
	if head {
		return nil
	}
	for off := start; off < end; off += blobChunk {
		if _, err := c.w.Write(b.Data[off:min(off+blobChunk, end)]); err != nil {
			return nil // the client went away; nothing more to say
		}
	}
	return nil
}

// etagListMatches compares an If-Match (strong) or If-None-Match (weak)
// list with etag; "*" matches any current representation.
func etagListMatches(list, etag string, strong bool) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" {
			return true
		}
		if weak, ok := strings.CutPrefix(t, "W/"); ok {
			if strong {
				continue
			}
			t = weak
		}
		if t == etag {
			return true
		}
	}
	return false
}

// parseRange reads one "bytes=" range of a representation of n bytes.
// ok is false for anything to ignore (other units, several ranges,
// malformed specs); otherwise [start, end) is the requested range and
// satisfiable says whether it overlaps the representation.
func parseRange(h string, n int64) (start, end int64, ok, satisfiable bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, false
	}
	num := func(s string) (int64, bool) {
		if s == "" || strings.TrimLeft(s, "0123456789") != "" {
			return 0, false
		}
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	if a == "" { // suffix: the last b bytes
		k, good := num(b)
		if !good {
			return 0, 0, false, false
		}
		if k == 0 || n == 0 {
			return max(n-k, 0), n, true, false
		}
		return max(n-k, 0), n, true, true
	}
	s, good := num(a)
	if !good {
		return 0, 0, false, false
	}
	e := n
	if b != "" {
		last, good := num(b)
		if !good || last < s {
			return 0, 0, false, false
		}
		e = min(last+1, n)
		if s >= n {
			return s, last + 1, true, false
		}
	}
	if s >= n {
		return s, max(e, s), true, false
	}
	return s, e, true, true
}
