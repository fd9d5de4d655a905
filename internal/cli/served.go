package cli

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/cluster"
	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// servedImpl runs one command against a server.
type servedImpl func(cmd *cobra.Command, args []string, rc *remote.Client) error

// positionalURI lists the commands whose first positional is a graph URI.
var positionalURI = map[string]bool{
	"omnigraph load": true, "omnigraph ingest": true, "omnigraph export": true, "omnigraph snapshot": true,
	"omnigraph commit list": true, "omnigraph schema show": true,
}

// wireServed lets the commands of spec/surfaces.md §1.2 marked "any" run
// against a server: each accepts --server/--graph/--profile, and when the
// resolved scope is served its served implementation runs instead of the
// embedded one.
func (a *app) wireServed(root *cobra.Command) {
	impls := map[string]servedImpl{
		"omnigraph query":         a.servedQuery,
		"omnigraph mutate":        a.servedMutate,
		"omnigraph load":          a.servedLoad,
		"omnigraph ingest":        a.servedLoad,
		"omnigraph blob get":      a.servedBlobGet,
		"omnigraph blob stat":     a.servedBlobStat,
		"omnigraph export":        a.servedExport,
		"omnigraph snapshot":      a.servedSnapshot,
		"omnigraph branch create": a.servedBranchCreate,
		"omnigraph branch list":   a.servedBranchList,
		"omnigraph branch delete": a.servedBranchDelete,
		"omnigraph branch merge":  a.servedBranchMerge,
		"omnigraph commit list":   a.servedCommitList,
		"omnigraph commit show":   a.servedCommitShow,
		"omnigraph schema show":   a.servedSchemaShow,
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		impl, ok := impls[c.CommandPath()]
		if !ok || c.RunE == nil {
			return
		}
		c.Annotations[acceptAnnotation] += ",server,graph,profile"
		if c.CommandPath() == "omnigraph load" || c.CommandPath() == "omnigraph ingest" {
			c.Annotations[acceptAnnotation] += ",yes"
		}
		local := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			a.running = true
			rc, err := a.servedScope(cmd, args)
			if err != nil {
				return err
			}
			if rc == nil {
				return local(cmd, args)
			}
			return a.servedErr(impl(cmd, args, rc))
		}
	}
	walk(root)
}

// explicitLocal reports whether the command names an embedded graph itself.
func (a *app) explicitLocal(cmd *cobra.Command, args []string) bool {
	if a.g.store != "" {
		return true
	}
	if f := cmd.Flags().Lookup("uri"); f != nil && f.Changed {
		return true
	}
	return positionalURI[cmd.CommandPath()] && len(args) > 0
}

// profileName is --profile, else $OMNIGRAPH_PROFILE.
func (a *app) profileName() string {
	if a.g.profile != "" {
		return a.g.profile
	}
	return os.Getenv("OMNIGRAPH_PROFILE")
}

// servedScope resolves the scope (spec/surfaces.md §1.2): an explicit
// address (positional URI, --uri, --store, --server) wins over the profile,
// which wins over the flat defaults. It returns a client when the scope is
// served, nil when the command runs embedded.
func (a *app) servedScope(cmd *cobra.Command, args []string) (*remote.Client, error) {
	local := a.explicitLocal(cmd, args)
	if a.g.server != "" {
		if local {
			return nil, usagef("--server cannot be combined with a graph URI or --store")
		}
		return a.client(cmd, a.g.server, a.g.graph)
	}
	if local {
		return nil, nil
	}
	cfg, err := a.operator()
	if err != nil {
		return nil, err
	}
	if name := a.profileName(); name != "" {
		p, ok := cfg.Profiles[name]
		if !ok {
			return nil, usagef("unknown profile %q (profiles: in %s)", name, filepath.Join(cfg.Home, "config.yaml"))
		}
		if p.Server != "" {
			return a.client(cmd, p.Server, firstNonEmpty(a.g.graph, p.DefaultGraph))
		}
		return nil, nil
	}
	if cfg.Defaults.Server != "" {
		return a.client(cmd, cfg.Defaults.Server, firstNonEmpty(a.g.graph, cfg.Defaults.DefaultGraph))
	}
	return nil, nil
}

// localFallback is the embedded graph of the profile or the flat defaults
// when the command names none (a store, or a cluster graph).
func (a *app) localFallback() (string, error) {
	cfg, err := a.operator()
	if err != nil {
		return "", err
	}
	store, clusterName, graph := cfg.Defaults.Store, "", firstNonEmpty(a.g.graph, cfg.Defaults.DefaultGraph)
	if name := a.profileName(); name != "" {
		p, ok := cfg.Profiles[name]
		if !ok {
			return "", usagef("unknown profile %q", name)
		}
		store, clusterName, graph = p.Store, p.Cluster, firstNonEmpty(a.g.graph, p.DefaultGraph)
	}
	switch {
	case store != "":
		if a.g.graph != "" {
			return "", usagef("--graph cannot be used with a single-graph store address")
		}
		return store, nil
	case clusterName != "":
		root := clusterName
		if c, ok := cfg.Clusters[clusterName]; ok && c.Root != "" {
			root = c.Root
		}
		if graph == "" {
			return "", usagef("the profile's cluster needs a graph: give --graph ID or default_graph")
		}
		return cluster.GraphURI(root, graph), nil
	}
	return "", nil
}

// client builds the HTTP client for a --server value and a graph; with no
// graph it asks GET /graphs and demands --graph.
func (a *app) client(cmd *cobra.Command, server, graph string) (*remote.Client, error) {
	if a.g.as != "" {
		return nil, usagef("--as cannot be used against a server: the server takes the actor from the bearer token")
	}
	cfg, err := a.operator()
	if err != nil {
		return nil, err
	}
	url, _, err := cfg.ServerURL(server)
	if err != nil {
		return nil, usagef("%v", err)
	}
	token, err := cfg.Token(url, os.Getenv)
	if err != nil {
		return nil, err
	}
	rc := remote.New(url, graph, token, &http.Client{Timeout: 10 * time.Minute})
	if graph == "" {
		gs, err := rc.Graphs(cmd.Context())
		if err != nil {
			return nil, usagef("no graph selected: give --graph ID")
		}
		ids := make([]string, len(gs))
		for i, g := range gs {
			ids[i] = g.GraphID
		}
		return nil, usagef("no graph selected: give --graph ID (this server serves: %s)", strings.Join(ids, ", "))
	}
	return rc, nil
}

// servedErr maps a server error to the CLI's exit codes: a lost
// conditional write is exit 4, everything else exit 1 with the server's
// ErrorOutput.error as the message.
func (a *app) servedErr(err error) error {
	var re *remote.Error
	if errors.As(err, &re) && re.Status == http.StatusPreconditionFailed {
		return fmt.Errorf("%w: %v", omnigraph.ErrPreconditionFailed, err)
	}
	return err
}
