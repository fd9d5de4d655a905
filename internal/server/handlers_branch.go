package server

import (
	"net/http"
	"slices"

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
	if err := c.decodeJSON(&req, false, requiredField{"name", &req.Name}); err != nil {
		return nil, err
	}
	from := branchOr(req.From)
	return &plan{checks: []check{{action: ActionBranchCreate, branch: from, target: req.Name}}, run: func() error {
		if err := c.g.g.CreateBranch(c.r.Context(), req.Name, from, c.actor); err != nil {
			return err
		}
		return c.json(http.StatusOK, BranchCreateOutput{URI: c.g.uri, From: from, Name: req.Name, ActorID: strPtr(c.actor)})
	}}, nil
}

func (s *Server) handleDeleteBranch(c *call) (*plan, error) {
	name := c.r.PathValue("branch")
	return &plan{checks: []check{{action: ActionBranchDelete, target: name}}, run: func() error {
		if err := c.g.g.DeleteBranch(c.r.Context(), name, c.actor); err != nil {
			return err
		}
		return c.json(http.StatusOK, BranchDeleteOutput{URI: c.g.uri, Name: name, ActorID: strPtr(c.actor)})
	}}, nil
}

func (s *Server) handleMerge(c *call) (*plan, error) {
	var req BranchMergeRequest
	if err := c.decodeJSON(&req, false, requiredField{"source", &req.Source}); err != nil {
		return nil, err
	}
	target := branchOr(req.Target)
	return &plan{checks: []check{{action: ActionBranchMerge, branch: req.Source, target: target}}, run: func() error {
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

func changeOutput(ch omnigraph.Change) EntityChangeOutput {
	o := EntityChangeOutput{Kind: ch.Kind, Type: ChangeTypeOutput{ID: ch.TypeKey(), Name: ch.Type}, ID: ch.ID, Op: ch.Op}
	o.Before, o.After = ChangeImages(ch)
	return o
}

// ChangeImages renders a change's before and after images as their wire
// shape (nil where the entity did not exist; an edge's carry its
// endpoints): the server's change pages and the CLI's --json changes.
func ChangeImages(ch omnigraph.Change) (before, after *ChangeImageOutput) {
	image := func(props map[string]any, src, dst string) *ChangeImageOutput {
		if props == nil {
			return nil
		}
		img := &ChangeImageOutput{Properties: props}
		if ch.Kind == "edge" {
			img.Endpoints = &ChangeEndpointsOutput{From: src, To: dst}
		}
		return img
	}
	bsrc, bdst := ch.BeforeEndpoints()
	return image(ch.Before, bsrc, bdst), image(ch.After, ch.Src, ch.Dst)
}
