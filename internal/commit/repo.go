package commit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/cache"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// DefaultCacheBytes is the object cache budget of a handle opened without one.
const DefaultCacheBytes = 64 << 20

// Options configure a Repo handle.
type Options struct {
	// Cache holds decoded immutable objects (commits, schema sources) by
	// object name. Handles on one graph may share it; other packages may put
	// their own immutable objects in it. Nil: a private cache of CacheBytes.
	Cache *cache.Cache[any]
	// CacheBytes sizes the private cache when Cache is nil (0 = DefaultCacheBytes).
	CacheBytes int64
	// ReadOnly makes every write method fail with ErrReadOnly before any request.
	ReadOnly bool
	// Now supplies commit timestamps (nil = time.Now). Tests pin it.
	Now func() time.Time
}

// Repo is a handle on the commit history and refs of one graph. It is safe
// for concurrent use. It caches only immutable objects, so it never serves a
// stale head: every head read goes to the store.
type Repo struct {
	store    storage.Store
	cache    *cache.Cache[any]
	readOnly bool
	now      func() time.Time
	// strict: the stamp carries a checksum, so every commit and ref of the
	// graph must carry one too (checksum.go).
	strict bool
	// hints holds the commit each branch's ref last named when this handle
	// read it, with the ref's hint if it carried one (branch → hint). Resolve fetches the hinted commit while it
	// reads the ref afresh, so on a remote store a cold read pays one
	// round trip for both when the branch has not moved; a hint is never
	// trusted for what the head is.
	hints sync.Map
	// decoded holds the last ref bytes read per branch with their decoding
	// (branch → decodedRef): an unchanged ref (the warm case, read through
	// storage.Local.GetHot) is not parsed again.
	decoded sync.Map
}

func newRepo(st storage.Store, opts Options) *Repo {
	c := opts.Cache
	if c == nil {
		n := opts.CacheBytes
		if n == 0 {
			n = DefaultCacheBytes
		}
		c = cache.New[any](n)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Repo{store: st, cache: c, readOnly: opts.ReadOnly, now: now}
}

// Open checks the format stamp and that init completed (main exists), then
// returns a handle. It never writes, read-only or not: a stamp of another
// version fails with *FormatError, a missing stamp or main ref with
// ErrNotInitialized. Cost: 2 GETs, sent together.
func Open(ctx context.Context, st storage.Store, opts Options) (*Repo, error) {
	// The stamp and main's ref are independent reads: on a remote store
	// they go out together (one round trip). The stamp's verdict comes
	// first: a location that is not a graph of this format fails as such,
	// whatever its refs hold.
	var (
		head     Head
		summed   bool
		openHint *refHint
		refErr   error
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		head, summed, openHint, refErr = readRefHint(ctx, st, MainBranch)
	}()
	stamp, err := checkStamp(ctx, st)
	<-done
	if err != nil {
		return nil, err
	}
	r := newRepo(st, opts)
	r.strict = stamp.Sum != ""
	if refErr == nil && r.strict && !summed {
		refErr = corrupt(RefKey(MainBranch), "no checksum (every ref of this graph carries one)")
	}
	if refErr != nil {
		if errors.Is(refErr, ErrBranchNotFound) {
			return nil, r.missingMain(ctx)
		}
		return nil, refErr
	}
	r.hints.Store(MainBranch, hint{commit: head.Commit, ref: openHint, key: CommitKey(head.Commit)})
	return r, nil
}

// missingMain explains a stamp without refs/heads/main. A location holding
// history (a commit with parents, or another branch) lost its main ref: that
// is damage for verify and repair, and init refuses it, because a new genesis
// would replace the history. A location holding no more than genesis commits
// is an init that was interrupted or is still running, which init completes.
func (r *Repo) missingMain(ctx context.Context) error {
	hist, err := r.holdsHistory(ctx)
	if err != nil {
		return fmt.Errorf("%w: %s exists but %s does not, and the location could not be inspected: %v",
			ErrNotInitialized, StampKey, RefKey(MainBranch), err)
	}
	if hist != "" {
		return &MissingRefError{Branch: MainBranch, Evidence: hist}
	}
	return fmt.Errorf("%w: %s exists but %s does not (an init was interrupted or is still running; run init again)",
		ErrNotInitialized, StampKey, RefKey(MainBranch))
}

// holdsHistory reports evidence that the location holds a graph's history
// beyond an interrupted init: another branch ref, or a commit with parents
// (or one that does not decode: it is not a fresh genesis either). "" when
// there is none. It lists refs and commits: only the failure paths of Open
// and Init call it.
func (r *Repo) holdsHistory(ctx context.Context) (string, error) {
	branches, err := r.Branches(ctx)
	if err != nil {
		return "", err
	}
	for _, b := range branches {
		if b != MainBranch {
			return fmt.Sprintf("branch %q still exists", b), nil
		}
	}
	var evidence string
	err = r.store.List(ctx, commitPrefix, "", func(info storage.Info) error {
		id, ok := commitIDOfKey(info.Key)
		if !ok {
			return nil
		}
		c, err := r.Commit(ctx, id)
		if err != nil || len(c.Parents) > 0 {
			evidence = fmt.Sprintf("commit %s is not a genesis commit", info.Key)
			return errStopList
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopList) {
		return "", err
	}
	return evidence, nil
}

var errStopList = errors.New("stop listing")

// commitIDOfKey parses "commits/<ulid>.json".
func commitIDOfKey(key string) (ID, bool) {
	name, ok := strings.CutPrefix(key, commitPrefix)
	if !ok {
		return ID{}, false
	}
	name, ok = strings.CutSuffix(name, ".json")
	if !ok {
		return ID{}, false
	}
	id, err := ulid.ParseStrict(name)
	return id, err == nil
}

// Store returns the store the handle reads and writes.
func (r *Repo) Store() storage.Store { return r.store }

// Cache returns the handle's object cache, for other packages' immutable objects.
func (r *Repo) Cache() *cache.Cache[any] { return r.cache }

// Commit returns the commit with the given id, from cache or with one GET.
// The result is shared and must not be modified.
func (r *Repo) Commit(ctx context.Context, id ID) (*Commit, error) {
	return r.commitKeyed(ctx, id, CommitKey(id))
}

// commitKeyed is Commit with the object key already built (key ==
// CommitKey(id)): a warm head resolution keeps it with the decoded ref.
func (r *Repo) commitKeyed(ctx context.Context, id ID, key string) (*Commit, error) {
	v, err := r.cache.GetOrLoad(ctx, key, func(ctx context.Context) (any, int64, error) {
		data, _, err := r.store.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, 0, fmt.Errorf("%w: %s", ErrCommitNotFound, id)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read commit %s: %w", key, err)
		}
		c, chain, err := decodeObject(key, data)
		if err != nil {
			return nil, 0, err
		}
		if r.strict && !c.summed {
			return nil, 0, corrupt(key, "no checksum (every commit of this graph carries one)")
		}
		// The other commits of a chain object were read with this one:
		// a walk down the chain (log, time travel) finds them cached.
		for _, o := range chain {
			if o != c && (!r.strict || o.summed) {
				r.cache.Add(CommitKey(o.ID), o, sizeOf(o, len(data)/len(chain)))
			}
		}
		return c, sizeOf(c, len(data)/max(1, len(chain))), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Commit), nil
}

// InitRequest describes the genesis of a new graph.
type InitRequest struct {
	Schema  []byte            // schema source, stored content-addressed
	Tables  map[string]string // table name → (empty) table-state key, may be nil
	Actor   string
	Message string
}

// Init creates a graph at an empty location and returns a handle and the
// head of main.
//
// Order of writes, and why: (1) the format stamp by PutIfAbsent (an existing
// stamp of the current version is accepted, because it may come from a racing
// or crashed init); (2) the schema source; (3) the genesis commit under a
// fresh id; (4) refs/heads/main by PutIfAbsent. Step 4 is the single decision
// point: a graph is initialized exactly when main exists, and of any number of
// racing inits exactly one creates it; the others get ErrAlreadyInitialized
// and leave only an unreferenced commit (and maybe a schema) behind. An init
// that crashed before step 4 leaves a graph that Open refuses with
// ErrNotInitialized, and running Init again completes it.
//
// A location whose main ref exists is refused with ErrAlreadyInitialized, and
// one whose stamp names another version with *FormatError, both before any write.
//
// INVARIANT: exactly one of racing inits succeeds (TestInitRace); an
// interrupted init is never openable and a re-run completes it
// (TestInitInterrupted, TestInitKilled).
func Init(ctx context.Context, st storage.Store, req InitRequest, opts Options) (*Repo, Head, error) {
	if opts.ReadOnly {
		return nil, Head{}, ErrReadOnly
	}
	r := newRepo(st, opts)

	// Pre-checks, so refusing an existing graph writes nothing at all.
	stampExists := true
	r.strict = true // a new stamp carries a checksum
	if stamp, err := checkStamp(ctx, st); errors.Is(err, ErrNotInitialized) {
		stampExists = false
	} else if err != nil {
		return nil, Head{}, err
	} else {
		r.strict = stamp.Sum != ""
	}
	if stampExists {
		if _, err := readRef(ctx, st, MainBranch); err == nil {
			return nil, Head{}, fmt.Errorf("%w: %s exists", ErrAlreadyInitialized, RefKey(MainBranch))
		} else if !errors.Is(err, ErrBranchNotFound) {
			return nil, Head{}, fmt.Errorf("%w: %s exists but cannot be read: %w (run `omnigraph verify`; `omnigraph repair` restores it)",
				ErrAlreadyInitialized, RefKey(MainBranch), err)
		}
		// main is missing: an interrupted init is completed below, but a
		// location with history lost its main ref, and a new genesis would
		// replace that history.
		hist, err := r.holdsHistory(ctx)
		if err != nil {
			return nil, Head{}, err
		}
		if hist != "" {
			return nil, Head{}, fmt.Errorf("%w: %w", ErrAlreadyInitialized, &MissingRefError{Branch: MainBranch, Evidence: hist})
		}
	}
	now := r.now()
	if !stampExists {
		if _, err := st.PutIfAbsent(ctx, StampKey, encodeStamp(now)); errors.Is(err, storage.ErrExists) {
			// A racing init stamped first; accept it if it is our version.
			if _, err := checkStamp(ctx, st); err != nil {
				return nil, Head{}, err
			}
		} else if err != nil {
			return nil, Head{}, fmt.Errorf("write format stamp: %w", err)
		}
	}
	if err := failpoint.Hit("commit/init-after-stamp"); err != nil {
		return nil, Head{}, err
	}
	schemaKey, err := putSchema(ctx, st, req.Schema)
	if err != nil {
		return nil, Head{}, err
	}
	tables := make(map[string]string, len(req.Tables))
	for k, v := range req.Tables {
		tables[k] = v
	}
	genesis := &Commit{
		ID:        newID(now),
		Actor:     req.Actor,
		Branch:    "main",
		CreatedAt: now.UnixMicro(),
		Kind:      KindInit,
		Message:   req.Message,
		Schema:    schemaKey,
		Tables:    tables,
	}
	if err := r.putCommit(ctx, genesis); err != nil {
		return nil, Head{}, err
	}
	if err := failpoint.Hit("commit/init-before-ref"); err != nil {
		return nil, Head{}, err
	}
	info, err := st.PutIfAbsent(ctx, RefKey(MainBranch), encodeRefFor(genesis, 1))
	if errors.Is(err, storage.ErrExists) {
		return nil, Head{}, fmt.Errorf("%w: %s exists", ErrAlreadyInitialized, RefKey(MainBranch))
	}
	if err != nil {
		return nil, Head{}, fmt.Errorf("create %s: %w", RefKey(MainBranch), err)
	}
	return r, Head{Branch: MainBranch, Commit: genesis.ID, Seq: 1, ETag: info.ETag}, nil
}

// putCommit writes a new commit object and caches it. The name is fresh (a
// new ULID), so a plain Put cannot clobber anything.
func (r *Repo) putCommit(ctx context.Context, c *Commit) error {
	data, err := Encode(c)
	if err != nil {
		return err
	}
	key := CommitKey(c.ID)
	c.summed = true // the encoding carries a checksum
	if _, err := storage.PutFresh(ctx, r.store, key, data); err != nil {
		return fmt.Errorf("write commit %s: %w", key, err)
	}
	r.cache.Add(key, c, sizeOf(c, len(data)))
	return nil
}
