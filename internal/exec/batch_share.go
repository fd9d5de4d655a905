package exec

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// One fragment per table per batch (docs/write-path.md, "Many writers").
//
// A group commit's leader stages its writes one on top of the other, and
// each staged mutation writes its rows as a fragment of its own (with its
// fragment index) — one-row fragments, two objects per write and table, and
// enough small fragments to trigger the inline compaction at every batch.
// On a store with a batching layer the leader stages into a held batch
// (storage.WithHeldBatch): nothing is sent, the stagings read each other's
// objects from memory. Once the chain is staged, settleChain replaces, per
// table, the fragments the members wrote by one fragment holding all their
// rows in chain order, and rewrites each member's table state to name it
// with a deletion vector (inline, table-state format 4) hiding the rows
// that state did not hold: those of later writes, and those an earlier
// write's row superseded. Commit i therefore reads exactly what it read
// when staged. Then it sends what the rewritten chain names: the shared
// fragment and its index, the rewritten states, and every other object the
// members staged (loads' chunks and vectors, states of tables without a
// shared fragment, schema sources); the members' own fragments and the
// states that named them are dropped unsent, as are the objects of writes
// left out of the chain.

// maxHeldBytes bounds the objects a leader holds back while it stages a
// batch; larger ones (a load's last chunk, a bulk mutation's fragment) are
// sent at once and never shared, so a batch's memory stays bounded.
const maxHeldBytes = 1 << 20

// shareKey carries a *fragmentShare in a staging context.
type shareKey struct{}

// fragmentShare records the fragments a batch's stagings wrote from row
// images (writeTable), with the rows, so that settleChain can re-encode
// them as one.
type fragmentShare struct {
	mu    sync.Mutex
	parts map[string]*sharedPart // by fragment key
	// lazy is set by the leader while it stages a write of a batch of
	// more than one: that write's fragments are deferred
	// (table.DeferFragment), since settleChain re-encodes them anyway. A
	// write alone is encoded as staged (settleChain would only encode it
	// again).
	lazy atomic.Bool
}

// maxDeferredRows bounds the rows of a fragment a staging defers; larger
// ones are encoded as staged (and, held or not, shared as before).
const maxDeferredRows = 1024

// sharedPart is one staged write's fragment of one table.
type sharedPart struct {
	tk     string
	prefix string
	ts     table.Schema
	frag   table.Fragment
	rows   []Row
	props  []*schema.Property
	edge   bool
	ledger *storage.Ledger // the write's (whose staging wrote it)
	// deferred: frag was never encoded (table.DeferFragment); settleChain
	// must replace it in every state naming it.
	deferred bool
}

// stageFragment writes rows as a fragment of a staging under ctx: deferred
// (never encoded unless another staging reads it) when share allows it,
// else encoded as writeFragment does.
func (g *Graph) stageFragment(ctx context.Context, share *fragmentShare, prefix string, ts table.Schema, rows []Row, props []*schema.Property, edge bool) (table.Fragment, bool, error) {
	lazy := share != nil && share.lazy.Load() && len(rows) <= maxDeferredRows
	return g.encodeFragment(ctx, prefix, ts, rows, props, edge, lazy)
}

func withShare(ctx context.Context, s *fragmentShare) context.Context {
	return context.WithValue(ctx, shareKey{}, s)
}

func shareOf(ctx context.Context) *fragmentShare {
	s, _ := ctx.Value(shareKey{}).(*fragmentShare)
	return s
}

// record notes a fragment writeTable wrote from rows under ctx.
func (s *fragmentShare) record(ctx context.Context, p *sharedPart) {
	if s == nil {
		return
	}
	p.ledger = storage.LedgerOf(ctx)
	s.mu.Lock()
	s.parts[p.frag.Key] = p
	s.mu.Unlock()
}

// isBatching reports whether st is, or wraps, a batching layer: only there
// does a held batch hold anything back (elsewhere puts go straight to the
// store, and sharing would only add objects).
func isBatching(st storage.Store) bool {
	for st != nil {
		if _, ok := st.(*storage.Batching); ok {
			return true
		}
		w, ok := st.(interface{ Inner() storage.Store })
		if !ok {
			return false
		}
		st = w.Inner()
	}
	return false
}

// settleChain turns a chain staged in the held batch of sctx into the chain
// to publish, written into bctx's batch: it returns the commits (one per
// member, in order) and the tables they touch (for the inline compaction).
// members[i] staged chain[i] on chain[i-1] (base for i = 0). On error
// nothing is published; what it sent is in the members' ledgers.
func (g *Graph) settleChain(bctx, sctx context.Context, share *fragmentShare, head commit.Head, base *commit.Commit, members []*queuedWrite) ([]*commit.Commit, map[string]string, error) {
	own := ledgersOf(members)
	held := map[string]bool{}
	for _, h := range storage.Held(sctx) {
		held[h.Key] = true
	}
	// The members' parts per table, in chain order.
	byTable := map[string][]*sharedPart{}
	var tks []string
	for _, w := range members {
		for _, tk := range sortedTableKeys(w.staged) {
			st, err := g.readState(sctx, w.staged[tk])
			if err != nil {
				return nil, nil, err
			}
			for _, f := range st.Fragments() {
				p := share.parts[f.Key]
				// Only a held part can be replaced: a large one was sent.
				if p == nil || p.ledger != w.ledger || (!held[f.Key] && !p.deferred) || slices.Contains(byTable[tk], p) {
					continue
				}
				if len(byTable[tk]) == 0 {
					tks = append(tks, tk)
				}
				byTable[tk] = append(byTable[tk], p)
			}
		}
	}
	// Tables with two parts or more get one fragment for them all; a
	// deferred part that cannot be merged (alone in its table, a schema
	// change in the batch, parts of different schemas) is encoded alone.
	// Held parts that are not merged stay as staged.
	obsolete := map[string]bool{}
	repl := map[string]map[string]placed{} // table → part key → its rows' new place
	schemaChange := slices.ContainsFunc(members, func(w *queuedWrite) bool { return w.pub.SchemaKey != "" || len(w.pub.Removed) > 0 })
	for _, tk := range tks {
		parts := byTable[tk]
		groups := [][]*sharedPart{parts}
		if len(parts) < 2 || !sameSchema(parts) || schemaChange {
			groups = nil
			for _, p := range parts {
				if p.deferred {
					groups = append(groups, []*sharedPart{p})
				}
			}
		}
		for _, grp := range groups {
			var rows []Row
			first := map[string]int64{}
			for _, p := range grp {
				first[p.frag.Key] = int64(len(rows))
				rows = append(rows, p.rows...)
				obsolete[p.frag.Key] = true
				if p.frag.Index != "" {
					obsolete[p.frag.Index] = true
				}
			}
			// The shared fragment is the first part's writer's; every
			// member whose rows it holds records it too (any of them
			// failing with the chain deletes it; deleting twice is
			// harmless).
			fctx := storage.WithLedger(bctx, grp[0].ledger)
			f, err := g.writeFragment(fctx, grp[0].prefix, grp[0].ts, rows, grp[0].props, grp[0].edge)
			if err != nil {
				return nil, nil, fmt.Errorf("exec: %s: %w", tk, err)
			}
			for _, p := range grp[1:] {
				p.ledger.Add(f.Key)
				if f.Index != "" && !table.IsInlineIndex(f.Index) {
					p.ledger.Add(f.Index)
				}
			}
			if repl[tk] == nil {
				repl[tk] = map[string]placed{}
			}
			for _, p := range grp {
				repl[tk][p.frag.Key] = placed{frag: f, first: first[p.frag.Key], alone: len(grp) == 1}
			}
		}
	}
	// Rewrite the members' states of those tables and rebuild the chain.
	chain := make([]*commit.Commit, 0, len(members))
	touched := map[string]string{}
	tip := base
	for _, w := range members {
		wctx := storage.WithLedger(bctx, w.ledger)
		tables := maps.Clone(w.staged)
		for _, tk := range sortedTableKeys(w.staged) {
			key := w.staged[tk]
			if r := repl[tk]; r != nil {
				nk, err := g.rewriteState(wctx, sctx, tk, key, r)
				if err != nil {
					return nil, nil, err
				}
				if nk != key {
					obsolete[key] = true
					tables[tk], key = nk, nk
				}
			}
			// INVARIANT: no published state names a deferred fragment
			// (TestGroupCommitDeferredParts).
			st, err := g.readState(sctx, key)
			if err != nil {
				return nil, nil, err
			}
			if slices.ContainsFunc(st.Fragments(), table.IsDeferred) {
				return nil, nil, fmt.Errorf("exec: %s: a staged state of the batch still names a deferred fragment (bug)", tk)
			}
		}
		req := w.pub
		req.Tables = tables
		c, err := g.repo.NextCommit(wctx, tip, req)
		if err != nil {
			return nil, nil, err
		}
		w.ledger.Add(commit.CommitKey(c.ID))
		chain, tip = append(chain, c), c
		maps.Copy(touched, tables)
	}
	// What is replaced is never sent: a later round cannot reuse it.
	reuseOf(bctx).drop(obsolete)
	if err := g.sendHeld(bctx, sctx, own, obsolete); err != nil {
		return nil, nil, err
	}
	return chain, touched, nil
}

// sendHeld sends into bctx's batch the objects sctx's held batch kept for
// the writes of own, except the obsolete ones (parts replaced by a shared
// fragment, states rewritten to name it). Objects of writes left out of the
// chain are dropped: nothing published names them.
func (g *Graph) sendHeld(bctx, sctx context.Context, own map[*storage.Ledger]*queuedWrite, obsolete map[string]bool) error {
	for _, h := range storage.Held(sctx) {
		if obsolete[h.Key] {
			continue
		}
		if _, ok := own[h.Ledger]; !ok && h.Ledger != nil {
			continue
		}
		ctx := storage.WithLedger(bctx, nil) // recorded when held
		var err error
		if h.IfAbsent {
			_, err = g.st.PutIfAbsent(ctx, h.Key, h.Data)
		} else {
			_, err = g.st.Put(ctx, h.Key, h.Data)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// placed is where a staged part's rows went in settleChain: the fragment
// written for its group, from row first on; alone if the group is that
// part only (the new file has the part's fields exactly).
type placed struct {
	frag  table.Fragment
	first int64
	alone bool
}

// rewriteState returns the key of the state at key (staged in sctx) with
// the parts of repl replaced by their groups' fragments: the rows of such a
// fragment that the state did not hold live (a later write's, or
// superseded ones) hidden by a deletion vector. A state naming no part is
// returned as is.
func (g *Graph) rewriteState(wctx, sctx context.Context, tk, key string, repl map[string]placed) (string, error) {
	st, err := g.readState(sctx, key)
	if err != nil {
		return "", err
	}
	live := map[string][]bool{} // new fragment key → its rows live in this state
	for _, f := range st.Fragments() {
		p, ok := repl[f.Key]
		if !ok {
			continue
		}
		lv := live[p.frag.Key]
		if lv == nil {
			lv = make([]bool, p.frag.Rows)
			live[p.frag.Key] = lv
		}
		var del []int64
		if f.DV != "" {
			dv, err := table.LoadDeletionVector(sctx, g.st, f)
			if err != nil {
				return "", err
			}
			del = dv.Offsets
		}
		for r := range f.Rows {
			if len(del) > 0 && del[0] == r {
				del = del[1:]
				continue
			}
			lv[p.first+r] = true
		}
	}
	if len(live) == 0 {
		return key, nil
	}
	// A new fragment takes the place of its first part, so the table's
	// rows keep the order the staged state gave them.
	var frags []table.Fragment
	hide := map[string][]int64{}
	done := map[string]bool{}
	for _, f := range st.Fragments() {
		p, ok := repl[f.Key]
		if !ok {
			frags = append(frags, f)
			continue
		}
		if done[p.frag.Key] {
			continue
		}
		done[p.frag.Key] = true
		var h []int64
		for r, ok := range live[p.frag.Key] {
			if !ok {
				h = append(h, int64(r))
			}
		}
		if len(h) == len(live[p.frag.Key]) {
			continue // none of its rows is this state's
		}
		nf := p.frag
		switch {
		case p.alone:
			// The part's own rows in a file of their own, encoded as its
			// staging would have: this state's view of the part (statistics
			// and field mapping, which a schema change in the batch may have
			// evolved) holds for it.
			nf.Stats, nf.Fields = f.Stats, f.Fields
		case f.Fields != nil:
			// Groups of several parts form only without a schema change in
			// the batch, so no state maps their columns.
			return "", fmt.Errorf("exec: %s: merged fragment part %s has a field mapping (bug)", tk, f.Key)
		}
		frags = append(frags, nf)
		if len(h) > 0 {
			hide[nf.Key] = h
		}
	}
	n, err := table.NewState(st.Schema())
	if err == nil {
		n, err = n.Append(frags...)
	}
	if err == nil {
		n, err = n.WithIndexes(st.Indexes())
	}
	if err != nil {
		return "", err
	}
	prefix := snapshot.TablePrefix(tk)
	if len(hide) > 0 {
		if n, err = table.DeleteRowsWith(wctx, g.st, prefix, n, hide, table.DeleteOptions{InlineBytes: g.inlineDV}); err != nil {
			return "", fmt.Errorf("exec: %s: %w", tk, err)
		}
	}
	out, err := table.WriteStateInline(wctx, g.st, prefix, n, g.inlineState)
	if err != nil {
		return "", err
	}
	g.snaps.AddState(out, n)
	return out, nil
}

// sameSchema: every part was encoded with one table schema (a schema
// change inside the batch splits it; such tables keep their parts).
func sameSchema(parts []*sharedPart) bool {
	for _, p := range parts[1:] {
		if !slices.Equal(p.ts.Columns, parts[0].ts.Columns) || p.edge != parts[0].edge {
			return false
		}
	}
	return true
}
