package cli

import (
	"context"
	"fmt"
	"strings"

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
	return omnigraph.Open(ctx, uri, omnigraph.Options{})
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
	fmt.Fprintf(a.io.Err, "omnigraph %s → %s (direct, local)\n", verb, uri)
}
