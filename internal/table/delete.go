package table

import (
	"context"
	"fmt"
	"slices"

	"github.com/oklog/ulid/v2"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// Failpoint names of the deletion-vector writer.
const (
	FPBeforeDV = "table/before-dv"
	FPAfterDV  = "table/after-dv"
)

// DeleteRows hides rows given as fragment key → row offsets and returns the
// new state. For each touched fragment it writes a new deletion vector
// (<prefix>/dv/<ulid>.dv) holding the union of the old vector and the new
// offsets; old vectors are never modified. A fragment whose every row is
// deleted is dropped from the state instead. Offsets already deleted are
// ignored; an offset outside the fragment is an error.
func DeleteRows(ctx context.Context, st storage.Store, prefix string, s *State, rows map[string][]int64) (*State, error) {
	return DeleteRowsWith(ctx, st, prefix, s, rows, DeleteOptions{})
}

// DeleteOptions tune DeleteRowsWith.
type DeleteOptions struct {
	// InlineBytes > 0 carries every new vector whose encoding is at most
	// that many bytes inline in the state (InlineDVPrefix, state format 4)
	// instead of writing it as an object. 0 writes objects only, as every
	// build before format 4 did.
	InlineBytes int
	// Known, when set, returns the sorted offsets fragment f's current
	// deletion vector holds, if the caller has them decoded (and verified)
	// already, so that the vector is not read again; ok false reads it. The
	// slice is not modified.
	Known func(f Fragment) (offsets []int64, ok bool)
	// Wrote, when set, is told each new vector written, with its sorted
	// offsets (the slice is not modified afterwards), so that the caller
	// can keep them instead of reading the vector back.
	Wrote func(f Fragment, offsets []int64)
}

// DeleteRowsWith is DeleteRows with options.
func DeleteRowsWith(ctx context.Context, st storage.Store, prefix string, s *State, rows map[string][]int64, o DeleteOptions) (*State, error) {
	frags := s.Fragments()
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic object-write order, for failpoint tests
	drop := map[string]bool{}
	for _, key := range keys {
		i := s.fragmentIndex(key)
		if i < 0 {
			return nil, fmt.Errorf("%w: %s", ErrUnknownFragment, key)
		}
		f := &frags[i]
		add := slices.Clone(rows[key])
		slices.Sort(add)
		add = slices.Compact(add)
		if len(add) == 0 {
			continue
		}
		if add[0] < 0 || add[len(add)-1] >= f.Rows {
			return nil, fmt.Errorf("%w: row offset out of range [0,%d) in fragment %s", ErrValue, f.Rows, key)
		}
		merged := add
		if f.DV != "" {
			known, ok := []int64(nil), false
			if o.Known != nil {
				known, ok = o.Known(*f)
			}
			if !ok {
				old, err := loadDV(ctx, st, *f)
				if err != nil {
					return nil, err
				}
				known = old.Offsets
			}
			merged = mergeOffsets(known, add)
		}
		if int64(len(merged)) == f.Deleted {
			continue // nothing new
		}
		if int64(len(merged)) == f.Rows {
			drop[key] = true
			continue
		}
		dvKey, err := writeDV(ctx, st, prefix, DeletionVector{Fragment: fragmentID(key), Rows: f.Rows, Offsets: merged}, o.InlineBytes)
		if err != nil {
			return nil, err
		}
		f.DV, f.Deleted = dvKey, int64(len(merged))
		if o.Wrote != nil {
			o.Wrote(*f, merged)
		}
	}
	kept := frags[:0]
	for _, f := range frags {
		if !drop[f.Key] {
			kept = append(kept, f)
		}
	}
	return s.with(kept, s.indexes)
}

// writeDV stores dv as a new object, or returns an inline reference to it
// when its encoding is at most inline bytes. The failpoints fire either
// way: an inline vector is part of the state written next.
func writeDV(ctx context.Context, st storage.Store, prefix string, dv DeletionVector, inline int) (string, error) {
	enc := encodeDV(dv)
	if err := failpoint.Hit(FPBeforeDV); err != nil {
		return "", err
	}
	if len(enc) <= inline {
		ref := inlineDVRef(enc)
		storage.LedgerOf(ctx).AddName(ref)
		if err := failpoint.Hit(FPAfterDV); err != nil {
			return "", err
		}
		return ref, nil
	}
	key := prefix + "/dv/" + ulid.Make().String() + ".dv"
	if _, err := storage.PutFresh(ctx, st, key, enc); err != nil {
		return "", fmt.Errorf("table: write deletion vector %s: %w", key, err)
	}
	if err := failpoint.Hit(FPAfterDV); err != nil {
		return "", err
	}
	return key, nil
}

// Delete hides the live rows whose id is in ids and returns the new state and
// the number of rows deleted. Ids not present are ignored. Rows are found
// through the fragments' indexes (Reader.Locate); only unindexed fragments
// whose id range covers some of the ids are read.
func Delete(ctx context.Context, st storage.Store, prefix string, s *State, ids []string) (*State, int64, error) {
	locs, err := NewReader(st, nil).Locate(ctx, s, ids)
	if err != nil {
		return nil, 0, err
	}
	if len(locs) == 0 {
		return s, 0, nil
	}
	rows := map[string][]int64{}
	for _, l := range locs {
		rows[l.Fragment] = append(rows[l.Fragment], l.Offset)
	}
	ns, err := DeleteRows(ctx, st, prefix, s, rows)
	if err != nil {
		return nil, 0, err
	}
	return ns, int64(len(locs)), nil
}
