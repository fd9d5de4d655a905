package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/eval"
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
	snap, err := g.Resolve(context.Background(), Target{})
	if err != nil {
		tb.Fatal(err)
	}
	f, err := query.Compile(snap.Catalog(), "q.gq", src)
	if err != nil {
		tb.Fatalf("compile queries: %v", err)
	}
	p, err := f.Query(name)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// headNodes resolves main's head and reads its node table of typ.
func headNodes(tb testing.TB, g *Graph, typ string) (*snapshot.Snapshot, *snapshot.NodeTable) {
	tb.Helper()
	ctx := context.Background()
	snap, err := g.Resolve(ctx, Target{})
	if err != nil {
		tb.Fatal(err)
	}
	nt, err := snap.Nodes(ctx, typ)
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
