package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/url"

	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// Backend is what the MCP server needs of one graph: the operations of
// omnigraph-server's HTTP API (spec/surfaces.md §2.4). Results are the
// routes' JSON bodies; a refusal is a *remote.Error carrying the route's
// status and ErrorOutput. *remote.Client implements it.
type Backend interface {
	Schema(ctx context.Context) (string, error)
	Query(ctx context.Context, q remote.QueryRequest) (*remote.ReadOutput, error)
	Mutate(ctx context.Context, q remote.ChangeRequest, ifCommit string) (json.RawMessage, error)
	LoadNDJSON(ctx context.Context, body io.Reader, branch, from, mode string) (json.RawMessage, error)
	Branches(ctx context.Context) ([]string, error)
	CreateBranch(ctx context.Context, name, from string) (json.RawMessage, error)
	DeleteBranch(ctx context.Context, name string) (json.RawMessage, error)
	Merge(ctx context.Context, in remote.MergeRequest) (json.RawMessage, error)
	Commits(ctx context.Context, branch string) (json.RawMessage, error)
	CommitChanges(ctx context.Context, id string, q url.Values) (json.RawMessage, error)
	Diff(ctx context.Context, in remote.DiffRequest) (json.RawMessage, error)
	PollChanges(ctx context.Context, q url.Values) (json.RawMessage, error)
	Queries(ctx context.Context) (json.RawMessage, error)
	InvokeQuery(ctx context.Context, name string, in remote.InvokeRequest, ifCommit string) (json.RawMessage, error)
}

var _ Backend = (*remote.Client)(nil)
