package exec

import (
	"cmp"
	"math/bits"
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
//     indexAfterScans-th scan that could use it and kept with the image.
//
// Candidates are emitted in row order and every filter not implied by the
// index is still evaluated on them, so an indexed scan returns exactly the
// rows of a full scan, in the same order (TestScanIndexMatchesFullScan).

// indexAfterScans is how many scans of one (image, property) run as full
// scans before its sorted index is built: an image read once (typical
// right after a write) never pays the O(n log n) build.
const indexAfterScans = 2

// maxIndexedFraction: an index interval holding more than this fraction of
// the table is no faster than the scan; scan instead.
const maxIndexedFraction = 4 // 1/4

// tableIndexes holds the lazily built indexes of one node table image.
type tableIndexes struct {
	mu    sync.Mutex
	uses  map[string]int
	props map[string]*sortedIndex

	keyOnce  sync.Once
	keyCanon bool // every row's id is the canonical rendering of its key
}

// sortedIndex orders the non-null rows of one property by value (Compare),
// ties by row. rank is the value kind of every indexed value; ok is false
// when the column mixes kinds (then the index is never used).
type sortedIndex struct {
	once sync.Once
	ok   bool
	rank int
	perm []int32
	// ints holds the keys in perm order when every value is an int64, so
	// the common integer probe needs no interface dispatch.
	ints []int64
	col  []any
}

// sortedIndexFor returns the sorted index of prop, or nil while the
// property has been scanned fewer than indexAfterScans times.
func (t *NodeTable) sortedIndexFor(prop string) *sortedIndex {
	col := t.Cols[prop]
	if col == nil || t.noIndex {
		return nil
	}
	ix := &t.ix
	ix.mu.Lock()
	si := ix.props[prop]
	if si == nil {
		if ix.uses == nil {
			ix.uses = map[string]int{}
			ix.props = map[string]*sortedIndex{}
		}
		ix.uses[prop]++
		if ix.uses[prop] > indexAfterScans {
			si = &sortedIndex{col: col}
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

func (si *sortedIndex) build() {
	col := si.col
	si.rank = -1
	allInt := true
	for r, v := range col {
		if v == nil {
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
		si.perm = append(si.perm, int32(r))
	}
	if si.rank == value.RankBlob || si.rank == value.RankVector || si.rank == value.RankList || si.rank == value.RankOther {
		si.perm = nil
		return
	}
	if allInt {
		type kv struct {
			k int64
			r int32
		}
		pairs := make([]kv, len(si.perm))
		for i, r := range si.perm {
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
			si.perm[i], si.ints[i] = p.r, p.k
		}
	} else if si.rank == value.RankString {
		slices.SortFunc(si.perm, func(a, b int32) int {
			if c := strings.Compare(col[a].(string), col[b].(string)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	} else {
		slices.SortFunc(si.perm, func(a, b int32) int {
			if c := value.Compare(col[a], col[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	si.ok = true
}

// cmpAt compares the i-th indexed value with c.
func (si *sortedIndex) cmpAt(i int, c any) int {
	if si.ints != nil {
		if k, ok := c.(int64); ok {
			return cmp.Compare(si.ints[i], k)
		}
	}
	return value.Compare(si.col[si.perm[i]], c)
}

// interval narrows [lo, hi) of perm positions to the values v with
// `v op c`; ok is false for an operator the index cannot answer.
func (si *sortedIndex) interval(lo, hi int, op query.CmpOp, c any) (int, int, bool) {
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

// constPred is a pushed-down filter `$v.prop op c` (or `$v.id = c`) with a
// constant side, normalised to the property on the left.
type constPred struct {
	i    int // index in Scan.Filters
	id   bool
	prop string
	op   query.CmpOp
	c    any
}

// flipOp mirrors a comparison for swapped operands (c < x ⇔ x > c).
func flipOp(op query.CmpOp) (query.CmpOp, bool) {
	switch op {
	case query.OpEq, query.OpNe:
		return op, true
	case query.OpLt:
		return query.OpGt, true
	case query.OpLe:
		return query.OpGe, true
	case query.OpGt:
		return query.OpLt, true
	case query.OpGe:
		return query.OpLe, true
	}
	return op, false
}

// constPreds extracts the index-usable filters of a scan over variable v.
func (r *runner) constPreds(filters []query.Pred, v string) []constPred {
	var out []constPred
	for i := range filters {
		p := &filters[i]
		if p.Func != "" {
			continue
		}
		varSide, kSide, op := p.Left, p.Right, p.Op
		if isConstOperand(varSide) {
			var ok bool
			if op, ok = flipOp(op); !ok {
				continue
			}
			varSide, kSide = kSide, varSide
		}
		if varSide.Var != v || (varSide.Kind != query.OpdProp && varSide.Kind != query.OpdID) || !isConstOperand(kSide) {
			continue
		}
		if op < query.OpEq || op > query.OpGe || op == query.OpNe {
			continue
		}
		c, err := r.constant(kSide)
		if err != nil || c == nil {
			continue // the predicate itself reports the error or matches nothing
		}
		out = append(out, constPred{i: i, id: varSide.Kind == query.OpdID, prop: varSide.Prop, op: op, c: c})
	}
	return out
}

func isConstOperand(o query.Operand) bool {
	return o.Kind == query.OpdParam || o.Kind == query.OpdLit || o.Kind == query.OpdNow
}

// scanIndex chooses candidate rows for a scan from an index. It returns
// the candidates in ascending row order and the filters they already
// satisfy (skip[i]); ok is false when no index applies (scan every row).
func (r *runner) scanIndex(o *query.Scan, tbl *NodeTable) (cands []int32, skip []bool, ok bool) {
	if tbl.noIndex || tbl.Len() == 0 {
		return nil, nil, false
	}
	cps := r.constPreds(o.Filters, o.Var)
	if len(cps) == 0 {
		return nil, nil, false
	}
	// Point lookups by id or key: at most one candidate.
	for _, cp := range cps {
		if cp.op != query.OpEq {
			continue
		}
		var id string
		switch {
		case cp.id:
			s, isStr := cp.c.(string)
			if !isStr {
				return nil, nil, true // ids are strings: nothing matches
			}
			id = s
		case tbl.keyProp() == cp.prop:
			kid, err := tbl.Type.NodeID(map[string]any{cp.prop: cp.c})
			if err != nil || !tbl.keyCanonical() {
				continue
			}
			id = kid
		default:
			continue
		}
		if row, found := tbl.Row(id); found {
			return []int32{int32(row)}, nil, true
		}
		return nil, nil, true
	}
	// Sorted index: the property whose filters leave the fewest rows.
	best, bestLo, bestHi := "", 0, 0
	var bestIx *sortedIndex
	done := map[string]bool{}
	for _, cp := range cps {
		if cp.id || done[cp.prop] {
			continue
		}
		done[cp.prop] = true
		si := tbl.sortedIndexFor(cp.prop)
		if si == nil {
			continue
		}
		lo, hi, usable := 0, len(si.perm), true
		for _, q := range cps {
			if !q.id && q.prop == cp.prop {
				if lo, hi, usable = si.interval(lo, hi, q.op, q.c); !usable {
					break
				}
			}
		}
		if usable && (bestIx == nil || hi-lo < bestHi-bestLo) {
			best, bestLo, bestHi, bestIx = cp.prop, lo, hi, si
		}
	}
	if bestIx == nil || (bestHi-bestLo)*maxIndexedFraction > tbl.Len() {
		return nil, nil, false
	}
	skip = make([]bool, len(o.Filters))
	for _, q := range cps {
		if !q.id && q.prop == best {
			skip[q.i] = true
		}
	}
	return rowOrder(bestIx.perm[bestLo:bestHi], tbl.Len()), skip, true
}

// rowOrder returns rows in ascending order: already sorted runs (an
// equality interval is ordered by row) are copied, others go through a
// bitmap over the table.
func rowOrder(rows []int32, n int) []int32 {
	if slices.IsSorted(rows) {
		return slices.Clone(rows)
	}
	if len(rows) < 256 {
		out := slices.Clone(rows)
		slices.Sort(out)
		return out
	}
	bm := make([]uint64, (n+63)/64)
	for _, r := range rows {
		bm[r>>6] |= 1 << (r & 63)
	}
	out := make([]int32, 0, len(rows))
	for w, word := range bm {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, int32(w<<6+b))
			word &= word - 1
		}
	}
	return out
}

// keyProp returns the single @key property of the table's type ("" if the
// type has no key or a composite one).
func (t *NodeTable) keyProp() string {
	if t.Type == nil || len(t.Type.Key) != 1 {
		return ""
	}
	return t.Type.Key[0]
}

// keyCanonical reports whether every row's id is the canonical rendering
// of its single-property key value, checked once per image. Loads and
// mutations derive keyed ids from the key (and updates may not assign it),
// so this holds for every image the engine writes; the check keeps a key
// lookup exact even for an image that breaks the rule.
func (t *NodeTable) keyCanonical() bool {
	t.ix.keyOnce.Do(func() {
		prop := t.keyProp()
		col := t.Cols[prop]
		if prop == "" || col == nil {
			return
		}
		// Every fragment (deleted rows included) canonical implies every
		// row of the image; each fragment is checked once, not per image.
		if t.layout != nil && t.layout.keyCanonical(t.Type) {
			t.ix.keyCanon = true
			return
		}
		p, _ := t.Type.Prop(prop)
		one := map[string]any{}
		for i, v := range col {
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
