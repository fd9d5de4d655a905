package boot

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/embed"

	"github.com/omnigraph-go/omnigraph/internal/cluster"
	"github.com/omnigraph-go/omnigraph/internal/policy"
	"github.com/omnigraph-go/omnigraph/internal/server"
)

// Bundle adapts a compiled policy bundle to the server's Authorizer.
type Bundle struct{ B *policy.Bundle }

// Authorize implements server.Authorizer.
func (a Bundle) Authorize(_ context.Context, r server.AuthzRequest) (server.Decision, error) {
	d, err := a.B.Decide(policy.Request{Actor: r.Actor, Action: policy.Action(r.Action), Branch: r.Branch, TargetBranch: r.TargetBranch})
	if err != nil {
		return server.Decision{}, err
	}
	return server.Decision{Allowed: d.Allowed, RuleID: d.RuleID, Reason: d.Reason}, nil
}

// FromCluster fills cfg.Graphs and cfg.Authorizer from the applied state of
// the cluster at source (a config directory or a storage root URI). Other
// fields of cfg (tokens, limits, flags) are kept. A graph the cluster knows
// to be unservable (a pending recovery sidecar) is passed with its
// Quarantine reason, so the server applies --require-all-graphs to it like
// to a graph that fails to open.
func FromCluster(ctx context.Context, source string, cfg server.Config) (server.Config, error) {
	app, err := cluster.LoadApplied(ctx, source, cluster.Options{GraphOptions: cfg.OpenOptions})
	if err != nil {
		return cfg, err
	}
	cfg.Graphs = nil
	bundles := server.Bundles{Graphs: map[string]server.Authorizer{}}
	for _, g := range app.Graphs {
		gc := server.GraphConfig{ID: g.ID, URI: g.URI, Quarantine: g.Quarantine}
		if g.Embedding != nil {
			e, err := embeddingConfig(g.ID, g.Embedding)
			if err != nil {
				return cfg, err
			}
			gc.Embedding = e
		}
		for _, q := range g.Queries {
			gc.Queries = append(gc.Queries, server.StoredQuery{Name: q.Name, Source: q.Source})
		}
		cfg.Graphs = append(cfg.Graphs, gc)
		if g.Policy != nil {
			bundles.Graphs[g.ID] = Bundle{g.Policy}
		}
	}
	if len(cfg.Graphs) == 0 {
		return cfg, fmt.Errorf("%w: the cluster at %s has no applied graphs (run `omnigraph cluster apply`)", server.ErrNoHealthyGraph, app.Root)
	}
	if app.Server != nil {
		bundles.Server = Bundle{app.Server}
	}
	cfg.Authorizer = nil
	if app.HasPolicy() {
		cfg.Authorizer = bundles
	}
	return cfg, nil
}

// embeddingConfig turns a graph's applied provider profile into the
// client configuration, resolving the ${ENV} reference of its API key now
// (only a booting server sees provider secrets). The retry and deadline
// knobs still come from the OMNIGRAPH_EMBED_* environment.
func embeddingConfig(graph string, p *cluster.EmbeddingProvider) (*omnigraph.EmbeddingConfig, error) {
	cfg, err := embed.FromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.Provider, cfg.BaseURL, cfg.Model, cfg.APIKey, cfg.MockForced = p.Kind, p.BaseURL, p.Model, "", ""
	if ref := strings.TrimSpace(p.APIKey); ref != "" {
		name, ok := strings.CutPrefix(ref, "${")
		name, ok2 := strings.CutSuffix(name, "}")
		if !ok || !ok2 || name == "" {
			return nil, fmt.Errorf("graph %s: embedding provider api_key %q is not an ${ENV} reference", graph, ref)
		}
		cfg.APIKey = os.Getenv(name)
	}
	if embed.MockEnv(os.Getenv) && cfg.Provider != embed.ProviderMock {
		cfg.MockForced, cfg.Provider = cfg.Provider, embed.ProviderMock
	}
	return &cfg, nil
}
