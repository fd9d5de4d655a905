package exec

import (
	"reflect"
	"slices"
	"sync/atomic"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Derived images. An insert-only write appends one fragment to a table
// state and leaves every other fragment (and deletion vector) as it was;
// inline compaction replaces a run of trailing fragments by new ones
// holding the same rows in the same order. In both cases the new image is
// the old image plus some rows at its end, so it is derived from a recent
// image of the same table (write_retire.go's ring) instead of copying every
// live row again:
//
//   - the longest common prefix of the two fragment lists (same fragment,
//     same deletion vector) holds the same image rows;
//   - the old image's rows after that prefix must equal the first rows of
//     the new state's tail, row by row (a compaction rewrote them);
//   - the remaining new rows are appended.
//
// Appending shares the old image's backing arrays when they have room: a
// derived image is allocated with spare capacity, and the capacity past an
// image's length is handed to the first image derived from it, exactly
// once (growToken). Rows an image can see are never written again, so
// images stay immutable. Anything else (an update or delete hiding an old
// row) assembles the image from its fragments as before.
//
// TestDerivedImageMatchesAssembly compares derived images with from-scratch
// decodes across inserts, compactions, updates, deletes and branches.

// growToken guards the backing capacity past one image's length: only the
// derivation that claims it may write there.
type growToken struct{ claimed atomic.Bool }

// imageRows views a cached table image as decoded rows, with its layout and
// grow token; ok is false for an image without a layout.
func imageRows(v any) (d *decodedRows, layout *fragSet, grow *growToken, ok bool) {
	switch t := v.(type) {
	case *NodeTable:
		return &decodedRows{ids: t.IDs, cols: t.Cols}, t.layout, t.grow, t.layout != nil
	case *EdgeTable:
		return &decodedRows{ids: t.IDs, src: t.Src, dst: t.Dst, cols: t.Cols}, t.layout, t.grow, t.layout != nil
	}
	return nil, nil, nil, false
}

// deriveImage builds the image of fs from a recent image of the same
// table when fs only adds rows at its end; ok is false otherwise.
func (s *GraphSnapshot) deriveImage(tk string, fs *fragSet, props []*schema.Property, edge bool) (*decodedRows, *growToken, bool) {
	for _, key := range s.recentImages(tk) {
		if key == s.imageKey(tk) {
			continue
		}
		v, found := s.g.cache.Get(key)
		if !found {
			continue
		}
		old, ofs, grow, ok := imageRows(v)
		if !ok {
			continue
		}
		if d, g, ok := extendImage(old, ofs, grow, fs, props, edge); ok {
			return d, g, true
		}
	}
	return nil, nil, false
}

// extendImage derives the image of fs from old (the image of ofs).
func extendImage(old *decodedRows, ofs *fragSet, grow *growToken, fs *fragSet, props []*schema.Property, edge bool) (*decodedRows, *growToken, bool) {
	p := 0
	for p < len(ofs.keys) && p < len(fs.keys) && ofs.keys[p] == fs.keys[p] && ofs.dvs[p] == fs.dvs[p] {
		p++
	}
	if p == 0 || len(old.ids) != ofs.live {
		return nil, nil, false
	}
	oldBase, newBase := ofs.live, fs.live
	if p < len(ofs.keys) {
		oldBase = ofs.base[p]
	}
	if p < len(fs.keys) {
		newBase = fs.base[p]
	}
	oldTail, newTail := ofs.live-oldBase, fs.live-newBase
	if oldBase != newBase || newTail < oldTail {
		return nil, nil, false
	}
	// Walk the new tail's live rows: the first oldTail must be old's rows
	// after the prefix; the rest are appended. Ids are compared first, on
	// their own: a row hidden by an update or delete shows up there
	// cheaply, before any value is compared.
	type rowRef struct {
		d   *decodedRows
		off int
	}
	var tail []rowRef
	for i := p; i < len(fs.parts); i++ {
		d, dels := fs.parts[i], fs.dels[i]
		for off := range d.ids {
			if _, gone := slices.BinarySearch(dels, int64(off)); gone {
				continue
			}
			if k := len(tail); k < oldTail && old.ids[oldBase+k] != d.ids[off] {
				return nil, nil, false
			}
			tail = append(tail, rowRef{d, off})
		}
	}
	for k, r := range tail[:oldTail] {
		if !sameRow(old, oldBase+k, r.d, r.off, props, edge) {
			return nil, nil, false
		}
	}
	extra := tail[oldTail:]
	if len(extra) == 0 {
		return old, grow, true // same rows: share the image and its spare room
	}
	n := len(old.ids) + len(extra)
	inPlace := grow != nil && cap(old.ids) >= n && (!edge || cap(old.src) >= n && cap(old.dst) >= n)
	for _, q := range props {
		inPlace = inPlace && cap(old.cols[q.Name]) >= n
	}
	out := &decodedRows{cols: make(map[string][]any, len(props))}
	if inPlace && grow.claimed.CompareAndSwap(false, true) {
		out.ids = old.ids
		if edge {
			out.src, out.dst = old.src, old.dst
		}
		for _, q := range props {
			out.cols[q.Name] = old.cols[q.Name]
		}
	} else {
		room := n + n/4 + 1024
		out.ids = append(make([]string, 0, room), old.ids...)
		if edge {
			out.src = append(make([]string, 0, room), old.src...)
			out.dst = append(make([]string, 0, room), old.dst...)
		}
		for _, q := range props {
			out.cols[q.Name] = append(make([]any, 0, room), old.cols[q.Name]...)
		}
	}
	for _, r := range extra {
		out.ids = append(out.ids, r.d.ids[r.off])
		if edge {
			out.src = append(out.src, r.d.src[r.off])
			out.dst = append(out.dst, r.d.dst[r.off])
		}
		for _, q := range props {
			out.cols[q.Name] = append(out.cols[q.Name], r.d.cols[q.Name][r.off])
		}
	}
	return out, &growToken{}, true
}

// sameRow reports whether row i of a and row j of b hold the same entity
// and values (a compaction copies rows, so values are equal, not shared).
func sameRow(a *decodedRows, i int, b *decodedRows, j int, props []*schema.Property, edge bool) bool {
	if a.ids[i] != b.ids[j] || edge && (a.src[i] != b.src[j] || a.dst[i] != b.dst[j]) {
		return false
	}
	for _, q := range props {
		if !sameValue(a.cols[q.Name][i], b.cols[q.Name][j]) {
			return false
		}
	}
	return true
}

// sameValue is exact equality of two decoded values (NaN differs from
// itself, which only costs a full assembly).
func sameValue(x, y any) bool {
	switch a := x.(type) {
	case nil:
		return y == nil
	case string:
		b, ok := y.(string)
		return ok && a == b
	case int64:
		b, ok := y.(int64)
		return ok && a == b
	case float64:
		b, ok := y.(float64)
		return ok && a == b
	case bool:
		b, ok := y.(bool)
		return ok && a == b
	}
	tx, ty := reflect.TypeOf(x), reflect.TypeOf(y)
	if tx != ty {
		return false
	}
	if tx == nil {
		return true
	}
	if tx.Comparable() {
		return x == y
	}
	return reflect.DeepEqual(x, y)
}
