// Command omnigraph-server serves graphs over HTTP (docs/server.md).
//
//	omnigraph-server --cluster DIR|s3://… [--bind ADDR] [--unauthenticated] [--require-all-graphs]
//	omnigraph-server --graph URI [--graph-id ID] [--bind ADDR] [--unauthenticated] [--require-all-graphs]
//
// After binding it prints exactly one stdout line,
// OMNIGRAPH_LISTEN_ADDR=<ip:port>, then serves until SIGINT or SIGTERM
// and drains in-flight requests. Everything else goes to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omnigraph-go/omnigraph"
	clusterboot "github.com/omnigraph-go/omnigraph/internal/boot"
	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

type options struct {
	bind             string
	cluster          string
	graph            string
	graphID          string
	unauthenticated  bool
	requireAllGraphs bool
	version          bool
	queryMemory      string
	queryTimeout     time.Duration
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	var o options
	fs := flag.NewFlagSet("omnigraph-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bind, "bind", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	fs.StringVar(&o.cluster, "cluster", "", "serve the applied state of the cluster at this config directory or storage root (s3://…)")
	fs.StringVar(&o.graph, "graph", "", "quick start: serve the one graph at this URI")
	fs.StringVar(&o.graphID, "graph-id", "", "graph id for --graph (default: the directory name without .omni)")
	fs.BoolVar(&o.unauthenticated, "unauthenticated", false, "serve without bearer tokens (all actions allowed); also OMNIGRAPH_UNAUTHENTICATED=1")
	fs.BoolVar(&o.requireAllGraphs, "require-all-graphs", false, "refuse to boot if any graph fails to open; also OMNIGRAPH_REQUIRE_ALL_GRAPHS=1")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.queryMemory, "query-memory-limit", "", "bound each read query's working memory: a size like 512MiB, or none (default 2GiB; also OMNIGRAPH_QUERY_MEMORY_LIMIT); a query over it gets 413 resource_limit")
	fs.DurationVar(&o.queryTimeout, "query-timeout", 0, "bound each read query's wall time, e.g. 30s (default none; also OMNIGRAPH_QUERY_TIMEOUT); a query over it gets 413 resource_limit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: omnigraph-server --cluster DIR|s3://… [--bind ADDR] [--unauthenticated] [--require-all-graphs]")
		fmt.Fprintln(stderr, "       omnigraph-server --graph URI [--graph-id ID] [--bind ADDR] [--unauthenticated] [--require-all-graphs]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (serve a graph with --graph URI)", fs.Arg(0))
	}
	return &o, nil
}

// run boots and serves; it returns the process exit status: 0 after a
// clean drain, 1 on a boot or serve failure, 2 on a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "omnigraph-server:", err)
		return 2
	}
	if o.version {
		fmt.Fprintf(stdout, "omnigraph-server %s\n", omnigraph.Version)
		return 0
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := bootConfig(ctx, o, getenv)
	if err == nil {
		cfg.Logger = log
		err = serve(ctx, o.bind, cfg, stdout, log)
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "omnigraph-server:", err)
			return 2
		}
		log.Error("omnigraph-server failed", "error", err.Error())
		return 1
	}
	return 0
}

type usageError struct{ error }

// bootConfig builds the server config from the flags and the environment.
//
// Boot sources: --graph (one graph, the quick start). A cluster boot
// (--cluster DIR|s3://…) fills the same Config from the cluster's applied
// state — graphs, stored queries, the policy Authorizer — and joins here.
func bootConfig(ctx context.Context, o *options, getenv func(string) string) (server.Config, error) {
	var cfg server.Config
	switch {
	case o.cluster != "" && (o.graph != "" || o.graphID != ""):
		return cfg, usageError{errors.New("--cluster is an exclusive boot source: it cannot be combined with --graph or --graph-id")}
	case o.cluster == "" && o.graph == "":
		return cfg, usageError{errors.New("nothing to serve: pass --cluster DIR|s3://… (or --graph URI for a quick start)")}
	case o.graph != "":
		id := o.graphID
		if id == "" {
			id = strings.TrimSuffix(filepath.Base(filepath.Clean(strings.TrimPrefix(o.graph, "file://"))), ".omni")
			if server.ValidGraphID(id) != nil {
				return cfg, usageError{fmt.Errorf("cannot derive a graph id from %q: pass --graph-id", o.graph)}
			}
		}
		cfg.Graphs = []server.GraphConfig{{ID: id, URI: o.graph}}
	}
	var err error
	if cfg.Tokens, err = server.TokensFromEnv(getenv); err != nil {
		return cfg, err
	}
	envUnauth, err := server.EnvFlag(getenv, server.EnvUnauthenticated)
	if err != nil {
		return cfg, err
	}
	envAll, err := server.EnvFlag(getenv, server.EnvRequireAllGraphs)
	if err != nil {
		return cfg, err
	}
	cfg.Unauthenticated = o.unauthenticated || envUnauth
	cfg.RequireAllGraphs = o.requireAllGraphs || envAll
	if cfg.Limits, err = server.LimitsFromEnv(getenv); err != nil {
		return cfg, err
	}
	if cfg.OpenOptions.QueryMemoryBytes, cfg.OpenOptions.QueryTimeout, err = queryLimits(o, getenv); err != nil {
		return cfg, err
	}
	if o.cluster != "" {
		// The cluster's applied state: graphs, stored queries, policies.
		cfg, err = clusterboot.FromCluster(ctx, o.cluster, cfg)
	}
	return cfg, err
}

// queryLimits reads --query-memory-limit and --query-timeout, falling back
// to their environment variables.
func queryLimits(o *options, getenv func(string) string) (int64, time.Duration, error) {
	mem, timeout := o.queryMemory, o.queryTimeout
	if mem == "" {
		mem = getenv("OMNIGRAPH_QUERY_MEMORY_LIMIT")
	}
	var n int64
	if mem != "" {
		var err error
		if n, err = limits.ParseBytes(mem); err != nil || n == 0 {
			return 0, 0, usageError{fmt.Errorf("query memory limit %q: want a size like 512MiB, or none", mem)}
		}
	}
	if timeout == 0 {
		if v := getenv("OMNIGRAPH_QUERY_TIMEOUT"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return 0, 0, usageError{fmt.Errorf("OMNIGRAPH_QUERY_TIMEOUT=%q: want a duration like 30s", v)}
			}
			timeout = d
		}
	}
	if timeout < 0 {
		return 0, 0, usageError{errors.New("--query-timeout must not be negative")}
	}
	return n, timeout, nil
}

// serve boots the server, binds, announces the address on stdout (the one
// line harnesses parse) and serves until ctx ends.
func serve(ctx context.Context, bind string, cfg server.Config, stdout io.Writer, log *slog.Logger) error {
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "OMNIGRAPH_LISTEN_ADDR=%s\n", ln.Addr())
	log.Info("listening", "addr", ln.Addr().String(), "mode", string(srv.Mode()), "graphs", strings.Join(srv.GraphIDs(), ","))
	return srv.Serve(ctx, ln)
}
