package omnigraph

import (
	"context"
	"io"

	"github.com/omnigraph-go/omnigraph/internal/exec"
)

// Change-feed types (docs/change-feed.md).
type (
	// ChangeScope filters changes by kind, type and op (empty = all).
	ChangeScope = exec.ChangeScope
	// ChangeCause describes the commit of a block of changes.
	ChangeCause = exec.ChangeCause
	// ChangeBlock is one commit's changes.
	ChangeBlock = exec.ChangeBlock
	// ChangesPage is one page of one commit's changes.
	ChangesPage = exec.ChangesPage
	// FeedRequest is one poll of a branch's change feed.
	FeedRequest = exec.FeedRequest
	// FeedPage is one poll's result: blocks, then a cursor or a page token.
	FeedPage = exec.FeedPage
	// ChangeBaseline is the head a baseline export was taken at and the
	// cursor that resumes after it.
	ChangeBaseline = exec.ChangeBaseline
	// ChangeFeedGapError: history the position needs was reclaimed.
	ChangeFeedGapError = exec.ChangeFeedGapError
	// ChangeCursorRejectedError: a cursor or token of another request.
	ChangeCursorRejectedError = exec.ChangeCursorRejectedError
)

// Change-feed errors.
var (
	ErrChangeFeedGap        = exec.ErrChangeFeedGap
	ErrChangeCursorRejected = exec.ErrChangeCursorRejected
)

// Page limits of CommitChangesPage and PollChanges; DefaultPageChanges is
// the page a maxChanges of 0 asks for.
const (
	MaxPageChanges     = exec.MaxPageChanges
	MaxPageBytes       = exec.MaxPageBytes
	DefaultPageChanges = exec.DefaultPageChanges
)

// CommitChangesPage returns one page of what commit id changed relative to
// its first parent, in the frozen order (nodes, edges; type id; entity id).
// maxChanges and maxBytes of 0 take the defaults.
func (g *Graph) CommitChangesPage(ctx context.Context, id string, scope ChangeScope, pageToken string, maxChanges int, maxBytes int64) (*ChangesPage, error) {
	return g.eng.CommitChangesPage(ctx, id, scope, pageToken, maxChanges, maxBytes)
}

// PollChanges returns the next page of a branch's change feed.
func (g *Graph) PollChanges(ctx context.Context, req FeedRequest) (*FeedPage, error) {
	return g.eng.PollChanges(ctx, req)
}

// CaptureBaseline exports branch at its head to w (the load format) and
// returns the cursor that resumes the feed right after that head.
func (g *Graph) CaptureBaseline(ctx context.Context, branch string, scope ChangeScope, w io.Writer) (*ChangeBaseline, error) {
	return g.eng.CaptureBaseline(ctx, branch, scope, w)
}
