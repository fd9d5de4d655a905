package server

import (
	"fmt"
	"net/http"

	"github.com/omnigraph-go/omnigraph"
)

// DiffSideInput names one side of POST /diff: a branch head (default
// main) or a commit revision.
type DiffSideInput struct {
	Branch   *string `json:"branch,omitempty"`
	Snapshot *string `json:"snapshot,omitempty"`
}

// DiffRequest is POST /diff; unknown fields are refused.
type DiffRequest struct {
	From  DiffSideInput `json:"from" openapi:"required"`
	To    DiffSideInput `json:"to" openapi:"required"`
	Limit *int          `json:"limit,omitempty"`
}

// DiffOutput is the result of POST /diff: the first Limit changes that
// turn From into To, sorted by (kind, type, id), and how many there are.
type DiffOutput struct {
	From ReadTargetOutput `json:"from" openapi:"required"`
	To   ReadTargetOutput `json:"to" openapi:"required"`
	// FromCommitID and ToCommitID are the commits the sides resolved to.
	FromCommitID string               `json:"from_commit_id" openapi:"required"`
	ToCommitID   string               `json:"to_commit_id" openapi:"required"`
	Total        int                  `json:"total" openapi:"required"`
	Truncated    bool                 `json:"truncated" openapi:"required"`
	Changes      []EntityChangeOutput `json:"changes" openapi:"required"`
}

func diffRoutes(s *Server) []*route {
	return []*route{
		{method: "POST", path: graphPath("/diff"), opID: "cluster_diff", tag: "commits", perGraph: true,
			summary: "The entity-level changes that turn one branch or commit into another (limit 1..8192, default 1000).",
			body:    DiffRequest{}, resp: DiffOutput{}, statuses: []int{400, 404, 409, 413, 415}, handle: s.handleDiff},
	}
}

func (s *Server) handleDiff(c *call) (*plan, error) {
	var req DiffRequest
	if err := c.decodeJSON(&req, true); err != nil {
		return nil, err
	}
	limit := omnigraph.DefaultPageChanges
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit <= 0 {
		return nil, badRequest("limit must be a positive integer")
	}
	if limit > omnigraph.MaxPageChanges {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, out: ErrorOutput{
			Error:         fmt.Sprintf("diff limit exceeds the maximum of %d changes", omnigraph.MaxPageChanges),
			ResourceLimit: &ResourceLimitOutput{Resource: "diff_changes", Limit: omnigraph.MaxPageChanges, Actual: int64(limit)}}}
	}
	from, fromBranch, err := readTarget(req.From.Branch, req.From.Snapshot)
	if err != nil {
		return nil, err
	}
	to, toBranch, err := readTarget(req.To.Branch, req.To.Snapshot)
	if err != nil {
		return nil, err
	}
	checks := []check{{action: ActionRead, branch: fromBranch}}
	if toBranch != fromBranch {
		checks = append(checks, check{action: ActionRead, branch: toBranch})
	}
	return &plan{checks: checks, run: func() error {
		set, err := c.g.g.DiffBetween(c.r.Context(), from, to, omnigraph.ChangeScope{})
		if err != nil {
			return err
		}
		chs := set.Changes
		out := DiffOutput{From: targetOutput(from), To: targetOutput(to), FromCommitID: set.From.ID, ToCommitID: set.To.ID, Total: len(chs)}
		if len(chs) > limit {
			chs, out.Truncated = chs[:limit], true
		}
		out.Changes = changesOutput(chs)
		return c.json(http.StatusOK, out)
	}}, nil
}
