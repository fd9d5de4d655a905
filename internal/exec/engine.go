package exec

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/embed"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// DefaultMaxRetries bounds how often one write re-prepares after losing the
// publish CAS before it gives up with the *commit.HeadMovedError.
const DefaultMaxRetries = 64

// Options configure a Graph handle.
type Options struct {
	// CacheBytes bounds the handle's cache of immutable decoded objects
	// (commits, schemas, table states, table images and their indexes);
	// 0 = DefaultCacheBytes.
	CacheBytes int64
	// Now supplies commit timestamps and now() in mutations (nil = time.Now).
	Now func() time.Time
	// MaxRetries bounds rebases after a lost CAS (0 = DefaultMaxRetries);
	// RetryBudget bounds the time a write spends losing races (0 =
	// DefaultRetryBudget). A write past either fails with *ContentionError.
	MaxRetries  int
	RetryBudget time.Duration
	// MaxBatch bounds the writes one group commit chains into one CAS
	// (0 = DefaultMaxBatch; 1 turns group commit off: every write
	// publishes alone).
	MaxBatch int
	// NoWriteTurns leaves out the per-branch turns writers of several
	// processes take on a local directory (storage.Serializer): they race
	// by CAS alone, as on object storage.
	NoWriteTurns bool
	// NoForwardWrites keeps every write in its own process: without it, a
	// mutation whose branch's turn another process holds is handed to that
	// process, which commits it with its own writes (forward.go). Implied
	// by NoWriteTurns.
	NoForwardWrites bool
	// InlineDVBytes bounds the deletion vectors a write carries inline in
	// its table state (table-state format 4; 0 = table.DefaultInlineDVBytes,
	// < 0 = none: every vector is an object, and every state stays readable
	// by builds that read formats 1–3).
	InlineDVBytes int
	// InlineStateBytes bounds the table states a write carries inline in
	// its commit (commit format 2; 0 = table.DefaultInlineStateBytes, < 0 =
	// none: every state is an object, and every commit stays readable by
	// builds that read commit format 1 only).
	InlineStateBytes int
	// InlineIndexBytes bounds the fragment indexes a write carries inline
	// in its table state (table-state format 5; 0 =
	// table.DefaultInlineIndexBytes, < 0 = none: every index is an object,
	// and every state stays readable by builds that read formats 1–4).
	InlineIndexBytes int
	// NoChainObjects writes each commit of a group commit's chain as an
	// object of its own even where the store could keep them in one
	// (commit.Repo.WriteCommitsShared: a local directory), for graphs that
	// builds without chain objects must still read.
	NoChainObjects bool
	// NoAutoCompact turns off inline compaction after writes
	// (docs/maintenance.md); Optimize still compacts on demand.
	NoAutoCompact bool
	// CompactFragments: a write leaving a table with more small fragments
	// than this compacts it inline (0 = DefaultCompactFragments).
	CompactFragments int
	// CompactTargetRows: the live-row size of a full fragment, which
	// compaction leaves alone (0 = DefaultCompactTargetRows).
	CompactTargetRows int64
	// QueryMemoryBytes and QueryTimeout are the handle's default query
	// limits (QueryLimits; WithQueryLimits overrides them per call).
	QueryMemoryBytes int64
	QueryTimeout     time.Duration
	// Embedding configures the embedding client of nearest() with a String
	// query and of @embed fills on load and mutate (nil: the environment,
	// embed.FromEnv). The client is built once, on first use.
	Embedding *embed.Config
}

// Graph is a handle on one graph: the engine of load, mutation, query and
// export. It holds no mutable graph state of its own — every operation
// resolves the branch ref afresh — so any number of handles, in any number
// of processes, may work on one graph; the ref CAS is the only authority.
// A Graph is safe for concurrent use.
type Graph struct {
	repo       *commit.Repo
	st         storage.Store
	cache      *cache.Cache[any]
	snaps      *snapshot.Loader
	now        func() time.Time
	maxRetries int
	// retryBudget and maxBatch: Options.RetryBudget and Options.MaxBatch.
	retryBudget time.Duration
	maxBatch    int
	queues      *writeQueues
	// serial, if the store has one, lets writers of several processes
	// take turns per branch (takeTurn).
	serial storage.Serializer
	// mail, if the store has one (and turns are on), lets this handle
	// hand writes to the process holding a branch's turn and take those
	// of others (forward.go).
	mail storage.Mailbox
	// lastForeign is when this handle last committed writes of other
	// processes (unix ns; forward.go, linger).
	lastForeign atomic.Int64
	maint       maintConfig
	// qlimits: Options.QueryMemoryBytes and Options.QueryTimeout.
	qlimits QueryLimits
	// inlineDV, inlineState and inlineIndex: Options.InlineDVBytes,
	// InlineStateBytes and InlineIndexBytes resolved (0 = none).
	inlineDV, inlineState, inlineIndex int
	// chainObjects: !Options.NoChainObjects.
	chainObjects bool

	// testBeforePublish, when set (tests only), runs after a batch is fully
	// staged — its objects written, or behind a batching layer held for
	// settleChain, which sends them after it — just before the CAS: the
	// deterministic seam for race tests.
	testBeforePublish func(attempt int)
	// partialReads counts reads answered by a partial snapshot (tests).
	partialReads atomic.Int64
	// columnReads counts the partial reads answered on typed column
	// scans without reading their node table (tests).
	columnReads atomic.Int64
	// emb is the handle's embedding client, built on first use (embed.go).
	emb embedder
	// resolved memoizes, per branch, what the last resolve of its head
	// derived from the head commit (resolve_memo.go).
	resolved sync.Map
}

// Target selects what a read sees: a pinned commit (Snapshot, a commit id)
// or the current head of Branch ("" = main).
type Target struct {
	Branch   string
	Snapshot string
}

// CommitInfo describes one commit for callers (CLI --json, receipts).
type CommitInfo struct {
	ID, Branch string
	// ManifestVersion is the commit height (0 for genesis): our equivalent
	// of the reference system's graph manifest version.
	ManifestVersion int64
	Parent          string
	MergedParent    string
	Actor           string
	CreatedAt       time.Time
	Kind            string
	Message         string
}

// TableInfo describes one table of a snapshot.
type TableInfo struct {
	Kind      string // "node" or "edge"
	Name      string
	Rows      int64
	Fragments int
	// Indexes reports the coverage of every search index the schema
	// declares on the table (search_index.go), then of every scalar
	// index (scalar_index.go).
	Indexes []IndexCoverage
}

func (o Options) repoOptions() (commit.Options, *cache.Cache[any]) {
	n := o.CacheBytes
	if n <= 0 {
		n = DefaultCacheBytes
	}
	c := cache.New[any](n)
	return commit.Options{Cache: c, Now: o.Now}, c
}

func newGraph(repo *commit.Repo, c *cache.Cache[any], o Options) *Graph {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	r := o.MaxRetries
	if r <= 0 {
		r = DefaultMaxRetries
	}
	budget := o.RetryBudget
	if budget <= 0 {
		budget = DefaultRetryBudget
	}
	batch := o.MaxBatch
	if batch <= 0 {
		batch = DefaultMaxBatch
	}
	serial, _ := storage.SerializerOf(repo.Store())
	mail, _ := storage.MailboxOf(repo.Store())
	if o.NoWriteTurns {
		serial, mail = nil, nil
	}
	if o.NoForwardWrites {
		mail = nil
	}
	return &Graph{inlineDV: inlineBound(o.InlineDVBytes, table.DefaultInlineDVBytes), inlineState: inlineBound(o.InlineStateBytes, table.DefaultInlineStateBytes), inlineIndex: inlineBound(o.InlineIndexBytes, table.DefaultInlineIndexBytes), repo: repo, st: repo.Store(), cache: c, snaps: snapshot.NewLoader(repo.Store(), c), now: now,
		maxRetries: r, retryBudget: budget, maxBatch: batch, queues: &writeQueues{byBranch: map[string]*writeQueue{}}, serial: serial, mail: mail, maint: maintConfigOf(o), emb: embedder{cfg: o.Embedding},
		qlimits: QueryLimits{MemoryBytes: o.QueryMemoryBytes, Timeout: o.QueryTimeout}, chainObjects: !o.NoChainObjects}
}

// fragmentOptions are the options every fragment the handle writes uses.
func (g *Graph) fragmentOptions() table.WriteOptions {
	return table.WriteOptions{InlineIndexBytes: g.inlineIndex}
}

// inlineBound resolves an inline bound option: 0 is the default, < 0 none.
func inlineBound(o, def int) int {
	switch {
	case o == 0:
		return def
	case o < 0:
		return 0
	}
	return o
}

// Init creates a graph at an empty location from a schema source. The
// genesis commit holds an empty table state for every node and edge type,
// so every commit names every table of its schema.
func Init(ctx context.Context, st storage.Store, schemaPath, schemaSrc, actor string, opts Options) (*Graph, error) {
	cat, err := schema.Compile(schemaPath, schemaSrc)
	if err != nil {
		return nil, err
	}
	tables := map[string]string{}
	for _, tk := range snapshot.TableKeys(cat) {
		ts, err := snapshot.TableSchema(cat, tk)
		if err != nil {
			return nil, err
		}
		s, err := table.NewState(ts)
		if err != nil {
			return nil, fmt.Errorf("exec: table %s: %w", tk, err)
		}
		key, err := table.WriteState(ctx, st, snapshot.TablePrefix(tk), s)
		if err != nil {
			return nil, err
		}
		tables[tk] = key
	}
	ro, c := opts.repoOptions()
	repo, _, err := commit.Init(ctx, st, commit.InitRequest{Schema: []byte(schemaSrc), Tables: tables, Actor: actor, Message: "init"}, ro)
	if err != nil {
		return nil, err
	}
	return newGraph(repo, c, opts), nil
}

// Open opens an initialized graph; it never writes.
func Open(ctx context.Context, st storage.Store, opts Options) (*Graph, error) {
	ro, c := opts.repoOptions()
	repo, err := commit.Open(ctx, st, ro)
	if err != nil {
		return nil, err
	}
	return newGraph(repo, c, opts), nil
}

func branchOr(b string) string {
	if b == "" {
		return commit.MainBranch
	}
	return b
}

// commitInfo renders a commit; branch is the branch it was read through.
func commitInfo(c *commit.Commit, branch string) CommitInfo {
	if branch == "" {
		branch = c.Branch
	}
	ci := CommitInfo{ID: c.ID.String(), Branch: branch, ManifestVersion: int64(c.Height), Actor: c.Actor,
		CreatedAt: time.UnixMicro(c.CreatedAt).UTC(), Kind: string(c.Kind), Message: c.Message}
	if len(c.Parents) > 0 {
		ci.Parent = c.Parents[0].String()
	}
	if len(c.Parents) > 1 {
		ci.MergedParent = c.Parents[1].String()
	}
	return ci
}

// resolveCommit returns the commit a target names and the branch label.
func (g *Graph) resolveCommit(ctx context.Context, t Target) (*commit.Commit, string, error) {
	if t.Snapshot != "" {
		id, err := g.repo.ResolveRevision(ctx, t.Snapshot)
		if err != nil {
			return nil, "", err
		}
		c, err := g.repo.Commit(ctx, id)
		if err != nil {
			return nil, "", err
		}
		if err := g.checkReadable(ctx, c); err != nil {
			return nil, "", err
		}
		return c, t.Branch, nil
	}
	b := branchOr(t.Branch)
	_, c, err := g.repo.Resolve(ctx, b)
	if err != nil {
		return nil, "", err
	}
	return c, b, nil
}

// SchemaSource returns the accepted schema source at a target.
func (g *Graph) SchemaSource(ctx context.Context, t Target) (string, error) {
	c, _, err := g.resolveCommit(ctx, t)
	if err != nil {
		return "", err
	}
	src, err := g.repo.Schema(ctx, c.Schema)
	if err != nil {
		return "", err
	}
	// The identity trailer is ours, not the user's: show the .pg as written.
	user, _, err := schema.SplitIdentity(string(src))
	if err != nil {
		return "", err
	}
	return user, nil
}

// Log returns up to limit commits of branch (0 = all), newest first,
// following the branch's whole history DAG.
func (g *Graph) Log(ctx context.Context, branch string, limit int) ([]CommitInfo, error) {
	b := branchOr(branch)
	h, err := g.repo.Head(ctx, b)
	if err != nil {
		return nil, err
	}
	cs, err := g.repo.Log(ctx, h.Commit, commit.LogOptions{Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]CommitInfo, len(cs))
	for i, c := range cs {
		// Each commit carries the branch it was published on (a commit
		// merged in from a feature branch says so); commits written
		// before branches were recorded take the listed branch.
		out[i] = commitInfo(c, cmp.Or(c.Branch, b))
	}
	return out, nil
}

// CommitByID returns one commit, named by any revision (commit.ResolveRevision:
// an id, a unique id prefix, a branch, with ~N / ^ steps). Its Branch is the
// branch the commit was published on ("" for commits older than that record).
func (g *Graph) CommitByID(ctx context.Context, id string) (CommitInfo, error) {
	cid, err := g.repo.ResolveRevision(ctx, id)
	if err != nil {
		return CommitInfo{}, err
	}
	c, err := g.repo.Commit(ctx, cid)
	if err != nil {
		return CommitInfo{}, err
	}
	return commitInfo(c, ""), nil
}

// Tables lists the tables of a target's schema, nodes then edges, each in
// catalog order, with their live row and fragment counts.
func (g *Graph) Tables(ctx context.Context, t Target) ([]TableInfo, error) {
	snap, err := g.Resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	var out []TableInfo
	for _, tk := range snapshot.TableKeys(snap.Catalog()) {
		s, err := snap.State(ctx, tk)
		if err != nil {
			return nil, err
		}
		kind, name := snapshot.SplitKey(tk)
		out = append(out, TableInfo{Kind: kind, Name: name, Rows: s.Rows(), Fragments: s.NumFragments(),
			Indexes: append(searchCoverage(snap.Catalog(), tk, s), scalarCoverage(snap.Catalog(), tk, s)...)})
	}
	return out, nil
}

// sortedTableKeys returns the keys of m in sorted order.
func sortedTableKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
