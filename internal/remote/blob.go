package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// BlobRequest selects one Blob cell (GET/HEAD /blob) and, for a GET, an
// optional byte range (Length 0: to the end).
type BlobRequest struct {
	Entity, Type, ID, Property string
	Branch, Snapshot           string
	Offset, Length             int64
}

// BlobResponse is a /blob answer. An external blob has Location set and no
// body; the client never follows it.
type BlobResponse struct {
	Body     io.ReadCloser // nil for HEAD and external blobs
	ETag     string
	Size     int64 // the whole blob's size (managed blobs)
	Location string
	Snapshot string // the commit the blob was read at
}

// Blob reads (head: only describes) one Blob cell.
func (c *Client) Blob(ctx context.Context, in BlobRequest, head bool) (*BlobResponse, error) {
	q := url.Values{"entity": {in.Entity}, "type": {in.Type}, "id": {in.ID}, "property": {in.Property}}
	if in.Branch != "" {
		q.Set("branch", in.Branch)
	}
	if in.Snapshot != "" {
		q.Set("snapshot", in.Snapshot)
	}
	r := request{method: http.MethodGet, path: "/blob", query: q, noRedirect: true, header: http.Header{}}
	if head {
		r.method = http.MethodHead
	}
	if !head && (in.Offset > 0 || in.Length > 0) {
		rg := fmt.Sprintf("bytes=%d-", in.Offset)
		if in.Length > 0 {
			rg += strconv.FormatInt(in.Offset+in.Length-1, 10)
		}
		r.header.Set("Range", rg)
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	out := &BlobResponse{ETag: resp.Header.Get("ETag"), Snapshot: resp.Header.Get("Omnigraph-Snapshot-Id")}
	if resp.StatusCode/100 == 3 {
		resp.Body.Close()
		out.Location = resp.Header.Get("Location")
		return out, nil
	}
	out.Size = resp.ContentLength
	if cr := resp.Header.Get("Content-Range"); cr != "" {
		// bytes S-E/N: the size is N.
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			if n, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
				out.Size = n
			}
		}
	}
	if head {
		resp.Body.Close()
		return out, nil
	}
	out.Body = resp.Body
	return out, nil
}
