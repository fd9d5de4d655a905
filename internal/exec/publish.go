package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
	// may rebase only if no table in readSet (and not the schema) changed.
	strict  bool
	readSet []string
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
type writeRequest struct {
	branch   string
	ifCommit string
	kind     commit.Kind
	actor    string
	message  string
	// prepare stages the change against a snapshot of the current head; it
	// runs again, from scratch, after every lost CAS that may rebase.
	prepare func(ctx context.Context, snap *snapshot.Snapshot) (*prepared, error)
	// forkAt, if set, means branch does not exist yet: the write builds on
	// that commit and its publish creates the branch (atomically with the
	// write). If the branch appears meanwhile the write rebases onto it.
	forkAt *commit.ID
	// created, if set, reports whether this write created the branch.
	created *bool
}

// runWrite is the common write pipeline (docs/write-path.md): capture the
// head, prepare and validate against it, write fragments, deletion vectors
// and table states under fresh names, then publish with one CAS. A lost CAS
// re-prepares from the new head (insert-only writes) or fails with
// *ReadSetChangedError when a strict write's read set changed; a conditional
// write fails with *PreconditionFailedError and is never retried.
//
// It returns the published commit, or nil when the change was a no-op.
//
// INVARIANT: nothing a write produces is visible before the publish CAS, and
// a failure at any step leaves the branch at its old head
// (TestEngineLoadCrashPoints, TestEngineStrictRace).
func (g *Graph) runWrite(ctx context.Context, req writeRequest) (*commit.Commit, *prepared, error) {
	newBranch := req.forkAt != nil
	var head commit.Head
	var base *commit.Commit
	var err error
	if newBranch {
		head = commit.Head{Branch: req.branch, Commit: *req.forkAt}
		base, err = g.repo.Commit(ctx, *req.forkAt)
	} else {
		head, base, err = g.repo.Resolve(ctx, req.branch)
	}
	if err != nil {
		return nil, nil, err
	}
	if req.ifCommit != "" && head.Commit.String() != req.ifCommit {
		// Maintenance commits on top of the expected one change no content.
		if ok, err := g.onlyMaintenanceSince(ctx, req.ifCommit, base); err != nil || !ok {
			return nil, nil, &PreconditionFailedError{Branch: req.branch, Expected: req.ifCommit, Actual: head.Commit.String()}
		}
	}
	var p *prepared
	var published *commit.Commit
	err = g.retryPublish(ctx, func(attempt int, moved *commit.HeadMovedError) error {
		if moved != nil {
			// Rebase onto the head that won, unless the write may not.
			newHead := moved.Actual
			if newHead.ETag == "" || newHead.Seq == 0 {
				if newHead, err = g.repo.Head(ctx, req.branch); err != nil {
					return err
				}
			}
			newBranch = false
			newBase, err := g.repo.Commit(ctx, newHead.Commit)
			if err != nil {
				return err
			}
			if req.ifCommit != "" {
				if ok, err := g.onlyMaintenanceSince(ctx, req.ifCommit, newBase); err != nil || !ok {
					return &PreconditionFailedError{Branch: req.branch, Expected: req.ifCommit, Actual: newHead.Commit.String()}
				}
			}
			if p.strict {
				if err := g.readSetChanged(ctx, base, newBase, p.readSet); err != nil {
					return err
				}
			}
			head, base = newHead, newBase
		}
		snap, err := g.snapshotOf(ctx, base, req.branch)
		if err != nil {
			return err
		}
		if p, err = req.prepare(ctx, snap); err != nil {
			return err
		}
		if p.noop {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := failpoint.Hit(FPBeforeWrite); err != nil {
			return err
		}
		// On a batching store (S3) every object of the attempt is sent
		// concurrently; Publish waits for them all before its CAS.
		wctx := storage.WithBatch(ctx)
		var tables map[string]string
		if p.write != nil {
			tables, err = p.write(wctx, snap)
		} else {
			tables, err = g.writeTables(wctx, snap, p.delta)
		}
		if err != nil {
			_ = storage.Flush(wctx)
			return err
		}
		if g.testBeforePublish != nil {
			g.testBeforePublish(attempt)
		}
		if err := failpoint.Hit(FPBeforePublish); err != nil {
			_ = storage.Flush(wctx)
			return err
		}
		if err := ctx.Err(); err != nil {
			_ = storage.Flush(wctx)
			return err
		}
		_, c, err := g.repo.Publish(wctx, commit.PublishRequest{Branch: req.branch, Base: head, Tables: tables,
			Actor: req.actor, Message: req.message, Kind: req.kind, NewBranch: newBranch,
			SchemaKey: p.schemaKey, Removed: p.removed})
		_ = storage.Flush(wctx) // no-op unless Publish failed before its own flush
		if err != nil {
			return err // a *commit.HeadMovedError is retried
		}
		if req.created != nil {
			*req.created = newBranch
		}
		if err := failpoint.Hit(FPAfterPublish); err != nil {
			return err
		}
		g.autoCompact(ctx, req.branch, c, tables)
		published = c
		return nil
	}, func(attempt int, err error) error {
		return fmt.Errorf("exec: gave up after %d rebases: %w", attempt, err)
	})
	if err != nil {
		return nil, nil, err
	}
	return published, p, nil
}

// retryPublish is the one retry loop of every write that publishes with the
// ref CAS (load, mutate, merge, optimize). It calls try until try returns
// anything but a lost CAS (*commit.HeadMovedError); after a loss it sleeps
// a jittered back-off and calls try again with the loss, from which try
// rebases (or decides it may not, and returns that error). After
// g.maxRetries lost rounds it returns giveUp(attempts, last loss).
//
// INVARIANT: writers that lost together retry at different moments, so the
// rounds one writer needs stay few even with many writers
// (TestConformanceConcurrentAppend, TestEngineStrictRace).
func (g *Graph) retryPublish(ctx context.Context, try func(attempt int, moved *commit.HeadMovedError) error, giveUp func(attempt int, err error) error) error {
	var moved *commit.HeadMovedError
	for attempt := 0; ; attempt++ {
		err := try(attempt, moved)
		if !errors.As(err, &moved) {
			return err
		}
		if attempt >= g.maxRetries {
			return giveUp(attempt, err)
		}
		if err := retryBackoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// readSetChanged compares what a strict write read at its base with the new
// head: the schema and the state key of every table in its read set. A
// table whose state changed only through maintenance commits (compaction:
// same rows, new fragments) has not changed for the writer.
func (g *Graph) readSetChanged(ctx context.Context, old, cur *commit.Commit, readSet []string) error {
	if old.Schema != cur.Schema {
		return &ReadSetChangedError{Member: "schema", Expected: old.Schema, Actual: cur.Schema}
	}
	for _, tk := range readSet {
		if old.Tables[tk] != cur.Tables[tk] {
			if ok, err := g.changedOnlyByMaintenance(ctx, old, cur, tk); err == nil && ok {
				continue
			}
			return &ReadSetChangedError{Member: tk, Expected: old.Tables[tk], Actual: cur.Tables[tk]}
		}
	}
	return nil
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
	b, err := table.NewBatchBuilder(nil, ts)
	if err != nil {
		return table.Fragment{}, err
	}
	defer b.Release()
	types := make([]*schema.Property, len(ts.Columns))
	for i, c := range ts.Columns {
		types[i] = snapshot.PropByName(props, c.Name)
	}
	vals := make([]any, len(ts.Columns))
	for _, r := range rows {
		for i, c := range ts.Columns {
			switch {
			case c.Name == table.KeyColumn:
				vals[i] = r.ID
			case edge && c.Name == "src":
				vals[i] = r.Src
			case edge && c.Name == "dst":
				vals[i] = r.Dst
			case types[i] == nil:
				vals[i] = nil
			default:
				v, err := value.ToColumn(r.Values[c.Name])
				if err != nil {
					return table.Fragment{}, &ConstraintError{Kind: ConstraintRequired, Prop: c.Name, ID: r.ID, Msg: err.Error()}
				}
				vals[i] = v
			}
		}
		if err := b.Append(vals); err != nil {
			return table.Fragment{}, fmt.Errorf("row '%s': %w", r.ID, err)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return table.WriteFragment(ctx, g.st, prefix, ts, rec, table.WriteOptions{})
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
