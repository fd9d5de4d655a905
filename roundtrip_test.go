package omnigraph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph"
)

// The round-trip property test: random values of every schema type, at sizes
// that cross Parquet row-group (65,536 rows) and load-chunk boundaries, go
// through every write path — a streaming load of several chunks, automatic
// compaction, optimize, a three-way merge that adopts changed fragments, keyed
// mutations — and are read back through query and export value by value.
// It guards the class of bug where vectors past the first row group of a
// fragment held other rows' values (docs/storage-format.md, "Row groups").

// rtProp is one property of the round-trip node type.
type rtProp struct {
	name, pg string // property name and .pg type
	kind     string // value kind for generation and comparison
	elem     string // element kind of a list
	dim      int    // vector dimension
	nullable bool
	noQuery  bool // not projectable in a read query (Blob)
}

func rtProps() []rtProp {
	var ps []rtProp
	scalars := []struct{ kind, pg string }{
		{"string", "String"}, {"bool", "Bool"}, {"i32", "I32"}, {"i64", "I64"}, {"u32", "U32"}, {"u64", "U64"},
		{"f32", "F32"}, {"f64", "F64"}, {"date", "Date"}, {"datetime", "DateTime"}, {"enum", "enum(red, green, blue)"},
	}
	for _, s := range scalars {
		ps = append(ps, rtProp{name: "p_" + s.kind, pg: s.pg, kind: s.kind})
		ps = append(ps, rtProp{name: "n_" + s.kind, pg: s.pg + "?", kind: s.kind, nullable: true})
		if s.kind != "enum" {
			ps = append(ps, rtProp{name: "l_" + s.kind, pg: "[" + s.pg + "]", kind: "list", elem: s.kind})
			ps = append(ps, rtProp{name: "ln_" + s.kind, pg: "[" + s.pg + "]?", kind: "list", elem: s.kind, nullable: true})
		}
	}
	ps = append(ps, rtProp{name: "p_blob", pg: "Blob", kind: "blob", noQuery: true})
	ps = append(ps, rtProp{name: "n_blob", pg: "Blob?", kind: "blob", nullable: true, noQuery: true})
	for _, d := range []int{1, 3, 16} {
		ps = append(ps, rtProp{name: fmt.Sprintf("v%d", d), pg: fmt.Sprintf("Vector(%d)", d), kind: "vector", dim: d})
		ps = append(ps, rtProp{name: fmt.Sprintf("vn%d", d), pg: fmt.Sprintf("Vector(%d)?", d), kind: "vector", dim: d, nullable: true})
	}
	return ps
}

func rtSchema(ps []rtProp) string {
	var b strings.Builder
	b.WriteString("node Rec {\n  slug: String @key\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s: %s\n", p.name, p.pg)
	}
	b.WriteString("}\nedge Link: Rec -> Rec { w: F64?  tags: [String]? }\n")
	return b.String()
}

// rtValue draws a JSON input value of kind k for row.
func rtValue(r *rand.Rand, k string, row int) any {
	switch k {
	case "string":
		return fmt.Sprintf("s%d-%x-ü", row, r.Uint32())
	case "enum":
		return []string{"red", "green", "blue"}[r.IntN(3)]
	case "bool":
		return r.IntN(2) == 0
	case "i32":
		return int32(r.Uint32())
	case "i64":
		return int64(r.Uint64())
	case "u32":
		return r.Uint32()
	case "u64":
		return r.Uint64()
	case "f32":
		return float64(int32(r.Uint32()>>8)) / 8 // exactly representable in float32
	case "f64":
		return r.NormFloat64() * 1e6
	case "date":
		return time.Unix(int64(r.IntN(60000)-20000)*86400, 0).UTC().Format("2006-01-02")
	case "datetime":
		return time.UnixMilli(int64(r.IntN(1<<41)) - 1<<40).UTC().Format("2006-01-02T15:04:05.000Z")
	case "blob":
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return "base64:" + base64.StdEncoding.EncodeToString(b)
	}
	panic("no generator for " + k)
}

func rtRow(r *rand.Rand, ps []rtProp, row int) map[string]any {
	data := map[string]any{"slug": fmt.Sprintf("r%07d", row)}
	for _, p := range ps {
		if p.nullable && r.IntN(4) == 0 {
			continue // missing = null
		}
		switch p.kind {
		case "vector":
			v := make([]float64, p.dim)
			v[0] = float64(row) // the row number: a misplaced vector shows at once
			for i := 1; i < p.dim; i++ {
				v[i] = float64(r.Float32())
			}
			data[p.name] = v
		case "list":
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = rtValue(r, p.elem, row)
			}
			data[p.name] = l
		default:
			data[p.name] = rtValue(r, p.kind, row)
		}
	}
	return data
}

// rtCanon renders a value of kind k — JSON input, JSON output or a Go value
// from a query — in one canonical string form.
func rtCanon(t *testing.T, p rtProp, kind string, v any) string {
	if v == nil {
		return "null"
	}
	switch kind {
	case "list", "vector":
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		case []float32:
			for _, f := range x {
				items = append(items, f)
			}
		case []float64:
			for _, f := range x {
				items = append(items, f)
			}
		default:
			t.Fatalf("%s: unexpected %T for a %s", p.name, v, kind)
		}
		ek := p.elem
		if kind == "vector" {
			ek = "f32"
		}
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = rtCanon(t, p, ek, it)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case "i32", "i64", "u32", "u64":
		var s string
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case string:
			s = x
		default:
			s = fmt.Sprint(x)
		}
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			t.Fatalf("%s: %q is not an integer", p.name, s)
		}
		return n.String()
	case "f32", "f64":
		var f float64
		switch x := v.(type) {
		case json.Number:
			var err error
			if f, err = x.Float64(); err != nil {
				t.Fatal(err)
			}
		case float32:
			f = float64(x)
		case float64:
			f = x
		default:
			t.Fatalf("%s: unexpected %T for a float", p.name, v)
		}
		if kind == "f32" {
			f = float64(float32(f))
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case "date":
		switch x := v.(type) {
		case string:
			return x
		case time.Time:
			return x.UTC().Format("2006-01-02")
		}
	case "datetime":
		switch x := v.(type) {
		case string:
			tm, err := time.Parse(time.RFC3339Nano, x)
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			return strconv.FormatInt(tm.UnixMilli(), 10)
		case time.Time:
			return strconv.FormatInt(x.UnixMilli(), 10)
		}
	}
	return fmt.Sprint(v)
}

// rtModel is the expected content of the Rec table: slug → JSON data.
type rtModel map[string]map[string]any

func (m rtModel) jsonl(slugs []string) []byte {
	var b bytes.Buffer
	for _, s := range slugs {
		line, _ := json.Marshal(map[string]any{"type": "Rec", "data": m[s]})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// rtCheck compares the graph's Rec table with want through export and, when
// viaQuery is set, through a read query projecting every property.
// rtCheckReopened is rtCheck (with queries) on a fresh handle on g's graph,
// so nothing is served from g's caches.
func rtCheckReopened(t *testing.T, ctx context.Context, g *omnigraph.Graph, ps []rtProp, want rtModel, stage string) {
	t.Helper()
	g2, err := omnigraph.Open(ctx, g.URI(), omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rtCheck(t, ctx, g2, ps, want, stage, true)
}

func rtCheck(t *testing.T, ctx context.Context, g *omnigraph.Graph, ps []rtProp, want rtModel, stage string, viaQuery bool) {
	t.Helper()
	// Export: every property, nulls omitted.
	var out bytes.Buffer
	if err := g.Export(ctx, omnigraph.Target{}, []string{"Rec"}, &out); err != nil {
		t.Fatalf("%s: export: %v", stage, err)
	}
	seen := 0
	bad := 0
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var rec struct {
			Data map[string]any `json:"data"`
		}
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("%s: export line: %v", stage, err)
		}
		slug, _ := rec.Data["slug"].(string)
		w, ok := want[slug]
		if !ok {
			t.Fatalf("%s: export holds unexpected %q", stage, slug)
		}
		seen++
		for _, p := range ps {
			if g, e := rtCanon(t, p, p.kind, rec.Data[p.name]), rtCanon(t, p, p.kind, w[p.name]); g != e {
				if bad++; bad <= 5 {
					t.Errorf("%s: export %s.%s = %.80s, want %.80s", stage, slug, p.name, g, e)
				}
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("%s: export has %d rows, want %d", stage, seen, len(want))
	}

	if !viaQuery {
		return
	}
	// Query: every projectable property.
	var cols []string
	var qps []rtProp
	for _, p := range ps {
		if !p.noQuery {
			cols = append(cols, "$r."+p.name)
			qps = append(qps, p)
		}
	}
	src := "query all() { match { $r: Rec } return { $r.slug, " + strings.Join(cols, ", ") + " } }"
	res, err := g.Query(ctx, omnigraph.Target{}, src, "", nil)
	if err != nil {
		t.Fatalf("%s: query: %v", stage, err)
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("%s: query returned %d rows, want %d", stage, len(res.Rows), len(want))
	}
	for _, row := range res.Rows {
		slug := row[0].(string)
		w := want[slug]
		for i, p := range qps {
			if g, e := rtCanon(t, p, p.kind, row[i+1]), rtCanon(t, p, p.kind, w[p.name]); g != e {
				if bad++; bad <= 10 {
					t.Errorf("%s: query %s.%s = %.80s, want %.80s", stage, slug, p.name, g, e)
				}
			}
		}
	}
	if bad > 10 {
		t.Fatalf("%s: %d mismatching values", stage, bad)
	}
}

// rtInit creates an empty graph of the round-trip schema over ps in a
// temporary directory.
func rtInit(t *testing.T, name string, ps []rtProp) *omnigraph.Graph {
	t.Helper()
	g, err := omnigraph.Init(context.Background(), filepath.Join(t.TempDir(), name+".omni"), name+".pg", rtSchema(ps), "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// rtLoaded is a graph of ps (rtInit) holding n rows drawn from r (rtRows),
// loaded in one overwrite, and its model.
func rtLoaded(t *testing.T, name string, ps []rtProp, r *rand.Rand, n int) (*omnigraph.Graph, rtModel) {
	t.Helper()
	g := rtInit(t, name, ps)
	want, slugs := rtRows(r, ps, n)
	if _, err := g.Load(context.Background(), bytes.NewReader(want.jsonl(slugs)), omnigraph.LoadOptions{Mode: omnigraph.Overwrite}); err != nil {
		t.Fatal(err)
	}
	return g, want
}

// rtRows draws rows 0..n-1 of ps: the model and the slugs in row order.
func rtRows(r *rand.Rand, ps []rtProp, n int) (rtModel, []string) {
	want := rtModel{}
	var slugs []string
	for i := 0; i < n; i++ {
		d := rtRow(r, ps, i)
		want[d["slug"].(string)] = d
		slugs = append(slugs, d["slug"].(string))
	}
	return want, slugs
}

func TestRoundTripEveryTypeEveryWritePath(t *testing.T) {
	sizes := []int{1, 65537} // one row group, just past one (140,000 rows: table.TestRoundTripProperty)
	if testing.Short() {
		sizes = []int{1, 1500}
	}
	ps := rtProps()
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ctx := context.Background()
			r := rand.New(rand.NewPCG(uint64(n), 9))
			// 1. A streaming load (several chunks for the large sizes).
			g, want := rtLoaded(t, "rt", ps, r, n)
			rtCheck(t, ctx, g, ps, want, "load", true)

			// 2. Appends of small batches until automatic compaction folds
			// them (past three small fragments), then optimize.
			next := n
			for b := 0; b < 4; b++ {
				var add []string
				for i := 0; i < 50; i++ {
					d := rtRow(r, ps, next)
					next++
					want[d["slug"].(string)] = d
					add = append(add, d["slug"].(string))
				}
				if _, err := g.Load(ctx, bytes.NewReader(want.jsonl(add)), omnigraph.LoadOptions{Mode: omnigraph.Append}); err != nil {
					t.Fatal(err)
				}
			}
			rtCheck(t, ctx, g, ps, want, "appends+auto-compaction", false)
			if _, err := g.Optimize(ctx, ""); err != nil {
				t.Fatal(err)
			}
			rtCheck(t, ctx, g, ps, want, "optimize", false)

			// 3. Keyed updates of rows on both sides of a row-group boundary.
			upd := `query upd($slug: String, $f: F64, $v: Vector(3)) { update Rec set { p_f64: $f, v3: $v } where slug = $slug }`
			for _, row := range []int{0, n / 2, 65535, 65536, n - 1} {
				if row >= n {
					continue
				}
				slug := fmt.Sprintf("r%07d", row)
				v := []any{float64(row), 0.5, -0.25}
				if _, _, err := g.Mutate(ctx, "", upd, "", map[string]any{"slug": slug, "f": float64(row) + 0.5, "v": v}, omnigraph.MutateOptions{}); err != nil {
					t.Fatal(err)
				}
				want[slug]["p_f64"], want[slug]["v3"] = float64(row)+0.5, []any{float64(row), 0.5, -0.25}
			}
			rtCheck(t, ctx, g, ps, want, "mutate", false)

			// 4. A three-way merge: a side branch rewrites rows past the first
			// row group and adds rows; main changes another row meanwhile.
			if err := g.CreateBranch(ctx, "side", "main", ""); err != nil {
				t.Fatal(err)
			}
			var side []string
			picked := map[int]bool{}
			for _, row := range []int{n - 1, n / 3, 65536, 70000} {
				if row >= n || picked[row] {
					continue
				}
				picked[row] = true
				d := rtRow(r, ps, row)
				want[d["slug"].(string)] = d
				side = append(side, d["slug"].(string))
			}
			for i := 0; i < 20; i++ {
				d := rtRow(r, ps, next)
				next++
				want[d["slug"].(string)] = d
				side = append(side, d["slug"].(string))
			}
			if _, err := g.Load(ctx, bytes.NewReader(want.jsonl(side)), omnigraph.LoadOptions{Branch: "side", Mode: omnigraph.Merge}); err != nil {
				t.Fatal(err)
			}
			d := rtRow(r, ps, next)
			next++
			want[d["slug"].(string)] = d
			if _, err := g.Load(ctx, bytes.NewReader(want.jsonl([]string{d["slug"].(string)})), omnigraph.LoadOptions{Mode: omnigraph.Append}); err != nil {
				t.Fatal(err)
			}
			if _, err := g.Merge(ctx, "side", "main", ""); err != nil {
				t.Fatal(err)
			}
			rtCheck(t, ctx, g, ps, want, "merge", false)
			if _, err := g.Optimize(ctx, ""); err != nil {
				t.Fatal(err)
			}
			rtCheck(t, ctx, g, ps, want, "merge+optimize", false)

			// 5. A fresh handle reads the same (nothing served from caches).
			rtCheckReopened(t, ctx, g, ps, want, "reopen")
		})
	}
}

// TestRoundTripPlainTypesTypedLoad: a node type of plain scalars only (the
// kinds the bulk load's typed path converts without the value model:
// String, Bool, integers, floats, enum, each required and nullable) takes
// the typed path (internal/exec jsonl_typed.go, TestTypedRecordsMatchGeneral)
// and must read back value by value past one row group, through query and
// export, in this handle and a fresh one.
func TestRoundTripPlainTypesTypedLoad(t *testing.T) {
	n := 65537
	if testing.Short() {
		n = 1500
	}
	var ps []rtProp
	for _, p := range rtProps() {
		switch p.kind {
		case "string", "bool", "i32", "i64", "u32", "u64", "f32", "f64", "enum":
			ps = append(ps, p)
		}
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(n), 11))
	g, want := rtLoaded(t, "plain", ps, r, n)
	rtCheck(t, ctx, g, ps, want, "typed load", true)
	rtCheckReopened(t, ctx, g, ps, want, "typed load, reopen")
}
