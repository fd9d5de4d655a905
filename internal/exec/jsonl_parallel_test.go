package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// TestEachRecordMatchesNext: the parallel reader yields exactly the records
// Next yields, in order, and stops with the error Next returns first — a
// bad line, an over-long line (final) or the callback's — whatever block of
// lines it falls in and however many workers parse.
func TestEachRecordMatchesNext(t *testing.T) {
	const good = `{"type": "Person", "data": {"name": "p%d"}}`
	var clean strings.Builder
	for i := range 3*parseBlockLines + 17 {
		fmt.Fprintf(&clean, good+"\n", i)
		if i%97 == 0 {
			clean.WriteString("   \n") // blank lines are skipped, not counted as records
		}
	}
	inputs := map[string]string{
		"clean":          clean.String(),
		"bad line":       clean.String() + `{"type": "Nope"}` + "\n" + fmt.Sprintf(good, 1) + "\n",
		"bad early":      fmt.Sprintf(good, 0) + "\n{\"type\": \n" + clean.String() + "{\"type\": 1}\n",
		"over-long line": clean.String()[:len(clean.String())/2] + "\n" + `{"type": "Person", "data": {"name": "` + strings.Repeat("x", 300) + `"}}` + "\n" + clean.String(),
		"empty":          "",
	}
	for name, in := range inputs {
		opts := ReaderOptions{MaxLineBytes: 200}
		var want []Record
		var wantErr error
		r := NewReader(strings.NewReader(in), testCatalog(t), opts)
		for {
			rec, err := r.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				wantErr = err
				break
			}
			want = append(want, rec)
		}
		for _, workers := range []int{1, 2, 5} {
			var got []Record
			err := NewReader(strings.NewReader(in), testCatalog(t), opts).eachRecord(context.Background(), workers, func(rec Record) error {
				got = append(got, rec)
				return nil
			})
			if !reflect.DeepEqual(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s, %d workers: %d records, err %v; want %d, %v", name, workers, len(got), err, len(want), wantErr)
			}
		}
	}
	// The callback's error stops the reading at once.
	stop := errors.New("stop")
	n := 0
	err := NewReader(strings.NewReader(clean.String()), testCatalog(t), ReaderOptions{}).eachRecord(context.Background(), 3, func(Record) error {
		if n++; n == parseBlockLines+3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != parseBlockLines+3 {
		t.Fatalf("err %v after %d records, want stop after %d", err, n, parseBlockLines+3)
	}
}

// TestEachRecordReuseMatchesNext: with the record arrays recycled (reuse,
// as a load reads), every record fn sees — typed nodes and edges with
// their cells, general-path records with their values — is the one Next
// yields, over many more blocks than are ever in flight, so that every
// array is refilled many times while later blocks are being parsed.
func TestEachRecordReuseMatchesNext(t *testing.T) {
	cat, err := schema.Compile("t.pg", "node P { name: String @key  age: I32?  city: String? }\n"+
		"node Q { name: String @key  n: I32?  @range(n, 0..9) }\n"+
		"edge K: P -> P { w: I64?  tag: String? }\n")
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := range 60 * parseBlockLines {
		switch {
		case i%1000 < 300:
			fmt.Fprintf(&in, `{"type":"P","data":{"name":"p%d","age":%d,"city":"c%d"}}`+"\n", i, i%90, i%7)
		case i%1000 < 320:
			fmt.Fprintf(&in, `{"type":"Q","data":{"name":"q%d","n":%d}}`+"\n", i, i%10)
		default:
			fmt.Fprintf(&in, `{"edge":"K","from":"p%d","to":"p%d","data":{"w":%d,"tag":"t%d"}}`+"\n", i/3, i*7%5000, i, i%11)
		}
	}
	// A record as text, typed cells as the values Next gives (read now:
	// with reuse, fn's record is not valid after fn).
	show := func(rec Record) string {
		switch r := rec.(type) {
		case *NodeRecord:
			c := *r
			if nt, _ := cat.Node(c.Type); c.Cells != nil {
				c.Values, c.Cells = cellValues(nt.Props, c.Cells), nil
			}
			return fmt.Sprintf("%#v", c)
		case *EdgeRecord:
			c := *r
			if et, _ := cat.Edge(c.Type); c.Cells != nil {
				c.Values, c.Cells = cellValues(et.Props, c.Cells), nil
			}
			c.toStaged = false
			return fmt.Sprintf("%#v", c)
		}
		return fmt.Sprintf("%T", rec)
	}
	recs, err := readAll(NewReader(strings.NewReader(in.String()), cat, ReaderOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, rec := range recs {
		want = append(want, show(rec))
	}
	for _, workers := range []int{2, 5} {
		var got []string
		err := NewReader(strings.NewReader(in.String()), cat, ReaderOptions{}).eachRecordAhead(context.Background(), workers, true, nil, func(rec Record) error {
			got = append(got, show(rec))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d workers: %d records, want %d", workers, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%d workers: record %d\n got %s\nwant %s", workers, i, got[i], want[i])
			}
		}
	}
}
