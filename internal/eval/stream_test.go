package eval

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/limits"
)

func streamWith(t *testing.T, g *runGraph, src string, o Options) (*Stream, error) {
	t.Helper()
	plan := g.plan(t, src)
	o.Now = testNow
	return RunStream(context.Background(), g.ms, plan, nil, o)
}

// TestStreamPastBudget: a 250,000-row product whose projected rows are
// over a 4 MiB budget (Run holds them, and refuses) streams under it: the
// binding rows are held (2 MB), the boxed values only a batch at a time.
// Len is known before the rows; a second Each yields the same rows; the
// budget is back to the binding rows after each pass.
func TestStreamPastBudget(t *testing.T) {
	const n = 500
	g := ringGraph(t, n)
	src := `query q() { match { $a: P  $b: P } return { $a.name, $b.name } }`
	o := Options{MemoryBytes: 4 << 20}
	var le *limits.Error
	if _, err := runWith(t, g, context.Background(), src, o); !errors.As(err, &le) || le.Resource != ResourceMemory {
		t.Fatalf("Run: %v, want a %s limit error", err, ResourceMemory)
	}
	st, err := streamWith(t, g, src, o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Len() != n*n {
		t.Fatalf("Len %d, want %d", st.Len(), n*n)
	}
	held := st.mem.Used()
	var first [][]any
	for pass := range 2 {
		i := 0
		err := st.Each(context.Background(), func(row []any) error {
			if pass == 0 && i%997 == 0 {
				first = append(first, append([]any(nil), row...))
			}
			if pass == 1 && i%997 == 0 && !reflect.DeepEqual(row, first[i/997]) {
				return fmt.Errorf("pass 2 row %d = %v, pass 1 %v", i, row, first[i/997])
			}
			i++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if i != n*n {
			t.Fatalf("pass %d: %d rows, want %d", pass, i, n*n)
		}
		if used := st.mem.Used(); used != held {
			t.Fatalf("pass %d: budget holds %d bytes after the stream, %d before", pass, used, held)
		}
	}
	if first[0][0] != "p0" || first[0][1] != "p0" {
		t.Fatalf("first row %v", first[0])
	}
}

// TestStreamLimitAndStop: `limit` cuts the binding rows before anything
// is projected (Len is the limit), the callback's error stops the stream
// at once, and a context ended while the stream is read ends it.
func TestStreamLimitAndStop(t *testing.T) {
	g := ringGraph(t, 300)
	st, err := streamWith(t, g, `query q() { match { $a: P  $b: P } return { $a.name } limit 5000 }`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Len() != 5000 {
		t.Fatalf("Len %d, want 5000", st.Len())
	}
	stop := errors.New("stop")
	seen := 0
	if err := st.Each(context.Background(), func([]any) error {
		seen++
		if seen == 10 {
			return stop
		}
		return nil
	}); err != stop || seen != 10 {
		t.Fatalf("Each: %v after %d rows, want stop after 10", err, seen)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seen = 0
	err = st.Each(ctx, func([]any) error {
		seen++
		cancel() // checked before the next batch
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen != StreamBatch {
		t.Fatalf("Each after cancel: %v after %d rows, want context.Canceled after one batch (%d)", err, seen, StreamBatch)
	}
}

// TestStreamMatchesRun: over the run tests' queries (aggregates, sorts,
// limits), a stream yields exactly Run's rows.
func TestStreamMatchesRun(t *testing.T) {
	g := ringGraph(t, 50)
	for _, src := range []string{
		`query q() { match { $a: P } return { $a.name } order { $a.name desc } limit 7 }`,
		`query q() { match { $a: P  $a next $b } return { $b.name, count($a) as n } order { n desc } limit 3 }`,
		`query q() { match { $a: P } return { count($a) as n } }`,
		`query q() { match { $a: P { name: "none" } } return { $a.name } }`,
		`query q() { match { $a: P  $b: P } return { $a.name, $b.name } limit 2600 }`,
	} {
		want, err := runWith(t, g, context.Background(), src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := streamWith(t, g, src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := [][]any{}
		if err := st.Each(context.Background(), func(row []any) error {
			got = append(got, append([]any(nil), row...))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if st.Len() != len(want.Rows) || !reflect.DeepEqual(got, want.Rows) {
			t.Errorf("%s: stream (%d) %v\nRun %v", src, st.Len(), got, want.Rows)
		}
	}
}
