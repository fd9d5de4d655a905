package snapshot

import (
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Derived images. An insert-only write appends one fragment to a table
// state and leaves every other fragment (and deletion vector) as it was;
// inline compaction replaces a run of trailing fragments by new ones
// holding the same rows in the same order. In both cases the new image is
// the old image plus some rows at its end, so it is derived from a recent
// image of the same table (retire.go's ring) instead of copying every
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
func imageRows(v any) (d *Rows, layout *Layout, grow *growToken, ok bool) {
	switch t := v.(type) {
	case *NodeTable:
		return &Rows{IDs: t.IDs, Cols: t.Cols}, t.layout, t.grow, t.layout != nil
	case *EdgeTable:
		return &Rows{IDs: t.IDs, Src: t.Src, Dst: t.Dst, Cols: t.Cols}, t.layout, t.grow, t.layout != nil
	}
	return nil, nil, nil, false
}

// deriveImage builds the image of fs from a recent image of the same
// table when fs only adds rows at its end; ok is false otherwise.
func (s *Snapshot) deriveImage(tk string, fs *Layout, props []*schema.Property, edge bool) (*Rows, *growToken, bool) {
	for _, key := range s.recentImages(tk) {
		if key == s.ImageKey(tk) {
			continue
		}
		if !strings.HasPrefix(key, "exec/image/"+s.c.Schema+"/") {
			// Decoded under another schema (before a schema apply): its
			// columns are not this catalog's.
			continue
		}
		v, found := s.l.cache.Get(key)
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
func extendImage(old *Rows, ofs *Layout, grow *growToken, fs *Layout, props []*schema.Property, edge bool) (*Rows, *growToken, bool) {
	p := 0
	for p < len(ofs.keys) && p < len(fs.keys) && ofs.keys[p] == fs.keys[p] && ofs.dvs[p] == fs.dvs[p] {
		p++
	}
	if p == 0 || len(old.IDs) != ofs.live {
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
		d   *Rows
		off int
	}
	var tail []rowRef
	for i := p; i < len(fs.parts); i++ {
		d, dels := fs.parts[i], fs.dels[i]
		for off := range d.IDs {
			if _, gone := slices.BinarySearch(dels, int64(off)); gone {
				continue
			}
			if k := len(tail); k < oldTail && old.IDs[oldBase+k] != d.IDs[off] {
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
	n := len(old.IDs) + len(extra)
	inPlace := grow != nil && cap(old.IDs) >= n && (!edge || cap(old.Src) >= n && cap(old.Dst) >= n)
	for _, q := range props {
		inPlace = inPlace && cap(old.Cols[q.Name]) >= n
	}
	out := &Rows{Cols: make(map[string][]any, len(props))}
	if inPlace && grow.claimed.CompareAndSwap(false, true) {
		out.IDs = old.IDs
		if edge {
			out.Src, out.Dst = old.Src, old.Dst
		}
		for _, q := range props {
			out.Cols[q.Name] = old.Cols[q.Name]
		}
	} else {
		room := n + n/4 + 1024
		out.IDs = append(make([]string, 0, room), old.IDs...)
		if edge {
			out.Src = append(make([]string, 0, room), old.Src...)
			out.Dst = append(make([]string, 0, room), old.Dst...)
		}
		for _, q := range props {
			out.Cols[q.Name] = append(make([]any, 0, room), old.Cols[q.Name]...)
		}
	}
	for _, r := range extra {
		out.IDs = append(out.IDs, r.d.IDs[r.off])
		if edge {
			out.Src = append(out.Src, r.d.Src[r.off])
			out.Dst = append(out.Dst, r.d.Dst[r.off])
		}
		for _, q := range props {
			out.Cols[q.Name] = append(out.Cols[q.Name], r.d.Cols[q.Name][r.off])
		}
	}
	return out, &growToken{}, true
}

// sameRow reports whether row i of a and row j of b hold the same entity
// and values (a compaction copies rows, so values are equal, not shared).
func sameRow(a *Rows, i int, b *Rows, j int, props []*schema.Property, edge bool) bool {
	if a.IDs[i] != b.IDs[j] || edge && (a.Src[i] != b.Src[j] || a.Dst[i] != b.Dst[j]) {
		return false
	}
	for _, q := range props {
		if !sameValue(a.Cols[q.Name][i], b.Cols[q.Name][j]) {
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
