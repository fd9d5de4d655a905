package exec

import (
	"context"
	"errors"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// prepare stages the load against one snapshot for its mode and validates
// it: the cross-row and committed-state checks over the skeletons (the
// per-row checks ran while reading). It runs again after every lost
// publish race, against the new head, from the kept skeletons alone.
func (s *loadStream) prepare(ctx context.Context, snap *snapshot.Snapshot) (*prepared, error) {
	d := NewDelta()
	p := &prepared{delta: d}
	replaced := map[string]bool{}
	for _, tk := range s.order() {
		t := s.types[tk]
		// Share the skeleton and its id index: Validate only reads them.
		nd := &TypeDelta{Upserts: t.skel.images(), RowsChecked: true, Keep: t.keep, KeepValues: t.keepValues, index: t.index}
		switch s.mode {
		case LoadAppend:
			nd.StrictInsert = true
		case LoadOverwrite:
			nd.Replace = true
			replaced[tk] = true
		}
		if t.nt != nil {
			if s.mode == LoadOverwrite {
				tab, err := snap.Nodes(ctx, t.nt.Name)
				if err != nil {
					return nil, err
				}
				// Validate finds edges left pointing at removed nodes
				// through the committed ids the overwrite drops.
				for i, id := range tab.IDs {
					if _, staged := nd.lookup(id); !staged && tab.Alive(i) {
						nd.Deletes = append(nd.Deletes, id)
					}
				}
			}
			d.Nodes[t.nt.Name] = nd
			continue
		}
		if s.mode == LoadOverwrite {
			tab, err := snap.Edges(ctx, t.et.Name)
			if err != nil {
				return nil, err
			}
			if et := tab.Type; et.Card.Min > 0 || !et.Card.Unbounded {
				seen := map[string]bool{}
				for i, src := range tab.Src {
					if !seen[src] && tab.Alive(i) {
						seen[src] = true
						nd.Vacated = append(nd.Vacated, src)
					}
				}
			}
		}
		d.Edges[t.et.Name] = nd
	}
	if err := Validate(ctx, snap.Catalog(), snap, d); err != nil {
		return nil, s.locate(err)
	}
	if s.mode == LoadOverwrite {
		p.strict = true
		p.readSet = overwriteReadSet(snap.Catalog(), replaced)
	}
	p.write = func(ctx context.Context, snap *snapshot.Snapshot) (map[string]string, error) {
		return s.write(ctx, snap, d)
	}
	return p, nil
}

// locate finds the input line a validation error is about, if any: the
// entity's last occurrence, or for @card the first staged edge of the
// source.
func (s *loadStream) locate(err error) error {
	var ce *ConstraintError
	if errors.As(err, &ce) {
		if ce.Kind == ConstraintCard {
			if t, ok := s.types[snapshot.EdgeKey(ce.Type)]; ok {
				for i := range t.skel.len() {
					if t.skel.src(i) == ce.ID {
						return lineError(t.lines[i], err)
					}
				}
			}
			return err
		}
		for _, tk := range []string{snapshot.NodeKey(ce.Type), snapshot.EdgeKey(ce.Type)} {
			if l, ok := s.line(tk, ce.ID); ok {
				return lineError(l, err)
			}
		}
		return err
	}
	var kc *KeyConflictError
	if errors.As(err, &kc) {
		if l, ok := s.line(kc.TypeKey, kc.EntityID); ok {
			return lineError(l, err)
		}
	}
	return err
}

// write makes one publish attempt's table states: per staged table, in
// catalog order, the snapshot's state (or an empty one for an overwrite)
// with committed images of re-loaded ids hidden by new deletion vectors,
// plus the load's own fragments. Those fragments and their deletion vectors
// do not depend on the head, so a rebase writes only new committed-side
// deletion vectors and states.
func (s *loadStream) write(ctx context.Context, snap *snapshot.Snapshot, d *Delta) (map[string]string, error) {
	own, err := s.finish(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, tk := range s.order() {
		t := s.types[tk]
		td := d.Nodes[t.name()]
		if t.et != nil {
			td = d.Edges[t.name()]
		}
		w := tableWrite{tk: tk, replace: td.Replace, frags: own[tk], dataFP: FPAfterTableData, stateFP: FPAfterTableState}
		if !td.Replace {
			// Committed images of re-loaded ids are hidden where the
			// layout locates them; ids not committed are skipped.
			if w.hide, err = snap.CommittedRows(ctx, tk, upsertIDs(td)); err != nil {
				return nil, err
			}
		}
		key, err := s.g.writeTable(ctx, snap, w)
		if err != nil {
			return nil, err
		}
		out[tk] = key
	}
	return out, nil
}

func (t *stagedType) name() string {
	if t.et != nil {
		return t.et.Name
	}
	return t.nt.Name
}
