package server

import (
	"bufio"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph"
)

// ifGraphCommitHeader carries the expected branch head of a conditional
// mutation: one raw commit id, never entity-tag syntax.
const ifGraphCommitHeader = "Omnigraph-If-Graph-Commit"

// expectedHead parses Omnigraph-If-Graph-Commit ("" when absent).
func expectedHead(h http.Header) (string, error) {
	vs := h.Values(ifGraphCommitHeader)
	if len(vs) == 0 {
		return "", nil
	}
	if len(vs) > 1 {
		return "", badRequest("%s must be sent exactly once", ifGraphCommitHeader)
	}
	v := strings.TrimSpace(vs[0])
	if v == "" {
		return "", badRequest("%s must name a graph commit id", ifGraphCommitHeader)
	}
	if v == "*" || strings.HasPrefix(v, "W/") || strings.HasPrefix(v, `"`) || strings.HasSuffix(v, `"`) || strings.Contains(v, ",") {
		return "", badRequest("%s must contain one raw graph commit id, not entity-tag syntax", ifGraphCommitHeader)
	}
	return v, nil
}

// conditionalHead enforces the header rules of a route: conditional
// routes require it, every other route refuses it.
func (c *call) conditionalHead(conditional bool) (string, error) {
	v, err := expectedHead(c.r.Header)
	if err != nil {
		return "", err
	}
	switch {
	case conditional && v == "":
		return "", badRequest("%s is required on this conditional route", ifGraphCommitHeader)
	case !conditional && v != "":
		return "", badRequest("%s requires the conditional route %s/if-graph-commit", ifGraphCommitHeader, strings.TrimSuffix(c.r.URL.Path, "/"))
	}
	return v, nil
}

func (s *Server) handleMutate() func(c *call) (*plan, error) {
	return func(c *call) (*plan, error) {
		var req ChangeRequest
		if err := c.decodeJSON(&req, false); err != nil {
			return nil, err
		}
		if req.Query == "" {
			req.Query = deref(req.QuerySource)
		}
		if req.Name == nil {
			req.Name = req.QueryName
		}
		if req.Query == "" {
			return nil, badRequest("field 'query' is required")
		}
		branch := branchOr(req.Branch)
		return &plan{checks: []check{{action: ActionChange, branch: branch}}, run: func() error {
			return c.mutate(branch, req.Query, deref(req.Name), req.Params, c.ifCommit)
		}}, nil
	}
}

// mutate compile-checks and runs a mutation and writes its ChangeOutput.
func (c *call) mutate(branch, src, name string, params map[string]any, ifCommit string) error {
	ctx := c.r.Context()
	info, err := c.g.g.DescribeQuery(ctx, omnigraph.Target{Branch: branch}, src, name)
	if err != nil {
		return err
	}
	if !info.Mutation {
		return badRequest("query '%s' is a read query: use POST /graphs/%s/query", info.Name, c.g.id)
	}
	res, qname, err := c.g.g.Mutate(ctx, branch, src, info.Name, params, omnigraph.MutateOptions{Actor: c.actor, IfCommit: ifCommit})
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, ChangeOutput{QueryName: qname, Branch: branch, AffectedNodes: res.AffectedNodes,
		AffectedEdges: res.AffectedEdges, ActorID: strPtr(c.actor), Commit: commitOutputPtr(res.Commit), Warnings: res.Warnings})
}

func parseMode(m string) (omnigraph.LoadMode, error) {
	switch omnigraph.LoadMode(m) {
	case "":
		return omnigraph.Merge, nil
	case omnigraph.Append, omnigraph.Merge, omnigraph.Overwrite:
		return omnigraph.LoadMode(m), nil
	}
	return "", badRequest("invalid load mode '%s': use append, merge or overwrite", m)
}

// loadChecks are the authorization checks of a load: change on the
// branch, and branch_create when from is set and the branch does not exist
// yet (the load will create it).
func (c *call) loadChecks(branch, from string) ([]check, error) {
	checks := []check{{action: ActionChange, branch: branch}}
	if from == "" {
		return checks, nil
	}
	names, err := c.g.g.Branches(c.r.Context())
	if err != nil {
		return nil, err
	}
	if !slices.Contains(names, branch) {
		checks = append(checks, check{action: ActionBranchCreate, branch: from, target: branch})
	}
	return checks, nil
}

// LoadCounts renders a load's per-type entity counts as their wire shape,
// sorted by type name: the server's load results and the CLI's --json load.
func LoadCounts(m map[string]int64) []GraphBatchDeclarationOutput {
	out := make([]GraphBatchDeclarationOutput, 0, len(m))
	for k, v := range m {
		out = append(out, GraphBatchDeclarationOutput{Name: k, EntitiesLoaded: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (c *call) load(r io.Reader, branch, from string, mode omnigraph.LoadMode) (*omnigraph.LoadResult, error) {
	return c.g.g.Load(c.r.Context(), r, omnigraph.LoadOptions{Branch: branch, From: from, Mode: mode, Actor: c.actor})
}

// handleIngest serves POST /load and, with legacy defaults (from main),
// the deprecated POST /ingest.
func (s *Server) handleIngest(legacy bool) func(c *call) (*plan, error) {
	return func(c *call) (*plan, error) {
		var req IngestRequest
		if err := c.decodeJSON(&req, false); err != nil {
			return nil, err
		}
		mode, err := parseMode(deref(req.Mode))
		if err != nil {
			return nil, err
		}
		branch, from := branchOr(req.Branch), deref(req.From)
		if legacy && req.From == nil {
			from = "main"
		}
		checks, err := c.loadChecks(branch, from)
		if err != nil {
			return nil, err
		}
		return &plan{checks: checks, run: func() error {
			res, err := c.load(strings.NewReader(req.Data), branch, from, mode)
			if err != nil {
				return err
			}
			return c.json(http.StatusOK, IngestOutput{URI: c.g.uri, GraphBatchLoadOutput: c.loadOutput(res, from)})
		}}, nil
	}
}

// handleLoadNDJSON serves POST /load/ndjson: the body is streamed into
// the loader through the body limit, never buffered whole.
func (s *Server) handleLoadNDJSON(c *call) (*plan, error) {
	if mt, _, err := mime.ParseMediaType(c.r.Header.Get("Content-Type")); err != nil || mt != "application/x-ndjson" {
		return nil, newAPIError(http.StatusUnsupportedMediaType, codeBadRequest, "graph-batch load requires Content-Type: application/x-ndjson")
	}
	q := c.r.URL.Query()
	mode, err := parseMode(q.Get("mode"))
	if err != nil {
		return nil, err
	}
	branch, from := branchOr(optional(q, "branch")), q.Get("from")
	checks, err := c.loadChecks(branch, from)
	if err != nil {
		return nil, err
	}
	return &plan{checks: checks, run: func() error {
		body := http.MaxBytesReader(c.w, c.r.Body, c.bodyLimit())
		res, err := c.load(bufio.NewReaderSize(body, 64<<10), branch, from, mode)
		if err != nil {
			return err
		}
		return c.json(http.StatusOK, c.loadOutput(res, from))
	}}, nil
}

// loadOutput is the body of a finished load (from: the branch it was
// created from, if asked).
func (c *call) loadOutput(res *omnigraph.LoadResult, from string) GraphBatchLoadOutput {
	return GraphBatchLoadOutput{Branch: res.Branch, BaseBranch: strPtr(from),
		BranchCreated: res.BranchCreated, Mode: string(res.Mode), Nodes: LoadCounts(res.Nodes), Edges: LoadCounts(res.Edges),
		TotalEntities: res.Total, ActorID: strPtr(c.actor), Commit: commitOutputPtr(res.Commit), Warnings: res.Warnings}
}

// exportChunk bounds one streamed chunk of an export.
const exportChunk = 64 << 10

// handleExport streams NDJSON. Validation (target, types) happens in the
// engine before its first write, so errors before any byte is sent get a
// proper status; the response starts only with the first chunk, and an
// error after that cuts the stream.
func (s *Server) handleExport(c *call) (*plan, error) {
	var req ExportRequest
	if err := c.decodeJSON(&req, true); err != nil {
		return nil, err
	}
	t, branch, err := readTarget(req.Branch, req.Snapshot)
	if err != nil {
		return nil, err
	}
	return &plan{checks: []check{{action: ActionExport, branch: branch}}, run: func() error {
		sw := &streamWriter{c: c, contentType: "application/x-ndjson; charset=utf-8"}
		bw := bufio.NewWriterSize(sw, exportChunk)
		if err := c.g.g.Export(c.r.Context(), t, req.TypeNames, bw); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if c.status == 0 {
			// An empty export: the stream is empty but well-formed.
			c.w.Header().Set("Content-Type", sw.contentType)
			c.writeHeader(http.StatusOK)
		}
		return nil
	}}, nil
}

// streamWriter starts a 200 response on its first write and flushes every
// chunk to the client, so memory stays bounded by the chunk size.
type streamWriter struct {
	c           *call
	contentType string
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if w.c.status == 0 {
		w.c.w.Header().Set("Content-Type", w.contentType)
		w.c.writeHeader(http.StatusOK)
	}
	n, err := w.c.w.Write(p)
	if err != nil {
		return n, err
	}
	if f, ok := w.c.w.(http.Flusher); ok {
		f.Flush()
	}
	return n, w.c.r.Context().Err()
}
