package eval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/limits"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// memDense gives a snapshot.Mem the dense views of DenseSource, built from
// its tables (masks by this package's own scan), so the dense count can be
// compared with the row executor on any graph.
type memDense struct {
	*snapshot.Mem
	built int // dense node views built
}

func (m *memDense) PreferDense(context.Context, *query.Plan, []*query.Scan, map[string]any) (bool, error) {
	return true, nil
}

func (m *memDense) DenseNodes(ctx context.Context, typ string, _ *limits.Budget) (*snapshot.DenseNodes, error) {
	t, err := m.Nodes(ctx, typ)
	if err != nil {
		return nil, err
	}
	m.built++
	return snapshot.NewDenseNodes(typ, t.IDs), nil
}

func (m *memDense) DenseMask(ctx context.Context, d *snapshot.DenseNodes, o *query.Scan, params map[string]any, _ *limits.Budget) ([]uint64, bool, error) {
	if len(o.Filters) == 0 {
		return nil, true, nil
	}
	// Params are converted already: run the scan with them as literals'
	// values through a plan whose parameters accept them as they are.
	plan := &query.Plan{Name: "mask", Read: &query.Project{Input: o, Cols: []query.ProjCol{{Name: "id", Value: query.Operand{Kind: query.OpdID, Var: o.Var}}}},
		Columns: []query.Column{{Name: "id", Type: schema.Type{Kind: schema.KindString}}}}
	r := &runner{snap: m.Mem, params: params, args: map[*query.Argument]*argInput{}, inner: map[*query.AntiJoin]*layout{},
		argOf: map[*query.AntiJoin]*query.Argument{}, texts: map[textKey]*textIndex{}, fts: map[textKey]*ftsView{}, scores: map[string]map[int32]float64{}}
	out, err := r.output(ctx, plan.Read)
	if err != nil {
		return nil, false, err
	}
	st := &Stream{Columns: plan.Columns, out: out}
	mask := make([]uint64, (d.Len()+63)/64)
	err = st.Each(ctx, func(row []any) error {
		k, ok := d.Row(row[0].(string))
		if !ok {
			return fmt.Errorf("mask: unknown id %v", row[0])
		}
		mask[k>>6] |= 1 << (k & 63)
		return nil
	})
	return mask, true, err
}

func (m *memDense) DenseAdjacency(ctx context.Context, edge string, from, to *snapshot.DenseNodes, out, in bool, mem *limits.Budget) (*snapshot.DenseCSR, *snapshot.DenseCSR, error) {
	t, err := m.Edges(ctx, edge)
	if err != nil {
		return nil, nil, err
	}
	return snapshot.NewDenseAdjacency(t.Src, t.Dst, from, to, out, in, mem)
}

func (m *memDense) DenseColumns(ctx context.Context, d *snapshot.DenseNodes, props []string, fn func(row int32, vals []any) error) error {
	t, err := m.Nodes(ctx, d.Type)
	if err != nil {
		return err
	}
	vals := make([]any, len(props))
	for x := range int32(d.Len()) {
		for k, p := range props {
			vals[k] = t.Value(int(x), p)
		}
		if err := fn(x, vals); err != nil {
			return err
		}
	}
	return nil
}

// denseRunGraph is a random graph: persons with nullable ages and cities,
// Knows edges with parallel edges, self-loops and edges to deleted
// (absent) nodes, Lives edges to cities.
func denseRunGraph(t *testing.T, seed uint64, persons int) *runGraph {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	g := newRunGraph(t, `
node Person { name: String @key  age: I32?  city: String?  score: F64? }
node City { cname: String @key  size: I64? }
edge Knows: Person -> Person
edge Lives: Person -> City
`)
	for c := range 5 {
		g.node("City", fmt.Sprintf("c%d", c), "cname", fmt.Sprintf("c%d", c), "size", int64(rng.IntN(100)))
	}
	for i := range persons {
		kv := []any{"name", fmt.Sprintf("p%d", i)}
		if rng.IntN(6) > 0 {
			kv = append(kv, "age", int32(rng.IntN(90)))
		}
		if rng.IntN(6) > 0 {
			kv = append(kv, "city", fmt.Sprintf("c%d", rng.IntN(5)))
		}
		kv = append(kv, "score", rng.Float64())
		g.node("Person", fmt.Sprintf("p%d", i), kv...)
	}
	e := 0
	for i := range persons {
		for range rng.IntN(7) {
			d := fmt.Sprintf("p%d", rng.IntN(persons+persons/10)) // some ends are absent
			switch rng.IntN(10) {
			case 0:
				d = fmt.Sprintf("p%d", i)
			case 1:
				g.edge("Knows", fmt.Sprintf("e%d", e), fmt.Sprintf("p%d", i), d)
				e++
			}
			g.edge("Knows", fmt.Sprintf("e%d", e), fmt.Sprintf("p%d", i), d)
			e++
		}
		if rng.IntN(3) > 0 {
			g.edge("Lives", fmt.Sprintf("e%d", e), fmt.Sprintf("p%d", i), fmt.Sprintf("c%d", rng.IntN(6)))
			e++
		}
	}
	return g
}

// TestDenseCountMatchesRows compares the dense count (dense.go) with the
// row executor on random graphs, shape by shape.
func TestDenseCountMatchesRows(t *testing.T) {
	cases := []struct {
		name, body string
		dense      bool
	}{
		{"one hop", `$p: Person  $p knows $f } return { count($f) as c }`, true},
		{"far filter", `$p: Person  $p.age < 30  $p knows $f  $f.city = "c1" } return { count($f) as c, count($p) as d }`, true},
		{"float far filter", `$p: Person  $p knows $f  $f.score > 0.5 } return { count($f) as c }`, true},
		{"reverse", `$p: Person  $f knows $p  $p.age >= 40 } return { count($f) as c }`, true},
		{"undirected", `$p: Person  $p <knows> $f } return { count($f) as c }`, true},
		{"hops 1..2", `$p: Person  $p.city = "c2"  $p knows{1,2} $f } return { count($f) as c }`, true},
		{"hops 2..3", `$p: Person  $p knows{2,3} $f  $f.age > 10 } return { count($f) as c }`, true},
		{"undirected hops", `$p: Person  $p <knows>{1,3} $f } return { count($f) as c }`, true},
		{"chain", `$p: Person  $p knows $a  $a knows $b  $a.age != 3 } return { count($b) as c }`, true},
		{"star", `$p: Person  $p knows $a  $p lives $c  $c.size > 20 } return { count($c) as c }`, true},
		{"into cities", `$c: City  $p lives $c  $p knows $f } return { count($f) as c }`, true},
		{"limited", `$p: Person  $p knows $f } return { count($f) as c } limit 1`, true},
		{"no rows", `$p: Person  $p.age > 1000  $p knows $f } return { count($f) as c }`, true},
		{"edge variable", `$p: Person  $p $e:knows $f } return { count($e) as c }`, true},
		{"edge variable, undirected", `$p: Person  $p $e:<knows> $f  $f.age > 20 } return { count($e) as c, count($f) as d }`, true},
		{"edge variable, reverse, by root", `$p: Person  $f $e:knows $p } return { $p.city, count($e) as c, sum($p.score) as s }`, true},
		{"edge variable in a chain", `$p: Person  $p knows $a  $a $e:knows $b  $b.city = "c1" } return { count($b) as c }`, true},
		{"edge variable, far key", `$p: Person  $p $e:knows $f } return { $f.city, count($e) as c }`, false},
		{"grouped", `$p: Person  $p knows $f } return { $p.city, count($f) as c }`, true},
		{"grouped, filtered, ordered", `$p: Person  $p.age > 20  $p knows{1,2} $f  $f.city != "c0" } return { $p.city, $p.age, count($f) as c, count($p) as d } order { c desc } limit 5`, true},
		{"grouped by id", `$p: Person  $p <knows> $f } return { count($f) as c, $p } order { c desc } limit 3`, true},
		{"grouped, key first", `$c: City  $p lives $c } return { $c.size, count($p) as n }`, true},
		{"grouped, no rows", `$p: Person  $p.age > 1000  $p knows $f } return { $p.city, count($f) as c }`, true},
		{"grouped by the far end", `$p: Person  $p knows $f } return { $f.city, count($p) as c }`, true},
		{"two variables", `$p: Person  $p knows $f  $f.age > $p.age } return { count($f) as c }`, false},
		{"sum of the far end", `$p: Person  $p knows $f } return { sum($f.age) as s }`, true},
		// Keys and arguments of non-root variables (dense_aggregate.go):
		// first-seen groups and float sums in the row path's order.
		{"float sums of the far end", `$p: Person  $p.age < 50  $p knows $f } return { sum($f.score) as s, avg($f.score) as a, min($f.name) as lo, max($f.age) as hi, count($f.city) as n }`, true},
		{"far float sum by far city", `$p: Person  $p knows{1,2} $f  $f.age > 10 } return { $f.city, sum($f.score) as s, count($p) as c }`, true},
		{"keys of both ends", `$p: Person  $p <knows> $f } return { $p.city, $f.city, avg($f.score) as a, sum($p.score) as b }`, true},
		{"grouped by the far id", `$p: Person  $p knows $f } return { $f, count($p) as c } order { c desc } limit 7`, true},
		{"middle of a chain", `$p: Person  $p knows $a  $a knows $b  $b.age != 3 } return { $a.city, sum($b.score) as s, min($p.name) as m }`, true},
		{"city of a star", `$p: Person  $p knows $a  $p lives $c } return { $c.cname, avg($a.score) as s, count($a) as n }`, true},
		{"far aggregates, no rows", `$p: Person  $p.age > 1000  $p knows $f } return { sum($f.score) as s, max($f.city) as m, count($f) as c }`, true},
		{"far keys, no rows", `$p: Person  $p.age > 1000  $p knows $f } return { $f.city, count($f) as c }`, true},
		{"root aggregates", `$p: Person  $p knows{1,2} $f } return { sum($p.age) as s, avg($p.score) as a, min($p.city) as lo, max($p.age) as hi, count($p.city) as n, count($f) as c }`, true},
		{"float sum by city", `$p: Person  $p.age < 60  $p knows $f  $f.age > 20 } return { $p.city, sum($p.score) as s, avg($p.age) as a } order { $p.city }`, true},
		{"root aggregates, no rows", `$p: Person  $p.age > 1000  $p knows $f } return { sum($p.age) as s, min($p.city) as m, count($f) as c }`, true},
		{"avg by id", `$p: Person  $p <knows> $f } return { $p, avg($p.score) as a } order { a desc } limit 4`, true},
		{"cycle", `$p: Person  $p knows $f  $f knows $p } return { count($f) as c }`, true},
		{"triangle by city", `$a: Person  $a <knows> $b  $b knows $c  $c knows $a } return { $c.city, count($a) as n, sum($b.score) as s }`, true},
		{"cycle within hops", `$p: Person  $p.age < 40  $p knows $f  $f knows{1,2} $p } return { $f.city, count($p) as n }`, true},
	}
	for _, seed := range []uint64{1, 2, 3} {
		g := denseRunGraph(t, seed, 300)
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%d", tc.name, seed), func(t *testing.T) {
				checkDenseRun(t, g, tc.body, tc.dense)
			})
		}
	}
}

// checkDenseRun runs the query of match body body on g by the row
// executor and on dense views, requires the dense path to be taken or not
// as dense says and the same rows in the same order, and returns the
// query's plan and rows.
func checkDenseRun(t *testing.T, g *runGraph, body string, dense bool) (*query.Plan, [][]any) {
	t.Helper()
	ctx := context.Background()
	plan, err := query.CompileQuery(g.cat, "q.gq", "query q() { match { "+body+" }", "q")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(ctx, g.ms, plan, nil, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	md := &memDense{Mem: g.ms}
	got, err := Run(ctx, md, plan, nil, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows", len(want.Rows))
	if (md.built > 0) != dense {
		t.Fatalf("dense path taken %v, want %v", md.built > 0, dense)
	}
	if !reflect.DeepEqual(got.Rows, want.Rows) {
		t.Fatalf("dense %d rows %v\nrows %d rows %v", len(got.Rows), got.Rows, len(want.Rows), want.Rows)
	}
	return plan, want.Rows
}

// TestDenseCountBudget: the dense views are charged to the query's memory
// budget; a budget too small for them stops the query with *limits.Error.
func TestDenseCountBudget(t *testing.T) {
	g := denseRunGraph(t, 9, 2000)
	plan, err := query.CompileQuery(g.cat, "q.gq", `query q() { match { $p: Person  $p knows{1,2} $f } return { count($f) as c } }`, "q")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), &memDense{Mem: g.ms}, plan, nil, Options{MemoryBytes: 16 << 10})
	var le *limits.Error
	if !errors.As(err, &le) || le.Resource != ResourceMemory {
		t.Fatalf("err %v, want a %s limit", err, ResourceMemory)
	}
}
