package omnigraph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/embed"
	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/exec"
	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	s3store "github.com/omnigraph-go/omnigraph/internal/storage/s3"
	"github.com/omnigraph-go/omnigraph/internal/storeuri"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Result types shared with the engine. They are plain data.
type (
	// Target selects what a read sees: a branch head (Branch, default
	// "main") or an exact commit (Snapshot).
	Target = exec.Target
	// CommitInfo describes one commit.
	CommitInfo = exec.CommitInfo
	// LoadMode is "append", "merge" or "overwrite".
	LoadMode = exec.LoadMode
	// LoadResult reports what a load published.
	LoadResult = exec.LoadResult
	// MutationResult reports what a mutation changed and the commit it made
	// (nil when nothing changed).
	MutationResult = exec.MutationResult
	// TableInfo describes one node or edge table of a snapshot.
	TableInfo = exec.TableInfo
	// PreconditionFailedError reports a conditional write whose branch head
	// moved: nothing was written.
	PreconditionFailedError = exec.PreconditionFailedError
	// ReadSetChangedError reports a strict write that lost the publish race
	// to a commit changing what it read (the row, by type and id, or the
	// table or schema): nothing was written; it can be retried.
	ReadSetChangedError = exec.ReadSetChangedError
	// KeyConflictError reports a strict insert of an id that exists.
	KeyConflictError = exec.KeyConflictError
	// ContentionError reports a write that kept losing the publish race
	// until its retry budget ran out: nothing was written.
	ContentionError = exec.ContentionError
)

// Load modes.
const (
	Append    LoadMode = "append"
	Merge     LoadMode = "merge"
	Overwrite LoadMode = "overwrite"
)

// Errors callers branch on with errors.Is.
var (
	// ErrUnsupportedURI: the address names a storage backend this build lacks.
	ErrUnsupportedURI = errors.New("unsupported graph URI")
	// ErrNoGraph: nothing is initialized at the address.
	ErrNoGraph = errors.New("no graph at this address")
	// ErrInvalidOption: an option or its environment variable has a bad value.
	ErrInvalidOption = errors.New("invalid option")
	// ErrAlreadyInitialized: Init found a graph at the address.
	ErrAlreadyInitialized = commit.ErrAlreadyInitialized
	// ErrPreconditionFailed: a conditional write (IfCommit) found another
	// branch head; nothing was written (*PreconditionFailedError).
	ErrPreconditionFailed = exec.ErrPreconditionFailed
	// ErrReadSetChanged: a strict write (update, delete, overwrite load)
	// lost its publish to a commit that changed what it read.
	ErrReadSetChanged = exec.ErrReadSetChanged
	// ErrContention: a write kept losing the publish race until its retry
	// budget ran out (*ContentionError); nothing was written.
	ErrContention = exec.ErrContention
	// ErrNoSpace: the graph's storage is full (ENOSPC, EDQUOT). The write
	// that failed with it had no effect and deleted what it had written
	// unless its publish's outcome was unknown; retry once space is free.
	ErrNoSpace = storage.ErrNoSpace
	// ErrCommitNotFound: no commit has the given id.
	ErrCommitNotFound = exec.ErrCommitNotFound
	// ErrAmbiguousCommit: a commit-id prefix matching several commits (the
	// error lists them).
	ErrAmbiguousCommit = commit.ErrAmbiguousRevision
	// ErrBranchNotFound: no branch has the given name.
	ErrBranchNotFound = exec.ErrBranchNotFound
	// ErrBranchExists: CreateBranch found the name (or an ancestor or
	// descendant path of it) taken.
	ErrBranchExists = exec.ErrBranchExists
	// ErrInvalidBranch: the name is not a valid branch name.
	ErrInvalidBranch = exec.ErrInvalidBranch
	// ErrProtectedBranch: main cannot be created or deleted.
	ErrProtectedBranch = exec.ErrProtectedBranch
	// ErrMergeConflicts: a merge found conflicts (*MergeConflictsError);
	// nothing was published.
	ErrMergeConflicts = exec.ErrMergeConflicts
	// ErrNotMutation: Mutate was given a read query.
	ErrNotMutation = exec.ErrNotMutation
	// ErrUnsupportedValue: a value the store cannot hold (an external blob URI).
	ErrUnsupportedValue = exec.ErrUnsupportedValue
	// ErrResourceLimit: a request stopped at a bound (a query's memory or
	// time, a page size); the error is a *ResourceLimitError.
	ErrResourceLimit = limits.ErrResourceLimit
)

// Options tune a graph handle.
type Options struct {
	// CacheBytes bounds the in-memory cache of decoded immutable objects
	// (0 = the OMNIGRAPH_CACHE_BYTES environment variable, else the
	// engine default, 512 MiB). Reads over tables whose decoded image
	// would take more than half of it answer through the persisted indexes
	// and streaming scans instead of whole-table images (docs/performance.md).
	CacheBytes int64
	// CacheDir, if set, caches immutable objects of remote (s3://) graphs
	// in this local directory, shared safely by processes (default: the
	// OMNIGRAPH_CACHE_DIR environment variable; unset = memory only).
	CacheDir string
	// CacheDirBytes bounds CacheDir (0 = OMNIGRAPH_CACHE_MAX_BYTES, else 1 GiB).
	CacheDirBytes int64
	// wrapBackend, if set, wraps the backend store (Local, S3) under every
	// other layer (tests: request counting, latency).
	wrapBackend func(storage.Store) storage.Store
	// noObjectCache leaves the object cache out of a remote store (tests
	// comparing raw request counts with a local directory).
	noObjectCache bool
	// Now overrides the clock (tests).
	Now func() time.Time
	// QueryMemoryBytes bounds each read query's working memory (0 = 2 GiB,
	// < 0 = unlimited) and QueryTimeout its wall time (0 = none); over
	// either a query fails with *ResourceLimitError and the process is
	// unharmed. WithQueryLimits overrides them per call.
	QueryMemoryBytes int64
	QueryTimeout     time.Duration
	// Embedding configures the embedding provider of nearest() with a
	// String query and of @embed fills on load and mutate (nil: the
	// OMNIGRAPH_EMBED_* environment; docs/search.md).
	Embedding *EmbeddingConfig
	// Authorizer, if set, is asked before every write that acts for an
	// actor (authz.go); WithAuthorizer sets it on an open handle.
	Authorizer Authorizer
}

// ResourceLimitError reports a request stopped at a bound: Resource
// ("query_memory_bytes", "query_time_ms", …), Limit and Actual (what it
// needed, at least). Nothing was changed.
type ResourceLimitError = limits.Error

// QueryLimits bound one read query; zero fields take the handle's
// Options.QueryMemoryBytes / QueryTimeout.
type QueryLimits struct {
	MemoryBytes int64         // working memory (< 0 = unlimited)
	Timeout     time.Duration // wall time (< 0 = none)
}

// WithQueryLimits returns ctx carrying limits for the read queries run
// with it.
func WithQueryLimits(ctx context.Context, l QueryLimits) context.Context {
	return exec.WithQueryLimits(ctx, exec.QueryLimits{MemoryBytes: l.MemoryBytes, Timeout: l.Timeout})
}

// EmbeddingConfig says how to reach an embedding provider.
type EmbeddingConfig = embed.Config

// Graph is a handle on one graph. It is safe for concurrent use by many
// goroutines, and any number of processes may hold handles on one graph.
type Graph struct {
	uri string
	eng *exec.Graph
	// authz, if set, is asked by every writer (authz.go).
	authz Authorizer
	// initWarnings are the warnings of the schema Init compiled (nil for
	// a handle from Open).
	initWarnings []SchemaWarning
	// plans are the read queries this handle compiled (query_plans.go).
	plans planCache
}

// The module's own raw-store users (verify, repair, clusters) open stores
// through internal/storeuri: the store a graph URI names — a local path, a
// file:// URL, or s3://bucket/prefix (configured from the AWS_* environment,
// see docs/s3.md), a remote one caching immutable objects in memory and, if
// OMNIGRAPH_CACHE_DIR is set, on disk.
func init() {
	storeuri.Register(func(uri string, create bool) (storage.Store, error) {
		return openStore(uri, create, Options{})
	})
}

// Environment variables of the disk cache for remote graphs.
const (
	EnvCacheDir      = "OMNIGRAPH_CACHE_DIR"
	EnvCacheMaxBytes = "OMNIGRAPH_CACHE_MAX_BYTES"
	// EnvCacheBytes is the memory cache budget of a handle opened without
	// Options.CacheBytes, in bytes.
	EnvCacheBytes = "OMNIGRAPH_CACHE_BYTES"
	// EnvWriteTurns set to 0 makes the writers of several processes on one
	// local graph race by compare-and-swap alone instead of taking turns
	// per branch (docs/write-path.md).
	EnvWriteTurns = "OMNIGRAPH_WRITE_TURNS"
	// EnvForwardWrites set to 0 keeps every mutation in its own process:
	// by default, a mutation that finds its branch's turn held by another
	// process on the same machine is handed to that process, which
	// commits it with its own writes (docs/write-path.md).
	EnvForwardWrites = "OMNIGRAPH_FORWARD_WRITES"
	// EnvInlineDVBytes bounds the deletion vectors writes carry inside
	// their table states (docs/format/table.md, "Inline deletion
	// vectors"); 0 writes every vector as an object of its own, so that
	// builds which read table-state formats 1–3 only still read the graph.
	// Unset: 256 bytes.
	EnvInlineDVBytes = "OMNIGRAPH_INLINE_DV_BYTES"
	// EnvInlineStateBytes bounds the table states writes carry inside
	// their commits (docs/format/commit.md, "Inline table states"); 0
	// writes every state as an object of its own, so that builds which
	// read commit format 1 only still read the graph. Unset: 12 KiB.
	EnvInlineStateBytes = "OMNIGRAPH_INLINE_STATE_BYTES"
	// EnvInlineIndexBytes bounds the fragment indexes writes carry inside
	// their table states (docs/format/table.md, "Inline fragment
	// indexes"); 0 writes every index as an object of its own, so that
	// builds which read table-state formats 1–4 only still read the graph.
	// Unset: 1024 bytes.
	EnvInlineIndexBytes = "OMNIGRAPH_INLINE_INDEX_BYTES"
	// EnvChainObjects set to 0 writes every commit of a group commit's
	// chain as an object of its own, as builds before chain objects did
	// (docs/format/commit.md, "Chain objects"), so that those builds still
	// read the graph. Unset or 1: a local graph keeps a chain's commits in
	// one file under all their names.
	EnvChainObjects = "OMNIGRAPH_CHAIN_OBJECTS"
)

// IsRemote reports whether uri names a remote (object-store) graph.
func IsRemote(uri string) bool { return strings.HasPrefix(uri, "s3://") }

func openStore(uri string, create bool, o Options) (storage.Store, error) {
	switch {
	case strings.HasPrefix(uri, "s3://"):
		return openS3(uri, o)
	case strings.HasPrefix(uri, "http://"), strings.HasPrefix(uri, "https://"):
		return nil, fmt.Errorf("%w: %s (a remote graph must be addressed with --server)", ErrUnsupportedURI, uri)
	case strings.Contains(uri, "://") && !strings.HasPrefix(uri, "file://"):
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedURI, uri)
	}
	dir := strings.TrimPrefix(uri, "file://")
	if dir == "" {
		return nil, fmt.Errorf("%w: empty path", ErrUnsupportedURI)
	}
	if !create {
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: %s", ErrNoGraph, uri)
		}
	}
	local, err := storage.NewLocal(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	var st storage.Store = local
	if o.wrapBackend != nil {
		st = o.wrapBackend(st)
	}
	// As on S3, a write's new objects go out concurrently before its CAS:
	// their fsyncs overlap instead of running one after another
	// (BenchmarkWriters/local/writers=1: ~1.4x the writes per second).
	return storage.NewBatching(st), nil
}

// openS3 opens an s3:// graph store behind the object cache.
func openS3(uri string, o Options) (storage.Store, error) {
	cfg, err := s3store.ConfigFromEnv(uri, os.Getenv)
	if err != nil {
		return nil, err
	}
	st, err := s3store.New(cfg)
	if err != nil {
		return nil, err
	}
	co := storage.CacheOptions{Immutable: ImmutableKey, Namespace: cfg.Endpoint + " " + st.URI()}
	var backend storage.Store = st
	if o.wrapBackend != nil {
		backend = o.wrapBackend(st)
	}
	dir, max := o.CacheDir, o.CacheDirBytes
	if dir == "" {
		dir = os.Getenv(EnvCacheDir)
	}
	if max == 0 {
		if v := os.Getenv(EnvCacheMaxBytes); v != "" {
			if max, err = strconv.ParseInt(v, 10, 64); err != nil || max <= 0 {
				return nil, fmt.Errorf("%s=%q: want a positive number of bytes", EnvCacheMaxBytes, v)
			}
		}
	}
	if dir != "" {
		if co.Disk, err = storage.OpenDiskCache(dir, max); err != nil {
			return nil, err
		}
	}
	// Batching lets a write send all its new objects concurrently before
	// its CAS (one round trip instead of one per object).
	if o.noObjectCache {
		return storage.NewBatching(backend), nil
	}
	return storage.NewBatching(storage.NewCached(backend, co)), nil
}

// ImmutableKey reports whether a graph object never changes once written:
// commits, schema sources and every table object (fragments, deletion
// vectors, table states, indexes) are; branch refs and the format stamp are
// read from the store every time.
func ImmutableKey(key string) bool {
	return strings.HasPrefix(key, "commits/") || strings.HasPrefix(key, "schemas/") || strings.HasPrefix(key, "tables/")
}

// openEngine opens what Init (create) and Open hand the engine: the store
// at uri and the engine's options from opts and the environment.
func openEngine(uri string, create bool, opts Options) (storage.Store, exec.Options, error) {
	st, err := openStore(uri, create, opts)
	if err != nil {
		return nil, exec.Options{}, err
	}
	eo, err := engineOptions(opts)
	if err != nil {
		return nil, exec.Options{}, err
	}
	return st, eo, nil
}

func engineOptions(o Options) (exec.Options, error) {
	n := o.CacheBytes
	if v := os.Getenv(EnvCacheBytes); n == 0 && v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
			return exec.Options{}, fmt.Errorf("%w: %s=%q: want a positive number of bytes", ErrInvalidOption, EnvCacheBytes, v)
		}
	}
	eo := exec.Options{CacheBytes: n, Now: o.Now, QueryMemoryBytes: o.QueryMemoryBytes, QueryTimeout: o.QueryTimeout, Embedding: o.Embedding}
	// Every variable is read; the first bad one is the error.
	if err := cmp.Or(offEnv(EnvWriteTurns, &eo.NoWriteTurns), offEnv(EnvForwardWrites, &eo.NoForwardWrites), offEnv(EnvChainObjects, &eo.NoChainObjects),
		inlineEnv(EnvInlineDVBytes, &eo.InlineDVBytes), inlineEnv(EnvInlineStateBytes, &eo.InlineStateBytes), inlineEnv(EnvInlineIndexBytes, &eo.InlineIndexBytes)); err != nil {
		return exec.Options{}, err
	}
	return eo, nil
}

// offEnv reads an on/off switch from the environment into *off: true when
// it is turned off ("0", "off"); unset, "1" or "on" leave it on.
func offEnv(name string, off *bool) error {
	switch v := os.Getenv(name); v {
	case "", "1", "on":
		*off = false
	case "0", "off":
		*off = true
	default:
		return fmt.Errorf("%w: %s=%q: want 0 or 1", ErrInvalidOption, name, v)
	}
	return nil
}

// inlineEnv reads an inline bound from the environment into *n as an
// engine option: unset is the default (0), "0" none (-1), else the bytes.
func inlineEnv(name string, n *int) error {
	v := os.Getenv(name)
	if v == "" {
		*n = 0
		return nil
	}
	b, err := strconv.Atoi(v)
	if err != nil || b < 0 {
		return fmt.Errorf("%w: %s=%q: want a number of bytes (0: none inline)", ErrInvalidOption, name, v)
	}
	if b == 0 {
		b = -1
	}
	*n = b
	return nil
}

// Init creates a graph at uri from a schema source and publishes its first
// commit. It refuses an address that already holds a graph.
//
// The handle's SchemaWarnings are the warnings of that schema.
func Init(ctx context.Context, uri, schemaPath, schemaSrc, actor string, opts Options) (*Graph, error) {
	cat, err := schema.Compile(schemaPath, schemaSrc)
	if err != nil {
		return nil, err
	}
	st, eo, err := openEngine(uri, true, opts)
	if err != nil {
		return nil, err
	}
	eng, err := exec.Init(ctx, st, schemaPath, schemaSrc, actor, eo)
	if err != nil {
		return nil, err
	}
	return &Graph{uri: uri, eng: eng, authz: opts.Authorizer, initWarnings: cat.Warnings}, nil
}

// SchemaWarnings returns the warnings of the schema source Init compiled
// for this handle: findings (S001, a near-miss annotation) that do not
// stop the schema from compiling. A handle from Open has none; a plan's
// warnings are in SchemaPlan.Warnings.
func (g *Graph) SchemaWarnings() []SchemaWarning { return g.initWarnings }

// Open opens the graph at uri.
func Open(ctx context.Context, uri string, opts Options) (*Graph, error) {
	st, eo, err := openEngine(uri, false, opts)
	if err != nil {
		return nil, err
	}
	eng, err := exec.Open(ctx, st, eo)
	if err != nil {
		return nil, err
	}
	return &Graph{uri: uri, eng: eng, authz: opts.Authorizer}, nil
}

// URI returns the address the graph was opened with.
func (g *Graph) URI() string { return g.uri }

// catalog returns the compiled schema at a target (internal: the catalog
// type is not part of the public API).
func (g *Graph) catalog(ctx context.Context, t Target) (*schema.Catalog, error) {
	snap, err := g.eng.Resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	return snap.Catalog(), nil
}

// SchemaSource returns the accepted .pg source at a target.
func (g *Graph) SchemaSource(ctx context.Context, t Target) (string, error) {
	return g.eng.SchemaSource(ctx, t)
}

// ReadResult is the outcome of a read query.
type ReadResult struct {
	QueryName string
	Columns   []string
	// Rows holds one value per column, encoded for JSON (numbers, strings,
	// arrays, null) exactly as the CLI and HTTP API print them; numbers are
	// json.Number so 64-bit integers stay exact.
	Rows   [][]any
	Commit CommitInfo
}

// CheckQuery compiles query source against the schema at a target and
// reports whether the query called name ("" for the only query of a
// one-query source) is valid there, with the compiler's typed error if not.
// Nothing runs.
func (g *Graph) CheckQuery(ctx context.Context, t Target, src, name string) error {
	_, err := g.compile(ctx, t, src, name)
	return err
}

// compile compiles query source against the schema at a target and selects
// the query called name ("" selects the only query of a one-query source).
func (g *Graph) compile(ctx context.Context, t Target, src, name string) (*query.Plan, error) {
	cat, err := g.catalog(ctx, t)
	if err != nil {
		return nil, err
	}
	return compileNamed(cat, src, name)
}

// queryTypes returns the node and edge type names the read query name of
// src mentions in its match clauses, as written (nil when src does not
// parse or name is not a read of it): a prediction of the tables the
// query reads, taken before the schema is known.
func queryTypes(src, name string) []string {
	ast, err := query.Parse("<query>", src)
	if err != nil {
		return nil
	}
	var q *query.QueryDecl
	for _, d := range ast.Queries {
		if d.Name == name || (name == "" && len(ast.Queries) == 1) {
			q = d
		}
	}
	if q == nil || q.IsMutation() {
		return nil
	}
	var types []string
	var walk func([]query.Clause)
	walk = func(cs []query.Clause) {
		for _, c := range cs {
			switch c := c.(type) {
			case *query.Binding:
				types = append(types, c.Type)
			case *query.Traversal:
				types = append(types, c.Edge)
			case *query.Negation:
				walk(c.Clauses)
			}
		}
	}
	walk(q.Match)
	return types
}

func compileNamed(cat *schema.Catalog, src, name string) (*query.Plan, error) {
	f, err := query.Compile(cat, "<query>", src)
	if name == "" {
		names := f.Names()
		if len(names) != 1 {
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("the source defines multiple queries (%d: %s): name the one to run", len(names), strings.Join(names, ", "))
		}
		name = names[0]
	}
	if err != nil {
		return query.CompileQuery(cat, "<query>", src, name)
	}
	return f.Query(name)
}

// Query runs a read query. Mutations are refused: use Mutate.
func (g *Graph) Query(ctx context.Context, t Target, src, name string, params map[string]any) (*ReadResult, error) {
	// Resolve once: the plan is compiled against the catalog of the very
	// commit it then reads, and the head is probed only once.
	snap, plan, err := g.readPlan(ctx, t, src, name)
	if err != nil {
		return nil, err
	}
	res, err := g.eng.QueryAt(ctx, snap, plan, params)
	if err != nil {
		return nil, err
	}
	out := &ReadResult{QueryName: plan.Name, Commit: g.eng.CommitOf(snap), Columns: columnNames(res.Columns)}
	for _, row := range res.Rows {
		enc, err := encodeRow(res.Columns, row)
		if err != nil {
			return nil, err
		}
		out.Rows = append(out.Rows, enc)
	}
	return out, nil
}

// ReadStream is a read query's result read row by row (Graph.QueryStream):
// the same rows as ReadResult.Rows, in the same encoding, produced in
// batches so that a result larger than memory can be written out.
type ReadStream struct {
	QueryName string
	Columns   []string
	// RowCount is the number of rows Rows yields, known before the first.
	RowCount int
	Commit   CommitInfo

	ctx  context.Context
	st   *eval.Stream
	cols []query.Column
}

// Rows calls fn with every row in order (one value per column, encoded as
// in ReadResult.Rows). The row slice is reused after fn returns; the values
// may be kept. It may be called more than once, yielding the same rows. It
// returns fn's first error, or the query's (a deadline passed while the
// rows are read is a *limits.Error resource-limit error; an unencodable
// value names its column).
func (s *ReadStream) Rows(fn func(row []any) error) error {
	enc := make([]any, len(s.cols))
	return s.st.Each(s.ctx, func(row []any) error {
		if err := encodeRowInto(enc, s.cols, row); err != nil {
			return err
		}
		return fn(enc)
	})
}

// QueryStream runs a read query and hands its result to fn as a stream,
// valid only while fn runs. Compile and evaluation errors are returned
// before fn is called; the projected rows are produced while fn reads
// them and are not charged to the query memory limit (only the binding
// rows, aggregate groups and the batch being read are). QueryStream
// returns fn's error.
func (g *Graph) QueryStream(ctx context.Context, t Target, src, name string, params map[string]any, fn func(*ReadStream) error) error {
	snap, plan, err := g.readPlan(ctx, t, src, name)
	if err != nil {
		return err
	}
	return g.eng.QueryStreamAt(ctx, snap, plan, params, func(ctx context.Context, st *eval.Stream) error {
		return fn(&ReadStream{QueryName: plan.Name, Columns: columnNames(st.Columns), RowCount: st.Len(),
			Commit: g.eng.CommitOf(snap), ctx: ctx, st: st, cols: st.Columns})
	})
}

// readPlan resolves a target and compiles the read query called name
// against that very snapshot's catalog.
func (g *Graph) readPlan(ctx context.Context, t Target, src, name string) (*snapshot.Snapshot, *query.Plan, error) {
	kept := g.plans.get(src, name)
	var types []string
	if kept != nil {
		types = kept.types
	} else {
		types = queryTypes(src, name)
	}
	// The types the query names are fetched with the ref and the commit
	// (a cold handle's first round trips; exec.ResolveReading).
	snap, err := g.eng.ResolveReading(ctx, t, types)
	if err != nil {
		return nil, nil, err
	}
	if kept != nil && kept.cat == snap.Catalog() {
		return snap, kept.plan, nil // compiled against this very catalog
	}
	plan, err := compileNamed(snap.Catalog(), src, name)
	if err != nil {
		return nil, nil, err
	}
	if plan.IsMutation() {
		return nil, nil, fmt.Errorf("query '%s' is a mutation: run it with mutate", plan.Name)
	}
	g.plans.put(src, name, &readPlanEntry{types: types, cat: snap.Catalog(), plan: plan})
	return snap, plan, nil
}

func columnNames(cols []query.Column) []string {
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	return names
}

// encodeRow encodes one output row for JSON (ReadResult.Rows).
func encodeRow(cols []query.Column, row []any) ([]any, error) {
	enc := make([]any, len(row))
	return enc, encodeRowInto(enc, cols, row)
}

func encodeRowInto(enc []any, cols []query.Column, row []any) error {
	for i, v := range row {
		raw, err := value.EncodeJSON(cols[i].Type, v)
		if err != nil {
			return fmt.Errorf("encode column %s: %w", cols[i].Name, err)
		}
		if enc[i], err = decodeJSONValue(raw); err != nil {
			return fmt.Errorf("encode column %s: %w", cols[i].Name, err)
		}
	}
	return nil
}

// decodeJSONValue turns one encoded value back into plain Go data, keeping
// numbers exact as json.Number.
func decodeJSONValue(raw []byte) (any, error) {
	// Scalars — most cells — skip the decoder (a streamed result decodes
	// one value per cell, and a decoder per value is most of its garbage);
	// they decode to what the decoder gives them.
	switch v := bytes.TrimSpace(raw); {
	case len(v) == 0:
	case v[0] == '"':
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case v[0] == '-' || '0' <= v[0] && v[0] <= '9':
		if json.Valid(v) {
			return json.Number(v), nil
		}
	case string(v) == "null":
		return nil, nil
	case string(v) == "true":
		return true, nil
	case string(v) == "false":
		return false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// MutateOptions tune a mutation.
type MutateOptions struct {
	// Actor is recorded on the commit.
	Actor string
	// IfCommit makes the write conditional on the branch head being this
	// commit; otherwise it fails with a precondition error and changes nothing.
	IfCommit string
}

// Mutate runs a mutation query on a branch ("" = main) as one atomic commit.
func (g *Graph) Mutate(ctx context.Context, branch, src, name string, params map[string]any, o MutateOptions) (*MutationResult, string, error) {
	// One head read: the write starts from the head the query compiled against.
	ctx = commit.WithHeadMemo(g.writeCtx(ctx))
	plan, err := g.compile(ctx, Target{Branch: branch}, src, name)
	if err != nil {
		return nil, "", err
	}
	if !plan.IsMutation() {
		return nil, plan.Name, fmt.Errorf("query '%s' is a read query: run it with query", plan.Name)
	}
	res, err := g.eng.Mutate(ctx, branch, plan, params, exec.MutateOptions{Actor: o.Actor, IfCommit: o.IfCommit, Source: src})
	return res, plan.Name, err
}

// LoadOptions tune a load.
type LoadOptions struct {
	// Branch to load into ("" = main). It must exist unless From is set.
	Branch string
	// From forks a missing Branch from this branch or commit first.
	From     string
	Mode     LoadMode
	Actor    string
	Progress func(records int64)
}

// Load reads graph-batch NDJSON from r and publishes it as one commit.
func (g *Graph) Load(ctx context.Context, r io.Reader, o LoadOptions) (*LoadResult, error) {
	return g.eng.Load(g.writeCtx(ctx), r, exec.LoadRequest{Branch: o.Branch, From: o.From, Mode: o.Mode, Actor: o.Actor, Progress: o.Progress})
}

// Export writes the graph at a target as NDJSON that Load accepts.
// types limits the export to those node/edge types (nil = all).
func (g *Graph) Export(ctx context.Context, t Target, types []string, w io.Writer) error {
	return g.eng.Export(ctx, t, types, w)
}

// Log lists up to limit commits of a branch, newest first (limit 0 = all).
func (g *Graph) Log(ctx context.Context, branch string, limit int) ([]CommitInfo, error) {
	return g.eng.Log(ctx, branch, limit)
}

// Commit returns one commit by id.
func (g *Graph) Commit(ctx context.Context, id string) (CommitInfo, error) {
	return g.eng.CommitByID(ctx, id)
}

// Tables lists every table at a target with its row count.
func (g *Graph) Tables(ctx context.Context, t Target) ([]TableInfo, CommitInfo, error) {
	snap, err := g.eng.Resolve(ctx, t)
	if err != nil {
		return nil, CommitInfo{}, err
	}
	// List the tables of exactly the commit resolved above, even if the
	// branch moves in between.
	ci := g.eng.CommitOf(snap)
	tabs, err := g.eng.Tables(ctx, Target{Snapshot: ci.ID})
	return tabs, ci, err
}
