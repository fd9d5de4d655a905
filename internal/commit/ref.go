package commit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

const refPrefix = "refs/heads/"

// RefKey returns the object key of a branch ref.
func RefKey(branch string) string { return refPrefix + branch }

// Head is a branch head as read from its ref: the commit it names plus the
// token needed to advance it by compare-and-swap.
type Head struct {
	Branch string
	Commit ID
	// Seq counts ref writes on this branch (1 at creation, +1 per advance).
	// It makes every ref write's bytes unique, so a store ETag can never
	// return to an earlier value (no ABA), and it is the branch-local
	// "manifest version" the CLI reports.
	Seq uint64
	// ETag is the store's opaque version of the ref object; Publish passes it
	// to PutIfMatch. Empty for a Head that was not read from the store.
	ETag string
}

type wireRef struct {
	Commit string `json:"commit"`
	Seq    uint64 `json:"seq"`
	// Hint copies the head commit's schema key and table map (refs written
	// since the cold-read hint; absent in older refs and in refs written
	// without the commit at hand). It is only ever a prediction: a reader
	// uses it to fetch the schema and table states the head commit will
	// name side by side with that commit, and trusts nothing but what the
	// commit object itself names (docs/format/commit.md §2).
	Hint *refHint `json:"hint,omitempty"`
	// Sum is the SHA-256 of the canonical encoding without Sum (checksum.go).
	Sum string `json:"sum,omitempty"`
}

// refHint is the prediction a ref carries about its head commit.
type refHint struct {
	Schema string            `json:"schema"`
	Tables map[string]string `json:"tables"`
}

// hint is what a handle remembers of the ref of a branch it last read:
// the commit it named and, when the ref carried one, its hint.
type hint struct {
	commit ID
	ref    *refHint
	key    string // CommitKey(commit)
}

func encodeRef(id ID, seq uint64) []byte { return encodeRefHinted(id, seq, nil) }

// encodeRefFor encodes a ref naming c that carries c's hint. Inline table
// states are left out of it: they come with the commit, so predicting them
// saves nothing, and they would grow every ref read.
func encodeRefFor(c *Commit, seq uint64) []byte {
	tables := c.Tables
	if formatOf(tables) == commitFormatInline {
		tables = maps.Clone(tables)
		maps.DeleteFunc(tables, func(_, k string) bool { return table.IsInlineState(k) })
	}
	return encodeRefHinted(c.ID, seq, &refHint{Schema: c.Schema, Tables: tables})
}

func encodeRefHinted(id ID, seq uint64, h *refHint) []byte {
	w := wireRef{Commit: id.String(), Seq: seq, Hint: h}
	w.Sum, _ = sealed(w)
	b, _ := json.Marshal(w)
	return append(b, '\n')
}

// decodeRef decodes the bytes of branch's ref. summed reports whether they
// carried a checksum (every ref this build writes does).
func decodeRef(branch string, data []byte, etag string) (h Head, summed bool, err error) {
	h, summed, _, err = decodeRefHint(branch, data, etag)
	return h, summed, err
}

// decodeRefHint is decodeRef also returning the ref's hint (nil if none).
func decodeRefHint(branch string, data []byte, etag string) (h Head, summed bool, rh *refHint, err error) {
	h, summed, rh, err = decodeWireRef(branch, data, etag)
	if err != nil {
		return Head{}, false, nil, err
	}
	return h, summed, rh, nil
}

func decodeWireRef(branch string, data []byte, etag string) (Head, bool, *refHint, error) {
	key := RefKey(branch)
	var w wireRef
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return Head{}, false, nil, corrupt(key, "%v", err)
	}
	if dec.More() {
		return Head{}, false, nil, corrupt(key, "trailing data after ref")
	}
	summed := w.Sum != ""
	if summed {
		want := w.Sum
		w.Sum = ""
		if got, err := sealed(w); err != nil || got != want || !validSum(want) {
			return Head{}, false, nil, corrupt(key, "checksum mismatch: the ref was modified after it was written")
		}
	}
	id, err := ulid.ParseStrict(w.Commit)
	if err != nil {
		return Head{}, false, nil, corrupt(key, "commit %q: %v", w.Commit, err)
	}
	if w.Seq == 0 {
		return Head{}, false, nil, corrupt(key, "seq 0")
	}
	if w.Hint != nil && (!summed || !strings.HasPrefix(w.Hint.Schema, schemaPrefix)) {
		// Only this build writes hints, always with a sum and a schema key.
		return Head{}, false, nil, corrupt(key, "malformed hint")
	}
	return Head{Branch: branch, Commit: id, Seq: w.Seq, ETag: etag}, summed, w.Hint, nil
}

// readRef is the single GET behind head resolution: O(1) requests whatever
// the history length, because the ref names the head commit directly.
//
// INVARIANT: head resolution never lists and never reads anything but the
// ref and the head commit (TestCostIndependentOfHistory, TestCrashInProcess).
func readRef(ctx context.Context, st storage.Store, branch string) (Head, error) {
	h, _, err := readRefSummed(ctx, st, branch)
	return h, err
}

// ref reads branch's ref, also refusing a ref without a checksum on a graph
// whose stamp requires them.
func (r *Repo) ref(ctx context.Context, branch string) (Head, error) {
	h, _, err := r.refKeyed(ctx, branch)
	return h, err
}

// refKeyed is ref also returning the object key of the head commit.
func (r *Repo) refKeyed(ctx context.Context, branch string) (Head, string, error) {
	d, err := r.readRefDecoded(ctx, branch)
	if err != nil {
		return Head{}, "", err
	}
	if r.strict && !d.summed {
		return Head{}, "", corrupt(d.key, "no checksum (every ref of this graph carries one)")
	}
	// Unchanged on a warm handle: storing it again would allocate.
	hv := hint{commit: d.h.Commit, ref: d.rh, key: d.commitKey}
	if v, ok := r.hints.Load(branch); !ok || v.(hint) != hv {
		r.hints.Store(branch, hv)
	}
	return d.h, d.commitKey, nil
}

// decodedRef is a ref's bytes and their decoding (Repo.decoded).
type decodedRef struct {
	data   string
	etag   string
	h      Head
	summed bool
	rh     *refHint
	// raw is the slice a shared hot read returned for data (nil if the
	// store has none): while the store returns the same slice again, the
	// ref is unchanged without comparing bytes. Holding it keeps its
	// address from being reused by another allocation.
	raw []byte
	// key and commitKey are RefKey(branch) and CommitKey(h.Commit), built
	// once per decoding rather than on every warm read.
	key, commitKey string
}

// readRefMemo is readRefHint, reusing the last decoding of the branch's
// ref when its bytes are the same.
func (r *Repo) readRefMemo(ctx context.Context, branch string) (Head, bool, *refHint, error) {
	d, err := r.readRefDecoded(ctx, branch)
	if err != nil {
		return Head{}, false, nil, err
	}
	return d.h, d.summed, d.rh, nil
}

// readRefDecoded reads branch's ref and returns its decoding, the last
// one when the ref is unchanged (on a warm local handle: one stat, no
// allocation).
func (r *Repo) readRefDecoded(ctx context.Context, branch string) (*decodedRef, error) {
	var last *decodedRef
	key := ""
	if v, ok := r.decoded.Load(branch); ok {
		last = v.(*decodedRef)
		key = last.key
	} else {
		key = RefKey(branch)
	}
	data, info, shared, err := readRefBytesKey(ctx, r.store, branch, key)
	if err != nil {
		return nil, err
	}
	if last != nil && last.etag == info.ETag {
		if shared && info.ETag != "" && len(data) > 0 && len(last.raw) == len(data) && &last.raw[0] == &data[0] {
			return last, nil // the very slice decoded last time: unchanged
		}
		if last.data == string(data) {
			return last, nil
		}
	}
	h, summed, rh, err := decodeRefHint(branch, data, info.ETag)
	if err != nil {
		return nil, err
	}
	d := &decodedRef{data: string(data), etag: info.ETag, h: h, summed: summed, rh: rh, key: key, commitKey: CommitKey(h.Commit)}
	if shared {
		d.raw = data
	}
	r.decoded.Store(branch, d)
	return d, nil
}

func readRefSummed(ctx context.Context, st storage.Store, branch string) (Head, bool, error) {
	h, summed, _, err := readRefHint(ctx, st, branch)
	return h, summed, err
}

func readRefHint(ctx context.Context, st storage.Store, branch string) (Head, bool, *refHint, error) {
	data, info, err := readRefBytes(ctx, st, branch)
	if err != nil {
		return Head{}, false, nil, err
	}
	return decodeRefHint(branch, data, info.ETag)
}

// readRefBytes reads the ref of branch.
func readRefBytes(ctx context.Context, st storage.Store, branch string) ([]byte, storage.Info, error) {
	data, info, shared, err := readRefBytesKey(ctx, st, branch, RefKey(branch))
	if shared {
		data = append([]byte(nil), data...) // the caller's, as Get's are
	}
	return data, info, err
}

// readRefBytesKey reads the ref of branch, stored at key. shared reports
// that data is the store's kept slice (storage.HotGetter.GetHotShared),
// which must not be modified.
func readRefBytesKey(ctx context.Context, st storage.Store, branch, key string) (data []byte, info storage.Info, shared bool, err error) {
	if h, ok := st.(hotGetter); ok {
		data, info, err = h.GetHotShared(ctx, key) // one stat while the ref is unchanged (storage.Local)
		shared = true
	} else {
		data, info, err = st.Get(ctx, key)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, storage.Info{}, false, &BranchError{Branch: branch, Err: ErrBranchNotFound}
	}
	if err != nil {
		return nil, storage.Info{}, false, fmt.Errorf("read ref %s: %w", key, err)
	}
	return data, info, shared, nil
}

// hotGetter is a store that reads an often-read, republished object
// cheaply while it is unchanged (storage.Local.GetHotShared), with Get's
// answer in a slice it keeps.
type hotGetter interface {
	GetHotShared(ctx context.Context, key string) ([]byte, storage.Info, error)
}

// Head reads the current head of branch: exactly one store request.
func (r *Repo) Head(ctx context.Context, branch string) (Head, error) {
	if err := ValidateBranchName(branch); err != nil {
		return Head{}, err
	}
	return r.ref(ctx, branch)
}

// Resolve reads the head of branch and its commit. On a warm handle (commit
// already cached) this is one store request; otherwise two. In a context
// from WithHeadMemo, a Resolve that follows one of the same branch takes the
// head that one read instead of reading again (once).
func (r *Repo) Resolve(ctx context.Context, branch string) (Head, *Commit, error) {
	memo, _ := ctx.Value(headMemoKey{}).(*headMemo)
	h, ok := memo.take(branch)
	key := ""
	if ok {
		key = CommitKey(h.Commit)
	} else {
		wait := r.prefetchHinted(ctx, branch)
		// Resolve returns only after the prefetch has finished, so what a
		// Resolve costs is the same whenever it is counted.
		defer wait()
		if err := ValidateBranchName(branch); err != nil {
			return Head{}, nil, err
		}
		var err error
		if h, key, err = r.refKeyed(ctx, branch); err != nil {
			return Head{}, nil, err
		}
		memo.put(h)
	}
	c, err := r.commitKeyed(ctx, h.Commit, key)
	if err != nil {
		return Head{}, nil, fmt.Errorf("head of branch %q: %w", branch, err)
	}
	return h, c, nil
}

// prefetchHinted starts loading the commit branch's ref named when this
// handle last read it, unless it is cached: Resolve then reads the ref and
// that commit side by side, and when the ref still names it (the common
// case) the commit load it joins is already under way. When the branch has
// moved the prefetched commit is one wasted GET of an immutable object.
// The returned func waits for the prefetch to end.
func (r *Repo) prefetchHinted(ctx context.Context, branch string) (wait func()) {
	v, ok := r.hints.Load(branch)
	if !ok {
		return func() {}
	}
	hv := v.(hint)
	if _, cached := r.cache.Get(hv.key); cached {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.Commit(ctx, hv.commit)
	}()
	return func() { <-done }
}

// Hint is what the ref of a branch predicted about its head commit when
// this handle last read it: the commit it named, and (refs written since
// hints exist) that commit's schema key and table map.
type Hint struct {
	Commit ID
	Schema string            // "" when the ref carried no hint
	Tables map[string]string // nil when the ref carried no hint
}

// HintOf returns the hint of branch; ok is false when this handle has not
// read its ref. A prediction only: callers may fetch what it names ahead
// of time (schemas and table states are content-addressed, so what they
// fetch is verified) but must use what the resolved commit names.
func (r *Repo) HintOf(branch string) (h Hint, ok bool) {
	v, ok := r.hints.Load(branch)
	if !ok {
		return Hint{}, false
	}
	hv := v.(hint)
	h.Commit = hv.commit
	if hv.ref != nil {
		h.Schema, h.Tables = hv.ref.Schema, hv.ref.Tables
	}
	return h, true
}

// Branches lists live branches: "main" first, the rest in ascending order.
func (r *Repo) Branches(ctx context.Context) ([]string, error) {
	var names []string
	err := r.store.List(ctx, refPrefix, "", func(info storage.Info) error {
		name := strings.TrimPrefix(info.Key, refPrefix)
		// Skip anything that is not a valid name (e.g. a backend's temp
		// file): it cannot be a ref this package wrote.
		if ValidateBranchName(name) == nil {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == MainBranch) != (names[j] == MainBranch) {
			return names[i] == MainBranch
		}
		return names[i] < names[j]
	})
	return names, nil
}

// CreateBranch creates branch pointing at commit at (which must exist). It
// writes one ref and no commit. Names that are path-prefix relatives of a live
// branch ("a" vs "a/b") are refused.
//
// Caveat: the prefix check and the create are two requests; two processes
// creating "a" and "a/b" at the same instant on an object store can both
// succeed. On the local backend the filesystem itself refuses the second.
func (r *Repo) CreateBranch(ctx context.Context, branch string, at ID) (Head, error) {
	return r.CreateBranchAt(ctx, branch, func(context.Context) (ID, error) { return at, nil })
}

// CreateBranchAt is CreateBranch with the fork point still to be resolved
// (e.g. a revision): resolve runs concurrently with the prefix-conflict
// listing, so on an object store the create costs two round trips (resolve
// ‖ list, then the conditional put) instead of three. A resolve error wins
// over a name conflict. The new ref starts at seq 1; ForkBranch creates a
// branch from another branch's head.
func (r *Repo) CreateBranchAt(ctx context.Context, branch string, resolve func(context.Context) (ID, error)) (Head, error) {
	return r.createBranchAt(ctx, branch, func(ctx context.Context) (ID, uint64, error) {
		id, err := resolve(ctx)
		return id, 1, err
	})
}

// createBranchAt is CreateBranchAt with resolve also choosing the new ref's
// seq (a fork continues its source's).
func (r *Repo) createBranchAt(ctx context.Context, branch string, resolve func(context.Context) (ID, uint64, error)) (Head, error) {
	if r.readOnly {
		return Head{}, ErrReadOnly
	}
	if err := ValidateBranchName(branch); err != nil {
		return Head{}, err
	}
	checked := make(chan error, 1)
	go func() { checked <- r.checkNewBranch(ctx, branch) }()
	at, seq, err := resolve(ctx)
	if err == nil {
		_, err = r.Commit(ctx, at)
	}
	checkErr := <-checked
	if err != nil {
		return Head{}, err
	}
	if checkErr != nil {
		return Head{}, checkErr
	}
	// The ref carries its head's hint when this handle holds that commit
	// (the source head it just resolved, usually); no request is spent to
	// get it.
	data := encodeRef(at, seq)
	if v, ok := r.cache.Get(CommitKey(at)); ok {
		data = encodeRefFor(v.(*Commit), seq)
	}
	info, err := r.store.PutIfAbsent(ctx, RefKey(branch), data)
	if errors.Is(err, storage.ErrExists) {
		return Head{}, &BranchError{Branch: branch, Err: ErrBranchExists}
	}
	if err != nil {
		return Head{}, fmt.Errorf("create ref %s: %w", RefKey(branch), err)
	}
	return Head{Branch: branch, Commit: at, Seq: seq, ETag: info.ETag}, nil
}

// checkNewBranch refuses a name that is live, or that is a path prefix of a
// live branch or has one as its prefix.
func (r *Repo) checkNewBranch(ctx context.Context, branch string) error {
	return r.checkNewBranchIgnoring(ctx, branch, "")
}

// checkNewBranchIgnoring is checkNewBranch not looking at a live branch
// named ignore ("" = none).
func (r *Repo) checkNewBranchIgnoring(ctx context.Context, branch, ignore string) error {
	live, err := r.Branches(ctx)
	if err != nil {
		return err
	}
	for _, b := range live {
		if ignore != "" && b == ignore {
			continue
		}
		if b == branch {
			return &BranchError{Branch: branch, Err: ErrBranchExists}
		}
		if prefixRelated(b, branch) {
			return &BranchError{Branch: branch, Err: ErrBranchExists,
				Reason: fmt.Sprintf("conflicts with live branch %q (branch names may not be ancestors or descendants of each other)", b)}
		}
	}
	return nil
}

// DeleteBranch removes a branch ref. The branch disappears from every read at
// once; its commits stay until cleanup finds them unreachable. main cannot be
// deleted. Refusing to delete the caller's active branch is the caller's job.
func (r *Repo) DeleteBranch(ctx context.Context, branch string) error {
	if r.readOnly {
		return ErrReadOnly
	}
	if err := ValidateBranchName(branch); err != nil {
		return err
	}
	if branch == MainBranch {
		return &BranchError{Branch: branch, Err: ErrProtectedBranch, Reason: "main cannot be deleted"}
	}
	if _, err := r.store.Stat(ctx, RefKey(branch)); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return &BranchError{Branch: branch, Err: ErrBranchNotFound}
		}
		return fmt.Errorf("stat ref %s: %w", RefKey(branch), err)
	}
	if err := r.store.Delete(ctx, RefKey(branch)); err != nil {
		return fmt.Errorf("delete ref %s: %w", RefKey(branch), err)
	}
	return nil
}

// headMemo carries one head read from a Resolve to the next Resolve of the
// same branch within one operation.
type headMemo struct {
	mu    sync.Mutex
	heads map[string]Head
}

type headMemoKey struct{}

// WithHeadMemo returns a context in which one operation reads each branch
// head once: a mutation resolves the head to compile its query against the
// head's schema, and its write then starts from that same head rather than
// reading the ref again. That is safe because the head was read during the
// operation and the publish CAS still checks it (a moved head rebases as
// usual). Only Resolve uses the memo; Head, and the re-reads after a lost
// CAS, always go to the store.
func WithHeadMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, headMemoKey{}, &headMemo{heads: map[string]Head{}})
}

func (m *headMemo) take(branch string) (Head, bool) {
	if m == nil {
		return Head{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.heads[branch]
	delete(m.heads, branch)
	return h, ok
}

func (m *headMemo) put(h Head) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.heads[h.Branch] = h
	m.mu.Unlock()
}
