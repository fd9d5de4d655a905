package exec

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// The changes a *ReadSetChangedError reports for its entity.
const (
	ChangeUpdated  = "updated"  // a row the write matched now has another image, or a row now matches
	ChangeDeleted  = "deleted"  // a row the write matched is gone
	ChangeInserted = "inserted" // a row that did not exist now matches the write's predicate
	ChangeChanged  = "changed"  // table-level members (overwrite loads) and the schema
)

// rowRead is the row-level read set of one reading statement of a strict
// mutation (an update, a delete, a delete's cascade over one edge type):
// the committed rows it matched, each with a fingerprint of the image it
// read. Rows the mutation itself staged earlier are not in it: they depend
// on the head only through earlier statements' reads, which are recorded.
//
// A strict mutation that lost the publish race is run again on the new
// head; it rebases if every statement matched exactly the same committed
// rows with the same images (rowConflict), and fails with a typed conflict
// naming the first row that differs otherwise (docs/write-path.md).
type rowRead struct {
	tk   string            // table key of the rows
	rows map[string]uint64 // committed id → image fingerprint
}

// read starts the read set of the next reading statement over table tk.
func (x *mutExec) read(tk string) *rowRead {
	r := &rowRead{tk: tk, rows: map[string]uint64{}}
	x.reads = append(x.reads, r)
	return r
}

func (r *rowRead) add(id string, image uint64) { r.rows[id] = image }

// nodeImage fingerprints a node row image over the type's properties.
func nodeImage(nt *schema.NodeType, r Row) uint64 {
	h := fnv.New64a()
	for _, p := range nt.Props {
		v := r.Values[p.Name]
		fmt.Fprintf(h, "%s=%T:%v\x00", p.Name, v, v)
	}
	return h.Sum64()
}

// edgeImage fingerprints an edge row image: endpoints and properties.
func edgeImage(et *schema.EdgeType, src, dst string, get func(string) any) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00", src, dst)
	for _, p := range et.Props {
		v := get(p.Name)
		fmt.Fprintf(h, "%s=%T:%v\x00", p.Name, v, v)
	}
	return h.Sum64()
}

// rowConflict compares the row-level read sets of two runs of one strict
// mutation — old on snapshot oldSnap, cur on curSnap — and describes the
// first difference (statements in order, ids sorted), or returns nil when
// both runs read exactly the same rows. Member, EntityID and Change are
// set; the caller fills in the branch and commits.
func rowConflict(ctx context.Context, old, cur []*rowRead, oldSnap, curSnap *snapshot.Snapshot) (*ReadSetChangedError, error) {
	if len(old) != len(cur) {
		// Not reachable for one plan (its statements read the same
		// tables each run); refuse to rebase rather than guess.
		tk := "graph"
		if len(old) > 0 {
			tk = old[0].tk
		}
		return &ReadSetChangedError{Member: tk, Change: ChangeChanged}, nil
	}
	for i, o := range old {
		c := cur[i]
		ids := make([]string, 0, len(o.rows)+len(c.rows))
		for id := range o.rows {
			ids = append(ids, id)
		}
		for id := range c.rows {
			if _, ok := o.rows[id]; !ok {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			ov, inOld := o.rows[id]
			cv, inCur := c.rows[id]
			change := ChangeUpdated
			var err error
			switch {
			case inOld && inCur && ov == cv:
				continue
			case inOld && inCur:
				// Matched both times with other values: ChangeUpdated.
			case inOld:
				// Matched before, not now: gone, or changed so it no
				// longer matches.
				change, err = updatedOr(ctx, curSnap, o.tk, id, ChangeDeleted)
			default:
				// Matches now, did not before: new, or changed so it matches.
				change, err = updatedOr(ctx, oldSnap, o.tk, id, ChangeInserted)
			}
			if err != nil {
				return nil, err
			}
			return &ReadSetChangedError{Member: o.tk, EntityID: id, Change: change}, nil
		}
	}
	return nil, nil
}

// updatedOr is ChangeUpdated when snap still holds the committed row id
// of table tk (the row changed rather than came or went), else otherwise.
func updatedOr(ctx context.Context, snap *snapshot.Snapshot, tk, id, otherwise string) (string, error) {
	ok, err := rowExists(ctx, snap, tk, id)
	if err != nil || !ok {
		return otherwise, err
	}
	return ChangeUpdated, nil
}

// rowExists reports whether table tk of snap holds a committed row id.
func rowExists(ctx context.Context, snap *snapshot.Snapshot, tk, id string) (bool, error) {
	kind, name := snapshot.SplitKey(tk)
	if kind == "node" {
		return snap.NodeExists(ctx, name, id)
	}
	_, _, ok, err := snap.EdgeEnds(ctx, name, id)
	return ok, err
}

// readSetConflict decides whether a strict write staged before (prev, on
// snapshot prevSnap of the published head prevBase) may rebase as p, staged
// again on snap over the published head base. The schema and every
// table-level member (overwrite loads) are compared between the two
// published heads: a member changed only by maintenance commits has not
// changed. Row-level members (mutations) are compared between the two runs
// (rowConflict). nil means the write may rebase.
func (g *Graph) readSetConflict(ctx context.Context, branch string, prev *prepared, prevSnap *snapshot.Snapshot, prevBase *commit.Commit,
	p *prepared, snap *snapshot.Snapshot, base *commit.Commit) error {
	fill := func(e *ReadSetChangedError) error {
		e.Branch, e.Expected, e.Actual = branch, prevBase.ID.String(), base.ID.String()
		return e
	}
	if prevBase.Schema != base.Schema {
		return fill(&ReadSetChangedError{Member: "schema", Change: ChangeChanged})
	}
	for _, tk := range prev.readSet {
		if prevBase.Tables[tk] != base.Tables[tk] {
			if ok, err := g.changedOnlyByMaintenance(ctx, prevBase, base, tk); err == nil && ok {
				continue
			}
			return fill(&ReadSetChangedError{Member: tk, Change: ChangeChanged})
		}
	}
	e, err := rowConflict(ctx, prev.rows, p.rows, prevSnap, snap)
	if err != nil {
		return err
	}
	if e != nil {
		return fill(e)
	}
	return nil
}
