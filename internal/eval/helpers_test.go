package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/value"
)

// runGraph builds a snapshot.Mem by hand for executor tests: nodes and
// edges are given with their ids and property values in the value model.
type runGraph struct {
	t   testing.TB
	cat *schema.Catalog
	ms  *snapshot.Mem
}

func newRunGraph(t testing.TB, pg string) *runGraph {
	t.Helper()
	cat, err := schema.Compile("test.pg", pg)
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	return &runGraph{t: t, cat: cat, ms: &snapshot.Mem{Cat: cat, NodeT: map[string]*snapshot.NodeTable{}, EdgeT: map[string]*snapshot.EdgeTable{}}}
}

func kvMap(t testing.TB, kv []any) map[string]any {
	t.Helper()
	if len(kv)%2 != 0 {
		t.Fatalf("odd key/value list %v", kv)
	}
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// node adds node id of type typ; kv alternates property names and values.
func (g *runGraph) node(typ, id string, kv ...any) *runGraph {
	nt, ok := g.cat.Node(typ)
	if !ok {
		g.t.Fatalf("unknown node type %s", typ)
	}
	tbl := g.ms.NodeT[typ]
	if tbl == nil {
		tbl = &snapshot.NodeTable{Type: nt, Cols: map[string][]any{}}
		g.ms.NodeT[typ] = tbl
	}
	vals := kvMap(g.t, kv)
	tbl.IDs = append(tbl.IDs, id)
	for _, p := range nt.Props {
		tbl.Cols[p.Name] = append(tbl.Cols[p.Name], vals[p.Name])
	}
	return g
}

// edge adds edge id of type typ from src to dst.
func (g *runGraph) edge(typ, id, src, dst string, kv ...any) *runGraph {
	et, ok := g.cat.Edge(typ)
	if !ok {
		g.t.Fatalf("unknown edge type %s", typ)
	}
	tbl := g.ms.EdgeT[et.Name]
	if tbl == nil {
		tbl = &snapshot.EdgeTable{Type: et, Cols: map[string][]any{}}
		g.ms.EdgeT[et.Name] = tbl
	}
	vals := kvMap(g.t, kv)
	tbl.IDs = append(tbl.IDs, id)
	tbl.Src = append(tbl.Src, src)
	tbl.Dst = append(tbl.Dst, dst)
	for _, p := range et.Props {
		tbl.Cols[p.Name] = append(tbl.Cols[p.Name], vals[p.Name])
	}
	return g
}

func date(t testing.TB, s string) int32 {
	t.Helper()
	return mustParse(t, "date", s, value.ParseDate)
}

func datetime(t testing.TB, s string) int64 {
	t.Helper()
	return mustParse(t, "datetime", s, value.ParseDateTime)
}

// mustParse parses s with parse, failing the test when s is not a valid
// what.
func mustParse[T any](t testing.TB, what, s string, parse func(string) (T, bool)) T {
	t.Helper()
	v, ok := parse(s)
	if !ok {
		t.Fatalf("bad %s %q", what, s)
	}
	return v
}

// loadJSONL builds a snapshot.Mem from a .pg and a graph-batch JSONL file
// (for the upstream fixtures); edges without data.id get e0001, e0002, ….
func loadJSONL(t testing.TB, pgPath, jsonlPath string) *runGraph {
	t.Helper()
	pg, err := os.ReadFile(pgPath)
	if err != nil {
		t.Fatal(err)
	}
	g := newRunGraph(t, string(pg))
	f, err := os.Open(jsonlPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A minimal reader of the graph-batch format for fixtures: values go
	// through the loader's converter, keyed node ids come from the key.
	dec := json.NewDecoder(f)
	dec.UseNumber()
	n := 0
	for dec.More() {
		var rec struct {
			Type, Edge, From, To string
			Data                 map[string]any
		}
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("%s: %v", filepath.Base(jsonlPath), err)
		}
		convert := func(props []*schema.Property) (string, []any) {
			id, _ := rec.Data["id"].(string)
			var kv []any
			for _, p := range props {
				raw, ok := rec.Data[p.Name]
				if !ok {
					continue
				}
				v, err := value.ConvertJSON(p.Name, p.Type, raw)
				if err != nil {
					t.Fatalf("%s: %v", filepath.Base(jsonlPath), err)
				}
				kv = append(kv, p.Name, v)
			}
			return id, kv
		}
		if rec.Edge == "" {
			nt, ok := g.cat.Node(rec.Type)
			if !ok {
				t.Fatalf("%s: unknown node type %s", filepath.Base(jsonlPath), rec.Type)
			}
			id, kv := convert(nt.Props)
			if len(nt.Key) > 0 {
				kid, err := nt.NodeID(kvMap(t, kv))
				if err != nil {
					t.Fatalf("%s: %v", filepath.Base(jsonlPath), err)
				}
				id = kid
			}
			g.node(nt.Name, id, kv...)
			continue
		}
		et, ok := g.cat.Edge(rec.Edge)
		if !ok {
			t.Fatalf("%s: unknown edge type %s", filepath.Base(jsonlPath), rec.Edge)
		}
		n++
		id, kv := convert(et.Props)
		if id == "" {
			id = fmt.Sprintf("e%04d", n)
		}
		g.edge(et.Name, id, rec.From, rec.To, kv...)
	}
	return g
}

// testNow is the fixed instant now() evaluates to in tests.
var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// plan compiles the query q of src against g's catalog, failing tb on
// an error.
func (g *runGraph) plan(tb testing.TB, src string) *query.Plan {
	tb.Helper()
	p, err := query.CompileQuery(g.cat, "q.gq", src, "q")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// run compiles the query named "q" in src and runs it with params given as
// a JSON object (decoded like the CLI does, numbers kept exact).
func (g *runGraph) run(src, params string) (*Result, error) {
	plan, err := query.CompileQuery(g.cat, "q.gq", src, "q")
	if err != nil {
		return nil, err
	}
	var pm map[string]any
	if params != "" {
		dec := json.NewDecoder(strings.NewReader(params))
		dec.UseNumber()
		if err := dec.Decode(&pm); err != nil {
			return nil, err
		}
	}
	return Run(context.Background(), g.ms, plan, pm, Options{Now: testNow})
}

// rowStrings renders each row as its cells' JSON joined by ",".
func rowStrings(t testing.TB, res *Result) []string {
	t.Helper()
	out := make([]string, len(res.Rows))
	for i, row := range res.Rows {
		cells := make([]string, len(row))
		for j, v := range row {
			b, err := value.EncodeJSON(res.Columns[j].Type, v)
			if err != nil {
				t.Fatalf("encode %s: %v", res.Columns[j].Name, err)
			}
			cells[j] = string(b)
		}
		out[i] = strings.Join(cells, ",")
	}
	return out
}

// runCase is one query with its expected rows: ordered when ordered is
// true (spec notation […]), else compared as a bag ({…}).
type runCase struct {
	name    string
	src     string
	params  string
	want    []string
	ordered bool
	cols    string // expected column names joined by ",", if set
	err     string // expected error substring, if set
}

func checkRunCases(t *testing.T, g *runGraph, cases []runCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := g.run(tc.src, tc.params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.cols != "" {
				var names []string
				for _, c := range res.Columns {
					names = append(names, c.Name)
				}
				if got := strings.Join(names, ","); got != tc.cols {
					t.Fatalf("columns = %s, want %s", got, tc.cols)
				}
			}
			got := rowStrings(t, res)
			want := slices.Clone(tc.want)
			if want == nil {
				want = []string{}
			}
			if !tc.ordered {
				slices.Sort(got)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("rows =\n  %q\nwant\n  %q", got, want)
			}
		})
	}
}
