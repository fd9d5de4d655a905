package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/spf13/cobra"
)

// graphURI resolves the graph a direct command addresses: a positional URI,
// --uri (branch and commit commands), or the global --store.
func (a *app) graphURI(positional []string, uriFlag string) (string, error) {
	var cands []string
	if len(positional) > 0 && positional[0] != "" {
		cands = append(cands, positional[0])
	}
	if uriFlag != "" {
		cands = append(cands, uriFlag)
	}
	if a.g.store != "" {
		cands = append(cands, a.g.store)
	}
	if len(cands) == 0 {
		fb, err := a.localFallback()
		if err != nil {
			return "", err
		}
		if fb == "" {
			if positional == nil {
				// The command's positional arguments are not graph URIs.
				return "", usagef("no graph selected: give --store URI (or set defaults.store in %s)", a.configPath())
			}
			return "", usagef("no graph selected: give the graph URI (a directory path) or --store URI")
		}
		cands = append(cands, fb)
	} else if a.g.graph != "" {
		return "", usagef("--graph cannot be used with a single-graph address")
	}
	for _, c := range cands[1:] {
		if c != cands[0] {
			return "", usagef("conflicting graph addresses %q and %q", cands[0], c)
		}
	}
	u := cands[0]
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return "", usagef("a remote graph must be addressed with --server")
	}
	return u, nil
}

func (a *app) openGraph(ctx context.Context, uri string) (*omnigraph.Graph, error) {
	return omnigraph.Open(ctx, uri, a.graphOptions())
}

// graphOptions are the handle options every direct command uses.
func (a *app) graphOptions() omnigraph.Options {
	return omnigraph.Options{CacheDir: a.g.cacheDir}
}

// open resolves the addressed graph (see graphURI) and opens it.
func (a *app) open(cmd *cobra.Command, positional []string, uriFlag string) (*omnigraph.Graph, string, error) {
	uri, err := a.graphURI(positional, uriFlag)
	if err != nil {
		return nil, "", err
	}
	g, err := a.openGraph(cmd.Context(), uri)
	return g, uri, err
}

// echoTarget prints the resolved write target for effectful commands
// (spec/surfaces.md §1.8) unless --quiet.
func (a *app) echoTarget(verb, uri string) {
	if a.g.quiet {
		return
	}
	where := "local"
	if omnigraph.IsRemote(uri) {
		where = "remote"
	}
	fmt.Fprintf(a.io.Err, "omnigraph %s → %s (direct, %s)\n", verb, uri, where)
}

// consent guards destructive writes against a non-local graph
// (spec/surfaces.md §1.8): --yes, or "yes" typed at an interactive
// terminal; otherwise a usage error and nothing is done.
func (a *app) consent(uri, what string, asJSON bool) error {
	if !omnigraph.IsRemote(uri) || a.g.yes {
		return nil
	}
	if f, ok := a.io.In.(*os.File); ok && !asJSON && a.io.StderrTTY && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(a.io.Err, "%s on the remote graph %s cannot be undone; type yes to continue: ", what, uri)
		line, _ := bufio.NewReader(a.io.In).ReadString('\n')
		if strings.TrimSpace(line) == "yes" {
			return nil
		}
		return usagef("%s on %s was not confirmed", what, uri)
	}
	return usagef("%s on the non-local graph %s needs consent: pass --yes", what, uri)
}

// configPath is the operator config file's path, for messages.
func (a *app) configPath() string {
	if cfg, err := a.operator(); err == nil && cfg.Home != "" {
		return filepath.Join(cfg.Home, "config.yaml")
	}
	return "~/.omnigraph/config.yaml"
}

// looksLikeGraph reports whether a command-line argument is a graph
// address rather than a name: an s3:// or file:// URL, or a directory that
// holds a graph.
func looksLikeGraph(arg string) bool {
	if strings.HasPrefix(arg, "s3://") || strings.HasPrefix(arg, "file://") {
		return true
	}
	_, err := os.Stat(filepath.Join(arg, commit.StampKey))
	return err == nil
}

// wireAddressHints turns the argument errors of a graph given in the wrong
// place into the fix: `branch create what-if ./g.omni` says to name the
// graph with --store instead of "accepts 1 arg(s), received 2", and
// `query ./g.omni -e …` that a graph is not a query NAME.
func (a *app) wireAddressHints(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Args == nil || positionalURI[c.CommandPath()] || c.RunE == nil {
			return
		}
		args := c.Args
		nameArg := c.CommandPath() == "omnigraph query" || c.CommandPath() == "omnigraph mutate"
		c.Args = func(cmd *cobra.Command, pos []string) error {
			err := args(cmd, pos)
			for i, p := range pos {
				// A graph where the command takes names: too many
				// arguments, or query/mutate's NAME holding a graph.
				if looksLikeGraph(p) && (err != nil || (nameArg && i == 0 && a.g.store == "")) {
					return usagef("%s does not take the graph as a positional argument: name it with --store %s", cmd.CommandPath(), p)
				}
			}
			return err
		}
	}
	walk(root)
}
