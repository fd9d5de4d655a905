package table

import "context"

// IDOrder calls fn with the rows of fragment f in ascending id order (id,
// offset; deleted rows included: the caller applies the deletion vector)
// until fn returns false, reading the fragment's index block by block.
// ok is false when f has no index (the caller reads the id column).
func (r *Reader) IDOrder(ctx context.Context, f Fragment, fn func(id string, off int64) bool) (ok bool, err error) {
	if f.Index == "" {
		return false, nil
	}
	h, err := r.fidxHeader(ctx, f)
	if err != nil {
		return false, err
	}
	s := h.section(SectionID)
	if s == nil {
		return false, nil
	}
	d, err := r.fidxDir(ctx, f, s)
	if err != nil {
		return false, err
	}
	for i := range d.first {
		ents, err := r.fidxBlock(ctx, f, s, d, i)
		if err != nil {
			return false, err
		}
		for _, e := range ents {
			if !fn(e.key, e.off) {
				return true, nil
			}
		}
	}
	return true, nil
}
