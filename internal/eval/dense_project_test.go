package eval

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// TestDenseProjectMatchesRows compares dense projections (dense_project.go)
// with the row executor on random graphs (parallel edges, self-loops,
// edges to absent nodes, null properties): the same rows in the same
// order, with and without a limit, through Run and through a stream read
// twice.
func TestDenseProjectMatchesRows(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, body string
		dense      bool
	}{
		{"one hop", `$a: Person  $a knows $b } return { $a.name, $b.name }`, true},
		{"ids and nulls", `$a: Person  $a knows $b } return { $b, $a.age, $b.city, $a.score }`, true},
		{"near filter", `$a: Person  $a.age < 30  $a knows $b } return { $a.name, $b.age }`, true},
		{"far filter", `$a: Person  $a knows $b  $b.city = "c1" } return { $a.name, $b.name, $b.city }`, true},
		{"both filters, limit", `$a: Person  $a.age > 20  $a knows $b  $b.age < 50 } return { $a.name, $b.name } limit 17`, true},
		{"limit 1", `$a: Person  $a knows $b } return { $b.name } limit 1`, true},
		{"limit past the rows", `$a: Person  $a.age = 3  $a knows $b } return { $b.name } limit 100000`, true},
		{"reverse", `$a: Person  $b knows $a  $a.age >= 40 } return { $a.name, $b.name }`, true},
		{"undirected", `$a: Person  $a <knows> $b } return { $a.name, $b.name }`, true},
		{"hops 1..2", `$a: Person  $a.city = "c2"  $a knows{1,2} $b } return { $a.name, $b.name }`, true},
		{"hops 2..3, limit", `$a: Person  $a knows{2,3} $b  $b.age > 10 } return { $a.name, $b.name } limit 300`, true},
		{"undirected hops", `$a: Person  $a.age < 15  $a <knows>{1,3} $b } return { $a, $b }`, true},
		{"chain", `$p: Person  $p knows $a  $a knows $b  $a.age != 3 } return { $p.name, $a.name, $b.name }`, true},
		{"star", `$p: Person  $p knows $a  $p lives $c  $c.size > 20 } return { $p.name, $a.name, $c.cname, $c.size }`, true},
		{"star, chain after", `$p: Person  $p lives $c  $p knows $a  $a knows $b } return { $c.cname, $b.name } limit 500`, true},
		{"into cities", `$c: City  $p lives $c  $p knows $f } return { $c.cname, $f.name }`, true},
		{"no rows", `$a: Person  $a.age > 1000  $a knows $b } return { $a.name, $b.name }`, true},
		{"same property twice", `$a: Person  $a knows $b } return { $a.name as x, $a.name as y, $b.name }`, true},
		{"edge variable", `$a: Person  $a $e:knows $b } return { $a.name, $b.name }`, false},
		{"cycle", `$a: Person  $a knows $b  $b knows $a } return { $a.name, $b.name }`, true},
		{"cycle, limit", `$a: Person  $a <knows> $b  $b knows $c  $c knows $a } return { $a.name, $b.name, $c } limit 9`, true},
		{"cycle within hops", `$a: Person  $a knows $b  $b.age > 30  $b <knows>{1,2} $a } return { $b.name, $a.age }`, true},
		{"two variables", `$a: Person  $a knows $b  $b.age > $a.age } return { $a.name, $b.name }`, false},
		{"ordered", `$a: Person  $a knows $b } return { $a.name, $b.name } order { $b.name } limit 5`, true},
		{"ordered, ties and nulls", `$a: Person  $a knows $b } return { $a.name, $b.city, $b.age } order { $b.city, $b.age desc } limit 40`, true},
		{"ordered hops, desc", `$a: Person  $a <knows>{1,2} $b } return { $a, $b } order { $b.name desc } limit 25`, true},
		{"ordered, filters, limit past the rows", `$a: Person  $a.age = 3  $a knows $b } return { $b.name, $a.score } order { $a.score desc } limit 1000`, true},
		{"ordered, limit past the heap", `$a: Person  $a knows $b } return { $b.name } order { $b.name } limit 100000`, false},
		{"ordered chain", `$p: Person  $p knows $a  $a knows $b } return { $p.name, $b.name } order { $a.age } limit 33`, true},
		{"ordered cycle", `$a: Person  $a knows $b  $b knows $a } return { $a.name, $b.name } order { $a.age desc, $b.name } limit 7`, true},
		{"ordered without limit", `$a: Person  $a knows $b } return { $a.name, $b.name } order { $b.name }`, false},
		{"ordered, edge variable", `$a: Person  $a $e:knows $b } return { $a.name, $b.name } order { $b.name } limit 5`, false},
	}
	for _, seed := range []uint64{1, 2, 3} {
		g := denseRunGraph(t, seed, 300)
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%d", tc.name, seed), func(t *testing.T) {
				plan, want := checkDenseRun(t, g, tc.body, tc.dense)
				st, err := RunStream(ctx, &memDense{Mem: g.ms}, plan, nil, Options{Now: testNow})
				if err != nil {
					t.Fatal(err)
				}
				if st.Len() != len(want) {
					t.Fatalf("stream Len %d, want %d", st.Len(), len(want))
				}
				for range 2 { // a stream yields the same rows each time
					var rows [][]any
					if err := st.Each(ctx, func(row []any) error {
						rows = append(rows, append([]any(nil), row...))
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					if len(want) == 0 && len(rows) == 0 {
						continue
					}
					if !reflect.DeepEqual(rows, want) {
						t.Fatalf("streamed %v, want %v", rows, want)
					}
				}
			})
		}
	}
}
