package exec

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
)

// aliasReader is a Reader set up as a parse worker's (eachRecordAhead).
func aliasReader(cat *schema.Catalog) *Reader {
	nodeShapes, edgeShapes := typedShapes(cat)
	return &Reader{cat: cat, names: recordNames(cat), alias: true, cellsPerBlock: 4096,
		nodeShapes: nodeShapes, edgeShapes: edgeShapes, line: 7}
}

// fastTypedSchema has node types whose records all take the typed path
// (jsonl_typed.go), one per kind of key, with a property of every kind
// it converts; testSchema's node types all take the general one.
const fastTypedSchema = `
node Person { name: String @key  age: I32?  city: String?  bio: String? }
node Item {
    sku: String @key
    n: I64
    u: U32?
    big: U64?
    f: F32?
    d: F64?
    ok: Bool?
    kind: enum(a, b, c)?
    label: String
}
node Tagged { code: enum(x, y) @key  v: I32? }
node Note { text: String?  score: I32? }
node Odd { type: String?  data: String?  from: I32? }
edge Knows: Person -> Person
edge Rated: Person -> Person { score: F64?  note: String? }
`

func fastTypedCatalog(t testing.TB) *schema.Catalog {
	t.Helper()
	cat, err := schema.Compile("typed.pg", fastTypedSchema)
	return must(t, cat, err)
}

// checkFastLine fails unless the fast path, where it takes line, gives
// exactly what the general parser gives — the same record or the same
// error, holding views of the line exactly where the general one does —
// and reports whether the fast path took it.
func checkFastLine(t *testing.T, cat *schema.Catalog, line []byte) bool {
	t.Helper()
	fl, gl := bytes.Clone(line), bytes.Clone(line)
	// Small cell arenas: a worker's (4096 cells) would be most of a
	// fuzzing run's time.
	fr, gr := aliasReader(cat), aliasReader(cat)
	fr.cellsPerBlock, gr.cellsPerBlock = 64, 64
	fast, ok, ferr := fr.fastLine(fl)
	if !ok {
		if fast != nil || ferr != nil {
			t.Fatalf("%q: declined with a result %v, %v", line, fast, ferr)
		}
		return false
	}
	gen, gerr := gr.parseLineGeneral(gl)
	if fmt.Sprint(ferr) != fmt.Sprint(gerr) || reflect.TypeOf(ferr) != reflect.TypeOf(gerr) {
		t.Fatalf("%q: fast error %v, general %v", line, ferr, gerr)
	}
	if !reflect.DeepEqual(fast, gen) || !reflect.DeepEqual(ferr, gerr) {
		t.Fatalf("%q: fast %#v, %#v; general %#v, %#v", line, fast, ferr, gen, gerr)
	}
	// Overwrite both lines alike: a string one result views and the other
	// copies (a value, an id, a map key) now differs.
	for i := range fl {
		fl[i], gl[i] = '#', '#'
	}
	if !reflect.DeepEqual(fast, gen) || !reflect.DeepEqual(ferr, gerr) {
		t.Fatalf("%q: after overwriting the lines, fast %#v, %#v; general %#v, %#v", line, fast, ferr, gen, gerr)
	}
	return true
}

// checkMutations runs checkFastLine on every truncation and every
// one-byte change of base.
func checkMutations(t *testing.T, cat *schema.Catalog, base string) {
	t.Helper()
	b := []byte(base)
	for n := 0; n <= len(b); n++ {
		checkFastLine(t, cat, b[:n])
	}
	for i := range b {
		for _, c := range []byte{' ', '"', '\\', ',', ':', '{', '}', '[', 'x', '0', '9', '-', '.', 'e', 't', 'n', 0, 0x80, '\n'} {
			l := bytes.Clone(b)
			l[i] = c
			checkFastLine(t, cat, l)
		}
	}
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
		`{"edge":"knows","from":"p1","to":"p2"}`, // a case-insensitive match
		`{"edge":"Knows","from":"p1","to":"p2","data":{}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":"2020-01-01"}}`,
		`{"data":{"since":"2020-01-01"},"edge":"Knows","from":"p1","to":"p2"}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":"2020-13-01"}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":null,"id":"k1"}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"id":""}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"id":7}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"sinc":"2020-01-01"}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"src":"p3"}}`,
		`{"edge":"WorksAt","from":"p1","to":"c1","data":{"title":5}}`,
		`{"edge":"WorksAt","from":"p1","to":"c1","data":{"title":"cto"}}`,
		`{"edge":"Wrote","from":"p1","to":"d1","data":{"x":true}}`,
		`{"edge":"Nope","from":"p1","to":"d1","data":{"x":true}}`,
	}
	declined := []string{
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":{}}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":[]}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":"a","since":"b"}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{},"data":{}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":null}`,
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
	checkTakenDeclined(t, cat, taken, declined)
	checkMutations(t, cat, `{"edge": "Knows", "from": "p1", "to": "p2"}`)
	checkMutations(t, cat, `{"edge":"Knows","from":"p1","to":"p2","data":{"since":"2020-01-01","id":"k"}}`)
	typed := fastTypedCatalog(t)
	for _, l := range []string{
		`{"edge":"Rated","from":"p1","to":"p2","data":{"score":2.5,"note":"ok"}}`,
		`{"edge":"Rated","from":"p1","to":"p2","data":{"score":-1e3,"note":""}}`,
		`{"edge":"Rated","from":"p1","to":"p2","data":{"score":1e400}}`,
		`{"edge":"Rated","from":"p1","to":"p2","data":{"score":"2.5"}}`,
		`{"edge":"Rated","from":"p1","to":"p2","data":{"score":null,"note":null,"id":"r1"}}`,
		`{"edge":"Rated","from":"p1","to":"p2","data":{"note":true}}`,
		`{"edge":"rated","from":"p1","to":"p2","data":{"Score":1}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"score":1}}`,
	} {
		if !checkFastLine(t, typed, []byte(l)) {
			t.Errorf("%q: declined, want taken", l)
		}
	}
	checkMutations(t, typed, `{"edge":"Rated","from":"p1","to":"p2","data":{"score":-2.5e+1,"note":"ok","id":"r"}}`)
}

func TestFastNodeLineMatchesGeneral(t *testing.T) {
	typed, general := fastTypedCatalog(t), testCatalog(t)
	// Person and the rest take the typed path under typed, the general
	// one under general (testSchema's types have checks, ranges, lists
	// or composite keys): a line is checked against both where it means
	// something for both.
	taken := []string{
		`{"type":"Person","data":{"name":"p123","age":33,"city":"c23","bio":"graph agent memory"}}`,
		" { \"data\" :\t{ \"bio\" : \"b\" , \"name\":\"p\" } , \"type\" : \"Person\" }\r\n",
		`{"type":"Person","data":{}}`,
		`{"type":"Person"}`,
		`{"type":"Person","data":{"name":""}}`,
		`{"type":"Person","data":{"name":"p","age":null,"city":null}}`,
		`{"type":"Person","data":{"name":null}}`,
		`{"type":"Person","data":{"name":5}}`,
		`{"type":"Person","data":{"name":true}}`,
		`{"type":"Person","data":{"name":"p","zzz":1}}`,
		`{"type":"Person","data":{"name":"p","src":"x"}}`,
		`{"type":"Person","data":{"name":"p","_rowid":1}}`,
		`{"type":"Person","data":{"name":"p","Name":"q"}}`,
		`{"type":"Person","data":{"name":"p","":"q"}}`,
		`{"type":"Person","data":{"name":"p","age":"33"}}`,
		`{"type":"Person","data":{"name":"p","age":33.0}}`,
		`{"type":"Person","data":{"name":"p","age":33.5}}`,
		`{"type":"Person","data":{"name":"p","age":3e1}}`,
		`{"type":"Person","data":{"name":"p","age":-0}}`,
		`{"type":"Person","data":{"name":"p","age":-2147483648}}`,
		`{"type":"Person","data":{"name":"p","age":2147483648}}`,
		`{"type":"Person","data":{"name":"p","age":99999999999999999999}}`,
		`{"type":"Person","data":{"name":"p","age":200}}`,
		`{"type":"Person","data":{"name":"p","age":true}}`,
		`{"type":"Person","data":{"name":"p","handle":"Bad"}}`,
		`{"type":"Person","data":{"name":"p","handle":"good"}}`,
		`{"type":"Person","data":{"name":"p","role":"admin"}}`,
		`{"type":"Person","data":{"name":"p","role":"boss"}}`,
		`{"type":"Person","data":{"name":"p","email":"a@b"}}`,
		`{"type":"Person","data":{"id":"p","name":"p"}}`,
		`{"type":"Person","data":{"name":"p","id":"q"}}`,
		`{"type":"Person","data":{"name":"p","id":""}}`,
		`{"type":"Person","data":{"name":"p","id":5}}`,
		`{"type":"Person","data":{"name":"p","id":null}}`,
		`{"type":"Person","data":{"id":"p"}}`,
		`{"type":"Nope","data":{"name":"p"}}`,
		`{"type":""}`,
		`{"type":"person","data":{"name":"p"}}`,
		`{"type":"Item","data":{"sku":"s","n":-9223372036854775808,"u":4294967295,"big":18446744073709551615,"f":1.5,"d":-2.5e-3,"ok":true,"kind":"a","label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":9223372036854775808,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"u":4294967296,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"u":-1,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"u":-0,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"u":1.0,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"big":18446744073709551616,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"f":1e39,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"f":1e-50,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"d":1e400,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"d":1,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"ok":false,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"ok":"true","label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"ok":1,"label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"kind":"d","label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1,"kind":"","label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":1}}`,
		`{"type":"Item","data":{"sku":"s","label":"l"}}`,
		`{"type":"Item","data":{"sku":"s","n":null,"label":"l"}}`,
		`{"type":"Tagged","data":{"code":"x","v":1}}`,
		`{"type":"Tagged","data":{"code":"z"}}`,
		`{"type":"Tagged","data":{"code":"y","id":"y"}}`,
		`{"type":"Tagged","data":{"code":"y","id":"x"}}`,
		`{"type":"Note","data":{"text":"t","score":1}}`,
		`{"type":"Note","data":{"id":"n1","text":"t"}}`,
		`{"type":"Note","data":{"id":"","text":"t"}}`,
		`{"type":"Note","data":{}}`,
		`{"type":"Odd","data":{"type":"t","data":"d","from":3}}`,
		`{"type":"Odd","data":{"to":"t","edge":"e"}}`,
		`{"type":"Doc","data":{"title":"t","born":"2024-06-01","at":"2024-06-01T12:00:00Z","weight":1.5,"big":9007199254740993}}`,
		`{"type":"Doc","data":{"title":"t","born":"2024-13-01"}}`,
		`{"type":"Doc","data":{"title":"t","tags":null,"embedding":null,"blob":null}}`,
		`{"type":"Doc","data":{"title":"t","tags":"a"}}`,
		`{"type":"Pair","data":{"last":"a","first":"b"}}`,
		`{"type":"Pair","data":{"last":"a","first":"b","id":"x"}}`,
		`{"type":"Pair","data":{"last":"a"}}`,
		`{"type":"Company","data":{"name":"c","size":10,"rating":4.5}}`,
		`{"type":"Company","data":{"name":"c","rating":9}}`,
		`{"type":"Company","data":{"name":"c","size":-1}}`,
	}
	declined := []string{
		`{"type":"Person","data":{"name":"p","age":{}}}`,
		`{"type":"Person","data":{"name":"p","age":[]}}`,
		`{"type":"Person","data":{"name":"p","age":[1]}}`,
		`{"type":"Person","data":{"name":"p\"q"}}`,
		`{"type":"Person","data":{"name":"p\u0031"}}`,
		`{"type":"Person","data":{"n\u0061me":"p"}}`,
		`{"type":"Person","data":{"name":"pé"}}`,
		`{"type":"Person","data":{"nämе":"p"}}`,
		"{\"type\":\"Person\",\"data\":{\"name\":\"p\xff\"}}",
		"{\"type\":\"Person\",\"data\":{\"name\":\"p\tq\"}}",
		`{"type":"Person","data":{"name":"p","name":"p"}}`,
		`{"type":"Person","data":{"name":"p","age":1,"age":1}}`,
		`{"type":"Person","type":"Person","data":{"name":"p"}}`,
		`{"type":"Person","data":{"name":"p"},"data":{"name":"p"}}`,
		`{"type":"Person","edge":"Knows","data":{"name":"p"}}`,
		`{"type":"Person","from":"a","data":{"name":"p"}}`,
		`{"type":"Person","data":{"name":"p"},"extra":1}`,
		`{"type":"Person","data":null}`,
		`{"type":"Person","data":"x"}`,
		`{"type":"Person","data":[]}`,
		`{"type":5,"data":{"name":"p"}}`,
		`{"type":null,"data":{"name":"p"}}`,
		`{"type":"Person","data":{"name":"p"}}x`,
		`{"type":"Person","data":{"name":"p"}} {}`,
		`{"type":"Person","data":{"name":"p"},}`,
		`{"type":"Person","data":{"name":"p",}}`,
		`{"type":"Person","data":{,"name":"p"}}`,
		`{"type":"Person","data":{"name":"p" "age":1}}`,
		`{"type":"Person","data":{"name" "p"}}`,
		`{"type":"Person","data":{name:"p"}}`,
		`{"type":"Person","data":{"name":'p'}}`,
		`{"type":"Person","data":{"name":"p","age":01}}`,
		`{"type":"Person","data":{"name":"p","age":-}}`,
		`{"type":"Person","data":{"name":"p","age":+1}}`,
		`{"type":"Person","data":{"name":"p","age":1.}}`,
		`{"type":"Person","data":{"name":"p","age":.5}}`,
		`{"type":"Person","data":{"name":"p","age":1e}}`,
		`{"type":"Person","data":{"name":"p","age":1e+}}`,
		`{"type":"Person","data":{"name":"p","age":0x10}}`,
		`{"type":"Person","data":{"name":"p","age":NaN}}`,
		`{"type":"Person","data":{"name":"p","age":tru}}`,
		`{"type":"Person","data":{"name":"p","age":truex}}`,
		`{"type":"Person","data":{"name":"p","age":nul}}`,
		`{"type":"Person","data":{"name":"p","age":False}}`,
		`{"type":"Person","data":{"name":"p"}`,
		`{"type":"Person","data":{"name":"p"`,
		`{"type":"Person","data":{`,
		`{"type":"Person","data":`,
		`{"type":"Person",`,
		`{"data":{"name":"p"}}`,
		`{}`,
		`{"type":"Person","data":{` + manyKeys(fastMaxData+1) + `}}`,
	}
	for _, cat := range []*schema.Catalog{typed, general} {
		checkTakenDeclined(t, cat, taken, declined)
		if !checkFastLine(t, cat, []byte(`{"type":"Person","data":{`+manyKeys(fastMaxData)+`}}`)) {
			t.Errorf("%d data members: declined, want taken", fastMaxData)
		}
		for _, base := range []string{
			`{"type":"Person","data":{"name":"p1","age":33,"city":"c2","bio":"b"}}`,
			`{"type":"Person","data":{"name":"p1","age":33,"email":"e","role":"user","handle":"h"}}`,
			`{ "data" : { "age" : -1.5e+2 , "name" : "p" , "id" : "p" }, "type" : "Person" }`,
			`{"type":"Item","data":{"sku":"s","n":12,"u":7,"ok":true,"kind":"b","label":"l","f":null}}`,
			`{"type":"Note","data":{"id":"n","text":"t","score":0}}`,
			`{"type":"Doc","data":{"title":"t","born":"2024-06-01","weight":1.5,"big":false}}`,
		} {
			checkMutations(t, cat, base)
		}
	}
}

// manyKeys returns n distinct data members, "k0":0,"k1":1, ...
func manyKeys(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%d":%d`, i, i)
	}
	return sb.String()
}

// FuzzFastEdgeLine: wherever the fast path takes a line, the general
// parser gives the same record or error.
func FuzzFastEdgeLine(f *testing.F) {
	fuzzFastLines(f, `{"edge":"Knows","from":"p1","to":"p2"}`, `{ "to" : "b" , "from":"a", "edge":"WorksAt" }`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{}}`,
		`{"edge":"Knows","from":"p1","to":"p2","data":{"since":"2020-01-01","id":"k"}}`,
		`{"edge":"Rated","from":"p1","to":"p2","data":{"score":2.5,"note":"ok"}}`)
}

// FuzzFastNodeLine is FuzzFastEdgeLine from node lines.
func FuzzFastNodeLine(f *testing.F) {
	fuzzFastLines(f,
		`{"type":"Person","data":{"name":"p123","age":33,"city":"c23","bio":"graph agent memory"}}`,
		`{ "data" : { "age" : -1.5e+2 , "name" : "p" , "id" : "p" }, "type" : "Person" }`,
		`{"type":"Item","data":{"sku":"s","n":-9223372036854775808,"u":4294967295,"big":18446744073709551615,"f":1.5,"d":-2.5e-3,"ok":true,"kind":"a","label":"l"}}`,
		`{"type":"Note","data":{"id":"n","text":"t","score":null}}`,
		`{"type":"Doc","data":{"title":"t","born":"2024-06-01","weight":1.5,"big":9007199254740993,"slug":"s"}}`,
		`{"type":"Company","data":{"name":"c","size":10,"rating":4.5}}`,
		`{"type":"Pair","data":{"last":"a","first":"b","id":"x"}}`,
		`{"type":"Person","data":{"name":"p","age":[1],"x":{}}}`)
}

// fuzzFastLines fuzzes checkFastLine from seeds against a schema whose
// types take the typed path and one whose types take the general one.
func fuzzFastLines(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	cat, err := schema.Compile("test.pg", testSchema)
	if err != nil {
		f.Fatal(err)
	}
	typed, err := schema.Compile("typed.pg", fastTypedSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastLine(t, typed, line)
		checkFastLine(t, cat, line)
	})
}

// plainStringRef is fastPlainString a byte at a time.
func plainStringRef(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return string(b[i+1 : j]), j + 1, true
		case c < 0x20 || c >= 0x80 || c == '\\':
			return "", 0, false
		}
	}
	return "", 0, false
}

// TestFastPlainString holds fastPlainString (a table lookup a byte) to
// plainStringRef: every byte value at every place of bodies up to 20
// bytes long, followed by a quote, by plain bytes or by the end of the
// line, and before another byte value.
func TestFastPlainString(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		s, next, ok := fastPlainString(b, 0)
		rs, rnext, rok := plainStringRef(b, 0)
		if s != rs || next != rnext || ok != rok {
			t.Fatalf("%q: got %q, %d, %v; want %q, %d, %v", b, s, next, ok, rs, rnext, rok)
		}
	}
	for n := 0; n <= 20; n++ {
		for at := 0; at <= n; at++ {
			for c := range 256 {
				body := bytes.Repeat([]byte{'a'}, n)
				if at < n {
					body[at] = byte(c)
				}
				for _, tail := range []string{``, `"`, `"}`, `"xxxxxxxxxx`, `bcdefghijklmnop"`, "\x00\"", "\x7f\"", "\x80\""} {
					line := append(append([]byte{'"'}, body...), tail...)
					check(line)
					if at < n {
						line2 := bytes.Clone(line)
						if at+2 < len(line2) {
							line2[at+2] = byte(255 - c)
						}
						check(line2)
					}
				}
			}
		}
	}
}

// checkTakenDeclined requires the fast path to take every line of taken
// and decline every line of declined, matching the general parser on each.
func checkTakenDeclined(t *testing.T, cat *schema.Catalog, taken, declined []string) {
	t.Helper()
	for _, l := range taken {
		if !checkFastLine(t, cat, []byte(l)) {
			t.Errorf("%q: declined, want taken", l)
		}
	}
	for _, l := range declined {
		if checkFastLine(t, cat, []byte(l)) {
			t.Errorf("%q: taken, want declined", l)
		}
	}
}
