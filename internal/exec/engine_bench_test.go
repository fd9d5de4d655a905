package exec

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkEngineBulkLoad loads 100k keyed nodes and 500k edges in one
// append commit on the local backend (fresh graph per iteration).
func BenchmarkEngineBulkLoad(b *testing.B) {
	const nodes, edges = 100_000, 500_000
	var buf bytes.Buffer
	for i := range nodes {
		fmt.Fprintf(&buf, `{"type":"Person","data":{"name":"p%d","age":%d}}`+"\n", i, i%100)
	}
	for i := range edges {
		fmt.Fprintf(&buf, `{"edge":"Knows","from":"p%d","to":"p%d"}`+"\n", i%nodes, (i*7+1)%nodes)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		st := localStore(b, b.TempDir())
		ctx := context.Background()
		g := mustInit(b, st, "test.pg", engSchema, "", Options{})
		b.StartTimer()
		res, err := g.Load(ctx, bytes.NewReader(data), LoadRequest{Mode: LoadAppend})
		if err != nil {
			b.Fatal(err)
		}
		if res.Total != nodes+edges {
			b.Fatalf("loaded %d", res.Total)
		}
	}
	b.ReportMetric(float64(nodes+edges)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkEngineMutateOneRow updates one row of the fixture per iteration
// on the local backend (warm handle).
func BenchmarkEngineMutateOneRow(b *testing.B) {
	st := localStore(b, b.TempDir())
	g := engFixtureOn(b, st)
	p := engPlan(b, g, "set_age")
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := g.Mutate(ctx, "main", p, map[string]any{"name": "Bob", "age": i % 100}, MutateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
