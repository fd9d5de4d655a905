package server

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/omnigraph-go/omnigraph"
)

// The review route: what merging one branch into another would do,
// read-only, for clients that review before they merge (the web console;
// what lies between two branches or commits is POST /diff).

// MergePreviewOutput is GET /branches/merge/preview: what POST
// /branches/merge would do now. Conflicts non-empty means the merge would
// be refused with 409 and exactly those merge_conflicts.
type MergePreviewOutput struct {
	Source       string                `json:"source" openapi:"required"`
	Target       string                `json:"target" openapi:"required"`
	Outcome      string                `json:"outcome" openapi:"required,enum=already_up_to_date|fast_forward|merged"`
	SourceHead   string                `json:"source_commit_id" openapi:"required"`
	TargetHead   string                `json:"target_commit_id" openapi:"required"`
	BaseCommitID *string               `json:"merge_base_commit_id,omitempty"`
	Conflicts    []MergeConflictOutput `json:"conflicts" openapi:"required"`
	// Changes are the source's changes since the merge base.
	TotalChanges int                  `json:"total_changes" openapi:"required"`
	Changes      []EntityChangeOutput `json:"changes" openapi:"required"`
	Truncated    bool                 `json:"truncated,omitempty"`
}

var reviewLimitParam = param{name: "limit", desc: "Changes to return (1..8192, default 1000); total_changes counts them all."}

func reviewRoutes(s *Server) []*route {
	return []*route{
		{method: "GET", path: graphPath("/branches/merge/preview"), opID: "cluster_previewMerge", tag: "branches", perGraph: true,
			summary: "What merging source into target would do now (outcome, conflicts, the source's changes), writing nothing.",
			query: []param{{name: "source", required: true, desc: "Branch to merge."},
				{name: "target", desc: "Branch to merge into (default main)."}, reviewLimitParam},
			resp: MergePreviewOutput{}, statuses: []int{400, 404, 409}, handle: s.handleMergePreview},
	}
}

// reviewLimit is the limit parameter of a review: how many changes one
// response carries, within the commit-changes page bounds.
func reviewLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return omnigraph.DefaultPageChanges, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > omnigraph.MaxPageChanges {
		return 0, badRequest("limit must be an integer from 1 to %d", omnigraph.MaxPageChanges)
	}
	return n, nil
}

// reviewChanges renders at most limit changes.
func reviewChanges(chs []omnigraph.Change, limit int) ([]EntityChangeOutput, bool) {
	if len(chs) > limit {
		return changesOutput(chs[:limit]), true
	}
	return changesOutput(chs), false
}

func (s *Server) handleMergePreview(c *call) (*plan, error) {
	q := c.r.URL.Query()
	limit, err := reviewLimit(q)
	if err != nil {
		return nil, err
	}
	source, target := q.Get("source"), branchOr(optional(q, "target"))
	return &plan{checks: []check{{action: ActionRead, branch: source}, {action: ActionRead, branch: target}}, run: func() error {
		p, err := c.g.g.PreviewMerge(c.r.Context(), source, target)
		if err != nil {
			return err
		}
		out := MergePreviewOutput{Source: p.Source, Target: p.Target, Outcome: string(p.Outcome), SourceHead: p.SourceHead,
			TargetHead: p.TargetHead, BaseCommitID: strPtr(p.Base), Conflicts: mergeConflictsOutput(p.Conflicts), TotalChanges: len(p.Changes)}
		out.Changes, out.Truncated = reviewChanges(p.Changes, limit)
		return c.json(http.StatusOK, out)
	}}, nil
}
