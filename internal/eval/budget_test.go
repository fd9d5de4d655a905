package eval

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/limits"
)

const budgetSchema = `node P { name: String @key }
edge Next: P -> P
`

// ringGraph is n P nodes in a ring of Next edges.
func ringGraph(t testing.TB, n int) *runGraph {
	g := newRunGraph(t, budgetSchema)
	for i := range n {
		g.node("P", fmt.Sprintf("p%d", i), "name", fmt.Sprintf("p%d", i))
	}
	for i := range n {
		g.edge("Next", fmt.Sprintf("e%d", i), fmt.Sprintf("p%d", i), fmt.Sprintf("p%d", (i+1)%n))
	}
	return g
}

func runWith(t testing.TB, g *runGraph, ctx context.Context, src string, o Options) (*Result, error) {
	t.Helper()
	plan := g.plan(t, src)
	o.Now = testNow
	return Run(ctx, g.ms, plan, nil, o)
}

// TestQueryLimits: a query that would exceed its memory budget or its time
// stops with *limits.Error naming the resource, before the allocation that
// would exceed it (the 20k × 20k product asks for 3.2 GB under the 2 GiB
// default: without the check the process would die), and queries within
// bounds — `limit` over a product, a bounded expansion — answer.
func TestQueryLimits(t *testing.T) {
	g := ringGraph(t, 20000)
	expired, cancel := limits.WithTimeout(context.Background(), ResourceTime, time.Nanosecond, "")
	defer cancel()
	<-expired.Done()
	tests := []struct {
		name     string
		ctx      context.Context
		src      string
		mem      int64
		resource string // "" = must succeed
		rows     int
	}{
		{"product over default budget", context.Background(),
			`query q() { match { $a: P  $b: P } return { count($a) as n } }`, 0, ResourceMemory, 0},
		{"product with limit streams", context.Background(),
			`query q() { match { $a: P  $b: P } return { $a.name, $b.name } limit 10 }`, 1 << 20, "", 10},
		{"var-length expansion over budget", context.Background(),
			`query q() { match { $a: P  $a next{1,20000} $b } return { count($b) as n } }`, 64 << 20, ResourceMemory, 0},
		{"bounded expansion fits", context.Background(),
			`query q() { match { $a: P  $a next{1,3} $b } return { count($b) as n } }`, 64 << 20, "", 1},
		{"projection over budget", context.Background(),
			`query q() { match { $a: P } return { $a.name } }`, 200 << 10, ResourceMemory, 0},
		{"deadline", expired,
			`query q() { match { $a: P } return { $a.name } }`, 0, ResourceTime, 0},
		{"unlimited", context.Background(),
			`query q() { match { $a: P } return { $a.name } }`, -1, "", 20000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runWith(t, g, tc.ctx, tc.src, Options{MemoryBytes: tc.mem})
			if tc.resource == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Rows) != tc.rows {
					t.Fatalf("%d rows, want %d", len(res.Rows), tc.rows)
				}
				return
			}
			var le *limits.Error
			if !errors.As(err, &le) || le.Resource != tc.resource || !errors.Is(err, limits.ErrResourceLimit) {
				t.Fatalf("err = %v, want a %s limit", err, tc.resource)
			}
			if le.Actual < le.Limit {
				t.Fatalf("limit error %+v: actual below limit", le)
			}
		})
	}
}

// TestLimitCapMatchesUncapped: `limit N` over a product or an expansion
// returns exactly the first N rows of the uncapped result.
func TestLimitCapMatchesUncapped(t *testing.T) {
	g := ringGraph(t, 40)
	for _, body := range []string{
		`match { $a: P  $b: P } return { $a.name, $b.name }`,
		`match { $a: P  $a next{1,5} $b } return { $a.name, $b.name }`,
		`match { $a: P  $a next $b } return { $a.name, $b.name }`,
	} {
		all, err := runWith(t, g, context.Background(), `query q() { `+body+` }`, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 7, 41, 100000} {
			got, err := runWith(t, g, context.Background(), fmt.Sprintf(`query q() { %s limit %d }`, body, n), Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := rowStrings(t, all)[:min(n, len(all.Rows))]
			if fmt.Sprint(rowStrings(t, got)) != fmt.Sprint(want) {
				t.Fatalf("%s limit %d: %d rows differ from the uncapped prefix", body, n, len(got.Rows))
			}
		}
	}
}
