package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// catalogEntry is one stored query of GET /queries.
type catalogEntry struct {
	Name        string       `json:"name"`
	ToolName    string       `json:"tool_name"`
	Description string       `json:"description"`
	Instruction string       `json:"instruction"`
	Mutation    bool         `json:"mutation"`
	Params      []paramEntry `json:"params"`
}

type paramEntry struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	ItemKind  string `json:"item_kind"`
	VectorDim int    `json:"vector_dim"`
	Nullable  bool   `json:"nullable"`
}

type storedTool struct {
	tool   *sdk.Tool
	schema *jsonschema.Schema
	run    func(ctx context.Context, b Backend, raw json.RawMessage) (*sdk.CallToolResult, error)
}

// storedPrefix renames a stored query's tool whose name a built-in has.
const storedPrefix = "stored_"

// storedTools builds one tool per stored query of the catalog. A tool
// name a built-in (or an earlier stored query) holds gets storedPrefix.
func storedTools(ctx context.Context, b Backend, taken map[string]bool, log *slog.Logger) ([]storedTool, error) {
	raw, err := b.Queries(ctx)
	var re *remote.Error
	if errors.As(err, &re) && re.Status == http.StatusForbidden {
		log.Warn("stored queries not listed: the catalog is refused to this caller", "error", err.Error())
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list stored queries: %w", err)
	}
	var cat struct {
		Queries []catalogEntry `json:"queries"`
	}
	if err := json.Unmarshal(raw, &cat); err != nil {
		return nil, fmt.Errorf("decode the stored-query catalog: %w", err)
	}
	var out []storedTool
	for _, q := range cat.Queries {
		name := q.ToolName
		if name == "" {
			name = q.Name
		}
		if taken[name] {
			log.Warn("stored query tool renamed: the name is taken", "query", q.Name, "tool", storedPrefix+name)
			name = storedPrefix + name
		}
		if taken[name] {
			log.Warn("stored query left out: its tool name is taken", "query", q.Name, "tool", name)
			continue
		}
		taken[name] = true
		out = append(out, newStoredTool(name, q))
	}
	return out, nil
}

// Control arguments of a stored-query tool, beside its parameters. A
// parameter of the same name wins: the tool then lacks that control.
const (
	argBranch   = "branch"
	argSnapshot = "snapshot"
	argIfCommit = "if_commit"
)

func newStoredTool(name string, q catalogEntry) storedTool {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	isParam := map[string]bool{}
	for _, p := range q.Params {
		isParam[p.Name] = true
		ps := paramSchema(p)
		s.Properties[p.Name] = ps
		if !p.Nullable {
			s.Required = append(s.Required, p.Name)
		}
	}
	controls := map[string]string{argBranch: "branch to read (default main); exclusive with snapshot", argSnapshot: "commit to read (time travel)"}
	if q.Mutation {
		controls = map[string]string{argBranch: "branch to write (default main)", argIfCommit: "write only if the branch head is this commit id (otherwise 412, nothing written)"}
	}
	for arg, desc := range controls {
		if !isParam[arg] {
			s.Properties[arg] = &jsonschema.Schema{Type: "string", Description: desc}
		}
	}
	desc := q.Description
	if q.Instruction != "" {
		if desc != "" {
			desc += "\n\n"
		}
		desc += q.Instruction
	}
	if desc == "" {
		kind := "read query"
		if q.Mutation {
			kind = "mutation"
		}
		desc = fmt.Sprintf("The stored %s %s.", kind, q.Name)
	}
	title := "Stored query " + q.Name
	tool := &sdk.Tool{Name: name, Title: title, Description: desc, InputSchema: s,
		Annotations: annotations(title, !q.Mutation, q.Mutation)}
	run := func(ctx context.Context, b Backend, raw json.RawMessage) (*sdk.CallToolResult, error) {
		var args map[string]any
		if err := decodeArgs(raw, &args); err != nil {
			return nil, err
		}
		in := remote.InvokeRequest{Params: map[string]any{}, ExpectMutation: &q.Mutation}
		var ifCommit string
		for k, v := range args {
			switch {
			case isParam[k]:
				in.Params[k] = v
			case k == argBranch:
				in.Branch, _ = v.(string)
			case k == argSnapshot:
				in.Snapshot, _ = v.(string)
			case k == argIfCommit:
				ifCommit, _ = v.(string)
			}
		}
		body, err := b.InvokeQuery(ctx, q.Name, in, ifCommit)
		if err != nil {
			return nil, err
		}
		if q.Mutation {
			return success(body, decoded(body, renderChange)), nil
		}
		return success(body, decoded(body, renderRows)), nil
	}
	return storedTool{tool: tool, schema: s, run: run}
}

// paramSchema is the JSON Schema of one typed parameter (the catalog's
// kinds, spec/languages.md §5.2).
func paramSchema(p paramEntry) *jsonschema.Schema {
	s := kindSchema(p.Kind, p.ItemKind, p.VectorDim)
	if p.Nullable {
		types := s.Types
		if s.Type != "" {
			types = []string{s.Type}
		}
		s.Type, s.Types = "", append(types, "null")
	}
	return s
}

func kindSchema(kind, item string, dim int) *jsonschema.Schema {
	switch kind {
	case "string":
		return &jsonschema.Schema{Type: "string"}
	case "bool":
		return &jsonschema.Schema{Type: "boolean"}
	case "int":
		return &jsonschema.Schema{Type: "integer"}
	case "bigint":
		return &jsonschema.Schema{Types: []string{"integer", "string"},
			Description: "a 64-bit integer: a JSON number, or a decimal string beyond 2^53"}
	case "float":
		return &jsonschema.Schema{Type: "number"}
	case "date":
		return &jsonschema.Schema{Type: "string", Format: "date", Description: "YYYY-MM-DD"}
	case "datetime":
		return &jsonschema.Schema{Type: "string", Format: "date-time", Description: "RFC 3339"}
	case "blob":
		return &jsonschema.Schema{Type: "string", Description: "base64:<payload> or an absolute URI"}
	case "vector":
		s := &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "number"}}
		if dim > 0 {
			s.MinItems, s.MaxItems = &dim, &dim
		}
		return s
	case "list":
		return &jsonschema.Schema{Type: "array", Items: kindSchema(item, "", 0)}
	}
	// A kind newer than this package: let the server judge the value.
	return &jsonschema.Schema{}
}
