package exec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Failpoints of the engine's write path, in order (the table and commit
// packages add their own inside each step). docs/write-path.md lists them.
const (
	FPBeforeWrite     = "exec/before-write"      // validated, nothing written yet
	FPAfterTableData  = "exec/after-table-data"  // one table's fragment and deletion vectors written
	FPAfterTableState = "exec/after-table-state" // one table's new state written
	FPBeforePublish   = "exec/before-publish"    // every table state written, commit not yet
	FPAfterPublish    = "exec/after-publish"     // the CAS succeeded: the write is visible
)

// prepared is one attempt's staged change, ready to write.
type prepared struct {
	delta *Delta
	// noop: nothing changed, publish nothing (mutations only; a load
	// always commits).
	noop bool
	// strict marks update/delete/overwrite writes: after a lost CAS they
	// rebase only if what they read is unchanged (readSetConflict): the
	// schema, the tables of readSet (table-level: overwrite loads) and the
	// rows of rows (row-level: mutations).
	strict  bool
	readSet []string
	rows    []*rowRead
	// write, if set, makes the change durable instead of writeTables (a
	// streaming load, whose row images were written to fragments while the
	// input was read and are no longer in delta). Same contract as
	// writeTables: new objects only, table key → new state key.
	write func(ctx context.Context, snap *snapshot.Snapshot) (map[string]string, error)
	// schemaKey and removed, set by a schema apply (schema_apply.go), give
	// the commit a new schema and drop tables; write sets schemaKey.
	schemaKey string
	removed   []string
}

// writeRequest is what runWrite needs besides the per-attempt preparation.
// Every kind of logical write (load, mutate, and whatever comes next, such
// as a schema apply) is one writeRequest: runWrite gives it group commit,
// rebasing and the conflict rules without knowing what it changes.
type writeRequest struct {
	branch   string
	ifCommit string
	kind     commit.Kind
	actor    string
	message  string
	// prepare stages the change against a snapshot of the current head; it
	// runs again, from scratch, after every lost CAS that may rebase. Its
	// context carries the write's cancellation and the attempt's batch (so
	// it reads the unflushed objects of the writes chained before it).
	prepare func(ctx context.Context, snap *snapshot.Snapshot) (*prepared, error)
	// forkAt, if set, means branch does not exist yet: the write builds on
	// that commit and its publish creates the branch (atomically with the
	// write). If the branch appears meanwhile the write rebases onto it.
	// Such a write is published alone, never group-committed.
	forkAt *commit.ID
	// created, if set, reports whether this write created the branch.
	created *bool
	// forward, if set, is the write as another process can run it: it may
	// be handed to the holder of the branch's turn (forward.go).
	forward *forwardSpec
}

// Group commit bounds (DESIGN §9).
const (
	// DefaultMaxBatch bounds the writes one leader chains into one CAS.
	DefaultMaxBatch = 64
	// maxQueued bounds the writes queued or in flight on one branch of one
	// handle; more wait to enter the queue.
	maxQueued = 1024
	// DefaultRetryBudget bounds the time one write spends losing publish
	// races before it fails with *ContentionError.
	DefaultRetryBudget = 20 * time.Second
)

// writeQueues holds a handle's per-branch queues of writes waiting for
// group commit.
type writeQueues struct {
	mu sync.Mutex
	// INVARIANT: a branch has an entry iff a write holds or waits for it,
	// so the map does not grow with the branches ever written
	// (TestWriteQueuesDrain).
	byBranch map[string]*writeQueue
}

// writeQueue is one branch's FIFO of writes. At most one write of it leads
// at a time (leading); when the leader's batch is done it promotes the
// first waiting write, which leads the next batch. Exclusive writes (merge,
// branch delete) wait in the same FIFO and, when promoted, run alone
// between two batches.
type writeQueue struct {
	waiting []*queuedWrite
	leading bool
	slots   chan struct{}
	users   int // writes holding the entry (guarded by writeQueues.mu)
}

// join returns branch's queue, counted as used until leave.
func (qs *writeQueues) join(branch string) *writeQueue {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.byBranch[branch]
	if q == nil {
		q = &writeQueue{slots: make(chan struct{}, maxQueued)}
		qs.byBranch[branch] = q
	}
	q.users++
	return q
}

func (qs *writeQueues) leave(branch string, q *writeQueue) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if q.users--; q.users == 0 {
		delete(qs.byBranch, branch)
	}
}

// size is the number of branches with a queue (tests).
func (qs *writeQueues) size() int {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return len(qs.byBranch)
}

// queuedWrite is one write in a group commit, with its outcome and the
// state its leader keeps across the attempts of its batch.
type queuedWrite struct {
	ctx  context.Context
	req  writeRequest
	lead chan struct{} // closed when promoted to leader
	done chan struct{} // closed when the outcome is set
	// promoted and taken are guarded by writeQueues.mu.
	promoted, taken bool
	// exclusive, if set, is the whole write (a merge, a branch delete): it
	// is never chained; when promoted it runs alone, under the write's own
	// context, and then hands over to the next write.
	exclusive func(ctx context.Context) error

	commit *commit.Commit
	prep   *prepared
	err    error
	// warnings are what went wrong beside the write, which itself
	// succeeded (an inline compaction that failed).
	warnings []string

	// ledger records the objects this write created under names of its
	// own, over all its attempts (its caller's, if the context carries
	// one: a streamed load's chunks). The leader deletes them when the
	// write fails and no commit naming them can have been published
	// (docs/invariants.md, "A failed write deletes what it created").
	ledger *storage.Ledger

	// The previous staging of this write (leader only): what it read, on
	// which snapshot, over which published head.
	last     *prepared
	lastSnap *snapshot.Snapshot
	lastBase *commit.Commit
	// staged and pub are the table states and the commit request of its
	// last staging (leader only), from which settleChain rebuilds its
	// commit.
	staged map[string]string
	pub    commit.PublishRequest

	// Forwarding (forward.go). remote is the outcome another process
	// reported for this write, which it ran; foreign marks a write another
	// process proposed and this leader runs. maybePublished: the write
	// failed after a CAS that may have landed, with stagedCommit (set
	// before each CAS of a batch with foreign writes) as its commit.
	remote         *forwardResult
	foreign        *foreignSlot
	maybePublished bool
	stagedCommit   string
}

func (w *queuedWrite) finish(c *commit.Commit, p *prepared, err error) {
	w.commit, w.prep, w.err = c, p, err
	close(w.done)
}

// writeOutcome is what runWrite returns besides the commit: the write's
// staging and its warnings.
type writeOutcome struct {
	prep     *prepared
	warnings []string
	// remote: the write was run by another process, which reported this
	// (forward.go).
	remote *forwardResult
}

// runWrite is the common write pipeline (docs/write-path.md): capture the
// head, prepare and validate against it, write fragments, deletion vectors
// and table states under fresh names, then publish with one CAS.
//
// Writes to one branch of one handle are group-committed: they queue, and
// one of them, the leader, takes up to Options.MaxBatch queued writes in
// arrival order, stages each on top of the previous one (so each sees the
// writes ahead of it), and publishes the whole chain — one commit per write
// — with one CAS. A write that fails validation is left out; the others
// land. A queued write whose context ends before its leader takes it leaves
// no trace; one taken into a batch is left out if its context ends before
// the CAS. A batch never reaches past an exclusive write queued behind its
// writes (runExclusive): arrival order is publish order.
//
// A lost CAS (another process published) re-stages the batch on the new
// head: insert-only writes rebase; a strict write rebases only if what it
// read is unchanged and fails with *ReadSetChangedError otherwise
// (readSetConflict); a conditional write fails with
// *PreconditionFailedError and is never retried. After Options.MaxRetries
// lost races or Options.RetryBudget the batch's writes fail with
// *ContentionError.
//
// It returns the published commit, or nil when the change was a no-op.
//
// INVARIANT: nothing a write produces is visible before the publish CAS, and
// a failure at any step leaves the branch at its old head
// (TestEngineLoadCrashPoints, TestEngineStrictRace, TestGroupCommit).
func (g *Graph) runWrite(ctx context.Context, req writeRequest) (*commit.Commit, writeOutcome, error) {
	w := &queuedWrite{ctx: ctx, req: req, lead: make(chan struct{}), done: make(chan struct{}), ledger: storage.LedgerOf(ctx)}
	if w.ledger == nil {
		w.ledger = storage.NewLedger()
	}
	// A write that returns before a leader takes it was never staged: what
	// its caller wrote for it is unreferenced.
	untaken := func(err error) (*commit.Commit, writeOutcome, error) {
		g.discard(ctx, w.ledger)
		return nil, writeOutcome{}, err
	}
	result := func() (*commit.Commit, writeOutcome, error) {
		return w.commit, writeOutcome{prep: w.prep, warnings: w.warnings, remote: w.remote}, w.err
	}
	if err := ctx.Err(); err != nil {
		return untaken(err)
	}
	if req.forkAt != nil || g.maxBatch == 1 {
		g.commitBatch(context.WithoutCancel(ctx), req.branch, []*queuedWrite{w}, nil)
		return result()
	}
	g.enqueue(ctx, req.branch, w)
	return result()
}

// untaken finishes a write that left its queue before a leader took it: it
// was never staged, so what its caller wrote for it is unreferenced.
func (g *Graph) untaken(w *queuedWrite, err error) {
	w.finish(nil, nil, err)
	if w.ledger != nil {
		g.discard(w.ctx, w.ledger)
	}
}

// runExclusive runs fn as a write to branch that is never chained with
// others: it waits its turn in the branch's group-commit queue behind the
// writes that arrived before it, runs alone (no batch of this handle
// publishes meanwhile, so it does not race them), then hands the branch to
// the writes that arrived after it. Merges and branch deletes use it; other
// processes still race it by CAS, which stays the only authority.
//
// INVARIANT: one handle's writes to one branch publish in arrival order,
// exclusive ones included (TestExclusiveWriteOrder).
func (g *Graph) runExclusive(ctx context.Context, branch string, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.maxBatch == 1 {
		return fn(ctx)
	}
	w := &queuedWrite{ctx: ctx, req: writeRequest{branch: branch}, lead: make(chan struct{}), done: make(chan struct{}), exclusive: fn}
	g.enqueue(ctx, branch, w)
	return w.err
}

// enqueue enters w into branch's queue, waits until w is finished or leads,
// and, leading, runs one batch (or w alone, if exclusive) and promotes the
// next waiting write. w is finished when it returns.
func (g *Graph) enqueue(ctx context.Context, branch string, w *queuedWrite) {
	q := g.queues.join(branch)
	defer g.queues.leave(branch, q)
	select {
	case q.slots <- struct{}{}:
	case <-ctx.Done():
		g.untaken(w, ctx.Err())
		return
	}
	defer func() { <-q.slots }()

	g.queues.mu.Lock()
	q.waiting = append(q.waiting, w)
	if !q.leading {
		q.leading, w.promoted = true, true
	}
	lead := w.promoted
	g.queues.mu.Unlock()
	if !lead {
		select {
		case <-w.lead:
		case <-w.done:
			return
		case <-ctx.Done():
			g.queues.mu.Lock()
			if !w.promoted && !w.taken {
				q.waiting = slices.DeleteFunc(q.waiting, func(o *queuedWrite) bool { return o == w })
				g.queues.mu.Unlock()
				g.untaken(w, ctx.Err())
				return
			}
			lead = w.promoted
			g.queues.mu.Unlock()
			if !lead {
				<-w.done
				return
			}
		}
	}
	// The leader is the first waiting write: it leads one batch, its own
	// included, then hands over. The batch takes what is queued once the
	// head is read, and what queues while the writes ahead are staged, but
	// stops before an exclusive write, which leads next.
	pull := func(max int) []*queuedWrite {
		g.queues.mu.Lock()
		defer g.queues.mu.Unlock()
		n := 0
		for n < min(len(q.waiting), max) && q.waiting[n].exclusive == nil {
			n++
		}
		batch := slices.Clone(q.waiting[:n])
		q.waiting = slices.Delete(q.waiting, 0, n)
		for _, b := range batch {
			b.taken = true
		}
		return batch
	}
	if w.exclusive != nil {
		g.queues.mu.Lock()
		q.waiting = slices.DeleteFunc(q.waiting, func(o *queuedWrite) bool { return o == w })
		w.taken = true
		g.queues.mu.Unlock()
		err := ctx.Err()
		if err == nil {
			err = w.exclusive(ctx)
		}
		w.finish(nil, nil, err)
	} else {
		g.commitBatch(context.WithoutCancel(ctx), branch, nil, pull)
	}
	g.queues.mu.Lock()
	if len(q.waiting) > 0 {
		next := q.waiting[0]
		next.promoted = true
		close(next.lead)
	} else {
		q.leading = false
	}
	g.queues.mu.Unlock()
}

// ownLedger gives a write that publishes alone with retryPublish (merge,
// optimize) a ledger of its own in ctx. end, called with the write's
// error, deletes what the write created when it failed and no publish of
// it may have landed (commit.PublishChain keeps the ledger once a CAS was
// sent and not proven refused).
func (g *Graph) ownLedger(ctx context.Context) (context.Context, func(err error)) {
	l := storage.NewLedger()
	ctx = storage.WithLedger(ctx, l)
	return ctx, func(err error) {
		if err == nil {
			l.Keep()
			return
		}
		_ = storage.Flush(ctx) // a failed write's deferred puts, if any
		g.discard(ctx, l)
	}
}

// discard deletes the objects a failed write created, best effort
// (storage.Ledger.Discard): only for a write no published commit can
// reference, after its batch is flushed. What it cannot delete is garbage
// for cleanup.
func (g *Graph) discard(ctx context.Context, l *storage.Ledger) {
	_ = l.Discard(ctx, g.st)
}

// commitBatch publishes a batch of writes as one chain with one CAS,
// retrying lost races, and finishes every write of it exactly once: live
// (a write published alone), or what pull takes from the branch's queue
// (at most n writes a call) once the head is read and while the writes
// taken are staged, up to Options.MaxBatch. ctx is the leader's, without
// cancellation: each write's own context is honoured at its staging and
// before the CAS.
func (g *Graph) commitBatch(ctx context.Context, branch string, live []*queuedWrite, pull func(n int) []*queuedWrite) {
	// Each write's objects are recorded in its own ledger (stage), never in
	// the leader's.
	ctx = storage.WithLedger(ctx, nil)
	// fail finishes ws with err. unpublished: no commit naming their
	// objects can have been published (every attempt's CAS was refused or
	// never sent), so they are deleted; otherwise (an outcome-unknown CAS,
	// a failure after it) they stay for cleanup. Callers have flushed the
	// batch.
	fail := func(ws []*queuedWrite, err error, unpublished bool) {
		for _, w := range ws {
			if unpublished {
				g.discard(ctx, w.ledger)
			} else {
				w.ledger.Keep()
				w.maybePublished = true
			}
			w.finish(nil, nil, err)
		}
	}
	// foreign holds the writes other processes proposed and this batch
	// claimed; it claims only while this handle holds the branch's turn
	// (forward.go).
	var foreign *foreignBatch
	more := func() {
		if pull != nil && len(live) < g.maxBatch {
			live = append(live, pull(g.maxBatch-len(live))...)
		}
		if foreign != nil {
			live = append(live, foreign.claim(g.maxBatch-len(live))...)
		}
	}
	// A rebase names the fragments an earlier round sent for the same rows
	// (batch_reuse.go).
	reuse := &fragmentReuse{}
	ctx = withReuse(ctx, reuse)
	// Writers of other processes on this machine take turns with this
	// batch where the store can arrange it (a local directory), so their
	// attempts are not thrown away by lost races; past the retry budget the
	// batch goes ahead without its turn. Only the CAS decides. The turn is
	// taken once the batch is staged and its fragments are on their way
	// (see below), so that what does not depend on the head is done while
	// another process holds the turn.
	turnAsked := false
	newBranch := len(live) > 0 && live[0].req.forkAt != nil
	// Where processes can hand writes to the turn's holder, the batch
	// takes the turn before it stages if the turn is free, and then stages
	// what other processes proposed with its own; if another process holds
	// it, the batch is proposed to that process instead (forward.go).
	if g.mail != nil && pull != nil && !newBranch {
		more()
		var release func()
		live, release = g.leadOrForward(ctx, branch, live)
		if release != nil {
			turnAsked = true
			defer release()
			foreign = &foreignBatch{g: g, branch: branch}
			defer foreign.answer() // before the release: deferred after it
			if err := failpoint.Hit(FPForwardTurn); err != nil {
				fail(live, err, true)
				return
			}
		}
		if len(live) == 0 && foreign == nil {
			return
		}
	}
	var head commit.Head
	var base *commit.Commit
	var err error
	if newBranch {
		head = commit.Head{Branch: branch, Commit: *live[0].req.forkAt}
		base, err = g.repo.Commit(ctx, head.Commit)
	} else {
		head, base, err = g.repo.Resolve(ctx, branch)
	}
	more()
	if foreign != nil && err == nil {
		live = append(live, foreign.linger(g.maxBatch-len(live))...)
	}
	if err != nil {
		fail(live, err, true)
		return
	}
	start := time.Now()
	lost := 0
	// A batch of queued writes shares one fragment per table where the
	// store batches puts (batch_share.go): the leader stages into a held
	// batch and settleChain decides what is sent. prevHeld is the last
	// round's held batch, which a rebase still reads (readSetConflict
	// compares with the stagings made on it).
	sharing := pull != nil && isBatching(g.st)
	var prevHeld context.Context
	for {
		bctx := storage.WithBatch(ctx)
		sctx := bctx // where the stagings write
		var share *fragmentShare
		if sharing {
			share = &fragmentShare{parts: map[string]*sharedPart{}}
			sctx = withShare(storage.WithHeldBatch(ctx, prevHeld, bctx, maxHeldBytes), share)
			prevHeld = sctx
		}
		var chain []*commit.Commit
		var members []*queuedWrite
		// leftOut are writes that failed after sending objects into this
		// round's batch: they are finished, their objects deleted, once the
		// batch is flushed (settle). A failed inline compaction's objects
		// (compactLedger) go the same way: no commit names them.
		var leftOut []*queuedWrite
		var compactLedger *storage.Ledger
		settle := func() {
			for _, w := range leftOut {
				g.discard(ctx, w.ledger)
				w.finish(nil, nil, w.err)
			}
			leftOut = nil
			g.discard(ctx, compactLedger)
			compactLedger = nil
		}
		touched := map[string]string{}
		tip := base
		for i := 0; i < len(live); i++ {
			w := live[i]
			if i == len(live)-1 {
				more() // writes that queued while those ahead were staged
			}
			if share != nil {
				share.lazy.Store(len(live) > 1)
			}
			recorded := w.ledger.Len()
			c, tables, err := g.stage(sctx, w, branch, head, base, tip, newBranch)
			switch {
			case err != nil && w.ledger.Len() > recorded:
				w.err = err // left out of the chain, once its objects are flushed
				leftOut = append(leftOut, w)
			case err != nil:
				// Left out of the chain. Whatever it wrote before (its
				// caller, lost rounds) is durable and named by no commit
				// that can be published.
				g.discard(ctx, w.ledger)
				w.finish(nil, nil, err)
			case c == nil:
				g.discard(ctx, w.ledger)   // objects of lost rounds only
				w.finish(nil, w.last, nil) // no-op: nothing to publish
			default:
				w.ledger.Add(commit.CommitKey(c.ID))
				chain, members, tip = append(chain, c), append(members, w), c
				maps.Copy(touched, tables)
			}
		}
		if len(chain) == 0 {
			_ = storage.Flush(bctx)
			settle()
			return
		}
		if g.testBeforePublish != nil {
			g.testBeforePublish(lost)
		}
		// A write cancelled while staged is left out, and the others are
		// staged again without it (the chain after it built on it; their
		// stagings named its objects, and none of them is published).
		var cancelled []*queuedWrite
		for _, w := range members {
			if w.ctx.Err() != nil {
				cancelled = append(cancelled, w)
			}
		}
		if len(cancelled) > 0 {
			if sharing {
				// What the others staged may be reused by their next
				// staging (a load's own fragments): make it durable.
				_ = g.sendHeld(bctx, sctx, ledgersOf(slices.DeleteFunc(slices.Clone(members), func(w *queuedWrite) bool { return slices.Contains(cancelled, w) })), nil)
			}
			_ = storage.Flush(bctx)
			settle()
			for _, w := range cancelled {
				g.discard(ctx, w.ledger)
				w.finish(nil, nil, w.ctx.Err())
			}
			live = slices.DeleteFunc(members, func(w *queuedWrite) bool { return slices.Contains(cancelled, w) })
			continue
		}
		if sharing {
			var err error
			if chain, touched, err = g.settleChain(bctx, sctx, share, head, base, members); err != nil {
				_ = storage.Flush(bctx)
				settle()
				fail(members, err, true)
				return
			}
			tip = chain[len(chain)-1]
		}
		// The batch was staged, and its fragments sent, without the turn:
		// under the turn, a head another process moved meanwhile is staged
		// on again at once (no back-off, not a lost round), as a first
		// staging, and a write that builds the same rows names the
		// fragments already sent.
		if !turnAsked {
			turnAsked = true
			if release := g.takeTurn(ctx, branch); release != nil {
				defer release()
				start = time.Now() // the retry budget counts from the turn, as before
				if cur, moved := g.headMoved(ctx, branch, head, newBranch); moved {
					err := storage.Flush(bctx)
					settle()
					if err != nil {
						fail(members, err, true)
						return
					}
					reuse.confirm()
					// No CAS was tried: the writes read at their turn, as if
					// staged only now, so what they read before is no read set
					// to defend (a write of a row another process changed
					// meanwhile applies on top of it, as it did when the turn
					// came first).
					for _, w := range members {
						w.last, w.lastSnap, w.lastBase = nil, nil, nil
					}
					newBase, err := g.repo.Commit(ctx, cur.Commit)
					if err != nil {
						fail(members, err, true)
						return
					}
					head, base, live = cur, newBase, members
					continue
				}
			}
		}
		// Inline compaction rides in the same CAS, as the chain's last
		// commit (a maintenance commit: it changes no content). Its failure
		// is a warning on every write of the batch, never a failure. Where
		// the store keeps a chain's commits in one object (a local
		// directory), it is computed before any commit object is written,
		// its objects sent as it makes them, and its commit joins the
		// writes' chain object: one file for all of them. Elsewhere the
		// writes' commits go out first, with the writes' objects, and its
		// commit with its own objects, so that a failure of any of its
		// objects is its alone. Either way it costs no round trip of its
		// own (TestCompactingInsertRoundTrips).
		shareCommits := g.chainObjects && g.repo.SharesCommits()
		writeCommits := g.repo.WriteCommits
		if g.chainObjects {
			writeCommits = g.repo.WriteCommitsShared // one object for the chain where the store can
		}
		if !shareCommits {
			if err := writeCommits(bctx, chain); err != nil {
				_ = storage.Flush(bctx)
				settle()
				fail(members, err, true)
				return
			}
		}
		cl := storage.NewLedger()
		c, flushCompaction, warn := g.chainCompaction(storage.WithLedger(bctx, cl), branch, head, tip, touched, !shareCommits)
		if c != nil {
			cl.Add(commit.CommitKey(c.ID))
			chain = append(chain, c)
		}
		if shareCommits {
			if err := writeCommits(bctx, chain); err != nil {
				if c != nil {
					_ = flushCompaction() // its puts are over before its ledger is discarded
					compactLedger = cl
				}
				_ = storage.Flush(bctx)
				settle()
				fail(members, err, true)
				return
			}
		}
		if c != nil && flushCompaction != nil {
			if err := flushCompaction(); err != nil {
				// Its objects failed: the chain is published without it. Its
				// commit, written beside the writes' (a line of their chain
				// object on a local directory), is named by no ref; the
				// ledger deletes its name with its objects.
				chain, c, warn = chain[:len(chain)-1], nil, autoCompactWarning(err)
			}
		}
		if c == nil {
			compactLedger = cl
		}
		written := len(chain)
		for _, w := range members {
			w.warnings = nil
			if warn != "" {
				w.warnings = []string{warn}
			}
		}
		// unpublished finishes members after a failure that proves the
		// chain was not published, deleting the compaction's objects too.
		unpublished := func(err error) {
			if c != nil {
				g.discard(ctx, cl)
			}
			fail(members, err, true)
		}
		if foreign != nil {
			if err := foreign.pending(members, chain); err != nil {
				_ = storage.Flush(bctx)
				settle()
				unpublished(err)
				return
			}
		}
		if err := failpoint.Hit(FPBeforePublish); err != nil {
			_ = storage.Flush(bctx)
			settle()
			unpublished(err)
			return
		}
		_, err := g.repo.PublishWrittenChain(bctx, branch, head, newBranch, chain, written)
		_ = storage.Flush(bctx) // no-op unless PublishChain failed before its own flush
		settle()
		if err == nil {
			cl.Keep()
			if err := failpoint.Hit(FPAfterPublish); err != nil {
				fail(members, err, false) // published: the objects are referenced
				return
			}
			for _, w := range members {
				if w.req.created != nil {
					*w.req.created = newBranch
				}
			}
			for i, w := range members {
				w.ledger.Keep()
				w.finish(chain[i], w.last, nil)
			}
			return
		}
		var moved *commit.HeadMovedError
		if !errors.As(err, &moved) {
			if commit.NotPublished(err) {
				unpublished(err)
			} else {
				// The CAS may have landed: leave everything to cleanup.
				cl.Keep()
				fail(members, err, false)
			}
			return
		}
		// The CAS was refused: this round's commits and the compaction's
		// objects are named by nothing. The writes' own objects may be
		// reused by their next staging (a load's chunks), so they stay in
		// their ledgers.
		if c != nil {
			g.discard(ctx, cl)
		}
		// The batch was flushed before the CAS: what it sent is durable.
		reuse.confirm()
		lost++
		if lost > g.maxRetries || time.Since(start) > g.retryBudget {
			fail(members, &ContentionError{Branch: branch, Attempts: lost, Elapsed: time.Since(start)}, true)
			return
		}
		if err := retryBackoff(ctx, lost-1); err != nil {
			fail(members, err, true)
			return
		}
		// Rebase the batch onto the head that won.
		newHead := moved.Actual
		if newHead.ETag == "" || newHead.Seq == 0 {
			if newHead, err = g.repo.Head(ctx, branch); err != nil {
				fail(members, err, true)
				return
			}
		}
		newBase, err := g.repo.Commit(ctx, newHead.Commit)
		if err != nil {
			fail(members, err, true)
			return
		}
		head, base, newBranch, live = newHead, newBase, false, members
	}
}

// ledgersOf maps the ledgers of ws to their writes.
func ledgersOf(ws []*queuedWrite) map[*storage.Ledger]*queuedWrite {
	out := make(map[*storage.Ledger]*queuedWrite, len(ws))
	for _, w := range ws {
		out[w.ledger] = w
	}
	return out
}

// takeTurn waits for this handle's turn to write branch among the writers
// of other processes sharing the store (storage.Serializer), at most
// Options.RetryBudget; nil means no turn (no serializer, a timeout, an
// error) and the batch proceeds optimistically.
func (g *Graph) takeTurn(ctx context.Context, branch string) func() {
	if g.serial == nil {
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, g.retryBudget)
	defer cancel()
	release, err := g.serial.Serialize(tctx, "refs/heads/"+branch)
	if err != nil {
		return nil
	}
	return release
}

// headMoved reports whether branch's head is no longer head (and what it
// is now), for a batch staged on head without the turn. A branch the batch
// creates, or a head that cannot be read, is left to the CAS to decide.
func (g *Graph) headMoved(ctx context.Context, branch string, head commit.Head, newBranch bool) (commit.Head, bool) {
	if newBranch {
		return commit.Head{}, false
	}
	cur, err := g.repo.Head(ctx, branch)
	if err != nil || cur.ETag == head.ETag {
		return commit.Head{}, false
	}
	return cur, true
}

// chainCompaction is the inline compaction of a batch (docs/maintenance.md):
// of the tables the batch touched, those its tip leaves with more small
// fragments than the threshold are compacted on the tip, and the result is
// one maintenance commit on top of it, published with the batch. Its
// failures never fail the writes: it returns no commit and a warning for
// the writes' results, and the objects it wrote (recorded in ctx's ledger)
// are named by nothing. With withCommit it writes the commit it returns
// with its objects and flushes both (flush is nil); without, the commit is
// not written: the caller writes it with the writes' commits (one chain
// object on a local directory) and then calls flush, which waits for the
// compaction's own objects — an error there means the commit must be left
// out of the chain.
func (g *Graph) chainCompaction(ctx context.Context, branch string, head commit.Head, tip *commit.Commit, touched map[string]string, withCommit bool) (c *commit.Commit, flush func() error, warning string) {
	if !g.maint.auto || len(touched) == 0 {
		return nil, nil, ""
	}
	// Its objects go out in a batch of their own, flushed by the caller
	// before its commit is published, so that their failure is the
	// compaction's alone (the chain's objects are flushed by
	// PublishChain). Its commit object is written with the chain's: a
	// failure there fails the batch.
	ctx = storage.WithSubBatch(ctx)
	warn := func(err error) (*commit.Commit, func() error, string) {
		_ = storage.Flush(ctx) // its puts are over before the ledger is discarded
		g.autoErr(err)
		return nil, nil, autoCompactWarning(err)
	}
	snap, err := g.snapshotOf(ctx, tip, branch)
	if err != nil {
		return warn(err)
	}
	tables := map[string]string{}
	var summary []string
	for _, tk := range sortedTableKeys(touched) {
		s, err := g.readState(ctx, touched[tk])
		if err != nil {
			return warn(err)
		}
		if !g.maint.needsAuto(s) {
			continue
		}
		c, err := g.compactTable(ctx, snap, tk, true)
		if err != nil {
			return warn(fmt.Errorf("optimize %s: %w", tk, err))
		}
		if c.to != "" {
			tables[tk] = c.to
			summary = append(summary, fmt.Sprintf("%s %d→%d", tk, c.removed, c.added))
		}
	}
	if len(tables) == 0 {
		return nil, nil, ""
	}
	next, err := g.repo.NextCommit(ctx, tip, commit.PublishRequest{Branch: branch, Base: head, Tables: tables,
		Actor: MaintenanceActor, Message: "auto-compact: " + strings.Join(summary, ", "), Kind: commit.KindMaintenance})
	if err != nil {
		return warn(err)
	}
	if withCommit {
		// Its commit object travels with its objects (one round trip):
		// until the CAS names it, it is an object like the others, and the
		// ledger in ctx deletes it with them if the compaction is dropped.
		if err := g.repo.WriteCommits(ctx, []*commit.Commit{next}); err != nil {
			return warn(err)
		}
		if err := storage.Flush(ctx); err != nil {
			return warn(err)
		}
		return next, nil, ""
	}
	flush = func() error {
		if err := storage.Flush(ctx); err != nil {
			g.autoErr(err)
			return err
		}
		return nil
	}
	return next, flush, ""
}

// autoCompactWarning is the warning a write's result carries when its
// inline compaction failed.
func autoCompactWarning(err error) string {
	return "automatic compaction failed (the write itself succeeded; run 'omnigraph optimize' later): " + err.Error()
}

// stage prepares one write of a batch on tip (the published head base, or
// the last commit chained on it), writes its objects into bctx's batch and
// builds its commit. It returns a nil commit for a no-op. A write staged
// before (a lost race, a cancelled write ahead of it) must pass
// readSetConflict if it is strict.
func (g *Graph) stage(bctx context.Context, w *queuedWrite, branch string, head commit.Head, base, tip *commit.Commit, newBranch bool) (*commit.Commit, map[string]string, error) {
	req := w.req
	if err := w.ctx.Err(); err != nil {
		return nil, nil, err
	}
	// Reads run under the write's context and see the batch's objects;
	// what the write creates is recorded in its ledger.
	ictx := storage.WithLedger(storage.ShareBatch(w.ctx, bctx), w.ledger)
	wctx := storage.WithLedger(bctx, w.ledger)
	if req.ifCommit != "" && tip.ID.String() != req.ifCommit {
		// Maintenance commits on top of the expected one change no content.
		if ok, err := g.onlyMaintenanceSince(ictx, req.ifCommit, tip); err != nil || !ok {
			return nil, nil, &PreconditionFailedError{Branch: branch, Expected: req.ifCommit, Actual: tip.ID.String()}
		}
	}
	snap, err := g.snapshotOf(ictx, tip, branch)
	if err != nil {
		return nil, nil, err
	}
	p, err := req.prepare(ictx, snap)
	if err != nil {
		return nil, nil, err
	}
	if w.last != nil && (p.strict || w.last.strict) {
		if err := g.readSetConflict(ictx, branch, w.last, w.lastSnap, w.lastBase, p, snap, base); err != nil {
			return nil, nil, err
		}
	}
	w.last, w.lastSnap, w.lastBase = p, snap, base
	if p.noop {
		return nil, nil, nil
	}
	if err := w.ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := failpoint.Hit(FPBeforeWrite); err != nil {
		return nil, nil, err
	}
	// Writes go out under the leader's context: on a batching store (S3)
	// every object of the batch is sent concurrently and PublishChain waits
	// for them all before its CAS.
	var tables map[string]string
	if p.write != nil {
		tables, err = p.write(wctx, snap)
	} else {
		tables, err = g.writeTables(wctx, snap, p.delta)
	}
	if err != nil {
		return nil, nil, err
	}
	w.staged = tables
	w.pub = commit.PublishRequest{Branch: branch, Base: head, Tables: tables,
		Actor: req.actor, Message: req.message, Kind: req.kind, SchemaKey: p.schemaKey, Removed: p.removed, NewBranch: newBranch}
	c, err := g.repo.NextCommit(wctx, tip, w.pub)
	if err != nil {
		return nil, nil, err
	}
	return c, tables, nil
}

// retryPublish is the retry loop of the writes that publish alone with the
// ref CAS (merge, optimize). It calls try until try returns anything but a
// lost CAS (*commit.HeadMovedError); after a loss it sleeps a jittered
// back-off and calls try again with the loss, from which try rebases (or
// decides it may not, and returns that error). After g.maxRetries lost
// rounds, or g.retryBudget, it returns giveUp(attempts, last loss).
//
// INVARIANT: writers that lost together retry at different moments, so the
// rounds one writer needs stay few even with many writers
// (TestConformanceConcurrentAppend, TestMergeRacesTargetWrites).
func (g *Graph) retryPublish(ctx context.Context, try func(attempt int, moved *commit.HeadMovedError) error, giveUp func(attempt int, err error) error) error {
	var moved *commit.HeadMovedError
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := try(attempt, moved)
		if !errors.As(err, &moved) {
			return err
		}
		if attempt >= g.maxRetries || time.Since(start) > g.retryBudget {
			return giveUp(attempt, err)
		}
		if err := retryBackoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// writeTables makes the delta durable as new table states (not yet
// visible) and returns table key → new state key for every touched table.
// Per table: replaced and deleted rows are hidden by deletion vectors (or,
// for a Replace, the old fragments are dropped), the upserted images go into
// one new fragment, then the state is written.
func (g *Graph) writeTables(ctx context.Context, snap *snapshot.Snapshot, d *Delta) (map[string]string, error) {
	out := map[string]string{}
	write := func(tk string, td *TypeDelta, props []*schema.Property, edge bool) error {
		if !td.Replace && len(td.Upserts) == 0 && len(td.Deletes) == 0 {
			return nil
		}
		w := tableWrite{tk: tk, replace: td.Replace, rows: td.Upserts, props: props, edge: edge,
			dataFP: FPAfterTableData, stateFP: FPAfterTableState}
		if !td.Replace {
			// Replaced rows (upserted ids that are committed) and deleted ones.
			var err error
			if w.hide, err = snap.CommittedRows(ctx, tk, append(slices.Clone(td.Deletes), upsertIDs(td)...)); err != nil {
				return err
			}
		}
		key, err := g.writeTable(ctx, snap, w)
		if err != nil {
			return err
		}
		out[tk] = key
		return nil
	}
	for _, nt := range snap.Catalog().Nodes {
		if td := d.Nodes[nt.Name]; td != nil {
			if err := write(snapshot.NodeKey(nt.Name), td, nt.Props, false); err != nil {
				return nil, err
			}
		}
	}
	for _, et := range snap.Catalog().Edges {
		if td := d.Edges[et.Name]; td != nil {
			if err := write(snapshot.EdgeKey(et.Name), td, et.Props, true); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// writeFragment encodes rows as one fragment of a table schema.
func (g *Graph) writeFragment(ctx context.Context, prefix string, ts table.Schema, rows []Row, props []*schema.Property, edge bool) (table.Fragment, error) {
	f, _, err := g.encodeFragment(ctx, prefix, ts, rows, props, edge, false)
	return f, err
}

// encodeFragment is writeFragment, or, with lazy, table.DeferFragment
// where ctx has a held batch (deferred reports which).
func (g *Graph) encodeFragment(ctx context.Context, prefix string, ts table.Schema, rows []Row, props []*schema.Property, edge, lazy bool) (f table.Fragment, deferred bool, err error) {
	// A rebase of a batch that builds the rows an earlier round sent names
	// that round's fragment (batch_reuse.go).
	reuse := reuseOf(ctx)
	if f, ok := reuse.find(ctx, prefix, ts, rows, props, edge); ok {
		return f, false, nil
	}
	b, err := table.NewBatchBuilder(nil, ts)
	if err != nil {
		return table.Fragment{}, false, err
	}
	defer b.Release()
	enc := newRowEncoder(ts, props, edge)
	for _, r := range rows {
		if err := enc.append(b, r); err != nil {
			return table.Fragment{}, false, err
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	if lazy {
		if f, ok, err := table.DeferFragment(ctx, g.st, prefix, ts, rec, g.fragmentOptions()); ok || err != nil {
			return f, ok, err
		}
	}
	if f, err = table.WriteFragment(ctx, g.st, prefix, ts, rec, g.fragmentOptions()); err != nil {
		return table.Fragment{}, false, err
	}
	reuse.add(ctx, prefix, ts, rows, props, edge, f)
	return f, false, nil
}

// rowEncoder appends row images to a table.BatchBuilder of one schema: the
// one conversion of a Row into typed columns (mutations, merges and loads).
type rowEncoder struct {
	ts    table.Schema
	types []*schema.Property // per column; nil for id/src/dst and dropped columns
	edge  bool
	vals  []any
}

func newRowEncoder(ts table.Schema, props []*schema.Property, edge bool) *rowEncoder {
	e := &rowEncoder{ts: ts, types: make([]*schema.Property, len(ts.Columns)), edge: edge, vals: make([]any, len(ts.Columns))}
	for i, c := range ts.Columns {
		e.types[i] = snapshot.PropByName(props, c.Name)
	}
	return e
}

// append converts r and appends it to b; a rejected row leaves b unchanged.
func (e *rowEncoder) append(b *table.BatchBuilder, r Row) error {
	for i, c := range e.ts.Columns {
		switch {
		case c.Name == table.KeyColumn:
			e.vals[i] = r.ID
		case e.edge && c.Name == "src":
			e.vals[i] = r.Src
		case e.edge && c.Name == "dst":
			e.vals[i] = r.Dst
		case e.types[i] == nil:
			e.vals[i] = nil
		default:
			v, err := value.ToColumn(r.Values[c.Name])
			if err != nil {
				return &ConstraintError{Kind: ConstraintRequired, Prop: c.Name, ID: r.ID, Msg: err.Error()}
			}
			e.vals[i] = v
		}
	}
	if err := b.Append(e.vals); err != nil {
		return fmt.Errorf("row '%s': %w", r.ID, err)
	}
	return nil
}

// retryBackoff sleeps a random time before the next attempt after a lost
// publish race, growing with the attempt up to 50ms. Writers that lost
// together then retry at different moments instead of colliding again, so
// the number of rounds a writer needs stays small even with many writers.
func retryBackoff(ctx context.Context, attempt int) error {
	limit := time.Duration(1<<min(attempt, 6)) * time.Millisecond
	limit = min(limit, 50*time.Millisecond)
	t := time.NewTimer(rand.N(limit) + time.Millisecond/4)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
