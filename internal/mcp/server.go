package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure New.
type Options struct {
	// Graph names the graph in the server's instructions ("" for none).
	Graph string
	// Version is reported as the implementation version.
	Version string
	// Logger receives the server's warnings (a stored query left out, a
	// renamed tool); nil discards them.
	Logger *slog.Logger
}

// New builds the MCP server of one graph over b: the built-in tools, one
// tool per stored query of the catalog b lists, and the schema and branch
// resources. It reads the catalog once; a caller the catalog is refused to
// (403) gets the built-in tools only. Any other failure to read it is
// returned.
func New(ctx context.Context, b Backend, o Options) (*sdk.Server, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	instructions := "Omnigraph is a typed property graph with Git-style branches and commits. Read the schema (schema_get) first; " +
		"query reads with .gq, mutate writes one atomic commit, and every stored query is a tool of its own. " +
		"Work on a branch (branches_create), review it (diff, commit_changes), then branches_merge. " +
		"A failed call is a tool error whose structured content is the HTTP API's ErrorOutput."
	if o.Graph != "" {
		instructions = "This server exposes the graph '" + o.Graph + "'. " + instructions
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "omnigraph", Title: "Omnigraph", Version: o.Version},
		&sdk.ServerOptions{Instructions: instructions, Logger: log})
	taken := map[string]bool{}
	for _, t := range builtins() {
		taken[t.name] = true
		add(s, b, &sdk.Tool{Name: t.name, Title: t.title, Description: t.desc, InputSchema: t.schema,
			Annotations: annotations(t.title, t.readOnly, t.destructive)}, t.schema, t.run)
	}
	stored, err := storedTools(ctx, b, taken, log)
	if err != nil {
		return nil, err
	}
	for _, st := range stored {
		add(s, b, st.tool, st.schema, st.run)
	}
	addResources(s, b)
	return s, nil
}

func annotations(title string, readOnly, destructive bool) *sdk.ToolAnnotations {
	a := &sdk.ToolAnnotations{Title: title, ReadOnlyHint: readOnly}
	if !readOnly {
		a.DestructiveHint = &destructive
	}
	openWorld := false
	a.OpenWorldHint = &openWorld
	return a
}

// add registers a tool whose arguments are checked against schema before
// run sees them; every failure, refused input included, is a tool error.
func add(s *sdk.Server, b Backend, t *sdk.Tool, schema *jsonschema.Schema,
	run func(ctx context.Context, b Backend, raw json.RawMessage) (*sdk.CallToolResult, error)) {
	resolved, err := schema.Resolve(nil)
	if err != nil {
		// The schemas are built here, from Go types and the catalog's
		// closed set of kinds: a failure is a bug.
		panic("mcp: resolve the schema of " + t.Name + ": " + err.Error())
	}
	s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		raw := req.Params.Arguments
		if err := validate(resolved, raw); err != nil {
			return failure(err), nil
		}
		res, err := run(ctx, b, raw)
		if err != nil {
			return failure(err), nil
		}
		return res, nil
	})
}

// validate checks tool arguments against the tool's input schema.
func validate(resolved *jsonschema.Resolved, raw json.RawMessage) error {
	var v any = map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &v); err != nil {
			return badInput("invalid arguments: %v", err)
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return badInput("invalid arguments: expected an object")
	}
	if err := resolved.Validate(v); err != nil {
		return badInput("invalid arguments: %v", err)
	}
	return nil
}
