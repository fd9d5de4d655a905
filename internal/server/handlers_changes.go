package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/omnigraph-go/omnigraph"
)

// The change routes (spec/surfaces.md §2.4): one commit's changes, the
// feed of a branch, and its baseline; plus schema apply, which a
// cluster-served graph refuses (its schema is the cluster's to change).

// ChangeFeedBlockOutput is one commit of a feed page.
type ChangeFeedBlockOutput struct {
	Cause   ChangeCauseOutput    `json:"cause" openapi:"required"`
	Changes []EntityChangeOutput `json:"changes" openapi:"required"`
}

// ChangeFeedOutput is one page of GET /changes: a cursor on the page that
// ends at a commit boundary, a page token otherwise.
type ChangeFeedOutput struct {
	Blocks        []ChangeFeedBlockOutput `json:"blocks" openapi:"required"`
	NextPageToken *string                 `json:"next_page_token,omitempty"`
	Cursor        *string                 `json:"cursor,omitempty"`
	CaughtUp      *bool                   `json:"caught_up,omitempty"`
}

// ChangeBaselineRequest is POST /changes/baseline.
type ChangeBaselineRequest struct {
	Branch *string  `json:"branch,omitempty"`
	Kind   []string `json:"kind,omitempty"`
	Type   []string `json:"type,omitempty"`
	Op     []string `json:"op,omitempty"`
}

// SchemaApplyRequest is POST /schema/apply.
type SchemaApplyRequest struct {
	SchemaSource  string `json:"schema_source" openapi:"required"`
	AllowDataLoss bool   `json:"allow_data_loss,omitempty"`
}

var changeQueryParams = []param{{name: "limit", desc: "Changes per page (1..8192, default 1000)."},
	{name: "kind", repeat: true, enum: []string{"node", "edge"}}, {name: "type", repeat: true}, {name: "op", repeat: true, enum: []string{"insert", "update", "delete"}}}

func changeRoutes(s *Server) []*route {
	return []*route{
		{method: "GET", path: graphPath("/changes"), opID: "cluster_pollChanges", tag: "commits", perGraph: true,
			summary: "The next page of a branch's change feed after a cursor (or from start=now|beginning|after:<commit>).",
			query: append([]param{{name: "branch", desc: "Branch (default main)."}, {name: "cursor", desc: "Resume after this cursor."},
				{name: "start", desc: "now, beginning or after:<commit>."}, {name: "page_token", desc: "Continue a block."},
				{name: "max_commits", desc: "Commits per poll (0 = no bound)."}}, changeQueryParams...),
			resp: ChangeFeedOutput{}, statuses: []int{400, 404, 409, 410, 413}, handle: s.handlePollChanges},
		{method: "POST", path: graphPath("/changes/baseline"), opID: "cluster_captureChangeBaseline", tag: "commits", perGraph: true,
			summary: "Stream a branch's current state as NDJSON; the final line is {\"baseline\":{snapshot_commit_id, resume_cursor}}.",
			body:    ChangeBaselineRequest{}, optionalBody: true, respType: "application/x-ndjson", statuses: []int{400, 404, 413}, handle: s.handleBaseline},
		{method: "POST", path: graphPath("/schema/apply"), opID: "cluster_applySchema", tag: "graph", perGraph: true, gated: true,
			summary: "Schema apply: always 409 on a cluster-served graph (evolve it with cluster apply).",
			body:    SchemaApplyRequest{}, statuses: []int{400, 409}, handle: s.handleSchemaApply},
	}
}

func changeLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, badRequest("limit must be a positive integer")
	}
	return n, nil // above the maximum: the engine's 413 resource limit
}

func scopeOf(q url.Values) omnigraph.ChangeScope {
	return omnigraph.ChangeScope{Kinds: q["kind"], Types: q["type"], Ops: q["op"]}
}

func causeOutput(c omnigraph.ChangeCause) ChangeCauseOutput {
	b := c.AuthoredBranch
	if b == "" {
		b = "main"
	}
	return ChangeCauseOutput{GraphCommitID: c.Commit, ParentCommitID: strPtr(c.Parent), MergedParentCommitID: strPtr(c.MergedParent),
		AuthoredBranch: b, ActorID: strPtr(c.Actor), AuthoredAt: c.AuthoredAt}
}

func changesOutput(chs []omnigraph.Change) []EntityChangeOutput {
	out := make([]EntityChangeOutput, 0, len(chs))
	for _, ch := range chs {
		out = append(out, changeOutput(ch))
	}
	return out
}

func (s *Server) handleCommitChanges(c *call) (*plan, error) {
	id := c.r.PathValue("commit_id")
	q := c.r.URL.Query()
	limit, err := changeLimit(q)
	if err != nil {
		return nil, err
	}
	ci, err := c.g.g.Commit(c.r.Context(), id)
	if err != nil {
		// Answer an unauthorized caller with 403, not with what exists.
		if aerr := c.authorize(check{action: ActionRead}); aerr != nil {
			return nil, aerr
		}
		return nil, err
	}
	return &plan{checks: []check{{action: ActionRead, branch: ci.Branch}}, run: func() error {
		page, err := c.g.g.CommitChangesPage(c.r.Context(), ci.ID, scopeOf(q), q.Get("page_token"), limit, 0)
		if err != nil {
			return asChangeFeedGap(err)
		}
		return c.json(http.StatusOK, CommitChangesOutput{Cause: causeOutput(page.Cause), Changes: changesOutput(page.Changes),
			NextPageToken: strPtr(page.NextPageToken)})
	}}, nil
}

func (s *Server) handlePollChanges(c *call) (*plan, error) {
	q := c.r.URL.Query()
	limit, err := changeLimit(q)
	if err != nil {
		return nil, err
	}
	maxCommits := 0
	if v := q.Get("max_commits"); v != "" {
		if maxCommits, err = strconv.Atoi(v); err != nil || maxCommits < 0 {
			return nil, badRequest("max_commits must be a non-negative integer")
		}
	}
	branch := branchOr(optional(q, "branch"))
	req := omnigraph.FeedRequest{Branch: branch, Cursor: q.Get("cursor"), Start: q.Get("start"), PageToken: q.Get("page_token"),
		Scope: scopeOf(q), MaxChanges: limit, MaxCommits: maxCommits}
	return &plan{checks: []check{{action: ActionRead, branch: branch}}, run: func() error {
		page, err := c.g.g.PollChanges(c.r.Context(), req)
		if err != nil {
			return asChangeFeedGap(err)
		}
		out := ChangeFeedOutput{Blocks: make([]ChangeFeedBlockOutput, 0, len(page.Blocks))}
		for _, b := range page.Blocks {
			out.Blocks = append(out.Blocks, ChangeFeedBlockOutput{Cause: causeOutput(b.Cause), Changes: changesOutput(b.Changes)})
		}
		if page.PageToken != "" {
			out.NextPageToken = strPtr(page.PageToken)
		} else {
			caught := page.CaughtUp
			out.Cursor, out.CaughtUp = strPtr(page.Cursor), &caught
		}
		return c.json(http.StatusOK, out)
	}}, nil
}

func (s *Server) handleBaseline(c *call) (*plan, error) {
	var req ChangeBaselineRequest
	if err := c.decodeJSON(&req, true); err != nil {
		return nil, err
	}
	branch := branchOr(req.Branch)
	scope := omnigraph.ChangeScope{Kinds: req.Kind, Types: req.Type, Ops: req.Op}
	return &plan{checks: []check{{action: ActionExport, branch: branch}}, run: func() error {
		sw := &streamWriter{c: c, contentType: "application/x-ndjson; charset=utf-8"}
		bw := bufio.NewWriterSize(sw, exportChunk)
		b, err := c.g.g.CaptureBaseline(c.r.Context(), branch, scope, bw)
		if err != nil {
			return err
		}
		line, _ := json.Marshal(map[string]any{"baseline": map[string]string{"snapshot_commit_id": b.SnapshotCommit, "resume_cursor": b.ResumeCursor}})
		if _, err := bw.Write(append(line, '\n')); err != nil {
			return err
		}
		return bw.Flush()
	}}, nil
}

func (s *Server) handleSchemaApply(c *call) (*plan, error) {
	var req SchemaApplyRequest
	if err := c.decodeJSON(&req, true, requiredField{"schema_source", &req.SchemaSource}); err != nil {
		return nil, err
	}
	return &plan{checks: []check{{action: ActionSchemaApply, target: "main"}}, run: func() error {
		return newAPIError(http.StatusConflict, codeConflict,
			"graph '%s' is cluster-managed: change its schema in the cluster config and run `omnigraph cluster apply`", c.g.id)
	}}, nil
}
