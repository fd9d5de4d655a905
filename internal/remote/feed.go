package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// PollChanges returns the next page of a branch's change feed
// (GET /changes; raw ChangeFeedOutput). q holds the route's query
// parameters (branch, cursor, start, page_token, limit, kind, type, op,
// max_commits).
func (c *Client) PollChanges(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodGet, path: "/changes", query: q}, nil)
}

// DiffSide names one side of a diff: a branch head or a commit revision.
type DiffSide struct {
	Branch   string `json:"branch,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
}

// DiffRequest is POST /diff.
type DiffRequest struct {
	From  DiffSide `json:"from"`
	To    DiffSide `json:"to"`
	Limit int      `json:"limit,omitempty"`
}

// Diff lists the entities that differ between two targets (raw DiffOutput).
func (c *Client) Diff(ctx context.Context, in DiffRequest) (json.RawMessage, error) {
	return c.callRaw(ctx, request{method: http.MethodPost, path: "/diff"}, in)
}
