package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/omnigraph-go/omnigraph"
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
