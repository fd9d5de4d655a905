package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/omnigraph-go/omnigraph"
)

// Server serves graphs over HTTP. Build it with New; it is safe for
// concurrent use.
type Server struct {
	mode      Mode
	tokens    *tokenSet
	authz     Authorizer
	limits    Limits
	log       *slog.Logger
	graphs    map[string]*graph
	ids       []string // served graph ids, sorted
	quar      map[string]error
	sourceVer string
	adm       *admission
	routes    []*route
	mux       *http.ServeMux
	openapi   []byte
}

// graph is one served graph: the shared warm handle every request uses.
type graph struct {
	id      string
	uri     string
	g       *omnigraph.Graph
	queries map[string]*storedQuery
	names   []string // stored query names, sorted
}

type storedQuery struct {
	name   string
	cfg    StoredQuery
	source string
	query  string // the name selected inside source
	info   *omnigraph.QueryInfo
}

// openConcurrency bounds parallel graph opens at boot.
const openConcurrency = 4

// New validates cfg, opens every graph (in parallel, four at a time),
// compiles their stored queries against main and builds the routes. A
// graph that fails to open or whose stored queries no longer compile is
// quarantined (logged, then 404 like an unknown id) unless
// cfg.RequireAllGraphs; zero healthy graphs is an error.
func New(ctx context.Context, cfg Config) (*Server, error) {
	mode, err := classify(len(cfg.Tokens) > 0, cfg.Authorizer != nil, cfg.Unauthenticated)
	if err != nil {
		return nil, err
	}
	tokens, err := newTokenSet(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	s := &Server{
		mode: mode, tokens: tokens, limits: cfg.Limits.withDefaults(), log: cfg.Logger,
		graphs: map[string]*graph{}, quar: map[string]error{}, sourceVer: cfg.SourceVersion,
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	switch {
	case cfg.Authorizer != nil:
		s.authz = cfg.Authorizer
	case mode == ModeOpen:
		s.authz = AllowAll{}
	default:
		s.authz = ReadOnly{}
	}
	s.adm = newAdmission(s.limits.PerActorInflight, s.limits.PerActorBytes)
	seen := map[string]bool{}
	for _, gc := range cfg.Graphs {
		if err := ValidGraphID(gc.ID); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
		}
		if seen[gc.ID] {
			return nil, fmt.Errorf("%w: duplicate graph id %q", ErrInvalidConfig, gc.ID)
		}
		seen[gc.ID] = true
		if gc.Graph == nil && gc.URI == "" && gc.Quarantine == "" {
			return nil, fmt.Errorf("%w: graph %q has neither a handle nor a URI", ErrInvalidConfig, gc.ID)
		}
	}
	s.openGraphs(ctx, cfg)
	if len(s.quar) > 0 && cfg.RequireAllGraphs {
		var ids []string
		for id := range s.quar {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		errs := []error{}
		for _, id := range ids {
			errs = append(errs, fmt.Errorf("graph %s: %w", id, s.quar[id]))
		}
		return nil, fmt.Errorf("%w (--require-all-graphs): %w", ErrGraphQuarantined, errors.Join(errs...))
	}
	if len(s.graphs) == 0 {
		if len(s.quar) > 0 {
			return nil, fmt.Errorf("%w: every graph is quarantined", ErrNoHealthyGraph)
		}
		return nil, ErrNoHealthyGraph
	}
	for id := range s.graphs {
		s.ids = append(s.ids, id)
	}
	sort.Strings(s.ids)
	s.routes = s.routeTable()
	s.mux = s.buildMux()
	if s.openapi, err = s.openAPIDocument(); err != nil {
		return nil, err
	}
	s.log.Info("server ready", "mode", string(mode), "graphs", len(s.graphs), "quarantined", len(s.quar), "actors", tokens.len())
	return s, nil
}

// openGraphs opens every configured graph with bounded parallelism and
// sorts each into s.graphs or s.quar.
func (s *Server) openGraphs(ctx context.Context, cfg Config) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, openConcurrency)
	for _, gc := range cfg.Graphs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			g, err := openGraph(ctx, gc, cfg.OpenOptions)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				s.quar[gc.ID] = err
				s.log.Error("graph quarantined", "graph", gc.ID, "uri", gc.URI, "error", err.Error())
				return
			}
			if s.mode != ModeOpen {
				// Defense in depth: the engine's writers ask the policy too.
				g.g = g.g.WithAuthorizer(engineAuthorizer{s: s, graph: gc.ID})
			}
			s.graphs[gc.ID] = g
		}()
	}
	wg.Wait()
}

func openGraph(ctx context.Context, gc GraphConfig, opts omnigraph.Options) (*graph, error) {
	if gc.Quarantine != "" {
		return nil, fmt.Errorf("%w: %s", ErrQuarantinedBySource, gc.Quarantine)
	}
	h := gc.Graph
	if h == nil {
		var err error
		if gc.Embedding != nil {
			opts.Embedding = gc.Embedding
		}
		if h, err = omnigraph.Open(ctx, gc.URI, opts); err != nil {
			return nil, err
		}
	}
	uri := gc.URI
	if uri == "" {
		uri = h.URI()
	}
	g := &graph{id: gc.ID, uri: uri, g: h, queries: map[string]*storedQuery{}}
	for _, q := range gc.Queries {
		if q.Name == "" {
			return nil, fmt.Errorf("%w: a stored query has no name", ErrInvalidConfig)
		}
		if _, dup := g.queries[q.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate stored query %q", ErrInvalidConfig, q.Name)
		}
		sq := &storedQuery{name: q.Name, cfg: q, source: q.Source, query: q.Query}
		if sq.query == "" {
			sq.query = q.Name
			// A one-query source may name its query differently.
			if info, err := h.DescribeQuery(ctx, omnigraph.Target{}, q.Source, ""); err == nil {
				sq.query = info.Name
			}
		}
		info, err := h.DescribeQuery(ctx, omnigraph.Target{}, q.Source, sq.query)
		if err != nil {
			return nil, fmt.Errorf("stored query %q no longer compiles against main: %w", q.Name, err)
		}
		sq.info = info
		g.queries[q.Name] = sq
		g.names = append(g.names, q.Name)
	}
	sort.Strings(g.names)
	return g, nil
}

// Mode reports the runtime state the server booted in.
func (s *Server) Mode() Mode { return s.mode }

// Quarantined returns the graphs that failed at boot with their reasons.
func (s *Server) Quarantined() map[string]error {
	out := make(map[string]error, len(s.quar))
	for k, v := range s.quar {
		out[k] = v
	}
	return out
}

// GraphIDs lists the served graph ids, sorted.
func (s *Server) GraphIDs() []string { return append([]string(nil), s.ids...) }

// Handler returns the HTTP handler of every route.
func (s *Server) Handler() http.Handler { return s.mux }

// DrainTimeout is how long Serve waits for in-flight requests on shutdown.
const DrainTimeout = 30 * time.Second

// Serve serves on ln until ctx is cancelled, then stops accepting and
// drains in-flight requests for up to DrainTimeout. It returns nil after a
// clean drain.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("draining in-flight requests")
	dctx, cancel := context.WithTimeout(context.Background(), DrainTimeout)
	defer cancel()
	if err := hs.Shutdown(dctx); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.log.Info("server stopped")
	return nil
}
