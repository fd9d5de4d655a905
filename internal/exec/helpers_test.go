package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/eval"
	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func jsonDecoder(b []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec
}

// headPlan compiles src against the schema of main's head and returns its
// query name.
func headPlan(tb testing.TB, g *Graph, src, name string) *query.Plan {
	tb.Helper()
	f, err := query.Compile(resolve(tb, g, Target{}).Catalog(), "q.gq", src)
	if err != nil {
		tb.Fatalf("compile %s: %v", src, err)
	}
	p, err := f.Query(name)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// resolve returns the snapshot of g at at.
func resolve(tb testing.TB, g *Graph, at Target) *snapshot.Snapshot {
	tb.Helper()
	snap, err := g.Resolve(context.Background(), at)
	if err != nil {
		tb.Fatal(err)
	}
	return snap
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
	if err != nil {
		tb.Fatal(err)
	}
	return snap, nt
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
