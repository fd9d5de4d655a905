package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
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
