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

const typedSchema = `
node P { name: String @key  age: I32?  big: I64?  n: U32?  un: U64?  f: F32?  d: F64?  ok: Bool?  mood: enum(sad, glad)?  note: String? }
node Q { title: String  score: I32 }
node R { }
edge Knows: P -> P { since: I32?  w: F64? }
edge Likes: P -> Q
`

// typedLines must take the typed path; generalLines must not (an error or
// a value the typed path leaves to the general rules).
var (
	typedLines = []string{
		`{"type":"P","data":{"name":"a"}}`,
		`{"type":"P","data":{"name":"a","age":-0,"big":-9223372036854775808,"n":4294967295,"un":18446744073709551615}}`,
		`{"type":"P","data":{"name":"a","age":2147483647,"f":3.4e38,"d":-1.5e-300,"ok":false,"mood":"glad","note":null}}`,
		`{"type":"P","data":{"name":"a","f":1e-50,"d":0.1,"ok":true,"note":"x\u00e9y"}}`,
		`{"type":"P","data":{"id":"a","name":"a"}}`,
		`{"type":"P","data":{"name":"ünï","note":"日本"}}`,
		`{"type":"Q","data":{"title":"t","score":7}}`,
		`{"type":"Q","data":{"id":"q1","title":"t","score":-7}}`,
		`{"type":"R"}`,
		`{"type":"R","data":{}}`,
		`{"edge":"Knows","from":"a","to":"b"}`,
		`{"edge":"Knows","from":"a","to":"b","data":{"since":2020,"w":0.5}}`,
		`{"edge":"Knows","from":"a","to":"b","data":{"id":"e1","since":null}}`,
		`{"edge":"knows","from":"a","to":"b"}`,
		`{"edge":"Likes","from":"a","to":"q1"}`,
	}
	generalLines = []string{
		`{"type":"P","data":{"name":"a","age":2147483648}}`,
		`{"type":"P","data":{"name":"a","age":1.0}}`,
		`{"type":"P","data":{"name":"a","age":1e2}}`,
		`{"type":"P","data":{"name":"a","age":"1"}}`,
		`{"type":"P","data":{"name":"a","n":-1}}`,
		`{"type":"P","data":{"name":"a","n":-0}}`,
		`{"type":"P","data":{"name":"a","n":4294967296}}`,
		`{"type":"P","data":{"name":"a","un":18446744073709551616}}`,
		`{"type":"P","data":{"name":"a","f":3.5e38}}`,
		`{"type":"P","data":{"name":"a","d":1e400}}`,
		`{"type":"P","data":{"name":"a","ok":1}}`,
		`{"type":"P","data":{"name":"a","ok":"true"}}`,
		`{"type":"P","data":{"name":"a","mood":"mad"}}`,
		`{"type":"P","data":{"name":"a","note":7}}`,
		`{"type":"P","data":{"name":"a","note":["x"]}}`,
		`{"type":"P","data":{"name":"a","note":{"x":1}}}`,
		`{"type":"P","data":{"name":null}}`,
		`{"type":"P","data":{"age":1}}`,
		`{"type":"P","data":{"name":7}}`,
		`{"type":"P","data":{"id":"b","name":"a"}}`,
		`{"type":"P","data":{"id":"","name":"a"}}`,
		`{"type":"P","data":{"id":3,"name":"a"}}`,
		`{"type":"P","data":{"name":"a","zzz":1}}`,
		`{"type":"P","data":{"name":"a","src":"x"}}`,
		`{"type":"P","data":{"name":"a","name":"b"}}`,
		`{"type":"P","data":{"name":"a\ud800"}}`,
		`{"type":"Q","data":{"title":"t"}}`,
		`{"type":"Q","data":{"title":"t","score":null}}`,
		`{"type":"R","data":{"x":1}}`,
		`{"edge":"Knows","from":"a","to":"b","data":{"since":"2020"}}`,
		`{"edge":"Knows","from":"a","to":"b","data":{"id":""}}`,
		`{"edge":"Knows","from":"a","data":{}}`,
		`{"edge":"Knows","from":1,"to":"b"}`,
		`{"edge":"Nope","from":"a","to":"b"}`,
		`{"type":"Nope"}`,
		`{"type":"P","data":[1]}`,
	}
)

// TestTypedRecordsMatchGeneral: a line read by the parse workers, where
// records of plain types take the typed path (Cells), gives the same
// record — its cells read as the value map — and the same error as the
// general path of Next, for valid and invalid values of every kind the
// typed path converts. The valid lines must take the typed path.
func TestTypedRecordsMatchGeneral(t *testing.T) {
	cat, err := schema.Compile("typed.pg", typedSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lines []string
		typed bool
	}{{typedLines, true}, {generalLines, false}} {
		for _, line := range tc.lines {
			if wasTyped, ok := typedMatchesGeneral(t, cat, line); ok && wasTyped != tc.typed {
				t.Fatalf("%s: typed path taken %v, want %v", line, wasTyped, tc.typed)
			}
		}
	}
}

// FuzzTypedMatchesGeneral: for any one line, the parse workers' typed path
// and Next's general path give the same record or the same error
// (TestTypedRecordsMatchGeneral's check, on generated lines).
func FuzzTypedMatchesGeneral(f *testing.F) {
	for _, l := range append(append([]string(nil), typedLines...), generalLines...) {
		f.Add(l)
	}
	cat, err := schema.Compile("typed.pg", typedSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n") {
			return // one record per input: the line reader's own splitting is FuzzJSONL's
		}
		typedMatchesGeneral(t, cat, line)
	})
}

// typedMatchesGeneral reads line through both paths and fails t unless
// they agree; it reports whether the typed path took it and whether the
// line was a record (not an error).
func typedMatchesGeneral(t *testing.T, cat *schema.Catalog, line string) (wasTyped, ok bool) {
	t.Helper()
	ctx := context.Background()
	in := line + "\n"
	want, wantErr := NewReader(strings.NewReader(in), cat, ReaderOptions{}).Next(ctx)
	if errors.Is(wantErr, io.EOF) {
		if strings.TrimSpace(line) == "" {
			return false, false // a blank line is no record on either path
		}
		t.Fatalf("%s: no record", line)
	}
	var got Record
	gotErr := NewReader(strings.NewReader(in), cat, ReaderOptions{}).eachRecord(ctx, 2, func(r Record) error {
		got = r
		return nil
	})
	if fmt.Sprintf("%#v", gotErr) != fmt.Sprintf("%#v", wantErr) && fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s: error %v, general path %v", line, gotErr, wantErr)
	}
	var ie1, ie2 *InputError
	if errors.As(wantErr, &ie1) != errors.As(gotErr, &ie2) || (ie1 != nil && (ie1.Line != ie2.Line || ie1.Field != ie2.Field || ie1.Msg != ie2.Msg)) {
		t.Fatalf("%s: error %#v, general path %#v", line, ie2, ie1)
	}
	if wantErr != nil {
		return false, false
	}
	// A type without properties has nothing to convert: its records are
	// the same on both paths (no Values, no Cells).
	switch r := got.(type) {
	case *NodeRecord:
		nt, _ := cat.Node(r.Type)
		wasTyped = r.Cells != nil || len(nt.Props) == 0
		if r.Cells != nil {
			r.Values, r.Cells = cellValues(nt.Props, r.Cells), nil
		}
	case *EdgeRecord:
		et, _ := cat.Edge(r.Type)
		wasTyped = r.Cells != nil || len(et.Props) == 0
		if r.Cells != nil {
			r.Values, r.Cells = cellValues(et.Props, r.Cells), nil
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n typed   %#v\n general %#v", line, got, want)
	}
	return wasTyped, true
}
