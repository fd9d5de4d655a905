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
	// Blocks are read in runs that double in length (1, 2, 4, … up to
	// idOrderRun blocks) with one ranged read each: a walk that stops
	// early costs few bytes, a long one few requests.
	run := 1
	for i := 0; i < len(d.first); {
		j := i + 1
		for j < len(d.first) && j-i < run && d.off[j] == d.off[j-1]+d.len[j-1] {
			j++
		}
		var buf []byte
		if j-i > 1 {
			if _, hit := r.cache.Get(blockCacheKey(f, d.off[i])); !hit {
				if buf, err = r.getRange(ctx, f.Index, d.off[i], d.off[j-1]+d.len[j-1]-d.off[i], f.IndexBytes); err != nil {
					return false, err
				}
			}
		}
		for k := i; k < j; k++ {
			var ents []fidxEntry
			if buf != nil {
				v, err := r.cache.GetOrLoad(ctx, blockCacheKey(f, d.off[k]), func(context.Context) (any, int64, error) {
					lo := d.off[k] - d.off[i]
					return decodeBlockUnit(f, s, d, k, buf[lo:lo+d.len[k]])
				})
				if err != nil {
					return false, err
				}
				ents = v.([]fidxEntry)
			} else if ents, err = r.fidxBlock(ctx, f, s, d, k); err != nil {
				return false, err
			}
			for _, e := range ents {
				if !fn(e.key, e.off) {
					return true, nil
				}
			}
		}
		i, run = j, min(2*run, idOrderRun)
	}
	return true, nil
}

// idOrderRun is the most fragment-index blocks IDOrder reads at once.
const idOrderRun = 64
