package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// GraphEntry is one graph of GET /graphs.
type GraphEntry struct {
	GraphID string `json:"graph_id"`
	URI     string `json:"uri"`
}

// Graphs lists the server's graphs (GET /graphs).
func (c *Client) Graphs(ctx context.Context) ([]GraphEntry, error) {
	var out struct {
		Graphs []GraphEntry `json:"graphs"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/graphs", server: true}, nil, &out)
	return out.Graphs, err
}

// Target selects a branch or a snapshot.
type Target struct {
	Branch   *string `json:"branch,omitempty"`
	Snapshot *string `json:"snapshot,omitempty"`
}

// ReadOutput is a read result.
type ReadOutput struct {
	QueryName     string                       `json:"query_name"`
	Target        Target                       `json:"target"`
	RowCount      int                          `json:"row_count"`
	Columns       []string                     `json:"columns,omitempty"`
	Rows          []map[string]json.RawMessage `json:"rows"`
	GraphCommitID string                       `json:"graph_commit_id,omitempty"`
}

// QueryRequest is POST /query.
type QueryRequest struct {
	Query    string         `json:"query"`
	Name     string         `json:"name,omitempty"`
	Params   map[string]any `json:"params,omitempty"`
	Branch   string         `json:"branch,omitempty"`
	Snapshot string         `json:"snapshot,omitempty"`
}

// Query runs an ad-hoc read query.
func (c *Client) Query(ctx context.Context, q QueryRequest) (*ReadOutput, error) {
	var out ReadOutput
	return &out, c.call(ctx, request{method: http.MethodPost, path: "/query"}, q, &out)
}

// ChangeRequest is POST /mutate.
type ChangeRequest struct {
	Query  string         `json:"query"`
	Name   string         `json:"name,omitempty"`
	Params map[string]any `json:"params,omitempty"`
	Branch string         `json:"branch,omitempty"`
}

// Mutate runs an ad-hoc mutation; ifCommit makes it conditional. The raw
// ChangeOutput is returned.
func (c *Client) Mutate(ctx context.Context, q ChangeRequest, ifCommit string) (json.RawMessage, error) {
	path := "/mutate"
	if ifCommit != "" {
		path = "/mutate/if-graph-commit"
	}
	return c.callRaw(ctx, request{method: http.MethodPost, path: path, ifCommit: ifCommit}, q)
}

// InvokeRequest is the body of POST /queries/{name}.
type InvokeRequest struct {
	Params         map[string]any `json:"params,omitempty"`
	Branch         string         `json:"branch,omitempty"`
	Snapshot       string         `json:"snapshot,omitempty"`
	ExpectMutation *bool          `json:"expect_mutation,omitempty"`
}

// InvokeQuery calls a stored query; the raw ReadOutput or ChangeOutput is
// returned.
func (c *Client) InvokeQuery(ctx context.Context, name string, in InvokeRequest, ifCommit string) (json.RawMessage, error) {
	path := "/queries/" + url.PathEscape(name)
	if ifCommit != "" {
		path += "/if-graph-commit"
	}
	return c.callRaw(ctx, request{method: http.MethodPost, path: path, ifCommit: ifCommit}, in)
}

// Queries lists the stored queries (raw `{queries:[…]}`).
func (c *Client) Queries(ctx context.Context) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodGet, path: "/queries"}, nil)
}

// Schema returns the accepted .pg source.
func (c *Client) Schema(ctx context.Context) (string, error) {
	var out struct {
		SchemaSource string `json:"schema_source"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/schema"}, nil, &out)
	return out.SchemaSource, err
}

// LoadNDJSON streams a graph-batch NDJSON body to /load/ndjson; the raw
// GraphBatchLoadOutput is returned.
func (c *Client) LoadNDJSON(ctx context.Context, body io.Reader, branch, from, mode string) (json.RawMessage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"branch": branch, "from": from, "mode": mode} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return c.callRaw(ctx, request{method: http.MethodPost, path: "/load/ndjson", query: q, body: body, ctype: "application/x-ndjson"}, nil)
}

// ExportRequest is POST /export.
type ExportRequest struct {
	Branch    string   `json:"branch,omitempty"`
	TypeNames []string `json:"type_names,omitempty"`
}

// Export copies the NDJSON export stream to w.
func (c *Client) Export(ctx context.Context, in ExportRequest, w io.Writer) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	resp, err := c.do(ctx, request{method: http.MethodPost, path: "/export", body: bytes.NewReader(b), ctype: "application/json"})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("export stream broke after it started (discard the partial output): %w", err)
	}
	return nil
}

// Branches lists branch names.
func (c *Client) Branches(ctx context.Context) ([]string, error) {
	var out struct {
		Branches []string `json:"branches"`
	}
	err := c.call(ctx, request{method: http.MethodGet, path: "/branches"}, nil, &out)
	return out.Branches, err
}

// CreateBranch creates name from from (raw output).
func (c *Client) CreateBranch(ctx context.Context, name, from string) (json.RawMessage, error) {
	in := map[string]string{"name": name}
	if from != "" {
		in["from"] = from
	}
	return c.callRaw(ctx, request{method: http.MethodPost, path: "/branches"}, in)
}

// DeleteBranch deletes a branch (raw output).
func (c *Client) DeleteBranch(ctx context.Context, name string) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodDelete, path: "/branches/" + url.PathEscape(name)}, nil)
}

// MergeRequest is POST /branches/merge.
type MergeRequest struct {
	Source       string `json:"source"`
	Target       string `json:"target,omitempty"`
	DeleteBranch bool   `json:"delete_branch,omitempty"`
}

// Merge merges source into target (raw output).
func (c *Client) Merge(ctx context.Context, in MergeRequest) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodPost, path: "/branches/merge"}, in)
}

// Commits lists the commits of a branch, newest first (raw `{commits}`).
func (c *Client) Commits(ctx context.Context, branch string) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodGet, path: "/commits", query: branchQuery(branch)}, nil)
}

// Commit returns one commit (raw CommitOutput).
func (c *Client) Commit(ctx context.Context, id string) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodGet, path: "/commits/" + url.PathEscape(id)}, nil)
}

// CommitChanges returns one page of a commit's changes (raw).
func (c *Client) CommitChanges(ctx context.Context, id string, q url.Values) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodGet, path: "/commits/" + url.PathEscape(id) + "/changes", query: q}, nil)
}

// Snapshot returns the snapshot of a branch (raw SnapshotOutput).
func (c *Client) Snapshot(ctx context.Context, branch string) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodGet, path: "/snapshot", query: branchQuery(branch)}, nil)
}
