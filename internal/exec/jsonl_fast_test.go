package exec

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// aliasReader is a Reader set up as a parse worker's (eachRecordAhead).
func aliasReader(cat *schema.Catalog) *Reader {
	nodeShapes, edgeShapes := typedShapes(cat)
	base := NewReader(bytes.NewReader(nil), cat, ReaderOptions{})
	return &Reader{cat: cat, names: base.names, alias: true, cellsPerBlock: 4096,
		nodeShapes: nodeShapes, edgeShapes: edgeShapes, line: 7}
}

// checkFastEdgeLine fails unless the fast path, where it takes line,
// gives exactly what the general parser gives; it reports whether the
// fast path took it.
func checkFastEdgeLine(t *testing.T, cat *schema.Catalog, line []byte) bool {
	t.Helper()
	fast, ok, ferr := aliasReader(cat).fastEdgeLine(line)
	if !ok {
		if fast != nil || ferr != nil {
			t.Fatalf("%q: declined with a result %v, %v", line, fast, ferr)
		}
		return false
	}
	gen, gerr := aliasReader(cat).parseLineGeneral(line)
	if fmt.Sprint(ferr) != fmt.Sprint(gerr) || reflect.TypeOf(ferr) != reflect.TypeOf(gerr) {
		t.Fatalf("%q: fast error %v, general %v", line, ferr, gerr)
	}
	if !reflect.DeepEqual(fast, gen) {
		t.Fatalf("%q: fast %#v, general %#v", line, fast, gen)
	}
	return true
}

func TestFastEdgeLineMatchesGeneral(t *testing.T) {
	cat := testCatalog(t)
	taken := []string{
		`{"edge":"Knows","from":"p1","to":"p2"}`,
		`{"edge": "Knows", "from": "p1", "to": "p2"}`,
		" \t{ \"to\" : \"b\" ,\"from\":\"a\", \"edge\":\"Knows\" }\r\n",
		`{"from":"","to":"","edge":"Knows"}`,
		`{"edge":"Nope","from":"a","to":"b"}`, // unknown type: edgeRecord's error
		`{"edge":"","from":"a","to":"b"}`,
		`{"edge":"WorksAt","from":"a ~!@#$%^&*()","to":"z"}`,
		"{\"edge\":\"Wrote\",\"from\":\"x\",\"to\":\"y\x7f\"}",
	}
	declined := []string{
		`{"edge":"Knows","from":"p1","to":"p2","data":{}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":"2020-01-01"}}`,
		`{"edge":"Knows","from":"p\"1","to":"p2"}`,
		`{"edge":"Knows","from":"p\u0031","to":"p2"}`,
		`{"edge":"Knows","from":"pé","to":"p2"}`,
		"{\"edge\":\"Knows\",\"from\":\"p\xff\",\"to\":\"p2\"}",
		"{\"edge\":\"Knows\",\"from\":\"p\t\",\"to\":\"p2\"}",
		`{"edge":"Knows","from":"p1","from":"p1","to":"p2"}`,
		`{"edge":"Knows","from":"p1"}`,
		`{"edge":"Knows","from":"p1","to":"p2"}x`,
		`{"edge":"Knows","from":"p1","to":"p2"}{}`,
		`{"edge":"Knows","from":"p1","to":"p2",}`,
		`{"edge":"Knows","from":"p1","to":"p2"`,
		`{"edge":"Knows","from":"p1","to":p2}`,
		`{"edge":"Knows","from":"p1","to":null}`,
		`{"edge":"Knows","from":"p1","to":1}`,
		`{"edge":"Knows","type":"Person","from":"p1","to":"p2"}`,
		`{"edg\u0065":"Knows","from":"p1","to":"p2"}`,
		`{"edge":"Knows","from":"p1" "to":"p2"}`,
		`{"edge":"Knows","from":"p1","to":"p2"`,
		`["edge","Knows"]`, ``, ` `, `{`, `{"`, `{"edge"`, `{"edge":`, `{"edge":"Kn`,
	}
	for _, l := range taken {
		if !checkFastEdgeLine(t, cat, []byte(l)) {
			t.Errorf("%q: declined, want taken", l)
		}
	}
	for _, l := range declined {
		if checkFastEdgeLine(t, cat, []byte(l)) {
			t.Errorf("%q: taken, want declined", l)
		}
	}
	// Every truncation and every one-byte change of a plain edge line.
	base := []byte(`{"edge": "Knows", "from": "p1", "to": "p2"}`)
	for n := 0; n <= len(base); n++ {
		checkFastEdgeLine(t, cat, base[:n])
	}
	for i := range base {
		for _, c := range []byte{' ', '"', '\\', ',', ':', '{', '}', 'x', 0, 0x80, '\n'} {
			l := bytes.Clone(base)
			l[i] = c
			checkFastEdgeLine(t, cat, l)
		}
	}
}

// FuzzFastEdgeLine: wherever the fast path takes a line, the general
// parser gives the same record or error.
func FuzzFastEdgeLine(f *testing.F) {
	for _, s := range []string{`{"edge":"Knows","from":"p1","to":"p2"}`, `{ "to" : "b" , "from":"a", "edge":"WorksAt" }`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{}}`} {
		f.Add([]byte(s))
	}
	cat, err := schema.Compile("test.pg", testSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFastEdgeLine(t, cat, line) })
}
