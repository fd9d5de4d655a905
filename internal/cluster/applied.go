package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/policy"
)

// Applied is what a server boots from: the applied revision of a cluster,
// with every catalog payload read and verified and every policy bundle
// compiled for its scope. Nothing un-applied in cluster.yaml leaks into it.
type Applied struct {
	Root          string
	StateRevision int64
	ConfigDigest  string
	Graphs        []*AppliedGraph // sorted by id
	// Server is the cluster-bound bundle that decides graph_list; nil when
	// none is bound (graph_list is then denied).
	Server *policy.Bundle
}

// AppliedGraph is one applied graph.
type AppliedGraph struct {
	ID      string
	URI     string
	Queries []StoredQuery // sorted by name
	// Policy is the graph-bound bundle, nil when none is bound.
	Policy *policy.Bundle
	// Quarantine, when set, says why the graph must not be served (a pending
	// recovery sidecar); the server quarantines it rather than refusing boot.
	Quarantine string
	// Embedding is the graph's bound embedding provider profile
	// (graphs.<id>.embedding_provider), nil when none is bound. Its APIKey
	// is still the ${ENV} reference; the booting server resolves it.
	Embedding *EmbeddingProvider
}

// StoredQuery is one applied stored query: the .gq file it was declared in
// and the name of the declaration.
type StoredQuery struct {
	Name   string
	Source string
	Digest string
}

// HasPolicy reports whether any bundle is applied (graph- or cluster-bound).
func (a *Applied) HasPolicy() bool {
	if a.Server != nil {
		return true
	}
	for _, g := range a.Graphs {
		if g.Policy != nil {
			return true
		}
	}
	return false
}

// ResolveRoot finds the storage root of a cluster source: a scheme URI is
// the root itself; a directory is resolved through its cluster.yaml storage
// key, or is the root when it has no cluster.yaml.
func ResolveRoot(source string) (string, error) {
	if isScheme(source) {
		return source, nil
	}
	dir := strings.TrimPrefix(source, "file://")
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
		return dir, nil
	}
	root, _, diags := configRoot(dir)
	if root == "" {
		msgs := make([]string, len(diags))
		for i, d := range diags {
			msgs[i] = d.Message
		}
		return "", fmt.Errorf("%w: %s", ErrState, strings.Join(msgs, "; "))
	}
	return root, nil
}

// LoadApplied reads the applied revision of the cluster at source (a config
// directory or a storage root URI). It fails on cluster-global problems: no
// or invalid state, missing or tampered catalog payloads, policies that do
// not compile or bind one scope twice.
func LoadApplied(ctx context.Context, source string, o Options) (*Applied, error) {
	root, err := ResolveRoot(source)
	if err != nil {
		return nil, err
	}
	st, err := o.open(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("cluster storage root %s: %w", root, err)
	}
	led, err := readState(ctx, st)
	if err != nil {
		return nil, err
	}
	if led.etag == "" {
		return nil, fmt.Errorf("%w: %s has no %s: run `omnigraph cluster import` and `omnigraph cluster apply` first", ErrState, root, stateKey)
	}
	s := led.state
	a := &Applied{Root: root, StateRevision: s.StateRevision, ConfigDigest: s.AppliedRevision.ConfigDigest}
	graphs := map[string]*AppliedGraph{}
	for addr, r := range s.AppliedRevision.Resources {
		if id, ok := strings.CutPrefix(addr, "graph."); ok {
			uri := GraphURI(root, id)
			if r.Root != "" && !isScheme(root) {
				uri = filepath.Join(root, filepath.FromSlash(r.Root))
			} else if r.Root != "" {
				uri = strings.TrimSuffix(root, "/") + "/" + r.Root
			}
			graphs[id] = &AppliedGraph{ID: id, URI: uri, Queries: []StoredQuery{}}
			if r.EmbeddingProvider != "" {
				if pr, ok := s.AppliedRevision.Resources[r.EmbeddingProvider]; ok && pr.EmbeddingProfile != nil {
					p := *pr.EmbeddingProfile
					graphs[id].Embedding = &p
				}
			}
		}
	}
	for addr, r := range s.AppliedRevision.Resources {
		rest, ok := strings.CutPrefix(addr, "query.")
		if !ok {
			continue
		}
		i := strings.IndexByte(rest, '.')
		g := graphs[rest[:max(i, 0)]]
		if i <= 0 || g == nil {
			continue // a query of a graph that is not applied is not served
		}
		raw, err := readPayload(ctx, st, addr, r.Digest)
		if err != nil {
			return nil, fmt.Errorf("%w: stored query %s: %v (run `omnigraph cluster refresh` and `apply`)", ErrState, addr, err)
		}
		g.Queries = append(g.Queries, StoredQuery{Name: rest[i+1:], Source: string(raw), Digest: r.Digest})
	}
	bound := map[string]string{}
	for _, addr := range sortedKeys(s.AppliedRevision.Resources) {
		name, ok := strings.CutPrefix(addr, "policy.")
		if !ok {
			continue
		}
		r := s.AppliedRevision.Resources[addr]
		if len(r.AppliesTo) == 0 {
			return nil, fmt.Errorf("%w: %s has no applied bindings; re-run `omnigraph cluster apply`", ErrState, addr)
		}
		raw, err := readPayload(ctx, st, addr, r.Digest)
		if err != nil {
			return nil, fmt.Errorf("%w: policy %s: %v (run `omnigraph cluster refresh` and `apply`)", ErrState, addr, err)
		}
		pf, err := policy.Parse(addr, raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrState, err)
		}
		for _, scope := range r.AppliesTo {
			if prev, dup := bound[scope]; dup {
				return nil, fmt.Errorf("%w: %s is bound to both %s and %s (one bundle per scope)", ErrState, scope, prev, addr)
			}
			bound[scope] = addr
			if scope == "cluster" {
				if a.Server, err = policy.CompileServer(name, pf); err != nil {
					return nil, fmt.Errorf("%w: %v", ErrState, err)
				}
				continue
			}
			gid := strings.TrimPrefix(scope, "graph.")
			g := graphs[gid]
			if g == nil {
				return nil, fmt.Errorf("%w: %s is bound to %s, which is not applied", ErrState, addr, scope)
			}
			if g.Policy, err = policy.CompileGraph(name, pf, gid); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrState, err)
			}
		}
	}
	rs, err := listRecoveries(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	for _, rec := range rs {
		if g := graphs[rec.Graph]; g != nil {
			g.Quarantine = fmt.Sprintf("%s: an interrupted %s left %s; run `omnigraph cluster apply`", CodeRecoveryPending, rec.Operation, rec.key())
		}
	}
	for _, id := range sortedKeys(graphs) {
		g := graphs[id]
		sort.Slice(g.Queries, func(i, j int) bool { return g.Queries[i].Name < g.Queries[j].Name })
		a.Graphs = append(a.Graphs, g)
	}
	return a, nil
}

// Graph returns the applied graph id, or nil.
func (a *Applied) Graph(id string) *AppliedGraph {
	for _, g := range a.Graphs {
		if g.ID == id {
			return g
		}
	}
	return nil
}
