package server

import "net/http"

func catalogEntry(q *storedQuery) QueryCatalogEntry {
	e := QueryCatalogEntry{Name: q.name, ToolName: q.name, Mutation: q.info.Mutation, Params: []ParamDescriptor{},
		Description: strPtr(q.info.Description), Instruction: strPtr(q.info.Instruction)}
	if q.cfg.ToolName != "" {
		e.ToolName = q.cfg.ToolName
	}
	if q.cfg.Description != "" {
		e.Description = strPtr(q.cfg.Description)
	}
	if q.cfg.Instruction != "" {
		e.Instruction = strPtr(q.cfg.Instruction)
	}
	for _, p := range q.info.Params {
		d := ParamDescriptor{Name: p.Name, Kind: p.Kind, ItemKind: strPtr(p.ItemKind), Nullable: p.Nullable}
		if p.Kind == "vector" {
			dim := p.VectorDim
			d.VectorDim = &dim
		}
		e.Params = append(e.Params, d)
	}
	return e
}

func (s *Server) handleListQueries(c *call) (*plan, error) {
	return &plan{checks: []check{{action: ActionRead, branch: "main"}}, run: func() error {
		out := QueriesCatalogOutput{Queries: []QueryCatalogEntry{}}
		for _, n := range c.g.names {
			out.Queries = append(out.Queries, catalogEntry(c.g.queries[n]))
		}
		return c.json(http.StatusOK, out)
	}}, nil
}

// handleInvoke runs a stored query by name. The caller must hold
// invoke_query on the graph; a denial is the very 404 an unknown name
// gets, so the catalog cannot be probed. The inner read or change is then
// authorized like the inline route would be.
func (s *Server) handleInvoke(conditional bool) func(c *call) (*plan, error) {
	return func(c *call) (*plan, error) {
		name := c.r.PathValue("name")
		unknown := notFound("stored query '%s' not found", name)
		var req InvokeStoredQueryRequest
		if err := c.decodeJSON(&req, false); err != nil {
			return nil, err
		}
		// Authorize invoke_query before revealing anything about the name.
		if err := c.authorize(check{action: ActionInvokeQuery, hidden: unknown}); err != nil {
			return nil, err
		}
		q, ok := c.g.queries[name]
		if !ok {
			return nil, unknown
		}
		if req.ExpectMutation != nil && *req.ExpectMutation != q.info.Mutation {
			kind := "a read query"
			if q.info.Mutation {
				kind = "a mutation"
			}
			return nil, badRequest("stored query '%s' is %s", name, kind)
		}
		if !q.info.Mutation {
			if conditional {
				return nil, badRequest("stored query '%s' is a read query: %s applies only to mutations", name, ifGraphCommitHeader)
			}
			t, branch, err := readTarget(req.Branch, req.Snapshot)
			if err != nil {
				return nil, err
			}
			return &plan{checks: []check{{action: ActionRead, branch: branch}}, run: func() error {
				return c.streamRead(t, q.source, q.query, req.Params, false)
			}}, nil
		}
		if req.Snapshot != nil {
			return nil, badRequest("stored query '%s' is a mutation: snapshot does not apply", name)
		}
		branch := branchOr(req.Branch)
		// Stored mutations are admission-gated like POST /mutate.
		return &plan{checks: []check{{action: ActionChange, branch: branch}}, admit: true, run: func() error {
			return c.mutate(branch, q.source, q.query, req.Params, c.ifCommit)
		}}, nil
	}
}
