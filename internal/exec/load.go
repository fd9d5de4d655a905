package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// LoadMode is how a load combines its records with the branch's data.
type LoadMode string

// The load modes (spec/languages.md §4.3). There is no default.
const (
	// LoadAppend is a strict insert: an id already present is a *KeyConflictError.
	LoadAppend LoadMode = "append"
	// LoadMerge upserts by id, replacing the whole row of an existing id.
	LoadMerge LoadMode = "merge"
	// LoadOverwrite replaces the contents of every type present in the input.
	LoadOverwrite LoadMode = "overwrite"
)

// LoadRequest configures one load.
type LoadRequest struct {
	Branch string // "" = main; the branch must exist unless From is set
	// From, if set, forks a missing Branch from this branch or commit id
	// first (spec/engine.md §2.3 load_as(branch, base)); a failed load
	// removes the branch it created.
	From  string
	Mode  LoadMode
	Actor string
	// Progress, if set, is called with the number of records read so far,
	// every progressEvery records and once at the end of the input.
	Progress func(records int64)
	// ChunkBytes bounds the estimated in-memory size of the rows buffered
	// before they are written out as fragments (0 = DefaultLoadChunkBytes);
	// ChunkRecords, if positive, also bounds their number. Both only trade
	// memory for fragment count: the published graph is the same.
	ChunkBytes   int64
	ChunkRecords int

	// settleBeforeProgress (tests only) waits for the chunks being encoded
	// before each Progress call, so that a memory test sampling the heap
	// there sees what the load keeps across chunks, not an encode in flight.
	settleBeforeProgress bool
}

// LoadResult is the receipt of a load.
type LoadResult struct {
	Branch string
	Mode   LoadMode
	// BaseBranch is the request's From; BranchCreated reports that this
	// load created Branch from it.
	BaseBranch    string
	BranchCreated bool
	// Nodes and Edges count input records per type name.
	Nodes, Edges map[string]int64
	Total        int64
	// Embedded counts the @embed vectors the load computed.
	Embedded int64
	Commit   *CommitInfo
	// Warnings report what failed beside the load, which itself succeeded
	// (an automatic compaction); nil when nothing did.
	Warnings []string
}

const progressEvery = 10000

// Load reads a graph-batch JSONL stream and publishes it as exactly one
// commit on req.Branch, even when the stream holds no records. Every record
// is converted and validated — values, ids, keys, uniques, references and
// cardinality — before anything is published; any failure is a typed error
// (*InputError naming the line and field, wrapping *ConstraintError or
// *KeyConflictError where applicable) and leaves the graph unchanged.
//
// The input is streamed: rows are written to fragments in chunks of
// req.ChunkBytes while reading, and only a compact skeleton of each entity
// (id, endpoints, non-key @unique values, input line) is kept for the
// cross-row checks, so memory grows with the number of entities, not with
// their payload (docs/write-path.md, Load).
//
// Append and merge loads that lose the publish race re-validate against the
// new head from those skeletons (the input is never re-read) and publish
// again; an overwrite fails with *ReadSetChangedError if a table it
// replaced or validated against changed meanwhile.
//
// INVARIANT: a failed load publishes nothing, and the fragments it wrote
// are referenced by no table state (TestLoadStreamLateErrors).
func (g *Graph) Load(ctx context.Context, r io.Reader, req LoadRequest) (*LoadResult, error) {
	switch req.Mode {
	case LoadAppend, LoadMerge, LoadOverwrite:
	default:
		return nil, fmt.Errorf("%w '%s' (expected append, merge or overwrite)", ErrInvalidLoadMode, req.Mode)
	}
	branch := branchOr(req.Branch)
	if err := authorize(ctx, Access{Actor: req.Actor, Action: ActionChange, Branch: branch}); err != nil {
		return nil, err
	}
	forkAt, err := g.forkPointForLoad(ctx, branch, req.From)
	if err != nil {
		return nil, err
	}
	if forkAt != nil {
		// The load will create its branch: that is a branch_create too.
		if err := authorize(ctx, Access{Actor: req.Actor, Action: ActionBranchCreate, Branch: req.From, TargetBranch: branch}); err != nil {
			return nil, err
		}
	}
	var base *commit.Commit
	if forkAt != nil {
		base, err = g.repo.Commit(ctx, *forkAt)
	} else {
		_, base, err = g.repo.Resolve(ctx, branch)
	}
	if err != nil {
		return nil, err
	}
	baseSnap, err := g.snapshotOf(ctx, base, branch)
	if err != nil {
		return nil, err
	}
	// The ledger records every object the load creates — its chunks while
	// reading, then each attempt's — so that a failed load deletes them
	// unless a publish whose outcome is unknown may have referenced them
	// (runWrite decides).
	ledger := storage.NewLedger()
	ctx = storage.WithLedger(ctx, ledger)
	s := newLoadStream(g, baseSnap, req)
	if err := s.read(ctx, r, req.Progress); err != nil {
		_ = s.wait() // an encoder still running would write after the deletes
		g.discard(ctx, ledger)
		return nil, err
	}
	s.res.Branch, s.res.BaseBranch = branch, req.From
	c, out, err := g.runWrite(ctx, writeRequest{
		branch: branch, forkAt: forkAt, created: &s.res.BranchCreated, kind: commit.KindLoad, actor: req.Actor, message: "load " + string(req.Mode),
		prepare: func(ctx context.Context, snap *snapshot.Snapshot) (*prepared, error) {
			if snap.Commit().Schema != base.Schema {
				// The input was converted under the old schema and cannot be
				// re-read: every mode treats a schema change as a conflict.
				return nil, &ReadSetChangedError{Member: "schema", Change: ChangeChanged, Branch: branch, Expected: base.ID.String(), Actual: snap.Commit().ID.String()}
			}
			p, err := s.prepare(ctx, snap)
			if err != nil {
				// The batch discards this write's ledger: its encoders
				// must have ended, or a fragment would land afterwards.
				_ = s.wait()
			}
			return p, err
		},
	})
	if err != nil {
		return nil, err
	}
	ci := commitInfo(c, branch)
	s.res.Commit = &ci
	s.res.Warnings = out.warnings
	return s.res, nil
}

// externalBlob refuses external blob URIs: ingesting them is policy-gated
// and denied by default (spec/languages.md §4.1).
func externalBlob(props []*schema.Property, values map[string]any, line int) error {
	for _, p := range props {
		if bl, ok := values[p.Name].(value.Blob); ok && bl.IsExternal() {
			return &InputError{Line: line, Field: "data." + p.Name,
				Msg: fmt.Sprintf("external blob URI '%s' for property '%s' is not allowed (external blob ingest is denied)", bl.URI, p.Name),
				Err: ErrUnsupportedValue}
		}
	}
	return nil
}

// lineError attaches an input line to a staging or validation error.
func lineError(line int, err error) error {
	ie := &InputError{Line: line, Msg: err.Error(), Err: err}
	var ce *ConstraintError
	if errors.As(err, &ce) {
		switch {
		case ce.Kind == ConstraintReference && ce.Prop == "src":
			ie.Field = "from"
		case ce.Kind == ConstraintReference && ce.Prop == "dst":
			ie.Field = "to"
		case ce.Kind == ConstraintCard:
			ie.Field = "from"
		case ce.Prop != "":
			ie.Field = "data." + strings.Trim(ce.Prop, "()")
		}
	}
	var kc *KeyConflictError
	if errors.As(err, &kc) {
		ie.Field = "data.id"
	}
	return ie
}

// overwriteReadSet is what an overwrite read besides the tables it replaces:
// node tables its new edges reference, and edge tables whose rows may point
// at nodes it removed.
func overwriteReadSet(cat *schema.Catalog, replaced map[string]bool) []string {
	set := map[string]bool{}
	for tk := range replaced {
		set[tk] = true
	}
	for _, et := range cat.Edges {
		if replaced[snapshot.EdgeKey(et.Name)] {
			set[snapshot.NodeKey(et.From)] = true
			set[snapshot.NodeKey(et.To)] = true
		}
		if replaced[snapshot.NodeKey(et.From)] || replaced[snapshot.NodeKey(et.To)] {
			set[snapshot.EdgeKey(et.Name)] = true
		}
	}
	return sortedTableKeys(set)
}
