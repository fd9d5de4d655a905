package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func jsonDecoder(b []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec
}

// compileAt compiles src (named file) against the schema of snap.
func compileAt(tb testing.TB, snap *snapshot.Snapshot, file, src string) *query.File {
	tb.Helper()
	f, err := query.Compile(snap.Catalog(), file, src)
	if err != nil {
		tb.Fatalf("compile %s: %v", src, err)
	}
	return f
}

// must returns v, or fails tb with err when err is set: the tail of the
// helpers below, which return what a call of the package returned.
func must[T any](tb testing.TB, v T, err error) T {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// mustInit is Init (with a background context) that fails tb on error.
func mustInit(tb testing.TB, st storage.Store, file, src, actor string, o Options) *Graph {
	tb.Helper()
	g, err := Init(context.Background(), st, file, src, actor, o)
	return must(tb, g, err)
}

// mustOpen is Open (with a background context) that fails tb on error.
func mustOpen(tb testing.TB, st storage.Store, o Options) *Graph {
	tb.Helper()
	g, err := Open(context.Background(), st, o)
	return must(tb, g, err)
}

// localStore opens a local-disk store in dir, failing tb on error.
func localStore(tb testing.TB, dir string) *storage.Local {
	tb.Helper()
	st, err := storage.NewLocal(dir)
	return must(tb, st, err)
}

// headPlan compiles src against the schema of main's head and returns its
// query name.
func headPlan(tb testing.TB, g *Graph, src, name string) *query.Plan {
	tb.Helper()
	p, err := compileAt(tb, resolve(tb, g, Target{}), "q.gq", src).Query(name)
	return must(tb, p, err)
}

// resolve returns the snapshot of g at at.
func resolve(tb testing.TB, g *Graph, at Target) *snapshot.Snapshot {
	tb.Helper()
	snap, err := g.Resolve(context.Background(), at)
	return must(tb, snap, err)
}

// queryAt runs the read plan p at target at, failing tb on error.
func queryAt(tb testing.TB, g *Graph, at Target, p *query.Plan, params map[string]any) *eval.Result {
	tb.Helper()
	res, _, err := g.Query(context.Background(), at, p, params)
	return must(tb, res, err)
}

// commitLog is g.Log (with a background context) that fails tb on error.
func commitLog(tb testing.TB, g *Graph, branch string, limit int) []CommitInfo {
	tb.Helper()
	log, err := g.Log(context.Background(), branch, limit)
	return must(tb, log, err)
}

// stateAt resolves at and reads the table state of tk.
func stateAt(tb testing.TB, g *Graph, at Target, tk string) (*snapshot.Snapshot, *table.State) {
	tb.Helper()
	snap := resolve(tb, g, at)
	st, err := snap.State(context.Background(), tk)
	return snap, must(tb, st, err)
}

// headNodes resolves main's head and reads its node table of typ.
func headNodes(tb testing.TB, g *Graph, typ string) (*snapshot.Snapshot, *snapshot.NodeTable) {
	tb.Helper()
	return nodesAt(tb, g, Target{}, typ)
}

// nodesAt resolves at and reads its node table of typ.
func nodesAt(tb testing.TB, g *Graph, at Target, typ string) (*snapshot.Snapshot, *snapshot.NodeTable) {
	tb.Helper()
	snap := resolve(tb, g, at)
	nt, err := snap.Nodes(context.Background(), typ)
	return snap, must(tb, nt, err)
}

// liveRows returns the live rows of table tk (a snapshot.NodeKey or
// EdgeKey) of snap, read through the table's image, in row order.
func liveRows(tb testing.TB, snap *snapshot.Snapshot, tk string) *snapshot.Rows {
	tb.Helper()
	ctx := context.Background()
	kind, name := snapshot.SplitKey(tk)
	if kind == "node" {
		nt, err := snap.Nodes(ctx, name)
		return must(tb, nt, err).Compact()
	}
	et, err := snap.Edges(ctx, name)
	return must(tb, et, err).Compact()
}

// liveNodes resolves at and returns node type typ and the live rows of
// its table.
func liveNodes(tb testing.TB, g *Graph, at Target, typ string) (*schema.NodeType, *snapshot.Rows) {
	tb.Helper()
	snap := resolve(tb, g, at)
	nt, _ := snap.Catalog().Node(typ)
	return nt, liveRows(tb, snap, snapshot.NodeKey(typ))
}

// liveEdges resolves at and returns the live rows of edge type typ.
func liveEdges(tb testing.TB, g *Graph, at Target, typ string) *snapshot.Rows {
	tb.Helper()
	return liveRows(tb, resolve(tb, g, at), snapshot.EdgeKey(typ))
}

// sortedRows returns row(i) for each of rows' rows, sorted.
func sortedRows(rows *snapshot.Rows, row func(i int) string) []string {
	out := make([]string, len(rows.IDs))
	for i := range rows.IDs {
		out[i] = row(i)
	}
	slices.Sort(out)
	return out
}

// cell is row i's value of column prop of rows (nil if null or not a
// column).
func cell(rows *snapshot.Rows, i int, prop string) any {
	if c := rows.Cols[prop]; c != nil {
		return c[i]
	}
	return nil
}

// indexedAndExact runs p over snap with its indexes (got) and without
// them (want: the exact reference the indexed answer must equal).
func indexedAndExact(tb testing.TB, snap eval.Snapshot, p *query.Plan, params map[string]any) (got, want *eval.Result) {
	tb.Helper()
	ctx := context.Background()
	want, err := eval.Run(ctx, snap, p, params, eval.Options{NoIndexes: true})
	if err != nil {
		tb.Fatal(err)
	}
	got, err = eval.Run(ctx, snap, p, params, eval.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return got, want
}

// hitsOf counts the rows of got whose first value (an entity's key) is
// the first value of a row of exact: the hits of a top-k against the
// exact top-k, for recall.
func hitsOf(got, exact *eval.Result) int {
	in := map[any]bool{}
	for _, row := range exact.Rows {
		in[row[0]] = true
	}
	hits := 0
	for _, row := range got.Rows {
		if in[row[0]] {
			hits++
		}
	}
	return hits
}

// optimizeIndexes optimizes branch and returns how many search and scalar
// index objects it built.
func optimizeIndexes(tb testing.TB, g *Graph, branch string) (search, scalar int) {
	tb.Helper()
	res, err := g.Optimize(context.Background(), branch)
	for _, d := range must(tb, res, err).Datasets {
		search += d.SearchIndexed
		scalar += d.ScalarIndexed
	}
	return search, scalar
}

// concurrently runs fn(0) … fn(n-1) each on a goroutine of its own, all at
// once, and returns their errors by i when all have returned.
func concurrently(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}

// injectFailure runs op (what names it in the failure message) with
// failpoint fp set to fail, and requires the injected failure back.
func injectFailure(tb testing.TB, fp, what string, op func() error) {
	tb.Helper()
	disable := failpoint.Enable(fp, failpoint.Error)
	err := op()
	hits := failpoint.Hits(fp)
	disable()
	if !errors.Is(err, failpoint.ErrInjected) {
		tb.Fatalf("%s err = %v, want the injected failure at %s (hits %d)", what, err, fp, hits)
	}
}

// appendJSONL loads data into main in append mode.
func appendJSONL(tb testing.TB, g *Graph, data string) {
	tb.Helper()
	if _, err := g.Load(context.Background(), strings.NewReader(data), LoadRequest{Mode: LoadAppend}); err != nil {
		tb.Fatal(err)
	}
}
