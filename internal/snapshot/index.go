package snapshot

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Scan indexes. A Scan whose pushed-down filters include `id = c`,
// `key = c` (the type's single-property @key) or an equality/range
// comparison of a property with a constant reads candidate rows from an
// index of the immutable table image instead of every row:
//
//   - id and key equalities resolve through NodeTable.Row (the key value's
//     canonical rendering is the node id, schema.NodeType.NodeID);
//   - other comparisons use a sorted index of the property (rows ordered by
//     Compare, nulls left out), built lazily per (image, property) on the
//     IndexAfterScans-th scan that could use it and kept with the image.
//
// Candidates are emitted in row order and every filter not implied by the
// index is still evaluated on them, so an indexed scan returns exactly the
// rows of a full scan, in the same order (TestScanIndexMatchesFullScan).

// IndexAfterScans is how many scans of one (image, property) run as full
// scans before its sorted index is built: an image read once (typical
// right after a write) never pays the O(n log n) build.
const IndexAfterScans = 2

// maxIndexedFraction: an index interval holding more than this fraction of
// the table is no faster than the scan; scan instead.
const maxIndexedFraction = 4 // 1/4

// tableIndexes holds the lazily built indexes of one node table image.
type tableIndexes struct {
	mu    sync.Mutex
	uses  map[string]int
	props map[string]*SortedIndex

	keyOnce  sync.Once
	keyCanon bool // every row's id is the canonical rendering of its key

	// typed holds the typed columns of the image (typed_columns.go) and
	// typedUses the requests of each before it is built.
	typed     map[string]*typedColumn
	typedUses map[string]int

	// pairs holds the pair indexes (pair_index.go) and pairUses the
	// requests of each before it is built.
	pairs    map[pairKey]*PairIndex
	pairUses map[pairKey]int
}

// SortedIndex orders the non-null live rows of one property by value (Compare),
// ties by row. rank is the value kind of every indexed value; ok is false
// when the column mixes kinds (then the index is never used).
type SortedIndex struct {
	once sync.Once
	ok   bool
	rank int
	Perm []int32
	// ints holds the keys in perm order when every value is an int64, so
	// the common integer probe needs no interface dispatch.
	ints []int64
	col  []any
	rs   *rowSpace // the image's dead rows are left out
}

// SortedIndex returns the sorted index of prop, or nil while the
// property has been scanned fewer than IndexAfterScans times.
func (t *NodeTable) SortedIndex(prop string) *SortedIndex {
	col := t.Cols[prop]
	if col == nil {
		return nil
	}
	ix := &t.ix
	ix.mu.Lock()
	si := ix.props[prop]
	if si == nil {
		if ix.uses == nil {
			ix.uses = map[string]int{}
			ix.props = map[string]*SortedIndex{}
		}
		ix.uses[prop]++
		if ix.uses[prop] > IndexAfterScans {
			si = &SortedIndex{col: col, rs: &t.rowSpace}
			ix.props[prop] = si
		}
	}
	ix.mu.Unlock()
	if si == nil {
		return nil
	}
	si.once.Do(si.build)
	if !si.ok {
		return nil
	}
	return si
}

func (si *SortedIndex) build() {
	col := si.col
	si.rank = -1
	allInt := true
	for r, v := range col {
		if v == nil || !si.rs.Alive(r) {
			continue
		}
		k := value.Rank(v)
		switch {
		case si.rank < 0:
			si.rank = k
		case k != si.rank:
			return // mixed kinds: not indexable
		}
		if _, isInt := v.(int64); !isInt {
			allInt = false
		}
		si.Perm = append(si.Perm, int32(r))
	}
	if si.rank == value.RankBlob || si.rank == value.RankVector || si.rank == value.RankList || si.rank == value.RankOther {
		si.Perm = nil
		return
	}
	if allInt {
		type kv struct {
			k int64
			r int32
		}
		pairs := make([]kv, len(si.Perm))
		for i, r := range si.Perm {
			pairs[i] = kv{col[r].(int64), r}
		}
		slices.SortFunc(pairs, func(a, b kv) int {
			if c := cmp.Compare(a.k, b.k); c != 0 {
				return c
			}
			return cmp.Compare(a.r, b.r)
		})
		si.ints = make([]int64, len(pairs))
		for i, p := range pairs {
			si.Perm[i], si.ints[i] = p.r, p.k
		}
	} else if si.rank == value.RankString {
		slices.SortFunc(si.Perm, func(a, b int32) int {
			if c := strings.Compare(col[a].(string), col[b].(string)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	} else {
		slices.SortFunc(si.Perm, func(a, b int32) int {
			if c := value.Compare(col[a], col[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	si.ok = true
}

// cmpAt compares the i-th indexed value with c.
func (si *SortedIndex) cmpAt(i int, c any) int {
	if si.ints != nil {
		if k, ok := c.(int64); ok {
			return cmp.Compare(si.ints[i], k)
		}
	}
	return value.Compare(si.col[si.Perm[i]], c)
}

// interval narrows [lo, hi) of perm positions to the values v with
// `v op c`; ok is false for an operator the index cannot answer.
func (si *SortedIndex) Interval(lo, hi int, op query.CmpOp, c any) (int, int, bool) {
	if value.Rank(c) != si.rank {
		// Values of different kinds never compare (compareOp): no row matches.
		return lo, lo, op >= query.OpEq && op <= query.OpGe && op != query.OpNe
	}
	// first returns the first position in [lo, hi) whose value is not
	// below c (strict=false) or above c (strict=true).
	first := func(strict bool) int {
		i, j := lo, hi
		for i < j {
			m := int(uint(i+j) >> 1)
			d := si.cmpAt(m, c)
			if d < 0 || (strict && d == 0) {
				i = m + 1
			} else {
				j = m
			}
		}
		return i
	}
	switch op {
	case query.OpEq:
		return first(false), first(true), true
	case query.OpLt:
		return lo, first(false), true
	case query.OpLe:
		return lo, first(true), true
	case query.OpGt:
		return first(true), hi, true
	case query.OpGe:
		return first(false), hi, true
	}
	return lo, hi, false
}

// KeyProp returns the single @key property of the table's type ("" if the
// type has no key or a composite one).
func (t *NodeTable) KeyProp() string {
	if t.Type == nil || len(t.Type.Key) != 1 {
		return ""
	}
	return t.Type.Key[0]
}

// KeyCanonical reports whether every row's id is the canonical rendering
// of its single-property key value, checked once per image. Loads and
// mutations derive keyed ids from the key (and updates may not assign it),
// so this holds for every image the engine writes; the check keeps a key
// lookup exact even for an image that breaks the rule.
func (t *NodeTable) KeyCanonical() bool {
	t.ix.keyOnce.Do(func() {
		prop := t.KeyProp()
		col := t.Cols[prop]
		if prop == "" || col == nil {
			return
		}
		// Every fragment (deleted rows included) canonical implies every
		// row of the image; each fragment is checked once, not per image.
		if t.layout != nil && t.layout.KeyCanonical(t.Type) {
			t.ix.keyCanon = true
			return
		}
		p, _ := t.Type.Prop(prop)
		one := map[string]any{}
		for i, v := range col {
			if !t.Alive(i) {
				continue
			}
			if p != nil && (p.Type.Kind == schema.KindString || p.Type.Kind == schema.KindEnum) {
				if s, ok := v.(string); ok && s == t.IDs[i] {
					continue
				}
				return
			}
			one[prop] = v
			id, err := t.Type.NodeID(one)
			if err != nil || id != t.IDs[i] {
				return
			}
		}
		t.ix.keyCanon = true
	})
	return t.ix.keyCanon
}
