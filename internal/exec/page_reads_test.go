package exec

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/query"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestColdProjectionReadsPages pins with the counting store what a cold
// projection of the rows an indexed filter matches reads: the scalar
// index gives their offsets, and their name and bio come from the Parquet
// pages holding them (table/pages.go), not from whole row groups. People
// as in TestScalarIndexColdCountReads (200,000 by default,
// OMNIGRAPH_SCALAR_ROWS scales it), with a city among 5,000, so that
// `$p.city = "c31"` keeps one row in 5,000, 13 or 14 per 65,536-row
// fragment. The bios (12 words drawn from 5,000) are most of the table's
// bytes; reading the matches' bio chunks whole, as the row-group path
// does, reads most of the table, pages read under 10 % of it. The rows are
// the ones a fresh handle on the plain store returns (warm images).
func TestColdProjectionReadsPages(t *testing.T) {
	ctx := context.Background()
	rows := envInt(t, "OMNIGRAPH_SCALAR_ROWS", 200_000)
	g, st, tableBytes := scalarPeople(t, rows, 5000)
	f, err := query.Compile(g.catalog0(t), "q.gq", `query q() { match { $p: Person  $p.city = "c31" } return { $p.name, $p.bio } }`)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := f.Query("q")
	var want []string
	for i := range rows {
		if (i*104729)%5000 == 31 {
			want = append(want, fmt.Sprintf("p%d", i))
		}
	}
	cnt := storage.NewCounting(st)
	fresh := mustOpen(t, cnt, Options{})
	cnt.Reset()
	res := queryAt(t, fresh, Target{}, p, nil)
	c := cnt.Snapshot()
	read := c[storage.OpGet].Bytes + c[storage.OpGetRange].Bytes
	var names []string
	for _, row := range res.Rows {
		names = append(names, row[0].(string))
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	// The same rows as the warm path's (whole-table images) on a plain handle.
	warm := mustOpen(t, st, Options{})
	for range 10 { // past the partial snapshots a handle serves first
		if _, _, err := warm.Query(ctx, Target{}, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	wres := queryAt(t, warm, Target{}, p, nil)
	if fmt.Sprint(wres.Rows) != fmt.Sprint(res.Rows) {
		t.Fatalf("cold rows differ from warm rows:\n%v\n%v", res.Rows, wres.Rows)
	}
	t.Logf("%d rows: table %d bytes; the projection of %d matches read %d bytes (%.2f%%) in %d requests",
		rows, tableBytes, len(want), read, 100*float64(read)/float64(tableBytes), c.Requests())
	if read*10 > tableBytes {
		t.Fatalf("a cold projection of %d rows read %d bytes of a %d-byte table", len(want), read, tableBytes)
	}
}
