package server

import (
	"net/http"
	"net/url"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/rowjson"
)

func urlQuery(raw string) (url.Values, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, badRequest("malformed query string: %v", err)
	}
	return v, nil
}

// readTarget turns optional branch/snapshot fields into a target and the
// branch its authorization names ("" for a pinned snapshot).
func readTarget(branch, snapshot *string) (omnigraph.Target, string, error) {
	b, sn := deref(branch), deref(snapshot)
	if b != "" && sn != "" {
		return omnigraph.Target{}, "", badRequest("branch and snapshot are mutually exclusive")
	}
	if sn != "" {
		return omnigraph.Target{Snapshot: sn}, "", nil
	}
	if b == "" {
		b = "main"
	}
	return omnigraph.Target{Branch: b}, b, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func branchOr(s *string) string {
	if s == nil || *s == "" {
		return "main"
	}
	return *s
}

func targetOutput(t omnigraph.Target) ReadTargetOutput {
	if t.Snapshot != "" {
		return ReadTargetOutput{Snapshot: strPtr(t.Snapshot)}
	}
	return ReadTargetOutput{Branch: strPtr(t.Branch)}
}

func (s *Server) handleHealth(c *call) (*plan, error) {
	return &plan{run: func() error {
		return c.json(http.StatusOK, HealthOutput{Status: "ok", Version: omnigraph.Version,
			InternalSchemaVersion: omnigraph.FormatVersion, SourceVersion: strPtr(s.sourceVer)})
	}}, nil
}

func (s *Server) handleOpenAPI(c *call) (*plan, error) {
	return &plan{run: func() error {
		c.w.Header().Set("Content-Type", "application/json")
		c.writeHeader(http.StatusOK)
		_, _ = c.w.Write(s.openapi)
		return nil
	}}, nil
}

func (s *Server) handleListGraphs(c *call) (*plan, error) {
	return &plan{checks: []check{{action: ActionGraphList}}, run: func() error {
		out := GraphListResponse{Graphs: []GraphInfo{}}
		for _, id := range s.ids {
			out.Graphs = append(out.Graphs, GraphInfo{GraphID: id, URI: s.graphs[id].uri})
		}
		return c.json(http.StatusOK, out)
	}}, nil
}

func (s *Server) handleSnapshot(c *call) (*plan, error) {
	q := c.r.URL.Query()
	t, branch, err := readTarget(optional(q, "branch"), optional(q, "snapshot"))
	if err != nil {
		return nil, err
	}
	return &plan{checks: []check{{action: ActionRead, branch: branch}}, run: func() error {
		tabs, head, err := c.g.g.Tables(c.r.Context(), t)
		if err != nil {
			return err
		}
		out := SnapshotOutput{GraphBranch: head.Branch, GraphCommitID: head.ID, GraphManifestVersion: head.ManifestVersion,
			InternalSchemaVersion: omnigraph.FormatVersion, Datasets: []SnapshotDatasetOutput{}}
		if out.GraphBranch == "" {
			out.GraphBranch = branch
		}
		for _, tb := range tabs {
			out.Datasets = append(out.Datasets, SnapshotDatasetOutput{EntityKind: tb.Kind, TypeName: tb.Name,
				DatasetPath: tb.Kind + ":" + tb.Name, PublishedDatasetVersion: head.ManifestVersion, EntityCount: tb.Rows})
		}
		return c.json(http.StatusOK, out)
	}}, nil
}

func optional(q url.Values, k string) *string {
	if !q.Has(k) {
		return nil
	}
	v := q.Get(k)
	return &v
}

// readQuery runs a read query and streams its response: compile-check
// first, so a mutation or an ambiguous source is a typed 400 before
// anything is read.
func (c *call) readQuery(t omnigraph.Target, src, name string, params map[string]any, legacy bool) error {
	info, err := c.g.g.DescribeQuery(c.r.Context(), t, src, name)
	if err != nil {
		return err
	}
	if info.Mutation {
		return badRequest("query '%s' is a mutation: use POST /graphs/%s/mutate", info.Name, c.g.id)
	}
	return c.streamRead(t, src, info.Name, params, legacy)
}

// streamRead runs a read query and writes its ReadOutput (LegacyReadOutput
// with legacy) a batch of rows at a time, byte for byte what c.json would
// print for the whole value, but chunked, with no Content-Length: the
// result is never held whole, so it may be larger than the query memory
// limit or the server's memory.
//
// Every error of compiling and evaluating the query comes before the first
// byte and is an ordinary error response. The status line goes out with the
// first 64 KiB of the body; an error after that (a deadline passed while
// the rows are written, a client gone) cannot change the status any more,
// so the connection is cut (call.fail): the client sees a body that ends
// early, without the final chunk — an unexpected EOF, never a well-formed
// partial document.
func (c *call) streamRead(t omnigraph.Target, src, name string, params map[string]any, legacy bool) error {
	return c.g.g.QueryStream(c.r.Context(), t, src, name, params, func(st *omnigraph.ReadStream) error {
		head := struct {
			QueryName string           `json:"query_name"`
			Target    ReadTargetOutput `json:"target"`
			RowCount  int              `json:"row_count"`
			Columns   []string         `json:"columns,omitempty"`
		}{st.QueryName, targetOutput(t), st.RowCount, st.Columns}
		var tail any = struct{}{}
		if !legacy {
			tail = struct {
				GraphCommitID *string `json:"graph_commit_id,omitempty"`
			}{strPtr(st.Commit.ID)}
		}
		doc, err := rowjson.Begin(&okWriter{c: c}, false, head, tail, st.Columns)
		if err != nil {
			return err
		}
		if err := st.Rows(doc.Row); err != nil {
			return err
		}
		return doc.End()
	})
}

// okWriter writes a 200 JSON response's body, sending the status line with
// its first bytes.
type okWriter struct{ c *call }

func (w *okWriter) Write(p []byte) (int, error) {
	if w.c.status == 0 {
		w.c.w.Header().Set("Content-Type", "application/json")
		w.c.writeHeader(http.StatusOK)
	}
	return w.c.w.Write(p)
}

func (s *Server) handleQuery(c *call) (*plan, error) {
	var req QueryRequest
	if err := c.decodeJSON(&req, false); err != nil {
		return nil, err
	}
	return c.readPlan(req, "query", false)
}

func (s *Server) handleLegacyRead(c *call) (*plan, error) {
	var req ReadRequest
	if err := c.decodeJSON(&req, false); err != nil {
		return nil, err
	}
	return c.readPlan(QueryRequest{Query: req.QuerySource, Name: req.QueryName, Params: req.Params, Branch: req.Branch, Snapshot: req.Snapshot},
		"query_source", true)
}

// readPlan is the plan of an ad-hoc read, POST /query or the legacy
// POST /read (whose body names the source field, and whose result keeps
// the legacy shape).
func (c *call) readPlan(req QueryRequest, sourceField string, legacy bool) (*plan, error) {
	if req.Query == "" {
		return nil, badRequest("field '%s' is required", sourceField)
	}
	t, branch, err := readTarget(req.Branch, req.Snapshot)
	if err != nil {
		return nil, err
	}
	return &plan{checks: []check{{action: ActionRead, branch: branch}}, run: func() error {
		return c.readQuery(t, req.Query, deref(req.Name), req.Params, legacy)
	}}, nil
}

func (s *Server) handleSchema(c *call) (*plan, error) {
	return &plan{checks: []check{{action: ActionRead, branch: "main"}}, run: func() error {
		src, err := c.g.g.SchemaSource(c.r.Context(), omnigraph.Target{Branch: "main"})
		if err != nil {
			return err
		}
		return c.json(http.StatusOK, SchemaOutput{SchemaSource: src})
	}}, nil
}
