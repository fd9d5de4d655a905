package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/mcp"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/remote"
	"github.com/omnigraph-go/omnigraph/internal/server"
)

type mcpOptions struct {
	queries []string
	verbose bool
}

func (a *app) newMCPCmd() *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp (--store URI [--queries FILE.gq]... | --server URL|NAME --graph ID | --profile NAME)",
		Short: "Serve one graph to an MCP host (Claude Desktop, Claude Code, …) over stdio",
		Long: `mcp runs a Model Context Protocol server on stdin and stdout for one graph, for
an MCP host to start as a subprocess. Nothing but protocol messages is written
to stdout; warnings go to stderr.

Tools: schema_get, query, mutate, load, branches_list, branches_create,
branches_merge, branches_delete, commits_list, commit_changes, diff,
changes_poll, and one typed tool per stored query. Resources:
omnigraph://schema and omnigraph://branches. A failed call is a tool error
whose structured content is the HTTP API's error body (docs/mcp.md).

  --store URI        an embedded graph (a directory, file:// or s3://); its
                     stored queries are the queries of the --queries files
  --server, --graph  a graph on omnigraph-server, with the server's stored
                     queries, token, policy and admission (the token comes
                     from the operator config or OMNIGRAPH_BEARER_TOKEN, as for
                     every served command)

Example host configuration (Claude Desktop, claude_desktop_config.json):

  {"mcpServers": {"social": {"command": "omnigraph",
    "args": ["mcp", "--store", "/data/social.omni", "--queries", "/data/queries.gq"]}}}`,
		Args: cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runMCP(cmd, &o)
		}),
	}
	cmd.Flags().StringArrayVar(&o.queries, "queries", nil, "a .gq file whose queries become stored-query tools (repeatable; embedded graphs only)")
	cmd.Flags().BoolVar(&o.verbose, "verbose", false, "log requests and authorization decisions on stderr")
	acceptGlobals(cmd, "store", "server", "graph", "profile", "as")
	return cmd
}

func (a *app) runMCP(cmd *cobra.Command, o *mcpOptions) error {
	ctx := cmd.Context()
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(a.io.Err, &slog.HandlerOptions{Level: level}))
	rc, err := a.servedScope(cmd, nil)
	if err != nil {
		return err
	}
	graphName := ""
	if rc != nil {
		if len(o.queries) > 0 {
			return usagef("--queries applies to an embedded graph: a server serves its own stored queries")
		}
		graphName = rc.Graph()
	} else {
		if rc, graphName, err = a.embeddedMCPBackend(cmd, o, log); err != nil {
			return err
		}
	}
	srv, err := mcp.New(ctx, rc, mcp.Options{Graph: graphName, Version: omnigraph.Version, Logger: log})
	if err != nil {
		return err
	}
	err = srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(a.io.In), Writer: nopWriteCloser{a.io.Out}})
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// embeddedMCPBackend opens the --store graph and serves it with an
// in-process omnigraph-server, so the embedded graph answers with the
// very bodies, errors and checks a served one does. With --as the writes
// are recorded under that actor.
func (a *app) embeddedMCPBackend(cmd *cobra.Command, o *mcpOptions, log *slog.Logger) (*remote.Client, string, error) {
	uri, err := a.graphURI(nil, "")
	if err != nil {
		return nil, "", err
	}
	stored, err := storedFromFiles(o.queries)
	if err != nil {
		return nil, "", err
	}
	g, err := a.openGraph(cmd.Context(), uri)
	if err != nil {
		return nil, "", err
	}
	id := mcpGraphID(uri)
	cfg := server.Config{Graphs: []server.GraphConfig{{ID: id, URI: uri, Graph: g, Queries: stored}},
		Unauthenticated: true, RequireAllGraphs: true, Logger: log}
	token := ""
	if a.g.as != "" {
		// A token only this process knows, so the in-process server
		// records the --as actor on every commit.
		var b [16]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
		cfg.Tokens, cfg.Authorizer = []server.Token{{Actor: a.g.as, Token: token}}, server.AllowAll{}
	}
	s, err := server.New(cmd.Context(), cfg)
	if err != nil {
		return nil, "", err
	}
	return remote.New("http://omnigraph.in-process", id, token, remote.InProcess(s.Handler(), nil)), id, nil
}

// storedFromFiles makes every query of the .gq files a stored query
// named after it.
func storedFromFiles(paths []string) ([]server.StoredQuery, error) {
	var out []server.StoredQuery
	seen := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		ast, err := query.Parse(p, string(b))
		if err != nil {
			return nil, err
		}
		for _, q := range ast.Queries {
			if prev, dup := seen[q.Name]; dup {
				return nil, usagef("query %q is defined in both %s and %s", q.Name, prev, p)
			}
			seen[q.Name] = p
			out = append(out, server.StoredQuery{Name: q.Name, Source: string(b), Query: q.Name})
		}
	}
	return out, nil
}

// mcpGraphID names an embedded graph after its directory ("social" for
// /data/social.omni), or "local" when that is not a valid graph id.
func mcpGraphID(uri string) string {
	id := strings.TrimSuffix(filepath.Base(strings.TrimRight(uri, "/")), ".omni")
	if server.ValidGraphID(id) != nil {
		return "local"
	}
	return id
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
