package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Writes handed to the turn's holder: the cross-process group commit
// (docs/write-path.md, "Writes handed to the turn's holder").
//
// On a local directory the writers of several processes take turns per
// branch (takeTurn). A process whose batch finds the turn held by another
// process, and whose writes can run anywhere (mutations given with their
// source, forwardSpecOf), does not stage them itself: it proposes them in
// the branch's mailbox (storage.Mailbox) and waits. The holder of the turn
// claims what is proposed, stages it after its own writes exactly like a
// write of its own queue (each on top of the ones ahead), publishes the
// whole chain with its one CAS and answers each proposal with a receipt
// before it releases the turn. So eight processes writing one branch
// publish as one group commit instead of one process at a time.
//
// Exactly once. A proposal is claimed by exactly one holder or withdrawn by
// its proposer (storage.Mailbox.Claim/Withdraw). Before each CAS the holder
// writes a *pending* receipt naming the commit each proposed write will
// have; after the outcome is known, a *final* one. A proposer acts on a
// final receipt, or, when it holds the turn itself and its proposal was
// claimed without a final receipt (the holder died: turns are released only
// after the final receipts, or by death), on the pending one, checking each
// named commit against its branch's chain: on the chain, the write is done;
// otherwise it never will be (its holder is gone), and the proposer runs it
// itself. A write whose holder could not tell whether its CAS landed is
// checked the same way. A write the holder did not apply for any reason — a
// validation error, a conflict, a source that no longer compiles, an
// @embed target, contention — comes back unapplied and runs in its own
// process as if it had never been proposed: its error, if any, is then its
// own, typed as usual.

// Failpoints of the holder's side, for the crash tests.
const (
	FPForwardTurn    = "exec/forward-turn"    // a batch took the turn to lead, nothing claimed yet
	FPForwardClaimed = "exec/forward-claimed" // proposals claimed, nothing staged for them
	FPForwardPending = "exec/forward-pending" // pending receipts written, the CAS not sent
)

// Bounds of forwarding.
const (
	// maxForwardWrites bounds the writes one proposal carries: a batch
	// larger than that is a group commit of its own and takes its turn.
	maxForwardWrites = 16
	// forwardPollMin and forwardPollMax bound the interval at which a
	// proposer looks for its receipt while it waits for the turn.
	forwardPollMin = 100 * time.Microsecond
	forwardPollMax = time.Millisecond
	// lingerFor is how long a holder whose previous batch carried other
	// processes' writes (within lingerAfter) waits for their next
	// proposals when it finds none: they were answered a moment ago and
	// are proposing again, and a batch of the holder's write alone would
	// pay a whole CAS for it (linger).
	lingerFor   = time.Millisecond
	lingerAfter = 100 * time.Millisecond
)

// forwardSpec is one write as another process runs it: a mutation by its
// source and name, with its parameters as JSON.
type forwardSpec struct {
	Source string          `json:"source"`
	Name   string          `json:"name"`
	Params json.RawMessage `json:"params,omitempty"`
	Actor  string          `json:"actor,omitempty"`
}

// proposalDoc is a proposal's encoding: the writes of one batch of the
// proposer, in order, and when the holder must no longer start them.
type proposalDoc struct {
	Version  int           `json:"v"`
	Deadline int64         `json:"deadline_unix_ms"`
	Writes   []forwardSpec `json:"writes"`
}

// receiptDoc is a receipt's encoding: per proposal id, one result per
// proposed write. One receipt answers every proposal of a batch. A final
// receipt tells the outcome; a pending one (written before a CAS) names the
// commits the writes have if that CAS lands.
type receiptDoc struct {
	Version int                        `json:"v"`
	Results map[string][]forwardResult `json:"results"`
}

// forwardResult is the outcome of one proposed write.
type forwardResult struct {
	// Commit is the write's commit: published (final), or published only
	// if the chain naming it is on the branch (pending, or Unknown).
	Commit string `json:"commit,omitempty"`
	// Unknown: the holder could not tell whether its CAS landed.
	Unknown       bool     `json:"unknown,omitempty"`
	Noop          bool     `json:"noop,omitempty"`
	AffectedNodes int64    `json:"affected_nodes,omitempty"`
	AffectedEdges int64    `json:"affected_edges,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
	// NotApplied says why the holder did not apply the write; its
	// proposer runs it itself.
	NotApplied string `json:"not_applied,omitempty"`
}

const forwardVersion = 1

// errNotForwardable: the holder does not run this write (it would compute
// embeddings with the holder's configuration, not the proposer's).
var errNotForwardable = errors.New("exec: the write must run in its own process")

// forwardSpecOf is the write of plan (compiled from src) with params as
// another process would run it, or nil when it cannot be handed over: its
// parameters must survive JSON exactly — every declared parameter converts
// to the same value from the JSON as from the caller's value.
func forwardSpecOf(plan *query.Plan, src string, params map[string]any, actor string) *forwardSpec {
	var raw json.RawMessage
	if len(params) > 0 {
		b, err := json.Marshal(params)
		if err != nil {
			return nil
		}
		back, err := decodeParams(b)
		if err != nil {
			return nil
		}
		for _, p := range plan.Params {
			v1, present := params[p.Name]
			v2, present2 := back[p.Name]
			c1, err1 := value.ConvertParam(p.Name, p.Type, v1, present)
			c2, err2 := value.ConvertParam(p.Name, p.Type, v2, present2)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(c1, c2) {
				return nil
			}
		}
		raw = b
	}
	return &forwardSpec{Source: src, Name: plan.Name, Params: raw, Actor: actor}
}

// decodeParams decodes forwarded parameters, numbers as json.Number (as
// the CLI and the server decode theirs).
func decodeParams(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// forwardable reports whether the batch ws may be proposed to another
// process: every write carries a forwardSpec, and they are few.
func forwardable(ws []*queuedWrite) bool {
	if len(ws) == 0 || len(ws) > maxForwardWrites {
		return false
	}
	for _, w := range ws {
		if w.req.forward == nil || w.req.forkAt != nil || w.req.ifCommit != "" {
			return false
		}
	}
	return true
}

func turnName(branch string) string { return "refs/heads/" + branch }

// leadOrForward decides how a batch of this handle proceeds on a store with
// a mailbox: if the branch's turn is free it takes it now (the batch is
// staged under it, with what other processes propose); if another process
// holds it, a forwardable batch is proposed to that process. It returns the
// writes still to run here — those the holder did not apply, or all of
// them — and the release of the turn if this handle now holds it (nil: run
// as without forwarding). Writes the other process applied are finished.
func (g *Graph) leadOrForward(ctx context.Context, branch string, ws []*queuedWrite) ([]*queuedWrite, func()) {
	release, st, err := g.mail.TryTurn(turnName(branch))
	switch {
	case err != nil:
		return ws, nil
	case st == storage.TurnTaken:
		return ws, release
	case st == storage.TurnInProcess:
		release() // a no-op: another handle of this process holds it
	}
	if !forwardable(ws) {
		return ws, nil
	}
	return g.forward(ctx, branch, ws)
}

// forward proposes ws to the holder of branch's turn and waits for the
// outcome (see the comment at the top of this file). It returns the
// writes to run here and, if it ends holding the turn, its release.
//
// It waits by polling, for its receipt and for the turn (without
// waiting: TryTurn), on one ticker: a blocking wait for the turn would
// leave a thread in flock(2) behind every proposal answered before its
// proposer got the turn, until the turn passed.
func (g *Graph) forward(ctx context.Context, branch string, ws []*queuedWrite) ([]*queuedWrite, func()) {
	name := turnName(branch)
	doc := proposalDoc{Version: forwardVersion, Deadline: time.Now().Add(g.retryBudget).UnixMilli()}
	for _, w := range ws {
		doc.Writes = append(doc.Writes, *w.req.forward)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return ws, nil
	}
	id := ulid.Make().String()
	if err := g.mail.Propose(name, id, data); err != nil {
		return ws, nil
	}
	start := time.Now()
	poll := forwardPollMin
	timer := time.NewTimer(poll)
	defer timer.Stop()
	claimed := false // the proposal was seen claimed: wait for its outcome
	for {
		<-timer.C
		if rs, final, ok := g.receipt(name, id); ok && final {
			_ = g.mail.Forget(name, id)
			return g.settleForwarded(ctx, branch, ws, rs, false), nil
		}
		// A write was cancelled, or the wait is past the retry budget:
		// take the proposal back if nobody claimed it; the writes then run
		// here (the cancelled ones end at their staging).
		giveUp := time.Since(start) > g.retryBudget
		for _, w := range ws {
			giveUp = giveUp || w.ctx.Err() != nil
		}
		if giveUp && !claimed {
			if ok, err := g.mail.Withdraw(name, id); err == nil && ok {
				return ws, nil
			}
			claimed = true
		}
		release, st, err := g.mail.TryTurn(name)
		switch {
		case err != nil, st == storage.TurnBusy:
		case st == storage.TurnTaken:
			return g.forwardWithTurn(ctx, branch, id, ws, release)
		case st == storage.TurnInProcess:
			// Another handle of this process holds the turn (or waits for
			// it): it claims proposals like any holder, and it never waits
			// for this one.
			release()
		}
		poll = min(2*poll, forwardPollMax)
		timer.Reset(poll)
	}
}

// forwardWithTurn ends a proposal's wait once the proposer holds the turn:
// with the final receipt if there is one; else by withdrawing it (the
// proposer then leads with it); else (claimed, no final receipt: its holder
// died before it could answer) from the pending receipt, each write checked
// against the chain. It keeps the turn while writes remain to run here.
func (g *Graph) forwardWithTurn(ctx context.Context, branch, id string, ws []*queuedWrite, release func()) ([]*queuedWrite, func()) {
	name := turnName(branch)
	rs, final, ok := g.receipt(name, id)
	var rest []*queuedWrite
	switch {
	case ok && final:
		rest = g.settleForwarded(ctx, branch, ws, rs, false)
	default:
		withdrawn, err := g.mail.Withdraw(name, id)
		if err != nil {
			// The proposal may still be there for a later holder: running
			// the writes here could run them twice.
			release()
			for _, w := range ws {
				w.finish(nil, nil, fmt.Errorf("exec: the write was handed to another process and cannot be taken back (%w); it may still be applied: check the branch before writing it again", err))
			}
			return nil, nil
		}
		if withdrawn {
			return ws, release
		}
		if ok {
			rest = g.settleForwarded(ctx, branch, ws, rs, true)
		} else {
			rest = ws // claimed, and its holder died before any receipt: nothing was published
		}
	}
	_ = g.mail.Forget(name, id)
	if len(rest) == 0 {
		release()
		return nil, nil
	}
	return rest, release
}

// receipt reads id's receipt: the results of its writes, and whether it
// is final; ok false if there is none (or it cannot be read: the proposer
// waits on, for the turn).
func (g *Graph) receipt(name, id string) (results []forwardResult, final, ok bool) {
	data, final, err := g.mail.Receipt(name, id)
	if err != nil {
		return nil, false, false
	}
	var rec receiptDoc
	if json.Unmarshal(data, &rec) != nil || rec.Version != forwardVersion {
		return nil, false, false
	}
	results, ok = rec.Results[id]
	return results, final, ok
}

// settleForwarded finishes the writes of ws that rec reports applied (or,
// with verify or for an Unknown result, whose commit is on branch) and
// returns the others, to run here.
func (g *Graph) settleForwarded(ctx context.Context, branch string, ws []*queuedWrite, results []forwardResult, verify bool) []*queuedWrite {
	var rest []*queuedWrite
	for i, w := range ws {
		if i >= len(results) {
			rest = append(rest, w)
			continue
		}
		r := results[i]
		switch {
		case r.Commit != "":
			id, err := commit.ParseID(r.Commit)
			if err != nil { // a damaged receipt: whether the write landed cannot be told
				w.finish(nil, nil, fmt.Errorf("exec: the receipt of a write handed to another process is damaged: %w", err))
				continue
			}
			if verify || r.Unknown {
				on, err := g.onChain(ctx, branch, id)
				if err != nil {
					w.finish(nil, nil, err) // cannot tell: as after a CAS whose outcome is unknown
					continue
				}
				if !on {
					rest = append(rest, w)
					continue
				}
			}
			c, err := g.repo.Commit(ctx, id)
			if err != nil {
				w.finish(nil, nil, fmt.Errorf("exec: the write was published as commit %s, which cannot be read: %w", r.Commit, err))
				continue
			}
			w.remote, w.warnings = &r, r.Warnings
			w.finish(c, nil, nil)
		case r.Noop && !verify:
			w.remote = &r
			w.finish(nil, nil, nil)
		default:
			rest = append(rest, w)
		}
	}
	return rest
}

// onChain reports whether commit id is branch's head or one of its
// ancestors. A commit that does not exist was never published.
func (g *Graph) onChain(ctx context.Context, branch string, cid commit.ID) (bool, error) {
	head, err := g.repo.Head(ctx, branch)
	if err != nil {
		return false, err
	}
	on, err := g.repo.IsAncestor(ctx, cid, head.Commit)
	if errors.Is(err, commit.ErrCommitNotFound) {
		return false, nil
	}
	return on, err
}

// foreignBatch is what a leader holding the turn claimed from other
// processes' proposals, in claim order.
type foreignBatch struct {
	g      *Graph
	branch string
	props  []*foreignProposal
}

type foreignProposal struct {
	id     string
	writes []*queuedWrite
	// bad: the proposal could not be read; it is answered "not applied".
	bad string
}

// foreignSlot is the leader's side of a claimed write: where its staging
// leaves its counts, and the end of its context.
type foreignSlot struct {
	res    *MutationResult
	cancel context.CancelFunc
}

// linger is claim for a batch's first claim: if nothing was claimed yet
// and the handle's last batch with writes of other processes ended less
// than lingerAfter ago, it polls the mailbox for up to lingerFor until
// something is proposed. Writers that hand over take turns with the
// holder's own: without it, every other batch held the holder's one write
// (its next write takes the free turn before the others, just answered,
// propose again).
func (f *foreignBatch) linger(max int) []*queuedWrite {
	if max <= 0 || len(f.props) > 0 || time.Since(time.Unix(0, f.g.lastForeign.Load())) > lingerAfter {
		return nil
	}
	for end := time.Now().Add(lingerFor); time.Now().Before(end); {
		time.Sleep(lingerFor / 10)
		if ws := f.claim(max); len(ws) > 0 {
			return ws
		}
	}
	return nil
}

// claim takes up to max proposed writes (whole proposals, so a proposal of
// several writes may pass max by fewer than maxForwardWrites) and returns
// them as queued writes of this batch.
func (f *foreignBatch) claim(max int) []*queuedWrite {
	if max <= 0 {
		return nil
	}
	props, err := f.g.mail.Claim(turnName(f.branch), max)
	if err != nil && len(props) == 0 {
		return nil
	}
	var out []*queuedWrite
	for _, p := range props {
		fp := &foreignProposal{id: p.ID}
		f.props = append(f.props, fp)
		var doc proposalDoc
		if err := json.Unmarshal(p.Data, &doc); err != nil || doc.Version != forwardVersion {
			fp.bad = "unreadable proposal"
			continue
		}
		deadline := time.UnixMilli(doc.Deadline)
		for _, spec := range doc.Writes {
			w := f.g.foreignWrite(f.branch, spec, deadline)
			fp.writes = append(fp.writes, w)
			out = append(out, w)
		}
		if len(doc.Writes) == 0 {
			fp.bad = "empty proposal"
		}
	}
	if len(out) > 0 {
		if err := failpoint.Hit(FPForwardClaimed); err != nil {
			for _, w := range out {
				w.finish(nil, nil, err)
			}
			return nil
		}
	}
	return out
}

// foreignWrite is a write another process proposed, as a queued write of
// this handle: its source compiled on the catalog it is staged on.
func (g *Graph) foreignWrite(branch string, spec forwardSpec, deadline time.Time) *queuedWrite {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	res := &MutationResult{}
	params, perr := decodeParams(spec.Params)
	var plans map[*schema.Catalog]*query.Plan
	planOf := func(cat *schema.Catalog) (*query.Plan, error) {
		if perr != nil {
			return nil, perr
		}
		if p := plans[cat]; p != nil {
			return p, nil
		}
		p, err := query.CompileQuery(cat, "<query>", spec.Source, spec.Name)
		if err != nil {
			return nil, err
		}
		if !p.IsMutation() {
			return nil, ErrNotMutation
		}
		for _, t := range p.Writes {
			if nt, ok := cat.Node(t.Name); ok && !t.Edge && len(embedTargets(nt)) > 0 {
				return nil, errNotForwardable
			}
		}
		if plans == nil {
			plans = map[*schema.Catalog]*query.Plan{}
		}
		plans[cat] = p
		return p, nil
	}
	return &queuedWrite{ctx: ctx, req: g.mutationRequest(branch, "", spec.Actor, spec.Name, planOf, params, res),
		lead: make(chan struct{}), done: make(chan struct{}), ledger: storage.NewLedger(),
		foreign: &foreignSlot{res: res, cancel: cancel}}
}

// pending writes, before a CAS of chain (members[i] is chain[i]), the
// pending receipt of the claimed proposals.
func (f *foreignBatch) pending(members []*queuedWrite, chain []*commit.Commit) error {
	if len(f.props) == 0 {
		return nil
	}
	ids := make(map[*queuedWrite]string, len(members))
	for i, w := range members {
		ids[w] = chain[i].ID.String()
		w.stagedCommit = ids[w]
	}
	if err := f.reply(false, func(w *queuedWrite) forwardResult {
		r := forwardResult{Commit: ids[w]}
		if r.Commit != "" {
			r.AffectedNodes, r.AffectedEdges = w.foreign.res.AffectedNodes, w.foreign.res.AffectedEdges
		}
		return r
	}); err != nil {
		return err
	}
	return failpoint.Hit(FPForwardPending)
}

// answer writes the final receipt of the claimed proposals; every write of
// the batch is finished. It runs before the turn is released. Unanswered
// (the receipt cannot be written), a proposer reads the pending receipt
// once it holds the turn, and checks it against the chain.
func (f *foreignBatch) answer() {
	if len(f.props) == 0 {
		return
	}
	f.g.lastForeign.Store(time.Now().UnixNano())
	_ = f.reply(true, foreignOutcome)
	for _, p := range f.props {
		for _, w := range p.writes {
			w.foreign.cancel()
		}
	}
	f.props = nil
}

// reply writes one receipt for every claimed proposal, result giving each
// write's.
func (f *foreignBatch) reply(final bool, result func(*queuedWrite) forwardResult) error {
	rec := receiptDoc{Version: forwardVersion, Results: make(map[string][]forwardResult, len(f.props))}
	ids := make([]string, 0, len(f.props))
	for _, p := range f.props {
		var rs []forwardResult
		for _, w := range p.writes {
			rs = append(rs, result(w))
		}
		if p.bad != "" {
			rs = []forwardResult{{NotApplied: p.bad}}
		}
		rec.Results[p.id] = rs
		ids = append(ids, p.id)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return f.g.mail.Reply(turnName(f.branch), ids, final, data)
}

// foreignOutcome is the result a finished claimed write reports to its
// proposer.
func foreignOutcome(w *queuedWrite) forwardResult {
	select {
	case <-w.done:
	default:
		return forwardResult{NotApplied: "not run"}
	}
	switch {
	case w.err != nil && w.maybePublished && w.stagedCommit != "":
		return forwardResult{Commit: w.stagedCommit, Unknown: true, AffectedNodes: w.foreign.res.AffectedNodes, AffectedEdges: w.foreign.res.AffectedEdges}
	case w.err != nil:
		return forwardResult{NotApplied: w.err.Error()}
	case w.commit == nil:
		return forwardResult{Noop: true}
	}
	return forwardResult{Commit: w.commit.ID.String(), AffectedNodes: w.foreign.res.AffectedNodes,
		AffectedEdges: w.foreign.res.AffectedEdges, Warnings: w.warnings}
}
