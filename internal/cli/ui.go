package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/server"
	"github.com/spf13/cobra"
)

// uiOptions are the flags of `omnigraph ui`.
type uiOptions struct {
	listen string
}

func (a *app) newUICmd() *cobra.Command {
	var o uiOptions
	cmd := &cobra.Command{
		Use:   "ui --store URI [--listen ADDR]",
		Short: "Open the web console on a local graph",
		Long: `Serve the web console and the HTTP API for one graph from this process, on
a loopback address, and print the console's URL. The server is the same one
omnigraph-server runs (docs/console.md), without authentication: it binds only
to loopback addresses (127.0.0.1, ::1, localhost), so only this machine can
reach it. Stop it with Ctrl+C.

The graph is served under the id of its directory name without .omni
("graph" when that is not a valid id).`,
		Example: `  omnigraph ui --store ./social.omni
  omnigraph ui --store ./social.omni --listen 127.0.0.1:7070`,
		Args: cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, _ []string) error {
			return a.runUI(cmd, o)
		}),
	}
	acceptGlobals(cmd, "store", "cache-dir")
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free port)")
	return cmd
}

// errNotLoopback refuses a listen address other machines could reach: the
// console's server runs without authentication.
var errNotLoopback = errors.New("omnigraph ui serves without authentication and listens only on loopback addresses (127.0.0.1, ::1, localhost); use omnigraph-server with bearer tokens to serve others")

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--listen %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return &UsageError{Err: fmt.Errorf("--listen %q: %w", addr, errNotLoopback)}
	}
	return nil
}

func (a *app) runUI(cmd *cobra.Command, o uiOptions) error {
	if a.g.store == "" {
		return usagef("omnigraph ui needs the graph to open: pass --store URI")
	}
	if err := checkLoopback(o.listen); err != nil {
		return err
	}
	ctx := cmd.Context()
	g, uri, err := a.open(cmd, nil, "")
	if err != nil {
		return err
	}
	id := strings.TrimSuffix(filepath.Base(filepath.Clean(strings.TrimPrefix(uri, "file://"))), ".omni")
	if server.ValidGraphID(id) != nil {
		id = "graph"
	}
	srv, err := server.New(ctx, server.Config{
		Graphs:          []server.GraphConfig{{ID: id, URI: uri, Graph: g}},
		Unauthenticated: true,
		Logger:          slog.New(slog.NewTextHandler(a.io.Err, &slog.HandlerOptions{Level: slog.LevelWarn})),
		OpenOptions:     a.graphOptions(),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.Out, "omnigraph console for %s: http://%s/ui/\n", uri, ln.Addr())
	return srv.Serve(ctx, ln)
}
