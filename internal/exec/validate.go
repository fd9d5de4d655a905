package exec

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// Committed is the read-only view of the committed state (the pinned base
// snapshot of the write) that Validate needs. Implementations answer from
// committed tables only; the staged Delta is applied on top by Validate.
// typeKey is NodeKey(name) or EdgeKey(name).
type Committed interface {
	// NodeExists reports whether a node with this id is committed.
	NodeExists(ctx context.Context, nodeType, id string) (bool, error)
	// LookupUnique returns the ids of committed rows of typeKey whose
	// columns cols equal tuple (typed comparison, as Equal). For edges,
	// cols may name "src" and "dst".
	LookupUnique(ctx context.Context, typeKey string, cols []string, tuple []any) ([]string, error)
	// EdgeIDs returns the ids of committed edges of edgeType whose end
	// column equals nodeID.
	EdgeIDs(ctx context.Context, edgeType string, end snapshot.Endpoint, nodeID string) ([]string, error)
	// EdgeEnds returns the endpoints of a committed edge; ok is false if
	// the id is not committed.
	EdgeEnds(ctx context.Context, edgeType, id string) (src, dst string, ok bool, err error)
}

// Row is the staged image of one entity. Values holds its properties; a
// missing entry is null. Src and Dst are used for edges only.
type Row struct {
	ID     string
	Src    string
	Dst    string
	Values map[string]any
}

// TypeDelta is the staged change to one node or edge type.
type TypeDelta struct {
	// Upserts are the final row images written by the change, at most one
	// per id (use Delta.PutNode / PutEdge to coalesce).
	Upserts []Row
	// Deletes are ids of committed rows the change removes. With Replace,
	// they must list every committed id absentParam from Upserts, so that edges
	// left pointing at removed nodes are found.
	Deletes []string
	// Replace means Upserts are the type's whole new content (load
	// overwrite): committed rows of the type are ignored entirely.
	Replace bool
	// StrictInsert means no upserted id may already be committed (load
	// append); a collision is a *KeyConflictError.
	StrictInsert bool
	// Vacated lists extra edge sources whose @card must be re-checked,
	// e.g. the committed sources of an overwritten edge type. Sources of
	// deleted and moved edges are found by Validate itself.
	Vacated []string
	// RowsChecked means the producer already applied the per-row checks
	// (CheckNodeRow / CheckEdgeRow) to every image, so Validate skips them
	// and Upserts may be skeletons: ID, Src, Dst and, in Values or Keep,
	// only the values of non-key @unique columns. A streaming load stages
	// this way so that property payloads need not stay in memory until the
	// commit.
	RowsChecked bool
	// Keep, if set, names columns whose values KeepValues holds for every
	// image (len(Keep) values per entry of Upserts, in Keep order), and
	// Validate takes @unique tuples from there instead of Row.Values: a
	// flat slice costs a fraction of a map per row, and a streaming load
	// keeps these values for every entity of its input.
	Keep       []string
	KeepValues []any

	index *idTable // id -> position in Upserts
}

// Delta is a staged change set: the in-memory result of executing a
// mutation, a load or a merge, before anything is written.
type Delta struct {
	Nodes map[string]*TypeDelta // by node type name
	Edges map[string]*TypeDelta // by edge type name
}

// NewDelta returns an empty Delta.
func NewDelta() *Delta {
	return &Delta{Nodes: map[string]*TypeDelta{}, Edges: map[string]*TypeDelta{}}
}

// Node returns the delta of a node type, creating it on first use.
func (d *Delta) Node(name string) *TypeDelta { return typeDelta(&d.Nodes, name) }

// Edge returns the delta of an edge type, creating it on first use.
func (d *Delta) Edge(name string) *TypeDelta { return typeDelta(&d.Edges, name) }

func typeDelta(m *map[string]*TypeDelta, name string) *TypeDelta {
	if *m == nil {
		*m = map[string]*TypeDelta{}
	}
	td, ok := (*m)[name]
	if !ok {
		td = &TypeDelta{}
		(*m)[name] = td
	}
	return td
}

// DupPolicy says what staging a second row with an already-staged id does.
type DupPolicy uint8

const (
	// DupReplace: the later row wins (mutations; load merge for edges and
	// unkeyed nodes).
	DupReplace DupPolicy = iota + 1
	// DupReject: the second row is an error. For keyed node types it is a
	// @unique violation on the key (two input rows with the same key, even
	// in merge mode); otherwise a *KeyConflictError (duplicate explicit
	// ids in append and overwrite loads).
	DupReject
)

// PutNode stages a node row image under policy. row.ID must be set.
func (d *Delta) PutNode(nt *schema.NodeType, row Row, policy DupPolicy) error {
	return d.Node(nt.Name).put(row, policy, func() error {
		if len(nt.Key) > 0 {
			return uniqueError(nt.Name, nt.Key, nodeTupleTypes(nt, nt.Key), rowTuple(nt.Key, row), row.ID, row.ID)
		}
		return &KeyConflictError{TypeKey: snapshot.NodeKey(nt.Name), EntityID: row.ID}
	})
}

// PutEdge stages an edge row image under policy. row.ID must be set.
func (d *Delta) PutEdge(et *schema.EdgeType, row Row, policy DupPolicy) error {
	return d.Edge(et.Name).put(row, policy, func() error {
		return &KeyConflictError{TypeKey: snapshot.EdgeKey(et.Name), EntityID: row.ID}
	})
}

// put stages row under policy: a row whose id is staged already replaces
// it (DupReplace) or is refused with dup's error (DupReject).
func (td *TypeDelta) put(row Row, policy DupPolicy, dup func() error) error {
	if i, ok := td.lookup(row.ID); ok {
		if policy == DupReplace {
			td.Upserts[i] = row
			return nil
		}
		return dup()
	}
	td.add(row)
	return nil
}

func (td *TypeDelta) lookup(id string) (int, bool) {
	td.indexed()
	return td.index.get(id)
}

// indexed builds the id index, or rebuilds it when Upserts was edited
// directly rather than through PutNode/PutEdge.
func (td *TypeDelta) indexed() {
	if td.index == nil || td.index.n != len(td.Upserts) {
		td.index = newIDTable(len(td.Upserts))
		for i, r := range td.Upserts {
			td.index.put(r.ID, i)
		}
	}
}

func (td *TypeDelta) add(row Row) {
	td.indexed()
	td.index.put(row.ID, len(td.Upserts))
	if n := len(td.Upserts); n == cap(td.Upserts) && n >= 1024 {
		// Doubled: append grows a large slice by about 1.25×, which copies
		// a bulk load's million skeletons (with write barriers) about four
		// times over instead of once.
		td.Upserts = slices.Grow(td.Upserts, n)
	}
	td.Upserts = append(td.Upserts, row)
}

// Validate checks a staged change set against committed state (engine spec
// §2.4): strict-insert id collisions, per-row constraints of every upserted
// row, @key/@unique uniqueness within the change and against surviving
// committed rows, edge referential integrity (new edges and committed edges
// whose endpoint the change removes), and @card for every source the change
// touches. Checks are scoped to the delta: untouched rows are trusted.
//
// It returns the first violation in a deterministic order (check kind, then
// catalog order of types, then staged row order) as a *KeyConflictError or
// *ConstraintError, or an error from committed. Validate does not modify
// the delta.
func Validate(ctx context.Context, cat *schema.Catalog, committed Committed, delta *Delta) error {
	v := &validator{ctx: ctx, cat: cat, committed: committed, delta: delta, exists: map[string]bool{}}
	for _, step := range []func() error{v.known, v.strictInserts, v.rows, v.uniques, v.references, v.cards} {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

type validator struct {
	ctx       context.Context
	cat       *schema.Catalog
	committed Committed
	delta     *Delta
	exists    map[string]bool // node existence in the result image, by type+"\x00"+id
	deletes   map[string]map[string]bool
}

// deleted returns the set of ids a node type's delta deletes.
func (v *validator) deleted(nodeType string) map[string]bool {
	if s, ok := v.deletes[nodeType]; ok {
		return s
	}
	s := map[string]bool{}
	if td := v.node(nodeType); td != nil {
		for _, id := range td.Deletes {
			s[id] = true
		}
	}
	if v.deletes == nil {
		v.deletes = map[string]map[string]bool{}
	}
	v.deletes[nodeType] = s
	return s
}

func (v *validator) node(name string) *TypeDelta {
	if v.delta == nil || v.delta.Nodes == nil {
		return nil
	}
	return v.delta.Nodes[name]
}

func (v *validator) edge(name string) *TypeDelta {
	if v.delta == nil || v.delta.Edges == nil {
		return nil
	}
	return v.delta.Edges[name]
}

// known rejects deltas naming types the catalog lacks: the caller staged
// against a different schema, and skipping them would bypass validation.
func (v *validator) known() error {
	if v.delta == nil {
		return nil
	}
	for _, name := range sortedDeltaKeys(v.delta.Nodes) {
		if _, ok := v.cat.Node(name); !ok {
			return fmt.Errorf("exec: delta names unknown node type '%s'", name)
		}
	}
	for _, name := range sortedDeltaKeys(v.delta.Edges) {
		if et, ok := v.cat.Edge(name); !ok || et.Name != name {
			return fmt.Errorf("exec: delta names unknown edge type '%s'", name)
		}
	}
	return nil
}

func sortedDeltaKeys(m map[string]*TypeDelta) []string {
	return slices.Sorted(maps.Keys(m))
}

func (v *validator) strictInserts() error {
	for _, nt := range v.cat.Nodes {
		exists := func(id string) (bool, error) { return v.committed.NodeExists(v.ctx, nt.Name, id) }
		if err := strictNew(v.node(nt.Name), snapshot.NodeKey, nt.Name, exists); err != nil {
			return err
		}
	}
	for _, et := range v.cat.Edges {
		exists := func(id string) (bool, error) {
			_, _, ok, err := v.committed.EdgeEnds(v.ctx, et.Name, id)
			return ok, err
		}
		if err := strictNew(v.edge(et.Name), snapshot.EdgeKey, et.Name, exists); err != nil {
			return err
		}
	}
	return nil
}

// strictNew refuses, for a strict insert td into type name (table
// key(name)), a staged row whose id the committed table has (exists).
func strictNew(td *TypeDelta, key func(string) string, name string, exists func(id string) (bool, error)) error {
	if td == nil || !td.StrictInsert || td.Replace {
		return nil
	}
	for _, r := range td.Upserts {
		ok, err := exists(r.ID)
		if err != nil {
			return err
		}
		if ok {
			return &KeyConflictError{TypeKey: key(name), EntityID: r.ID}
		}
	}
	return nil
}

func (v *validator) rows() error {
	for _, nt := range v.cat.Nodes {
		if err := checkStaged(v.node(nt.Name), func(vals map[string]any) error { return CheckNodeRow(nt, vals) }); err != nil {
			return err
		}
	}
	for _, et := range v.cat.Edges {
		if err := checkStaged(v.edge(et.Name), func(vals map[string]any) error { return CheckEdgeRow(et, vals) }); err != nil {
			return err
		}
	}
	return nil
}

// checkStaged checks each staged row of td with check, unless the rows
// were checked as they were staged; the error names the row.
func checkStaged(td *TypeDelta, check func(values map[string]any) error) error {
	if td == nil || td.RowsChecked {
		return nil
	}
	for _, r := range td.Upserts {
		if err := check(r.Values); err != nil {
			setID(err, r.ID)
			return err
		}
	}
	return nil
}

func setID(err error, id string) {
	if ce, ok := err.(*ConstraintError); ok {
		ce.ID = id
	}
}

// changed returns the ids whose committed image the delta supersedes
// (upserted or deleted).
func supersededIDs(td *TypeDelta) map[string]bool {
	m := make(map[string]bool, len(td.Upserts)+len(td.Deletes))
	for _, r := range td.Upserts {
		m[r.ID] = true
	}
	for _, id := range td.Deletes {
		m[id] = true
	}
	return m
}

func (v *validator) uniques() error {
	for _, nt := range v.cat.Nodes {
		td := v.node(nt.Name)
		if td == nil || len(td.Upserts) == 0 {
			continue
		}
		var cons [][]string
		if len(nt.Key) > 0 {
			cons = append(cons, nt.Key)
		}
		for _, u := range nt.Uniques {
			if !sameCols(u, nt.Key) {
				cons = append(cons, u)
			}
		}
		for i, cols := range cons {
			// A @key tuple determines the id, so a committed holder of the
			// same key is the same entity: only non-key uniques are checked
			// against committed state.
			isKey := i == 0 && len(nt.Key) > 0
			if err := v.unique(snapshot.NodeKey(nt.Name), nt.Name, cols, nodeTupleTypes(nt, cols), td, !isKey); err != nil {
				return err
			}
		}
	}
	for _, et := range v.cat.Edges {
		td := v.edge(et.Name)
		if td == nil || len(td.Upserts) == 0 {
			continue
		}
		for _, cols := range et.Uniques {
			if err := v.unique(snapshot.EdgeKey(et.Name), et.Name, cols, edgeTupleTypes(et, cols), td, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameCols(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// unique checks one uniqueness constraint on the final coalesced images of
// td: two staged ids holding the same tuple, or a staged row taking a tuple
// held by a committed row that survives the change. Rows with any null
// jsonMember are exempt.
func (v *validator) unique(typeKey, typeName string, cols []string, types []schema.Type, td *TypeDelta, againstCommitted bool) error {
	// TupleKey -> first staged id, made at the first tuple without nulls:
	// a load's skeletons hold no @key values (its ids are unique), and a
	// map sized for a million images, never filled, was most of what its
	// validation allocated.
	var held map[string]string
	var superseded map[string]bool
	checkCommitted := againstCommitted && !td.Replace
	if checkCommitted {
		superseded = supersededIDs(td)
	}
	for i, r := range td.Upserts {
		tuple := td.tuple(i, cols, r)
		if tupleHasNull(tuple) {
			continue
		}
		k := value.TupleKey(tuple)
		if held == nil {
			held = make(map[string]string, len(td.Upserts)-i)
		}
		if other, ok := held[k]; ok && other != r.ID {
			return uniqueError(typeName, cols, types, tuple, other, r.ID)
		}
		held[k] = r.ID
		if !checkCommitted {
			continue
		}
		ids, err := v.committed.LookupUnique(v.ctx, typeKey, cols, tuple)
		if err != nil {
			return err
		}
		for _, other := range ids {
			// A superseded committed row no longer holds its old value: a
			// value freed in the same change may be reused, and the same id
			// keeping its value is not a violation.
			if other == r.ID || superseded[other] {
				continue
			}
			return uniqueError(typeName, cols, types, tuple, other, r.ID)
		}
	}
	return nil
}

// keyTuple returns the row's values for cols; "src" and "dst" name the edge
// endpoints unless the row has a property of that name.
func rowTuple(cols []string, r Row) []any {
	t := make([]any, len(cols))
	for i, c := range cols {
		val, ok := r.Values[c]
		if !ok {
			switch c {
			case "src":
				val = r.Src
			case "dst":
				val = r.Dst
			}
		}
		t[i] = val
	}
	return t
}

// tuple returns the values of cols of the i-th upserted image: from
// KeepValues when the delta keeps them there, else as rowTuple.
func (td *TypeDelta) tuple(i int, cols []string, r Row) []any {
	if td.Keep == nil {
		return rowTuple(cols, r)
	}
	t := make([]any, len(cols))
	for j, c := range cols {
		if k := slices.Index(td.Keep, c); k >= 0 {
			t[j] = td.KeepValues[i*len(td.Keep)+k]
			continue
		}
		switch c {
		case "src":
			t[j] = r.Src
		case "dst":
			t[j] = r.Dst
		}
	}
	return t
}

func tupleHasNull(tuple []any) bool {
	for _, x := range tuple {
		if x == nil {
			return true
		}
	}
	return false
}

// nodeTupleTypes returns the types of a node table's columns cols (all
// properties).
func nodeTupleTypes(nt *schema.NodeType, cols []string) []schema.Type {
	return tupleTypes(nt.Prop, cols)
}

// edgeTupleTypes returns the types of an edge table's columns cols; src
// and dst, which are no properties, are node ids: Strings.
func edgeTupleTypes(et *schema.EdgeType, cols []string) []schema.Type {
	return tupleTypes(et.Prop, cols)
}

// tupleTypes returns the type of each of cols as prop finds it, String
// for a column that is no property (an edge's src or dst; a node's
// unique columns are all properties).
func tupleTypes(prop func(string) (*schema.Property, bool), cols []string) []schema.Type {
	ts := make([]schema.Type, len(cols))
	for i, c := range cols {
		ts[i] = schema.Type{Kind: schema.KindString}
		if p, ok := prop(c); ok {
			ts[i] = p.Type
		}
	}
	return ts
}

// uniqueError renders `@unique violation on T.col: value 'v' held by 'a'
// and 'b'`; composite constraints render as T.(a, b) and value '(x, y)'.
func uniqueError(typeName string, cols []string, types []schema.Type, tuple []any, other, id string) error {
	colText, valText := cols[0], ""
	if len(cols) == 1 {
		valText = value.FormatValue(types[0], tuple[0])
	} else {
		colText = "(" + strings.Join(cols, ", ") + ")"
		parts := make([]string, len(tuple))
		for i, x := range tuple {
			parts[i] = value.FormatValue(types[i], x)
		}
		valText = "(" + strings.Join(parts, ", ") + ")"
	}
	return &ConstraintError{Kind: ConstraintUnique, Type: typeName, Prop: colText, ID: id,
		Msg: fmt.Sprintf("@unique violation on %s.%s: value '%s' held by '%s' and '%s'", typeName, colText, valText, other, id)}
}

// nodeExists reports whether a node is in the result image: staged by the
// change, or committed, not deleted and its type not replaced.
func (v *validator) nodeExists(nodeType, id string) (bool, error) {
	ck := nodeType + "\x00" + id
	if ok, hit := v.exists[ck]; hit {
		return ok, nil
	}
	ok, err := v.nodeExistsUncached(nodeType, id)
	if err != nil {
		return false, err
	}
	v.exists[ck] = ok
	return ok, nil
}

func (v *validator) nodeExistsUncached(nodeType, id string) (bool, error) {
	td := v.node(nodeType)
	if td != nil {
		if _, ok := td.lookup(id); ok {
			return true, nil
		}
		if td.Replace || v.deleted(nodeType)[id] {
			return false, nil
		}
	}
	return v.committed.NodeExists(v.ctx, nodeType, id)
}

func refError(et *schema.EdgeType, edgeID string, end snapshot.Endpoint, nodeID string) error {
	nodeType := et.From
	if end == snapshot.Dst {
		nodeType = et.To
	}
	return &ConstraintError{Kind: ConstraintReference, Type: et.Name, Prop: end.String(), ID: edgeID,
		Msg: fmt.Sprintf("%s '%s' not found in %s", end, nodeID, nodeType)}
}

// references checks that every staged edge has both endpoints in the
// result image, and that no surviving committed edge points at a node the
// change removes (node deletes in mutations cascade, so this fires for
// loads and merges).
func (v *validator) references() error {
	for _, et := range v.cat.Edges {
		td := v.edge(et.Name)
		if td == nil {
			continue
		}
		for _, r := range td.Upserts {
			for _, end := range []struct {
				e    snapshot.Endpoint
				typ  string
				node string
			}{{snapshot.Src, et.From, r.Src}, {snapshot.Dst, et.To, r.Dst}} {
				ok, err := v.nodeExists(end.typ, end.node)
				if err != nil {
					return err
				}
				if !ok {
					return refError(et, r.ID, end.e, end.node)
				}
			}
		}
	}
	for _, nt := range v.cat.Nodes {
		td := v.node(nt.Name)
		if td == nil || len(td.Deletes) == 0 {
			continue
		}
		for _, et := range v.cat.Edges {
			for _, end := range []snapshot.Endpoint{snapshot.Src, snapshot.Dst} {
				if (end == snapshot.Src && et.From != nt.Name) || (end == snapshot.Dst && et.To != nt.Name) {
					continue
				}
				if err := v.orphans(et, end, nt.Name, td); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (v *validator) orphans(et *schema.EdgeType, end snapshot.Endpoint, nodeType string, nodes *TypeDelta) error {
	etd := v.edge(et.Name)
	if etd != nil && etd.Replace {
		return nil // committed edges of this type are gone; staged ones were checked
	}
	var superseded map[string]bool
	if etd != nil {
		superseded = supersededIDs(etd)
	}
	for _, id := range nodes.Deletes {
		if ok, err := v.nodeExists(nodeType, id); err != nil {
			return err
		} else if ok {
			continue // re-staged by the same change
		}
		edgeIDs, err := v.committed.EdgeIDs(v.ctx, et.Name, end, id)
		if err != nil {
			return err
		}
		for _, eid := range edgeIDs {
			if !superseded[eid] {
				return refError(et, eid, end, id)
			}
		}
	}
	return nil
}

// cards checks @card for every source the change touches: sources of
// staged edges, committed sources of deleted or re-staged (possibly moved)
// edges, and TypeDelta.Vacated. The post-change out-degree counts each edge
// id once: staged edges from the source plus committed ones the change does
// not supersede.
func (v *validator) cards() error {
	for _, et := range v.cat.Edges {
		td := v.edge(et.Name)
		if td == nil || (et.Card.Min == 0 && et.Card.Unbounded) {
			continue
		}
		var order []string
		seen := map[string]bool{}
		touch := func(src string) {
			if !seen[src] {
				seen[src] = true
				order = append(order, src)
			}
		}
		staged := map[string]int{}
		for _, r := range td.Upserts {
			staged[r.Src]++
			touch(r.Src)
		}
		if !td.Replace {
			for _, id := range append(upsertIDs(td), td.Deletes...) {
				src, _, ok, err := v.committed.EdgeEnds(v.ctx, et.Name, id)
				if err != nil {
					return err
				}
				if ok {
					touch(src)
				}
			}
		}
		for _, src := range td.Vacated {
			touch(src)
		}
		var superseded map[string]bool
		if !td.Replace {
			superseded = supersededIDs(td)
		}
		for _, src := range order {
			n := int64(staged[src])
			if !td.Replace {
				ids, err := v.committed.EdgeIDs(v.ctx, et.Name, snapshot.Src, src)
				if err != nil {
					return err
				}
				for _, id := range ids {
					if !superseded[id] {
						n++
					}
				}
			}
			if et.Card.Allows(n) {
				continue
			}
			if n == 0 {
				// A source deleted by the change has no out-degree to
				// bound; otherwise deleting any node with a @card(1..)
				// edge would be impossible.
				ok, err := v.nodeExists(et.From, src)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			bound := fmt.Sprintf("min %d", et.Card.Min)
			if n > et.Card.Min {
				bound = fmt.Sprintf("max %d", et.Card.Max)
			}
			return &ConstraintError{Kind: ConstraintCard, Type: et.Name, ID: src,
				Msg: fmt.Sprintf("@card violation on edge %s: source '%s' has %d edges (%s)", et.Name, src, n, bound)}
		}
	}
	return nil
}

func upsertIDs(td *TypeDelta) []string {
	ids := make([]string, len(td.Upserts))
	for i, r := range td.Upserts {
		ids[i] = r.ID
	}
	return ids
}
