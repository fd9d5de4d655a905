package snapshot

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// Derived images. A write adds fragments to a table state and hides
// replaced or deleted rows with deletion vectors, leaving every other
// fragment as it was; inline compaction replaces a run of fragments by
// new ones holding their live rows. The new image is therefore derived
// from a recent image of the same table (retire.go's ring) without
// copying its live rows (rowspace.go):
//
//   - every fragment both layouts hold keeps its image rows; the rows
//     its new deletion vector hides are marked dead (the old image's
//     dead bitmap is copied, n/8 bytes, and the fragment's bits redone);
//   - a fragment a compaction of this handle wrote (its image knows the
//     run it came from, moved.go) is mapped onto the live rows the old
//     image holds for that run, in order (placement.at): nothing is
//     appended for them, and rows of the run the compaction dropped (hidden
//     by the write before it) are marked dead; rows of the run's newest
//     fragments, which the old image never held, are appended;
//   - the rows of a fragment the new layout no longer holds are marked
//     dead (a compaction without lineage rewrote them);
//   - the live rows of the fragments only the new layout holds are
//     appended, in state order.
//
// Live rows stay in state order as long as the kept fragments (a moved
// fragment standing where its run stood) are in the same order in both
// layouts and every new fragment comes after them;
// anything else (and a row a kept fragment brings back, which only a
// branch switch does) assembles the image from its fragments. So does a
// derivation whose dead rows would pass a quarter of the image: the dense
// rebuild copies the live rows once, after which a quarter of the table
// must change again before the next one.
//
// Appending shares the old image's backing arrays when they have room: a
// written table's image is allocated with spare capacity, and the
// capacity past an image's length is handed to the first image derived
// from it, exactly once (growToken). Rows an image can see are never
// written again, so images stay immutable.
//
// TestDerivedImageMatchesAssembly compares derived images with from-scratch
// decodes across inserts, compactions, updates, deletes, branches and
// schema applies; TestCompactedImageMatchesDecode does so for moved
// fragments, with time travel across compactions.

// growToken guards the backing capacity past one image's length: only the
// derivation that claims it may write there.
type growToken struct{ claimed atomic.Bool }

// maxDeadFraction: a derived image with more than 1/maxDeadFraction of
// its rows dead is rebuilt densely instead.
const maxDeadFraction = 4

// imageRows views a cached table image as its rows and row space; ok is
// false for an image without a layout.
func imageRows(v any) (*Rows, *rowSpace, bool) {
	switch t := v.(type) {
	case *NodeTable:
		return &Rows{IDs: t.IDs, Cols: t.Cols}, &t.rowSpace, t.layout != nil
	case *EdgeTable:
		return &Rows{IDs: t.IDs, Src: t.Src, Dst: t.Dst, Cols: t.Cols}, &t.rowSpace, t.layout != nil
	}
	return nil, nil, false
}

// deriveImage builds the image of fs from a recent image of the same
// table; ok is false when none can be derived from.
func (s *Snapshot) deriveImage(tk string, fs *Layout, props []*schema.Property, edge bool) (*Rows, rowSpace, bool) {
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
		old, ors, ok := imageRows(v)
		if !ok {
			continue
		}
		if d, rs, ok := extendImage(old, ors, fs, props, edge); ok {
			return d, rs, true
		}
	}
	return nil, rowSpace{}, false
}

// extendImage derives the image of fs from old (an image with row space
// ors).
func extendImage(old *Rows, ors *rowSpace, fs *Layout, props []*schema.Property, edge bool) (*Rows, rowSpace, bool) {
	ofs, opl := ors.layout, ors.place
	oldPart := make(map[string]int, len(ofs.keys))
	for j, k := range ofs.keys {
		oldPart[k] = j
	}
	moved := make([]bool, len(ofs.keys)) // old fragments a moved fragment took the rows of
	// Kept fragments in the same order, new ones after all of them; a
	// moved fragment stands where the run it replaced stood.
	kept := make([]int, len(fs.keys))  // old part index, -1 for a new one, movedPart for a moved one
	var at [][]int32                   // image rows of each moved fragment
	tails := make([]int, len(fs.keys)) // rows of a moved fragment appended (its last ones)
	var kill []int32                   // old live rows a compaction dropped
	runLeft := map[string]int{}        // old rows of a mapped run no chunk took yet, by its first source
	var mv moveState
	last, fresh, appended := -1, false, 0
	for i, k := range fs.keys {
		j, ok := oldPart[k]
		if !ok {
			if !fresh {
				if rows, tail, lastSrc, ok := mv.place(fs.parts[i], oldPart, ors, len(old.IDs), last, len(old.IDs)+appended); ok {
					if at == nil {
						at = make([][]int32, len(fs.keys))
					}
					kept[i], at[i], last, tails[i] = movedPart, rows, lastSrc, tail
					runLeft[mv.keys[0]] = len(mv.rows) - mv.next
					if fr := fs.parts[i].from; fr.first == 0 {
						for _, key := range mv.keys[:mv.inOld] {
							moved[oldPart[key]] = true
						}
						kill = append(kill, mv.kill...)
					}
					if tail > 0 {
						// Its last rows are new to the image: appended, so
						// nothing kept may follow.
						fresh, appended = true, appended+tail
					}
					continue
				}
			}
			if fr := fs.parts[i].from; fr != nil && runLeft[fr.keys[0]] > 0 {
				// Another chunk of a run mapped onto old rows, some of
				// which would then be in the image twice.
				return nil, rowSpace{}, false
			}
			kept[i], fresh = -1, true
			appended += len(fs.parts[i].IDs) - len(fs.dels[i])
			mv = moveState{}
			continue
		}
		if fresh || j <= last {
			return nil, rowSpace{}, false
		}
		kept[i], last = j, j
		mv = moveState{} // a run's chunks follow each other
	}
	if last < 0 {
		return nil, rowSpace{}, false // nothing kept: assembling costs the same
	}
	for _, left := range runLeft {
		if left > 0 {
			return nil, rowSpace{}, false // a run's old rows not all taken
		}
	}
	n := len(old.IDs)
	total := n + appended
	dead := newDeadBits(total)
	copy(dead, ors.dead)
	for _, r := range kill {
		dead.set(int(r))
	}
	keptOld := moved
	for i, j := range kept {
		if j == movedPart {
			// Its rows are live rows of the old image; hide those its own
			// deletion vector deletes.
			for _, off := range fs.dels[i] {
				dead.set(int(at[i][off]))
			}
			continue
		}
		if j < 0 {
			continue
		}
		keptOld[j] = true
		if fs.dvs[i] == ofs.dvs[j] {
			continue
		}
		// Redo the fragment's bits from its new deletion vector; a row
		// the image does not hold must still be deleted.
		if opl.at != nil && opl.at[j] != nil {
			for _, r := range opl.at[j] {
				dead.setRange(int(r), int(r)+1, false)
			}
			for _, off := range fs.dels[i] {
				dead.set(int(opl.at[j][off]))
			}
			continue
		}
		lo := opl.start[j]
		dead.setRange(lo, lo+opl.count[j], false)
		skip, k := opl.skip[j], 0
		for _, off := range fs.dels[i] {
			if k < len(skip) && skip[k] < off {
				return nil, rowSpace{}, false // skip[k] is back: not derivable
			}
			if k < len(skip) && skip[k] == off {
				k++
				continue
			}
			dead.set(lo + int(off) - k)
		}
		if k < len(skip) {
			return nil, rowSpace{}, false
		}
	}
	for j, ok := range keptOld {
		switch {
		case ok:
		case opl.at != nil && opl.at[j] != nil:
			for _, r := range opl.at[j] {
				dead.set(int(r))
			}
		default:
			dead.setRange(opl.start[j], opl.start[j]+opl.count[j], true)
		}
	}
	nDead := dead.count()
	if nDead*maxDeadFraction > total {
		return nil, rowSpace{}, false
	}
	rs := rowSpace{layout: fs, live: total - nDead, grow: ors.grow, derived: true,
		place: &placement{start: make([]int, len(fs.keys)), skip: make([][]int64, len(fs.keys)), count: make([]int, len(fs.keys))}}
	if nDead > 0 {
		rs.dead = dead
	}
	if at != nil || opl.at != nil {
		rs.place.at = make([][]int32, len(fs.keys))
	}
	next := n
	for i, j := range kept {
		switch {
		case j == movedPart:
			rs.place.at[i], rs.place.count[i] = at[i], len(at[i])
			next += tails[i]
			if len(at[i]) > 0 {
				rs.place.start[i] = int(at[i][0])
			}
		case j >= 0:
			rs.place.start[i], rs.place.skip[i], rs.place.count[i] = opl.start[j], opl.skip[j], opl.count[j]
			if opl.at != nil {
				rs.place.at[i] = opl.at[j]
			}
		default:
			rs.place.start[i], rs.place.skip[i] = next, fs.dels[i]
			rs.place.count[i] = len(fs.parts[i].IDs) - len(fs.dels[i])
			next += rs.place.count[i]
		}
	}
	if appended == 0 {
		// Same rows: share them and their spare room.
		return old, rs, true
	}
	inPlace := ors.grow != nil && cap(old.IDs) >= total && (!edge || cap(old.Src) >= total && cap(old.Dst) >= total)
	for _, q := range props {
		inPlace = inPlace && cap(old.Cols[q.Name]) >= total
	}
	if !inPlace || !ors.grow.claimed.CompareAndSwap(false, true) {
		// No room (or another derivation took it): rebuild densely with
		// room rather than copy the dead rows too.
		return nil, rowSpace{}, false
	}
	out := &Rows{IDs: old.IDs, Src: old.Src, Dst: old.Dst, Cols: make(map[string][]any, len(props))}
	for _, q := range props {
		out.Cols[q.Name] = old.Cols[q.Name]
	}
	for i, j := range kept {
		if j == movedPart && tails[i] > 0 {
			d := fs.parts[i]
			from := len(d.IDs) - tails[i]
			appendLive(out, &Rows{IDs: d.IDs[from:], Src: tailOf(d.Src, from), Dst: tailOf(d.Dst, from), Cols: colsFrom(d.Cols, from)}, nil, props, edge)
			continue
		}
		if j != -1 {
			continue
		}
		appendLive(out, fs.parts[i], fs.dels[i], props, edge)
	}
	rs.grow = &growToken{}
	return out, rs, true
}

// appendLive appends the rows of fragment image d not in dels (sorted) to
// out.
func appendLive(out, d *Rows, dels []int64, props []*schema.Property, edge bool) {
	lo := 0
	for k := 0; k <= len(dels); k++ {
		hi := len(d.IDs)
		if k < len(dels) {
			hi = int(dels[k])
		}
		if hi > lo {
			out.IDs = append(out.IDs, d.IDs[lo:hi]...)
			if edge {
				out.Src = append(out.Src, d.Src[lo:hi]...)
				out.Dst = append(out.Dst, d.Dst[lo:hi]...)
			}
			for _, p := range props {
				out.Cols[p.Name] = append(out.Cols[p.Name], d.Cols[p.Name][lo:hi]...)
			}
		}
		lo = hi + 1
	}
}

// movedPart marks, in extendImage's kept list, a fragment mapped onto
// the rows the old image holds for the run a compaction replaced by it.
const movedPart = -2

// moveState maps the moved fragments of one derivation (moved.go) onto
// the old image: the live rows of the current run's source fragments the
// old image holds, and where the next chunk of the run must begin.
type moveState struct {
	keys  []string // the current run's source fragments
	inOld int      // how many of them (a prefix) the old image holds
	rows  []int32  // the live image rows of those, in order
	next  int      // first run row of the next chunk
	kill  []int32  // live rows of the old image the run dropped
}

// place returns the image rows of fragment image d if its rows were moved
// by a compaction from fragments of which a prefix is in the old image
// (row space ors, n rows), every row it kept live there, after the
// fragments up to last; the rest of the run's fragments are newer than the
// old image, and their rows (tail, d's last ones) are to be appended at
// image rows from appendAt on. It also returns the last old fragment the
// rows came from; ok is false when d is not such a fragment. The chunks
// of one run must follow each other in order.
func (m *moveState) place(d *Rows, oldPart map[string]int, ors *rowSpace, n, last, appendAt int) (at []int32, tail, lastSrc int, ok bool) {
	fr := d.from
	if fr == nil {
		return nil, 0, 0, false
	}
	if !slices.Equal(fr.keys, m.keys) {
		// A new run: collect the live rows of its sources the old image holds.
		if fr.first != 0 {
			return nil, 0, 0, false
		}
		*m = moveState{} // earlier runs' rows are in use
		ofs, opl := ors.layout, ors.place
		prev := last
		var kill []int32
		for k, key := range fr.keys {
			j, ok := oldPart[key]
			if !ok {
				break // this one and those after it are newer than the image
			}
			if j <= prev {
				return nil, 0, 0, false
			}
			prev = j
			// The compaction kept the offsets its deletion vector did not
			// hide; each must be a live row of the old image. A row the
			// old image has alive but the compaction dropped (the write
			// before it deleted it) dies in the new image.
			gone := fr.dels[k]
			for off := range len(ofs.parts[j].IDs) {
				r, present := opl.row(j, int32(off))
				alive := present && !ors.dead.has(r)
				drop := len(gone) > 0 && gone[0] == int64(off)
				if drop {
					gone = gone[1:]
				}
				switch {
				case drop && alive:
					kill = append(kill, int32(r))
				case drop:
				case !alive:
					return nil, 0, 0, false // kept by the compaction, not live in the image
				default:
					m.rows = append(m.rows, int32(r))
				}
			}
			m.inOld = k + 1
		}
		for _, key := range fr.keys[m.inOld:] {
			if _, ok := oldPart[key]; ok {
				return nil, 0, 0, false // an old fragment after a new one
			}
		}
		if m.inOld == 0 {
			return nil, 0, 0, false // nothing to map onto: append it as new
		}
		m.keys, m.kill = fr.keys, kill
	}
	hi := fr.first + len(d.IDs)
	if fr.first != m.next {
		return nil, 0, 0, false
	}
	m.next = hi
	lastSrc = oldPart[m.keys[m.inOld-1]]
	if hi <= len(m.rows) {
		return m.rows[fr.first:hi:hi], 0, lastSrc, true
	}
	// Part of the chunk is new to the image.
	at = make([]int32, len(d.IDs))
	k := copy(at, m.rows[min(fr.first, len(m.rows)):])
	for r := k; r < len(at); r++ {
		at[r] = int32(appendAt + r - k)
	}
	return at, len(at) - k, lastSrc, true
}

// tailOf returns s[from:] (nil for nil).
func tailOf(s []string, from int) []string {
	if s == nil {
		return nil
	}
	return s[from:]
}

// colsFrom returns the columns of c from row from on.
func colsFrom(c map[string][]any, from int) map[string][]any {
	out := make(map[string][]any, len(c))
	for p, v := range c {
		out[p] = v[from:]
	}
	return out
}
