package server

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/omnigraph-go/omnigraph"
)

// Config is everything a server needs; a cluster loader or the quick-start
// --graph flag fills it, then New validates it, opens the graphs and builds
// the routes. Plaintext tokens never outlive New: they are hashed and the
// Config's copy is not retained.
type Config struct {
	// Graphs to serve, each under /graphs/{ID}/….
	Graphs []GraphConfig
	// Tokens are the bearer tokens (spec §2.2); none means no
	// authentication, which is allowed only with Unauthenticated.
	Tokens []Token
	// Authorizer is the installed policy. nil means no policy: every
	// action is allowed on an open server, and only read is allowed when
	// tokens are configured (default deny). A non-nil Authorizer without
	// tokens is refused (every request would be 401).
	Authorizer Authorizer
	// Unauthenticated permits serving without tokens (--unauthenticated,
	// OMNIGRAPH_UNAUTHENTICATED=1). Ignored when tokens are configured.
	Unauthenticated bool
	// RequireAllGraphs turns a graph that fails to open (or whose stored
	// queries no longer compile) from a quarantine into a boot failure.
	RequireAllGraphs bool
	Limits           Limits
	// Logger receives request, quarantine and authorization-decision
	// logs; nil discards them.
	Logger *slog.Logger
	// OpenOptions are used for graphs opened from a URI.
	OpenOptions omnigraph.Options
	// SourceVersion is reported by /healthz when set (a VCS revision).
	SourceVersion string
}

// GraphConfig is one served graph: an already open handle (shared, warm,
// used as is and closed by nobody) or a URI New opens.
type GraphConfig struct {
	ID    string
	URI   string
	Graph *omnigraph.Graph
	// Queries are the graph's stored queries, compiled against its main
	// branch at boot.
	Queries []StoredQuery
	// Quarantine, when set, is why the boot source already knows the graph
	// must not be served (e.g. a pending recovery); it is quarantined
	// without being opened (fatal with RequireAllGraphs).
	Quarantine string
	// Embedding, when set, is the graph's embedding provider (cluster
	// providers.embedding), overriding OpenOptions.Embedding.
	Embedding *omnigraph.EmbeddingConfig
}

// StoredQuery is a named query the server runs by name only
// (POST /graphs/{id}/queries/{name}); clients never send its source.
type StoredQuery struct {
	// Name is the registry key and the invoke path segment.
	Name string
	// Source is the .gq text holding the query.
	Source string
	// Query selects the query inside Source; "" means the query called
	// Name, or the only query of a one-query source.
	Query string
	// Description and Instruction override the query's own doc comments
	// in the catalog when set; ToolName overrides the MCP tool id (Name).
	Description, Instruction, ToolName string
}

// Token binds one bearer token to the actor id requests made with it act as.
type Token struct {
	Actor string
	Token string
}

// Limits bound what one request and one actor may hold.
type Limits struct {
	// PerActorInflight caps concurrent admission-gated requests per actor
	// (OMNIGRAPH_PER_ACTOR_INFLIGHT_MAX, default 16).
	PerActorInflight int
	// PerActorBytes caps the request bytes an actor's in-flight gated
	// requests may declare (OMNIGRAPH_PER_ACTOR_BYTES_MAX, default 4 GiB).
	PerActorBytes int64
	// BodyBytes caps a JSON request body (default 1 MiB).
	BodyBytes int64
	// LoadBodyBytes caps /load, /load/ndjson and /ingest bodies (default 32 MiB).
	LoadBodyBytes int64
}

// Default limits (spec/surfaces.md §2.6).
const (
	DefaultPerActorInflight       = 16
	DefaultPerActorBytes    int64 = 4 << 30
	DefaultBodyBytes        int64 = 1 << 20
	DefaultLoadBodyBytes    int64 = 32 << 20
)

// withDefaults is l with every unset (zero or negative) limit at its default.
func (l Limits) withDefaults() Limits {
	orDefault(&l.PerActorInflight, DefaultPerActorInflight)
	orDefault(&l.PerActorBytes, DefaultPerActorBytes)
	orDefault(&l.BodyBytes, DefaultBodyBytes)
	orDefault(&l.LoadBodyBytes, DefaultLoadBodyBytes)
	return l
}

// orDefault sets *v to d when *v is not positive.
func orDefault[T int | int64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Mode is the runtime state of spec/surfaces.md §2.1.
type Mode string

// The runtime states.
const (
	// ModeOpen: no tokens, no policy, explicitly unauthenticated.
	ModeOpen Mode = "open"
	// ModeDefaultDeny: tokens, no policy: only read is permitted.
	ModeDefaultDeny Mode = "default_deny"
	// ModePolicy: tokens and a policy.
	ModePolicy Mode = "policy_enabled"
)

// Boot refusals, matched with errors.Is.
var (
	// ErrNoAuth: no tokens and no policy, and Unauthenticated not set.
	ErrNoAuth = errors.New("server has no bearer tokens and no policy configured: this would be a fully open server; pass --unauthenticated (or set OMNIGRAPH_UNAUTHENTICATED=1) if that is intended, otherwise configure bearer tokens (OMNIGRAPH_SERVER_BEARER_TOKEN, OMNIGRAPH_SERVER_BEARER_TOKENS_FILE or OMNIGRAPH_SERVER_BEARER_TOKENS_JSON)")
	// ErrPolicyWithoutTokens: a policy is installed but no token can ever
	// authenticate.
	ErrPolicyWithoutTokens = errors.New("a policy is configured but no bearer tokens: every request would be 401; configure at least one bearer token, or remove the policy")
	// ErrNoHealthyGraph: nothing could be served.
	ErrNoHealthyGraph = errors.New("no healthy graph to serve")
	// ErrGraphQuarantined: RequireAllGraphs and a graph failed.
	ErrGraphQuarantined = errors.New("graph quarantined")
	// ErrInvalidConfig: a malformed Config (bad or duplicate graph id,
	// duplicate stored query, bad token).
	ErrInvalidConfig = errors.New("invalid server config")
	// ErrQuarantinedBySource: the boot source marked the graph unservable.
	ErrQuarantinedBySource = errors.New("quarantined by the boot source")
)

// classify computes the runtime state from the configured inputs, the one
// place that decides whether a server may start.
func classify(hasTokens, hasPolicy, unauthenticated bool) (Mode, error) {
	switch {
	case hasTokens && hasPolicy:
		return ModePolicy, nil
	case hasTokens:
		return ModeDefaultDeny, nil
	case hasPolicy:
		return "", ErrPolicyWithoutTokens
	case unauthenticated:
		return ModeOpen, nil
	}
	return "", ErrNoAuth
}

var graphIDPattern = regexp.MustCompile(`^[a-zA-Z0-9-]{1,64}$`)

// reservedGraphIDs collide with flat routes or future ones.
var reservedGraphIDs = map[string]bool{"policies": true, "healthz": true, "openapi": true, "graphs": true}

// ValidGraphID reports whether id may name a served graph
// (^[a-zA-Z0-9-]{1,64}$ and not reserved).
func ValidGraphID(id string) error {
	if !graphIDPattern.MatchString(id) {
		return fmt.Errorf("invalid graph id %q: use 1 to 64 letters, digits or '-'", id)
	}
	if reservedGraphIDs[id] {
		return fmt.Errorf("invalid graph id %q: the name is reserved", id)
	}
	return nil
}
