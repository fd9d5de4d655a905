package server

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/omnigraph-go/omnigraph"
)

func (s *Server) handleListBranches(c *call) (*plan, error) {
	return &plan{checks: []check{{action: ActionRead}}, run: func() error {
		names, err := c.g.g.Branches(c.r.Context())
		if err != nil {
			return err
		}
		names = slices.Clone(names)
		slices.Sort(names)
		return c.json(http.StatusOK, BranchListOutput{Branches: names})
	}}, nil
}

func (s *Server) handleCreateBranch(c *call) (*plan, error) {
	var req BranchCreateRequest
	if err := c.decodeJSON(&req, false); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, badRequest("field 'name' is required")
	}
	from := branchOr(req.From)
	return &plan{checks: []check{{action: ActionBranchCreate, branch: from, target: req.Name}}, writes: req.Name, run: func() error {
		if err := c.g.g.CreateBranch(c.r.Context(), req.Name, from, c.actor); err != nil {
			return err
		}
		return c.json(http.StatusOK, BranchCreateOutput{URI: c.g.uri, From: from, Name: req.Name, ActorID: strPtr(c.actor)})
	}}, nil
}

func (s *Server) handleDeleteBranch(c *call) (*plan, error) {
	name := c.r.PathValue("branch")
	return &plan{checks: []check{{action: ActionBranchDelete, target: name}}, writes: name, run: func() error {
		if err := c.g.g.DeleteBranch(c.r.Context(), name, c.actor); err != nil {
			return err
		}
		return c.json(http.StatusOK, BranchDeleteOutput{URI: c.g.uri, Name: name, ActorID: strPtr(c.actor)})
	}}, nil
}

func (s *Server) handleMerge(c *call) (*plan, error) {
	var req BranchMergeRequest
	if err := c.decodeJSON(&req, false); err != nil {
		return nil, err
	}
	if req.Source == "" {
		return nil, badRequest("field 'source' is required")
	}
	target := branchOr(req.Target)
	return &plan{checks: []check{{action: ActionBranchMerge, branch: req.Source, target: target}}, writes: target, run: func() error {
		ctx := c.r.Context()
		res, err := c.g.g.Merge(ctx, req.Source, target, c.actor)
		if err != nil {
			return err
		}
		out := BranchMergeOutput{Source: req.Source, Target: target, Outcome: string(res.Outcome), ActorID: strPtr(c.actor), Commit: commitOutputPtr(res.Commit)}
		if req.DeleteBranch {
			// The deletion is checked and run on its own: a refusal or a
			// failure is reported, never undoes the landed merge.
			derr := c.authorize(check{action: ActionBranchDelete, target: req.Source})
			if derr == nil {
				derr = c.g.g.DeleteBranch(ctx, req.Source, c.actor)
			}
			deleted := derr == nil
			out.BranchDeleted = &deleted
			if derr != nil {
				out.BranchDeleteError = strPtr(derr.Error())
			}
		}
		return c.json(http.StatusOK, out)
	}}, nil
}

func (s *Server) handleListCommits(c *call) (*plan, error) {
	branch := branchOr(optional(c.r.URL.Query(), "branch"))
	return &plan{checks: []check{{action: ActionRead, branch: branch}}, run: func() error {
		log, err := c.g.g.Log(c.r.Context(), branch, 0)
		if err != nil {
			return err
		}
		out := CommitListOutput{Commits: make([]CommitOutput, len(log))}
		for i, ci := range log {
			out.Commits[i] = commitOutput(ci)
		}
		return c.json(http.StatusOK, out)
	}}, nil
}

func (s *Server) handleGetCommit(c *call) (*plan, error) {
	id := c.r.PathValue("commit_id")
	return &plan{checks: []check{{action: ActionRead}}, run: func() error {
		ci, err := c.g.g.Commit(c.r.Context(), id)
		if err != nil {
			return err
		}
		return c.json(http.StatusOK, commitOutput(ci))
	}}, nil
}

// Paging of commit changes.
const (
	defaultChangesLimit = 1000
	maxChangesLimit     = 10000
)

func (s *Server) handleCommitChanges(c *call) (*plan, error) {
	id := c.r.PathValue("commit_id")
	q := c.r.URL.Query()
	limit := defaultChangesLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > maxChangesLimit {
			return nil, badRequest("limit must be an integer from 1 to %d", maxChangesLimit)
		}
		limit = n
	}
	kinds, types, ops := q["kind"], q["type"], q["op"]
	for _, k := range kinds {
		if k != "node" && k != "edge" {
			return nil, badRequest("invalid kind '%s': use node or edge", k)
		}
	}
	for _, op := range ops {
		if op != "insert" && op != "update" && op != "delete" {
			return nil, badRequest("invalid op '%s': use insert, update or delete", op)
		}
	}
	scope := changeScope(kinds, types, ops)
	ci, err := c.g.g.Commit(c.r.Context(), id)
	if err != nil {
		// Answer an unauthorized caller with 403, not with what exists.
		if aerr := c.authorize(check{action: ActionRead}); aerr != nil {
			return nil, aerr
		}
		return nil, err
	}
	start := 0
	if tok := q.Get("page_token"); tok != "" {
		if start, err = decodePageToken(tok, ci.ID, scope); err != nil {
			return nil, err
		}
	}
	return &plan{checks: []check{{action: ActionRead, branch: ci.Branch}}, run: func() error {
		all, err := c.g.g.CommitChanges(c.r.Context(), ci.ID)
		if err != nil {
			return asChangeFeedGap(err)
		}
		var sel []omnigraph.Change
		for _, ch := range all {
			if (len(kinds) == 0 || slices.Contains(kinds, ch.Kind)) &&
				(len(types) == 0 || slices.Contains(types, ch.Type)) &&
				(len(ops) == 0 || slices.Contains(ops, ch.Op)) {
				sel = append(sel, ch)
			}
		}
		start := min(start, len(sel))
		end := min(start+limit, len(sel))
		out := CommitChangesOutput{
			Cause: ChangeCauseOutput{GraphCommitID: ci.ID, ParentCommitID: strPtr(ci.Parent), MergedParentCommitID: strPtr(ci.MergedParent),
				AuthoredBranch: branchOr(&ci.Branch), ActorID: strPtr(ci.Actor), AuthoredAt: micros(ci.CreatedAt)},
			Changes: make([]EntityChangeOutput, 0, end-start),
		}
		for _, ch := range sel[start:end] {
			out.Changes = append(out.Changes, changeOutput(ch))
		}
		if end < len(sel) {
			out.NextPageToken = strPtr(encodePageToken(ci.ID, scope, end))
		}
		return c.json(http.StatusOK, out)
	}}, nil
}

func changeOutput(ch omnigraph.Change) EntityChangeOutput {
	o := EntityChangeOutput{Kind: ch.Kind, Type: ChangeTypeOutput{ID: ch.Kind + ":" + ch.Type, Name: ch.Type}, ID: ch.ID, Op: ch.Op}
	image := func(props map[string]any) *ChangeImageOutput {
		if props == nil {
			return nil
		}
		img := &ChangeImageOutput{Properties: props}
		if ch.Kind == "edge" {
			img.Endpoints = &ChangeEndpointsOutput{From: ch.Src, To: ch.Dst}
		}
		return img
	}
	o.Before, o.After = image(ch.Before), image(ch.After)
	return o
}

// changeScope is a canonical spelling of a change filter, bound into page
// tokens so a token cannot be replayed under another filter.
func changeScope(kinds, types, ops []string) string {
	norm := func(v []string) string {
		v = slices.Clone(v)
		slices.Sort(v)
		return strings.Join(slices.Compact(v), ",")
	}
	return norm(kinds) + ";" + norm(types) + ";" + norm(ops)
}

func encodePageToken(commitID, scope string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(commitID + "\x00" + scope + "\x00" + strconv.Itoa(offset)))
}

func decodePageToken(tok, commitID, scope string) (int, error) {
	bad := badRequest("change cursor rejected: malformed page token")
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, bad
	}
	parts := strings.Split(string(b), "\x00")
	if len(parts) != 3 {
		return 0, bad
	}
	if parts[0] != commitID {
		return 0, badRequest("change cursor rejected: the page token belongs to commit %s", parts[0])
	}
	if parts[1] != scope {
		return 0, badRequest("change cursor rejected: the page token belongs to another filter")
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 0 {
		return 0, bad
	}
	return n, nil
}
