package exec

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Per-commit change pages and the change feed (spec/engine.md §4.3–§4.4,
// docs/change-feed.md).
//
// A commit's changes relative to its first parent come in the frozen
// order: nodes before edges, then stable type id, then entity id. A page
// position is (type id, entity id) — not an offset — so a page computes the
// diff of the tables at and after its position only, and stops at the
// first table that fills it: cost follows the page, not the commit.
//
// The feed walks a branch's first-parent chain. A cursor names the last
// commit a consumer has fully seen; resuming returns the commits after it,
// oldest first, each as one block, so a consumer that stores the cursor of
// every page it processed sees each commit's changes exactly once. Cursors
// and page tokens are opaque, stateless (base64 JSON) and bound to the
// branch and the filter scope; a cursor whose commit is not on the branch's
// first-parent chain (another graph, a recreated branch) is rejected.

// Limits of one page.
const (
	MaxPageChanges     = 8192
	MaxPageBytes       = 32 << 20
	DefaultPageChanges = 1000
	DefaultPageBytes   = 4 << 20
)

// ErrChangeCursorRejected: a cursor or page token that does not belong to
// this request.
var ErrChangeCursorRejected = errors.New("change cursor rejected")

// ChangeCursorRejectedError says why a cursor or token was refused.
type ChangeCursorRejectedError struct{ Reason string }

func (e *ChangeCursorRejectedError) Error() string { return "change cursor rejected: " + e.Reason }

// Is makes errors.Is(err, ErrChangeCursorRejected) hold.
func (e *ChangeCursorRejectedError) Is(t error) bool { return t == ErrChangeCursorRejected }

// ErrChangeFeedGap: the history a feed position needs was reclaimed.
var ErrChangeFeedGap = errors.New("change feed gap")

// ChangeFeedGapError names the first commit whose changes can no longer be
// computed because cleanup reclaimed its data (or its parent's). Cursor is
// the position the consumer asked to resume from ("" for a page request).
// The consumer must re-baseline (CaptureBaseline).
type ChangeFeedGapError struct {
	Cursor          string
	FirstUnreadable string
}

func (e *ChangeFeedGapError) Error() string {
	return fmt.Sprintf("change feed gap: history from commit %s was reclaimed by cleanup; capture a new baseline", e.FirstUnreadable)
}

// Is makes errors.Is(err, ErrChangeFeedGap) hold.
func (e *ChangeFeedGapError) Is(t error) bool { return t == ErrChangeFeedGap }

// ErrResourceLimit: a request beyond a documented limit, refused before
// any work; every *ResourceLimitError matches it.
var ErrResourceLimit = limits.ErrResourceLimit

// ResourceLimitError names the limit a request exceeded (one type for
// page limits and query budgets).
type ResourceLimitError = limits.Error

// ChangeScope filters changes; empty fields match everything.
type ChangeScope struct {
	Kinds, Types, Ops []string
}

func (s ChangeScope) match(c Change) bool {
	return (len(s.Kinds) == 0 || slices.Contains(s.Kinds, c.Kind)) &&
		(len(s.Types) == 0 || slices.Contains(s.Types, c.Type)) &&
		(len(s.Ops) == 0 || slices.Contains(s.Ops, c.Op))
}

func (s ChangeScope) hash() string {
	norm := func(v []string) []string {
		v = slices.Clone(v)
		slices.Sort(v)
		return slices.Compact(v)
	}
	b, _ := json.Marshal([][]string{norm(s.Kinds), norm(s.Types), norm(s.Ops)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Validate refuses unknown kinds and ops.
func (s ChangeScope) Validate() error {
	for _, k := range s.Kinds {
		if k != "node" && k != "edge" {
			return &RequestError{Msg: fmt.Sprintf("invalid change kind %q: use node or edge", k)}
		}
	}
	for _, op := range s.Ops {
		if op != OpInsert && op != OpUpdate && op != OpDelete {
			return &RequestError{Msg: fmt.Sprintf("invalid change op %q: use insert, update or delete", op)}
		}
	}
	return nil
}

// ChangeCause describes the commit of a block.
type ChangeCause struct {
	Commit, Parent, MergedParent string
	// AuthoredBranch is the branch the commit was published on; "" for main
	// (the reference's None).
	AuthoredBranch string
	Actor          string
	AuthoredAt     int64 // unix microseconds
}

// ChangeBlock is one commit's changes (possibly a part of them, on a page).
type ChangeBlock struct {
	Cause   ChangeCause
	Changes []Change
}

// ChangesPage is one page of a commit's changes; NextPageToken is "" on the
// last page.
type ChangesPage struct {
	ChangeBlock
	NextPageToken string
}

func causeOf(c *commit.Commit) ChangeCause {
	cc := ChangeCause{Commit: c.ID.String(), Actor: c.Actor, AuthoredAt: c.CreatedAt}
	if len(c.Parents) > 0 {
		cc.Parent = c.Parents[0].String()
	}
	if len(c.Parents) > 1 {
		cc.MergedParent = c.Parents[1].String()
	}
	if c.Branch != "main" {
		cc.AuthoredBranch = c.Branch
	}
	return cc
}

// position is a place inside one commit's frozen change order: after the
// change (TypeID, ID); zero = the start.
type position struct {
	TypeID string `json:"t,omitempty"`
	ID     string `json:"i,omitempty"`
}

func (p position) zero() bool { return p.TypeID == "" && p.ID == "" }

// token is the decoded form of cursors and page tokens.
type token struct {
	V     int    `json:"v"`
	Kind  string `json:"k"` // "page" (commit changes), "feed-page", "cursor"
	Scope string `json:"s"`
	// Commit: the commit of a page; for a cursor, the last commit seen ("" =
	// before the first commit of the branch's history).
	Commit string `json:"c,omitempty"`
	Branch string `json:"b,omitempty"`
	// Prev: for a feed page token, the cursor position before its block.
	Prev string   `json:"p,omitempty"`
	Pos  position `json:"o,omitempty"`
}

func encodeToken(t token) string {
	t.V = 1
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s string) (token, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return token{}, &ChangeCursorRejectedError{Reason: "malformed encoding"}
	}
	var t token
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil || t.V != 1 {
		return token{}, &ChangeCursorRejectedError{Reason: "malformed encoding"}
	}
	return t, nil
}

// pageLimits checks and defaults a page's bounds.
func pageLimits(maxChanges int, maxBytes int64) (int, int64, error) {
	if maxChanges < 0 || maxBytes < 0 {
		return 0, 0, &RequestError{Msg: "page limits must not be negative"}
	}
	if maxChanges > MaxPageChanges {
		return 0, 0, &ResourceLimitError{Resource: "commit_changes_page_changes", Limit: MaxPageChanges, Actual: int64(maxChanges)}
	}
	if maxBytes > MaxPageBytes {
		return 0, 0, &ResourceLimitError{Resource: "commit_changes_page_bytes", Limit: MaxPageBytes, Actual: maxBytes}
	}
	if maxChanges == 0 {
		maxChanges = DefaultPageChanges
	}
	if maxBytes == 0 {
		maxBytes = DefaultPageBytes
	}
	return maxChanges, maxBytes, nil
}

// pageBudget tracks what a page still has room for. One change larger than
// the byte budget is emitted alone on a page (spec: page-wide, never per
// commit), so every page makes progress.
type pageBudget struct {
	changes int
	bytes   int64
	used    int
	usedB   int64
}

func (b *pageBudget) full() bool { return b.used >= b.changes || b.usedB >= b.bytes }

// take reports whether c fits; it counts it when it does.
func (b *pageBudget) take(c Change) bool {
	n := changeBytes(c)
	if b.used >= b.changes || (b.used > 0 && b.usedB+n > b.bytes) {
		return false
	}
	b.used++
	b.usedB += n
	return true
}

func changeBytes(c Change) int64 {
	n := int64(64 + len(c.Kind) + len(c.Type) + len(c.TypeID) + len(c.ID) + len(c.Op) + len(c.Src) + len(c.Dst))
	for _, img := range []map[string]any{c.Before, c.After} {
		for k, v := range img {
			n += int64(len(k)) + 4
			if raw, ok := v.(json.RawMessage); ok {
				n += int64(len(raw))
			} else {
				b, _ := json.Marshal(v)
				n += int64(len(b))
			}
		}
	}
	return n
}

// commitBlock emits the changes of commit c in scope after position from,
// until the budget fills. It returns the position of the last emitted
// change and whether the block is complete.
func (g *Graph) commitBlock(ctx context.Context, c *commit.Commit, scope ChangeScope, from position, budget *pageBudget) ([]Change, position, bool, error) {
	pid, ok := c.Parent()
	if !ok {
		return nil, from, false, &CommitHasNoParentError{Commit: c.ID.String()}
	}
	p, err := g.repo.Commit(ctx, pid)
	if err != nil {
		return nil, from, false, err
	}
	if err := g.readableForChanges(ctx, c, p); err != nil {
		return nil, from, false, err
	}
	sa, sb, pairs, err := g.tablePairs(ctx, p, c)
	if err != nil {
		return nil, from, false, err
	}
	var out []Change
	last := from
	for _, pr := range pairs {
		if !from.zero() && kindTypeLess(pr.kind, pr.id, from) {
			continue // wholly before the position: never diffed
		}
		if len(scope.Kinds) > 0 && !slices.Contains(scope.Kinds, pr.kind) {
			continue
		}
		chs, err := g.pairChanges(ctx, sa, sb, pr, true)
		if err != nil {
			return nil, from, false, g.gapOf(ctx, err, c)
		}
		for _, ch := range chs {
			if !from.zero() && pr.id == from.TypeID && ch.ID <= from.ID {
				continue
			}
			if !scope.match(ch) {
				continue
			}
			if !budget.take(ch) {
				return out, last, false, nil
			}
			out = append(out, ch)
			last = position{TypeID: pr.id, ID: ch.ID}
		}
	}
	return out, last, true, nil
}

// kindTypeLess reports whether the table (kind, id) sorts before the table
// of position p. Positions carry the type id only; its kind is its prefix
// (ids are table keys or derived from them: "node:…", "edge:…").
func kindTypeLess(kind, id string, p position) bool {
	pk, _, _ := strings.Cut(p.TypeID, ":")
	if kindRank(kind) != kindRank(pk) {
		return kindRank(kind) < kindRank(pk)
	}
	return id < p.TypeID
}

// readableForChanges turns reclaimed history of c or its parent into a gap.
func (g *Graph) readableForChanges(ctx context.Context, c, p *commit.Commit) error {
	for _, x := range []*commit.Commit{p, c} {
		if err := g.checkReadable(ctx, x); err != nil {
			return g.gapOf(ctx, err, c)
		}
	}
	return nil
}

// gapOf turns an error reading commit c's changes into a gap when cleanup
// reclaimed what they need: a reclaimed commit, or an object missing under
// c or its parent while either carries cleanup's reclaim marker.
func (g *Graph) gapOf(ctx context.Context, err error, c *commit.Commit) error {
	var rec *CommitReclaimedError
	if errors.As(err, &rec) {
		return &ChangeFeedGapError{FirstUnreadable: c.ID.String()}
	}
	if errors.Is(err, storage.ErrNotFound) {
		ids := []commit.ID{c.ID}
		if p, ok := c.Parent(); ok {
			ids = append(ids, p)
		}
		for _, id := range ids {
			if ok, rerr := g.repo.Reclaimed(ctx, id); rerr == nil && ok {
				return &ChangeFeedGapError{FirstUnreadable: c.ID.String()}
			}
		}
	}
	return err
}

// CommitChangesPage returns one page of commit id's changes in scope. An
// empty pageToken starts at the first change.
func (g *Graph) CommitChangesPage(ctx context.Context, commitID string, scope ChangeScope, pageToken string, maxChanges int, maxBytes int64) (*ChangesPage, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	maxChanges, maxBytes, err := pageLimits(maxChanges, maxBytes)
	if err != nil {
		return nil, err
	}
	// Any revision names the commit (an id, a unique prefix, main~1).
	c, err := g.repo.RevisionCommit(ctx, commitID)
	if err != nil {
		return nil, err
	}
	var from position
	if pageToken != "" {
		t, err := decodeToken(pageToken)
		if err != nil {
			return nil, err
		}
		switch {
		case t.Kind != "page":
			return nil, &ChangeCursorRejectedError{Reason: "not a commit changes page token"}
		case t.Commit != c.ID.String():
			return nil, &ChangeCursorRejectedError{Reason: "the page token does not match this graph and commit"}
		case t.Scope != scope.hash():
			return nil, &ChangeCursorRejectedError{Reason: "the page token was issued for a different filter scope"}
		}
		from = t.Pos
	}
	budget := &pageBudget{changes: maxChanges, bytes: maxBytes}
	chs, last, done, err := g.commitBlock(ctx, c, scope, from, budget)
	if err != nil {
		return nil, err
	}
	page := &ChangesPage{ChangeBlock: ChangeBlock{Cause: causeOf(c), Changes: chs}}
	if !done {
		page.NextPageToken = encodeToken(token{Kind: "page", Scope: scope.hash(), Commit: c.ID.String(), Pos: last})
	}
	return page, nil
}

// FeedRequest is one poll of a branch's change feed. Exactly one of
// Cursor, PageToken and Start is set (none = Start "now").
type FeedRequest struct {
	Branch string // "" = main
	// Cursor resumes after the last fully seen commit.
	Cursor string
	// PageToken continues a block a previous page ended inside.
	PageToken string
	// Start: "now" (no replay), "beginning" (the whole first-parent
	// history) or "after:<commit id>" (a commit on that history).
	Start      string
	Scope      ChangeScope
	MaxChanges int
	MaxBytes   int64
	// MaxCommits bounds the blocks of one poll (0 = no bound).
	MaxCommits int
}

// FeedPage is one poll's result. When the page ends at a block boundary,
// Cursor is the durable position after its last block and CaughtUp tells
// whether the branch head (as pinned at the start of the poll) was reached;
// otherwise PageToken continues the unfinished block and Cursor is "".
type FeedPage struct {
	Blocks    []ChangeBlock
	Cursor    string
	CaughtUp  bool
	PageToken string
}

// PollChanges returns the next page of a branch's change feed. The head is
// pinned when the poll starts; later commits wait for the next poll.
func (g *Graph) PollChanges(ctx context.Context, req FeedRequest) (*FeedPage, error) {
	if err := req.Scope.Validate(); err != nil {
		return nil, err
	}
	maxChanges, maxBytes, err := pageLimits(req.MaxChanges, req.MaxBytes)
	if err != nil {
		return nil, err
	}
	branch := branchOr(req.Branch)
	set := 0
	for _, s := range []string{req.Cursor, req.PageToken, req.Start} {
		if s != "" {
			set++
		}
	}
	if set > 1 {
		return nil, &RequestError{Msg: "give one of cursor, page token and start"}
	}
	head, hc, err := g.repo.Resolve(ctx, branch)
	if err != nil {
		return nil, err
	}
	_ = head
	scopeHash := req.Scope.hash()
	cursorOf := func(last string) string {
		return encodeToken(token{Kind: "cursor", Scope: scopeHash, Branch: branch, Commit: last})
	}

	// after is the last commit already seen ("" = nothing: start before the
	// oldest commit); midBlock, when set, is the block to continue first.
	var after string
	var mid *token
	cursorIn := req.Cursor
	switch {
	case req.Cursor != "" || req.PageToken != "":
		raw := req.Cursor
		want := "cursor"
		if req.PageToken != "" {
			raw, want = req.PageToken, "feed-page"
		}
		t, err := decodeToken(raw)
		if err != nil {
			return nil, err
		}
		switch {
		case t.Kind != want && want == "cursor":
			return nil, &ChangeCursorRejectedError{Reason: "a page token is not a change feed cursor"}
		case t.Kind != want:
			return nil, &ChangeCursorRejectedError{Reason: "a cursor is not a change feed page token"}
		case t.Branch != branch:
			return nil, &ChangeCursorRejectedError{Reason: fmt.Sprintf("the cursor was issued for a different branch (%s)", t.Branch)}
		case t.Scope != scopeHash:
			return nil, &ChangeCursorRejectedError{Reason: "the cursor was issued for a different filter scope"}
		}
		if want == "cursor" {
			after = t.Commit
		} else {
			after, mid = t.Prev, &t
			cursorIn = cursorOf(t.Prev)
		}
	case req.Start == "" || req.Start == "now":
		return &FeedPage{Cursor: cursorOf(hc.ID.String()), CaughtUp: true}, nil
	case req.Start == "beginning":
	case strings.HasPrefix(req.Start, "after:"):
		after = strings.TrimPrefix(req.Start, "after:")
		if _, err := commit.ParseID(after); err != nil {
			return nil, &ChangeCursorRejectedError{Reason: fmt.Sprintf("commit %q is not on the first-parent history of %s", after, branch)}
		}
	default:
		return nil, &RequestError{Msg: fmt.Sprintf("invalid start %q: use now, beginning or after:<commit>", req.Start)}
	}

	// The commits after `after`, oldest first, along the first-parent chain
	// of the pinned head: cost follows the commits not yet seen.
	var chain []*commit.Commit
	found := after == ""
	for c := hc; ; {
		if c.ID.String() == after {
			found = true
			break
		}
		pid, ok := c.Parent()
		if !ok {
			break // genesis: has no changes of its own
		}
		chain = append(chain, c)
		p, err := g.repo.Commit(ctx, pid)
		if err != nil {
			return nil, err
		}
		c = p
	}
	if !found {
		return nil, &ChangeCursorRejectedError{Reason: fmt.Sprintf("commit %s is not on the first-parent history of %s (another graph, or a recreated branch)", after, branch)}
	}
	slices.Reverse(chain)
	if mid != nil && (len(chain) == 0 || chain[0].ID.String() != mid.Commit) {
		return nil, &ChangeCursorRejectedError{Reason: "the page token does not continue this branch's history"}
	}

	budget := &pageBudget{changes: maxChanges, bytes: maxBytes}
	page := &FeedPage{}
	last := after
	for i, c := range chain {
		if req.MaxCommits > 0 && len(page.Blocks) >= req.MaxCommits {
			break
		}
		if budget.full() {
			break
		}
		var from position
		if i == 0 && mid != nil {
			from = mid.Pos
		}
		chs, pos, done, err := g.commitBlock(ctx, c, req.Scope, from, budget)
		if err != nil {
			var gap *ChangeFeedGapError
			if errors.As(err, &gap) {
				gap.Cursor = cursorIn
			}
			return nil, err
		}
		page.Blocks = append(page.Blocks, ChangeBlock{Cause: causeOf(c), Changes: chs})
		if !done {
			page.PageToken = encodeToken(token{Kind: "feed-page", Scope: scopeHash, Branch: branch, Commit: c.ID.String(), Prev: last, Pos: pos})
			return page, nil
		}
		last = c.ID.String()
	}
	page.Cursor = cursorOf(last)
	page.CaughtUp = last == hc.ID.String() || (len(chain) == 0)
	return page, nil
}

// ChangeBaseline is what CaptureBaseline returns after writing the export.
type ChangeBaseline struct {
	SnapshotCommit string
	ResumeCursor   string
}

// CaptureBaseline writes the export of branch at its current head (pinned
// once) to w, then returns that head and the feed cursor that resumes right
// after it. A failing writer yields the error and no cursor.
func (g *Graph) CaptureBaseline(ctx context.Context, branch string, scope ChangeScope, w io.Writer) (*ChangeBaseline, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	branch = branchOr(branch)
	_, hc, err := g.repo.Resolve(ctx, branch)
	if err != nil {
		return nil, err
	}
	var types []string
	if len(scope.Types) > 0 || len(scope.Kinds) > 0 {
		snap, err := g.snapshotOf(ctx, hc, branch)
		if err != nil {
			return nil, err
		}
		for _, n := range snap.Catalog().Nodes {
			if (len(scope.Kinds) == 0 || slices.Contains(scope.Kinds, "node")) && (len(scope.Types) == 0 || slices.Contains(scope.Types, n.Name)) {
				types = append(types, n.Name)
			}
		}
		for _, e := range snap.Catalog().Edges {
			if (len(scope.Kinds) == 0 || slices.Contains(scope.Kinds, "edge")) && (len(scope.Types) == 0 || slices.Contains(scope.Types, e.Name)) {
				types = append(types, e.Name)
			}
		}
		if len(types) == 0 {
			return nil, &RequestError{Msg: "the baseline scope selects no type"}
		}
	}
	if err := g.Export(ctx, Target{Snapshot: hc.ID.String(), Branch: branch}, types, w); err != nil {
		return nil, err
	}
	return &ChangeBaseline{SnapshotCommit: hc.ID.String(),
		ResumeCursor: encodeToken(token{Kind: "cursor", Scope: scope.hash(), Branch: branch, Commit: hc.ID.String()})}, nil
}

// RequestError is a malformed request of the change or schema APIs (a bad
// filter, conflicting positions); nothing ran.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return e.Msg }
