package exec

import (
	"context"
	"fmt"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// tableWrite is one table's change as writeTable applies it. Load, mutate,
// merge and every rebase of them describe their change this way, so there
// is one writer of table states.
type tableWrite struct {
	tk string
	// replace starts from an empty state of the table's schema (an
	// overwrite load, a compaction) instead of the snapshot's state, with
	// the index references indexes.
	replace bool
	indexes []table.IndexRef
	// keepRows requires the new state to hold exactly the old one's live
	// rows (a compaction moves rows, it never adds or drops one).
	keepRows bool
	// hide lists the committed rows to hide by deletion vectors, as
	// table.DeleteRows takes them (fragment key → offsets); callers locate
	// them through the snapshot's layout, never by scanning the id column.
	hide map[string][]int64
	// rows are images to write as one new fragment (props, edge describe
	// its columns); frags are fragments the caller already wrote (a
	// streamed load's chunks).
	rows  []Row
	props []*schema.Property
	edge  bool
	frags []table.Fragment
	// dataFP and stateFP are the failpoints hit after the table's data and
	// after its state are written ("" for none).
	dataFP, stateFP string
}

// writeTable writes the new state of one table of snap — its state with
// w.hide hidden, w.rows appended as a new fragment and w.frags appended —
// and returns the state's key. Nothing it writes is visible before the
// caller publishes the key with the commit CAS.
func (g *Graph) writeTable(ctx context.Context, snap *snapshot.Snapshot, w tableWrite) (string, error) {
	prefix := snapshot.TablePrefix(w.tk)
	old, err := snap.State(ctx, w.tk)
	if err != nil {
		return "", err
	}
	st := old
	if w.replace {
		if st, err = table.NewState(old.Schema()); err != nil {
			return "", err
		}
	} else if len(w.hide) > 0 {
		// Small vectors ride inline in the state (format 4): one object
		// fewer per write that hides rows of a fragment keeping others.
		// The vectors being extended are those the snapshot's layout
		// decoded (cached by key): not read and decoded again.
		known := func(f table.Fragment) ([]int64, bool) {
			offs, err := snap.DeletedOffsets(ctx, f)
			return offs, err == nil
		}
		if st, err = table.DeleteRowsWith(ctx, g.st, prefix, st, w.hide, table.DeleteOptions{InlineBytes: g.inlineDV, Known: known, Wrote: snap.SeedDeletedOffsets}); err != nil {
			return "", fmt.Errorf("exec: %s: %w", w.tk, err)
		}
	}
	if len(w.rows) > 0 {
		// A group commit's batch merges this fragment with its other
		// writes' (batch_share.go), so it is not encoded unless read.
		share := shareOf(ctx)
		frag, deferred, err := g.stageFragment(ctx, share, prefix, st.Schema(), w.rows, w.props, w.edge)
		if err != nil {
			return "", fmt.Errorf("exec: %s: %w", w.tk, err)
		}
		share.record(ctx, &sharedPart{tk: w.tk, prefix: prefix, ts: st.Schema(), frag: frag, rows: w.rows, props: w.props, edge: w.edge, deferred: deferred})
		if st, err = st.Append(frag); err != nil {
			return "", err
		}
	}
	if len(w.frags) > 0 {
		if st, err = st.Append(w.frags...); err != nil {
			return "", err
		}
	}
	if w.replace {
		// Index references are set last: they name fragments of the state.
		if st, err = st.WithIndexes(w.indexes); err != nil {
			return "", err
		}
	}
	if w.keepRows && st.Rows() != old.Rows() {
		return "", fmt.Errorf("exec: rewrite of %s changed the row count from %d to %d", w.tk, old.Rows(), st.Rows())
	}
	if w.dataFP != "" {
		if err := failpoint.Hit(w.dataFP); err != nil {
			return "", err
		}
	}
	// A small state rides in the commit (commit format 2): one object
	// fewer per write.
	key, err := table.WriteStateInline(ctx, g.st, prefix, st, g.inlineState)
	if err != nil {
		return "", err
	}
	g.snaps.AddState(key, st)
	if w.stateFP != "" {
		if err := failpoint.Hit(w.stateFP); err != nil {
			return "", err
		}
	}
	return key, ctx.Err()
}
