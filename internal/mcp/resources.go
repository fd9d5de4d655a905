package mcp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources' URIs.
const (
	SchemaURI   = "omnigraph://schema"
	BranchesURI = "omnigraph://branches"
)

func addResources(s *sdk.Server, b Backend) {
	s.AddResource(&sdk.Resource{URI: SchemaURI, Name: "schema", Title: "Graph schema", MIMEType: "text/plain",
		Description: "The accepted .pg schema source of main."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			src, err := b.Schema(ctx)
			if err != nil {
				return nil, resourceError(err)
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: SchemaURI, MIMEType: "text/plain", Text: src}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: BranchesURI, Name: "branches", Title: "Branches", MIMEType: "application/json",
		Description: `The graph's branches, sorted: {"branches":[…]}.`},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			names, err := b.Branches(ctx)
			if err != nil {
				return nil, resourceError(err)
			}
			if names == nil {
				names = []string{}
			}
			body := mustJSON(map[string][]string{"branches": names})
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: BranchesURI, MIMEType: "application/json", Text: string(body)}}}, nil
		})
}

// resourceError is a failed resource read: resources have no error
// results, so it is a JSON-RPC internal error whose data is the ErrorOutput.
func resourceError(err error) error {
	_, body, msg := failureBody(err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg, Data: body}
}
