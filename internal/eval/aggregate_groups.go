package eval

import (
	"slices"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// aggGroups is the groups of one aggregate as its rows are folded: in
// first-seen order of their keys, each group charged to the query's
// budget when it is made. The row path (aggregate) and the dense paths
// (dense.go, dense_aggregate.go) fold into it alike.
type aggGroups struct {
	o      *query.Aggregate
	mem    *limits.Budget
	groups []*aggGroup
	byKey  map[string]int // TupleKey → index in groups
}

// aggGroup is one group: its keys and the state of each aggregate column.
type aggGroup struct {
	keys []any
	st   []aggState
}

func newAggGroups(o *query.Aggregate, mem *limits.Budget) *aggGroups {
	return &aggGroups{o: o, mem: mem, byKey: map[string]int{}}
}

// group returns the group of keys (kept by copy), made on first sight.
func (a *aggGroups) group(keys []any) *aggGroup {
	if len(keys) == 0 && len(a.groups) == 1 {
		// One group: no key to build or hash per row.
		return a.groups[0]
	}
	tk := value.TupleKey(keys)
	if i, ok := a.byKey[tk]; ok {
		return a.groups[i]
	}
	return a.groups[a.add(tk, keys)]
}

// find returns the index of the group whose TupleKey is tk (the typed
// path builds keys without boxing them: aggregate_typed.go).
func (a *aggGroups) find(tk []byte) (int, bool) {
	i, ok := a.byKey[string(tk)]
	return i, ok
}

// add makes the group of keys (kept by copy), whose TupleKey is tk, and
// returns its index.
func (a *aggGroups) add(tk string, keys []any) int {
	charge(a.mem, int64(len(tk))+96+16*int64(len(keys))+40*int64(len(a.o.Aggs)))
	a.byKey[tk] = len(a.groups)
	a.groups = append(a.groups, &aggGroup{keys: slices.Clone(keys), st: make([]aggState, len(a.o.Aggs))})
	return len(a.groups) - 1
}

// rows returns the aggregate's output rows: one per group, and with no
// keys and no rows one row of zeros and nulls.
func (a *aggGroups) rows() [][]any {
	if len(a.groups) == 0 && len(a.o.Keys) == 0 {
		a.groups = append(a.groups, &aggGroup{st: make([]aggState, len(a.o.Aggs))})
	}
	srcs := aggColumns(a.o)
	out := make([][]any, 0, len(a.groups))
	for _, g := range a.groups {
		out = append(out, aggRow(a.o, srcs, g.keys, g.st))
	}
	return out
}
