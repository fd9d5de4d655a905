package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
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

// ErrInvalidLoadMode: a load was asked for a mode other than the three.
var ErrInvalidLoadMode = errors.New("invalid load mode")

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
	Commit       *CommitInfo
}

const progressEvery = 10000

// loadBatch is a whole parsed input: staged rows per type, coalesced by the
// mode's duplicate policy, with the input line of each id for errors. Ids
// are fixed at parse time (keyed ids from the key, others from data.id or a
// fresh ULID), so a rebase re-stages exactly the same rows.
type loadBatch struct {
	cat   *schema.Catalog
	delta *Delta
	lines map[string]map[string]int // type key -> id -> last input line
	res   *LoadResult
}

// Load reads a graph-batch JSONL stream and publishes it as exactly one
// commit on req.Branch, even when the stream holds no records. Every record
// is converted and validated — values, ids, keys, uniques, references and
// cardinality — before anything is written; any failure is a typed error
// (*InputError naming the line and field, wrapping *ConstraintError or
// *KeyConflictError where applicable) and leaves the graph unchanged.
//
// Append and merge loads that lose the publish race re-validate against the
// new head and publish again; an overwrite fails with *ReadSetChangedError
// if a table it replaced or validated against changed meanwhile.
func (g *Graph) Load(ctx context.Context, r io.Reader, req LoadRequest) (*LoadResult, error) {
	switch req.Mode {
	case LoadAppend, LoadMerge, LoadOverwrite:
	default:
		return nil, fmt.Errorf("%w '%s' (expected append, merge or overwrite)", ErrInvalidLoadMode, req.Mode)
	}
	branch := branchOr(req.Branch)
	forkAt, err := g.forkPointForLoad(ctx, branch, req.From)
	if err != nil {
		return nil, err
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
	cat, err := g.catalog(ctx, base.Schema)
	if err != nil {
		return nil, err
	}
	b, err := g.parseLoad(ctx, r, cat, req)
	if err != nil {
		return nil, err
	}
	b.res.Branch, b.res.BaseBranch = branch, req.From
	c, _, err := g.runWrite(ctx, writeRequest{
		branch: branch, forkAt: forkAt, created: &b.res.BranchCreated, kind: commit.KindLoad, actor: req.Actor, message: "load " + string(req.Mode),
		prepare: func(ctx context.Context, snap *GraphSnapshot) (*prepared, error) {
			if snap.c.Schema != base.Schema {
				// The input was converted under the old schema and cannot be
				// re-read: every mode treats a schema change as a conflict.
				return nil, &ReadSetChangedError{Member: "schema", Expected: base.Schema, Actual: snap.c.Schema}
			}
			return b.prepare(ctx, snap, req.Mode)
		},
	})
	if err != nil {
		return nil, err
	}
	ci := commitInfo(c, branch)
	b.res.Commit = &ci
	return b.res, nil
}

// parseLoad streams the input into a loadBatch, stopping at the first bad line.
func (g *Graph) parseLoad(ctx context.Context, r io.Reader, cat *schema.Catalog, req LoadRequest) (*loadBatch, error) {
	b := &loadBatch{cat: cat, delta: NewDelta(), lines: map[string]map[string]int{},
		res: &LoadResult{Mode: req.Mode, Nodes: map[string]int64{}, Edges: map[string]int64{}}}
	rd := NewReader(r, cat, ReaderOptions{})
	policy := DupReject
	if req.Mode == LoadMerge {
		policy = DupReplace // last occurrence wins, except keyed nodes (below)
	}
	for {
		rec, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch rec := rec.(type) {
		case *NodeRecord:
			nt, _ := cat.Node(rec.Type)
			if err := externalBlob(nt.Props, rec.Values, rec.Line); err != nil {
				return nil, err
			}
			id := rec.ID
			if id == "" {
				id = ulid.Make().String()
			}
			p := policy
			if len(nt.Key) > 0 {
				p = DupReject // two rows with one key are a @unique violation in every mode
			}
			if err := b.delta.PutNode(nt, Row{ID: id, Values: rec.Values}, p); err != nil {
				return nil, lineError(rec.Line, err)
			}
			b.line(NodeKey(nt.Name), id, rec.Line)
			b.res.Nodes[nt.Name]++
		case *EdgeRecord:
			et, _ := cat.Edge(rec.Type)
			if err := externalBlob(et.Props, rec.Values, rec.Line); err != nil {
				return nil, err
			}
			id := rec.ID
			if id == "" {
				id = ulid.Make().String()
			}
			if err := b.delta.PutEdge(et, Row{ID: id, Src: rec.From, Dst: rec.To, Values: rec.Values}, policy); err != nil {
				return nil, lineError(rec.Line, err)
			}
			b.line(EdgeKey(et.Name), id, rec.Line)
			b.res.Edges[et.Name]++
		}
		b.res.Total++
		if req.Progress != nil && b.res.Total%progressEvery == 0 {
			req.Progress(b.res.Total)
		}
	}
	if req.Progress != nil {
		req.Progress(b.res.Total)
	}
	return b, nil
}

func (b *loadBatch) line(tk, id string, line int) {
	m := b.lines[tk]
	if m == nil {
		m = map[string]int{}
		b.lines[tk] = m
	}
	m[id] = line
}

// externalBlob refuses external blob URIs: ingesting them is policy-gated
// and denied by default (spec/languages.md §4.1).
func externalBlob(props []*schema.Property, values map[string]any, line int) error {
	for _, p := range props {
		if bl, ok := values[p.Name].(Blob); ok && bl.IsExternal() {
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

// locate finds the input line a validation error is about, if any.
func (b *loadBatch) locate(err error) error {
	var ce *ConstraintError
	if errors.As(err, &ce) {
		for _, tk := range []string{NodeKey(ce.Type), EdgeKey(ce.Type)} {
			if ce.Kind == ConstraintCard && tk == EdgeKey(ce.Type) {
				// ID is the source node: point at its first staged edge.
				if td := b.delta.Edges[ce.Type]; td != nil {
					for _, r := range td.Upserts {
						if r.Src == ce.ID {
							return lineError(b.lines[tk][r.ID], err)
						}
					}
				}
				continue
			}
			if l, ok := b.lines[tk][ce.ID]; ok {
				return lineError(l, err)
			}
		}
		return err
	}
	var kc *KeyConflictError
	if errors.As(err, &kc) {
		if l, ok := b.lines[kc.TypeKey][kc.EntityID]; ok {
			return lineError(l, err)
		}
	}
	return err
}

// prepare stages the batch against one snapshot for a mode and validates it.
func (b *loadBatch) prepare(ctx context.Context, snap *GraphSnapshot, mode LoadMode) (*prepared, error) {
	d := NewDelta()
	p := &prepared{delta: d}
	replaced := map[string]bool{}
	for name, td := range b.delta.Nodes {
		nd := &TypeDelta{Upserts: td.Upserts}
		switch mode {
		case LoadAppend:
			nd.StrictInsert = true
		case LoadOverwrite:
			nd.Replace = true
			replaced[NodeKey(name)] = true
			t, err := snap.Nodes(ctx, name)
			if err != nil {
				return nil, err
			}
			// Validate finds edges left pointing at removed nodes through
			// the committed ids the overwrite drops.
			staged := make(map[string]bool, len(td.Upserts))
			for _, r := range td.Upserts {
				staged[r.ID] = true
			}
			for _, id := range t.IDs {
				if !staged[id] {
					nd.Deletes = append(nd.Deletes, id)
				}
			}
		}
		d.Nodes[name] = nd
	}
	for name, td := range b.delta.Edges {
		ed := &TypeDelta{Upserts: td.Upserts}
		switch mode {
		case LoadAppend:
			ed.StrictInsert = true
		case LoadOverwrite:
			ed.Replace = true
			replaced[EdgeKey(name)] = true
			t, err := snap.Edges(ctx, name)
			if err != nil {
				return nil, err
			}
			if et := t.Type; et.Card.Min > 0 || !et.Card.Unbounded {
				seen := map[string]bool{}
				for _, src := range t.Src {
					if !seen[src] {
						seen[src] = true
						ed.Vacated = append(ed.Vacated, src)
					}
				}
			}
		}
		d.Edges[name] = ed
	}
	if err := Validate(ctx, snap.cat, snapshotCommitted{s: snap}, d); err != nil {
		return nil, b.locate(err)
	}
	if mode == LoadOverwrite {
		p.strict = true
		p.readSet = overwriteReadSet(snap.cat, replaced)
	}
	return p, nil
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
		if replaced[EdgeKey(et.Name)] {
			set[NodeKey(et.From)] = true
			set[NodeKey(et.To)] = true
		}
		if replaced[NodeKey(et.From)] || replaced[NodeKey(et.To)] {
			set[EdgeKey(et.Name)] = true
		}
	}
	return sortedTableKeys(set)
}
