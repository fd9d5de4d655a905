package server

import (
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/mcp"
	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// MCPMessage is a JSON-RPC 2.0 message of the Model Context Protocol
// (a request, a notification or a response of the client).
type MCPMessage struct {
	JSONRPC string         `json:"jsonrpc" openapi:"required"`
	ID      any            `json:"id,omitempty"`
	Method  string         `json:"method,omitempty"`
	Params  map[string]any `json:"params,omitempty"`
	Result  map[string]any `json:"result,omitempty"`
	Error   map[string]any `json:"error,omitempty"`
}

// inProcessBase is the base URL of the in-process client of an MCP
// request; the host is never dialled.
const inProcessBase = "http://omnigraph.in-process"

func mcpRoutes(s *Server) []*route {
	return []*route{
		{method: "POST", path: graphPath("/mcp"), opID: "cluster_mcp", tag: "mcp", perGraph: true, body: MCPMessage{}, loadLimit: true,
			summary: "Model Context Protocol, Streamable HTTP (stateless, JSON responses): every tool call runs as the matching route, with the caller's token, policy and admission; failures are tool errors carrying the route's ErrorOutput (docs/mcp.md).",
			resp:    MCPMessage{}, statuses: []int{400, 413}, handle: s.handleMCP},
	}
}

// handleMCP serves one MCP message. The endpoint itself asks no policy
// question: every tool call is sent, in process and with the caller's own
// bearer token and request id, to the route that does the work, so it is
// authenticated, authorized and admitted exactly as that route is. The
// server is stateless (no Mcp-Session-Id), so nothing of one caller
// outlives its request.
func (s *Server) handleMCP(c *call) (*plan, error) {
	return &plan{run: func() error {
		token, _ := bearerToken(c.r.Header.Values("Authorization"))
		hc := remote.InProcess(s.mux, http.Header{requestIDHeader: {c.reqID}})
		backend := remote.New(inProcessBase, c.g.id, token, hc)
		srv, err := mcp.New(c.r.Context(), backend, mcp.Options{Graph: c.g.id, Version: omnigraph.Version, Logger: c.log})
		if err != nil {
			return err
		}
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
			&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: c.log, MaxRequestBodyBytes: c.bodyLimit()})
		sw := &statusWriter{ResponseWriter: c.w, c: c}
		h.ServeHTTP(sw, c.r)
		return nil
	}}, nil
}

// statusWriter records the status the MCP handler answered, for the
// request log and so a late failure is never written over a response.
type statusWriter struct {
	http.ResponseWriter
	c *call
}

func (w *statusWriter) WriteHeader(status int) {
	w.c.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.c.status == 0 {
		w.c.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
