package exec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/value"
)

// readAll reads every record, stopping at the first error.
func readJSONL(t testing.TB, input string) ([]Record, error) {
	t.Helper()
	return readAll(NewReader(strings.NewReader(input), testCatalog(t), ReaderOptions{}))
}

// readAll returns every record Next gives, up to the first error.
func readAll(r *Reader) ([]Record, error) {
	var recs []Record
	for {
		rec, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
}

func TestReaderRecords(t *testing.T) {
	input := strings.Join([]string{
		``,
		`{"type": "Person", "data": {"name": "Alice", "age": 30, "role": "admin"}}`,
		`   `,
		`{"data": {"id": "Bob", "name": "Bob"}, "type": "Person"}`,
		`{"type": "Company", "data": {"name": "Acme"}}` + "\r",
		`{"type": "Doc", "data": {"title": "t", "id": "doc-1", "tags": ["x"], "born": "2024-06-01", "embedding": [1, 2, 3]}}`,
		`{"type": "Doc", "data": {"title": "no id"}}`,
		`{"type": "Pair", "data": {"first": "John", "last": "Smith"}}`,
		`{"edge": "knows", "from": "Alice", "to": "Bob"}`,
		`{"edge": "WorksAt", "from": "Alice", "to": "Acme", "data": {"id": "e1", "title": "CEO"}}`,
		`{"type": "Person"}` + "\n", // validated later: name is missing -> error below
	}, "\n")
	recs, err := readJSONL(t, input)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 11 || ie.Field != "data.name" || ie.Msg != "node Person missing @key property 'name'" {
		t.Fatalf("last line: got %v", err)
	}
	want := []Record{
		&NodeRecord{Type: "Person", ID: "Alice", Line: 2, Values: map[string]any{"name": "Alice", "age": int64(30), "role": "admin", "email": nil, "handle": nil}},
		&NodeRecord{Type: "Person", ID: "Bob", Line: 4, Values: map[string]any{"name": "Bob", "age": nil, "role": nil, "email": nil, "handle": nil}},
		&NodeRecord{Type: "Company", ID: "Acme", Line: 5, Values: map[string]any{"name": "Acme", "size": nil, "rating": nil}},
		&NodeRecord{Type: "Doc", ID: "doc-1", Line: 6, Values: map[string]any{"title": "t", "slug": nil, "embedding": []float32{1, 2, 3}, "tags": []any{"x"}, "born": int32(19875), "at": nil, "blob": nil, "weight": nil, "big": nil}},
		&NodeRecord{Type: "Doc", ID: "", Line: 7, Values: map[string]any{"title": "no id", "slug": nil, "embedding": nil, "tags": nil, "born": nil, "at": nil, "blob": nil, "weight": nil, "big": nil}},
		&NodeRecord{Type: "Pair", ID: `["John","Smith"]`, Line: 8, Values: map[string]any{"first": "John", "last": "Smith", "born": nil}},
		&EdgeRecord{Type: "Knows", From: "Alice", To: "Bob", Line: 9, Values: map[string]any{"since": nil}},
		&EdgeRecord{Type: "WorksAt", ID: "e1", From: "Alice", To: "Acme", Line: 10, Values: map[string]any{"title": "CEO"}},
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(recs[i], want[i]) {
			t.Errorf("record %d:\n got %#v\nwant %#v", i, recs[i], want[i])
		}
	}
}

func TestPairKeyOrder(t *testing.T) {
	// The composite id orders members by stable property id (alphabetical
	// at creation), not by @key argument order, and an explicit data.id
	// must match it.
	recs, err := readJSONL(t, `{"type": "Pair", "data": {"first": "John", "last": "Smith"}}`)
	if err != nil {
		t.Fatal(err)
	}
	id := recs[0].(*NodeRecord).ID
	if id != `["John","Smith"]` {
		t.Fatalf("id %s, want members alphabetical by property name", id)
	}
	if _, err := readJSONL(t, `{"type": "Pair", "data": {"first": "John", "last": "Smith", "id": `+quoteJSON(id)+`}}`); err != nil {
		t.Fatalf("explicit canonical id rejected: %v", err)
	}
}

func quoteJSON(s string) string { return string(value.AppendJSONString(nil, s)) }

func TestReaderErrors(t *testing.T) {
	const ok = `{"type": "Person", "data": {"name": "Ok"}}`
	tests := []struct {
		name  string
		input string
		line  int
		field string
		msg   string
	}{
		{"invalid json", ok + "\n{\"type\": ", 2, "", "invalid JSON at column 10: unexpected end of line"},
		{"syntax error", `{"type" "Person"}`, 1, "", "invalid JSON at column 9: invalid character '\"' after object key"},
		{"non-string key", `{type: 1}`, 1, "", "invalid JSON at column 2: invalid character 't' looking for beginning of object key string"},
		{"trailing comma", `{"type": "Person",}`, 1, "", "invalid JSON at column 19: invalid character '}' looking for beginning of object key string"},
		{"bad escape", `{"type": "Per\qson"}`, 1, "", "invalid JSON at column 15: invalid character 'q' in string escape code"},
		{"bad unicode escape", `{"type": "\u12G4"}`, 1, "", "invalid JSON at column 13: invalid \\u escape in string literal"},
		{"control char in string", "{\"type\": \"a\tb\"}", 1, "", "invalid JSON at column 12: invalid character '\\t' in string literal"},
		{"leading zero", `{"type": 01}`, 1, "", "invalid JSON at column 11: invalid character '1' after object key:value pair"},
		{"bare minus", `{"type": -}`, 1, "", "invalid JSON at column 11: invalid character '}' in numeric literal"},
		{"dangling decimal", `{"type": 1.}`, 1, "", "invalid JSON at column 12: invalid character '}' after decimal point in numeric literal"},
		{"bad exponent", `{"type": 1e}`, 1, "", "invalid JSON at column 12: invalid character '}' in exponent of numeric literal"},
		{"bad literal", `{"type": tru}`, 1, "", "invalid JSON at column 13: invalid character '}' in literal true"},
		{"unclosed array", `{"type": [1, 2}`, 1, "", "invalid JSON at column 15: invalid character '}' after array element"},
		{"not an object", `["type"]`, 1, "", "expected a JSON object, got array"},
		{"scalar line", `42`, 1, "", "expected a JSON object, got number"},
		{"trailing object", ok + ` {}`, 1, "", "unexpected data after the JSON object at column 44 (one record per line)"},
		{"pretty printed", "{\n\"type\": \"Person\"}", 1, "", "invalid JSON at column 2: unexpected end of line"},
		{"neither", `{"data": {}}`, 1, "", "expected 'type' or 'edge' field"},
		{"both", `{"type": "Person", "edge": "Knows"}`, 1, "", "record has both 'type' and 'edge'; expected exactly one"},
		{"duplicate top jsonMember", `{"type": "Person", "type": "Person", "data": {"name": "x"}}`, 1, "type", "duplicate field 'type'"},
		{"duplicate data jsonMember", `{"type": "Person", "data": {"name": "x", "name": "y"}}`, 1, "data.name", "duplicate field 'data.name'"},
		{"unknown top field node", `{"type": "Person", "from": "x", "data": {"name": "x"}}`, 1, "from", "unknown field 'from' for node record"},
		{"unknown top field edge", `{"edge": "Knows", "from": "a", "to": "b", "id": "x"}`, 1, "id", "unknown field 'id' for edge record"},
		{"type not string", `{"type": 3}`, 1, "type", "field 'type' must be a string, got number"},
		{"edge not string", `{"edge": null, "from": "a", "to": "b"}`, 1, "edge", "field 'edge' must be a string, got null"},
		{"data not object", `{"type": "Person", "data": [1]}`, 1, "data", "field 'data' must be an object, got array"},
		{"data null", `{"type": "Person", "data": null}`, 1, "data", "field 'data' must be an object, got null"},
		{"unknown node type", `{"type": "person", "data": {}}`, 1, "type", "unknown node type 'person'"},
		{"unknown edge type", `{"edge": "Likes", "from": "a", "to": "b"}`, 1, "edge", "unknown edge type 'Likes'"},
		{"edge missing from", `{"edge": "Knows", "to": "b"}`, 1, "from", "edge missing 'from'"},
		{"edge missing to", `{"edge": "Knows", "from": "a"}`, 1, "to", "edge missing 'to'"},
		{"edge from not string", `{"edge": "Knows", "from": 1, "to": "b"}`, 1, "from", "field 'from' must be a string node id, got number"},
		{"unknown data field", `{"type": "Person", "data": {"name": "x", "nick": "y"}}`, 1, "data.nick", "unknown input field 'nick' for 'node:Person'"},
		{"unknown edge data field", `{"edge": "Knows", "from": "a", "to": "b", "data": {"weight": 1}}`, 1, "data.weight", "unknown input field 'weight' for 'edge:Knows'"},
		{"reserved src on edge", `{"edge": "Knows", "from": "a", "to": "b", "data": {"src": "a"}}`, 1, "data.src", "reserved field 'src' for 'edge:Knows'"},
		{"reserved dst on edge", `{"edge": "Knows", "from": "a", "to": "b", "data": {"dst": "b"}}`, 1, "data.dst", "reserved field 'dst' for 'edge:Knows'"},
		{"reserved rowid", `{"type": "Person", "data": {"name": "x", "_rowid": 1}}`, 1, "data._rowid", "reserved field '_rowid' for 'node:Person'"},
		{"reserved row version", `{"type": "Person", "data": {"_row_last_updated_at_version": 1}}`, 1, "data._row_last_updated_at_version", "reserved field '_row_last_updated_at_version' for 'node:Person'"},
		{"empty id", `{"edge": "Knows", "from": "a", "to": "b", "data": {"id": ""}}`, 1, "data.id", "field 'data.id' must not be empty"},
		{"id not string", `{"type": "Doc", "data": {"title": "t", "id": 7}}`, 1, "data.id", "field 'data.id' must be a string, got number"},
		{"wrong json type", `{"type": "Person", "data": {"name": "x", "age": "30"}}`, 1, "data.age", "property 'age' expects I32, got string"},
		{"object value", `{"type": "Person", "data": {"name": {"first": "x"}}}`, 1, "data.name", "property 'name' expects String, got object"},
		{"int range", `{"type": "Person", "data": {"name": "x", "age": 3000000000}}`, 1, "data.age", "property 'age' value 3000000000 exceeds Int32 range"},
		{"vector dims", `{"type": "Doc", "data": {"title": "t", "embedding": [1, 2]}}`, 1, "data.embedding", "vector property 'embedding' expects 3 dimensions, got 2"},
		{"missing key", ok + "\n\n" + `{"type": "Person", "data": {"age": 3}}`, 3, "data.name", "node Person missing @key property 'name'"},
		{"null key", `{"type": "Person", "data": {"name": null}}`, 1, "data.name", "node Person missing @key property 'name'"},
		{"non-canonical id", `{"type": "Person", "data": {"id": "alice", "name": "Alice"}}`, 1, "data.id", "node Person data.id 'alice' does not match the canonical @key id 'Alice'"},
		{"missing composite key jsonMember", `{"type": "Pair", "data": {"first": "John"}}`, 1, "data.last", "node Pair missing @key property 'last'"},
		{"non-nullable missing", `{"type": "Doc", "data": {}}`, 1, "data.title", "non-nullable property 'title' has null or invalid values"},
		{"non-nullable null", `{"type": "Doc", "data": {"title": null}}`, 1, "data.title", "non-nullable property 'title' has null or invalid values"},
		{"enum", `{"type": "Person", "data": {"name": "x", "role": "root"}}`, 1, "data.role", "invalid enum value 'root' for Person.role (expected: admin, guest, user)"},
		{"range max", `{"type": "Person", "data": {"name": "x", "age": 300}}`, 1, "data.age", "@range violation on Person.age: value 300 > max 150"},
		{"check", `{"type": "Person", "data": {"name": "x", "handle": "9lives"}}`, 1, "data.handle", "@check violation on Person.handle: value '9lives' does not match pattern '^[a-z]+'"},
		{"edge enum-free required ok then bad json", `{"edge": "Knows", "from": "a", "to": "b", "data": {"since": "yesterday"}}`, 1, "data.since", `property 'since' invalid Date 'yesterday' (expected "YYYY-MM-DD" or integer days)`},
		{"deep nesting", `{"type": "Doc", "data": {"title": "t", "tags": ` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, 1, "data.tags", "JSON nesting exceeds 32 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readJSONL(t, tc.input)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want *InputError", err)
			}
			if ie.Line != tc.line || ie.Field != tc.field || ie.Msg != tc.msg {
				t.Fatalf("got line %d field %q msg %q\nwant line %d field %q msg %q", ie.Line, ie.Field, ie.Msg, tc.line, tc.field, tc.msg)
			}
			if !strings.Contains(ie.Error(), "line ") || (tc.field != "" && !strings.Contains(ie.Error(), tc.field)) {
				t.Fatalf("Error() %q does not name line and field", ie.Error())
			}
		})
	}
}

func TestReaderStringDecoding(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"plain", `"Alice"`, "Alice"},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t"},
		{"unicode escape", `"\u00e9\u4e2d"`, "é中"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"raw utf8", `"héllo"`, "héllo"},
		{"escaped replacement character", `"\ufffd"`, "\ufffd"},
		// Not text: refused with ErrInvalidText (want ""), never repaired.
		{"lone high surrogate", `"\ud83dx"`, ""},
		{"lone low surrogate", `"\ude00"`, ""},
		{"high then non-low", `"\ud83d\u0041"`, ""},
		{"invalid utf8", "\"a\xffb\"", ""},
		{"invalid utf8 after escape", "\"\\n\xff\"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := readJSONL(t, `{"type": "Person", "data": {"name": `+tc.raw+`}}`)
			if tc.want == "" {
				if !errors.Is(err, ErrInvalidText) || fieldOf(err) != "data.name" {
					t.Fatalf("got %v, want ErrInvalidText naming data.name", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := recs[0].(*NodeRecord).ID; got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReaderDuplicateInWideObject(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type": "Doc", "data": {"title": "t"`)
	for i := range 40 {
		b.WriteString(`, "k` + strconv.Itoa(i) + `": 1`)
	}
	b.WriteString(`, "k7": 2}}`)
	_, err := readJSONL(t, b.String())
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "data.k7" || ie.Msg != "duplicate field 'data.k7'" {
		t.Fatalf("got %v", err)
	}
}

func TestInputErrorUnwrap(t *testing.T) {
	_, err := readJSONL(t, `{"type": "Person", "data": {"name": "x", "role": "root"}}`)
	var ce *ConstraintError
	if !errors.As(err, &ce) || ce.Kind != ConstraintEnum || ce.Type != "Person" || ce.Prop != "role" {
		t.Fatalf("got %#v", err)
	}
	_, err = readJSONL(t, `{"type": "Person", "data": {"name": "x", "age": 1.5}}`)
	var ve *value.Error
	if !errors.As(err, &ve) || ve.Name != "age" {
		t.Fatalf("got %#v", err)
	}
	want := "line 1, field 'data.age': property 'age' expects an integer for I32, got 1.5"
	if err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestReaderContinuesAfterInputError(t *testing.T) {
	input := `{"type": "Nope"}` + "\n" + `{"type": "Person", "data": {"name": "A"}}` + "\n"
	r := NewReader(strings.NewReader(input), testCatalog(t), ReaderOptions{})
	ctx := context.Background()
	if _, err := r.Next(ctx); err == nil {
		t.Fatal("want error on line 1")
	}
	rec, err := r.Next(ctx)
	if err != nil || rec.InputLine() != 2 {
		t.Fatalf("line 2: %v %v", rec, err)
	}
	if _, err := r.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
	if _, err := r.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("EOF must be sticky, got %v", err)
	}
}

func TestReaderLineLimit(t *testing.T) {
	long := `{"type": "Doc", "data": {"title": "` + strings.Repeat("x", 500) + `"}}`
	input := long + "\n" + `{"type": "Person", "data": {"name": "A"}}`
	// The long line is reported as soon as the limit is passed, and the
	// error is final: the rest of the line is never read.
	r := NewReader(strings.NewReader(input), testCatalog(t), ReaderOptions{MaxLineBytes: 100})
	ctx := context.Background()
	for range 2 {
		_, err := r.Next(ctx)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Line != 1 || ie.Msg != "line exceeds 100 bytes" {
			t.Fatalf("got %v", err)
		}
	}
}

// TestReaderEndlessLineStopsAtLimit: a line that never ends (/dev/zero, a
// pipe whose writer never closes) is refused after about the limit's worth
// of bytes, not read to the end.
func TestReaderEndlessLineStopsAtLimit(t *testing.T) {
	src := &countingZeros{}
	r := NewReader(src, testCatalog(t), ReaderOptions{MaxLineBytes: 1 << 20})
	_, err := r.Next(context.Background())
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 1 {
		t.Fatalf("got %v", err)
	}
	if src.n > 2<<20 {
		t.Fatalf("read %d bytes of an endless line with a 1 MiB limit", src.n)
	}
}

// countingZeros is an endless stream of zero bytes that counts what is read.
type countingZeros struct{ n int }

func (z *countingZeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += len(p)
	return len(p), nil
}

// TestReaderRejectsInvalidText: invalid UTF-8 and lone surrogate escapes in
// keys or values are refused with ErrInvalidText naming line and field,
// never replaced (which would collapse distinct keys).
func TestReaderRejectsInvalidText(t *testing.T) {
	tests := []struct {
		line, field string
	}{
		{"{\"type\": \"Person\", \"data\": {\"name\": \"X\xff\xfeY\"}}", "data.name"},
		{`{"type": "Person", "data": {"name": "X\ud800Y"}}`, "data.name"},
		{`{"type": "Person", "data": {"name": "\udc00"}}`, "data.name"},
		{"{\"type\": \"Person\", \"data\": {\"na\xffme\": \"x\"}}", "data"},
		{"{\"type\": \"Pers\xc3\", \"data\": {}}", "type"},
		{`{"edge": "knows", "from": "A\ud83d", "to": "B"}`, "from"},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader("\n"+tt.line+"\n"), testCatalog(t), ReaderOptions{})
		_, err := r.Next(context.Background())
		var ie *InputError
		if !errors.As(err, &ie) || !errors.Is(err, ErrInvalidText) || ie.Line != 2 || ie.Field != tt.field {
			t.Errorf("%q: got %v (field %q), want ErrInvalidText at line 2 field %q", tt.line, err, fieldOf(err), tt.field)
		}
	}
	// A valid surrogate pair and valid multi-byte text still load.
	recs, err := readJSONL(t, `{"type": "Person", "data": {"name": "\ud83d\ude00 é"}}`)
	if err != nil || recs[0].(*NodeRecord).Values["name"] != "😀 é" {
		t.Fatalf("valid text: %v %v", recs, err)
	}
}

func fieldOf(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Field
	}
	return ""
}

func TestReaderLongLineAcrossBuffer(t *testing.T) {
	// Lines longer than the bufio buffer (64 KiB) are reassembled.
	title := strings.Repeat("y", 200<<10)
	recs, err := readJSONL(t, `{"type": "Doc", "data": {"title": "`+title+`"}}`)
	if err != nil || len(recs) != 1 || recs[0].(*NodeRecord).Values["title"] != title {
		t.Fatalf("got %d records, %v", len(recs), err)
	}
}

func TestReaderContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := NewReader(strings.NewReader(`{"type": "Person", "data": {"name": "A"}}`), testCatalog(t), ReaderOptions{})
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestReaderIOErrorIsFinal(t *testing.T) {
	boom := errors.New("disk on fire")
	r := NewReader(failingReader{boom}, testCatalog(t), ReaderOptions{})
	for range 2 {
		if _, err := r.Next(context.Background()); !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
	}
}

// countingReader counts bytes handed out, to show the reader streams.
type countingReader struct {
	r *bufio.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestReaderStreams(t *testing.T) {
	// 10k lines, ~450 KiB: after the first record only a bounded prefix
	// may have been consumed from the source.
	var b strings.Builder
	for i := range 10000 {
		b.WriteString(`{"type": "Person", "data": {"name": "p` + strconv.Itoa(i) + `"}}` + "\n")
	}
	src := &countingReader{r: bufio.NewReader(strings.NewReader(b.String()))}
	r := NewReader(src, testCatalog(t), ReaderOptions{})
	if _, err := r.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if src.n > 128<<10 {
		t.Fatalf("read %d bytes before yielding the first record", src.n)
	}
}

// TestRecentNames: the parser's cache of recent interned keys finds
// exactly the names added among the last eight, never an empty name, and
// a record's keys read through it are the interned strings.
func TestRecentNames(t *testing.T) {
	var r recentNames
	if _, ok := r.find([]byte("")); ok {
		t.Fatal("empty cache found the empty name")
	}
	for i := range 20 {
		r.add(fmt.Sprintf("k%d", i))
		for j := 0; j <= i; j++ {
			s, ok := r.find([]byte(fmt.Sprintf("k%d", j)))
			if want := i-j < 8; ok != want || (ok && s != fmt.Sprintf("k%d", j)) {
				t.Fatalf("after k0..k%d: find(k%d) = %q, %v; want found %v", i, j, s, ok, want)
			}
		}
	}
	if _, ok := r.find([]byte("k1")); ok {
		t.Fatal("an evicted name was found")
	}
	cat := testCatalog(t)
	rd := NewReader(strings.NewReader(`{"type":"Company","data":{"name":"a","size":1}}`+"\n"+`{"type":"Company","data":{"size":2,"name":"b"}}`+"\n"), cat, ReaderOptions{})
	for _, want := range []map[string]string{{"name": "a", "size": "1"}, {"name": "b", "size": "2"}} {
		rec, err := rd.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := rec.(*NodeRecord).Values
		if fmt.Sprint(got["name"]) != want["name"] || fmt.Sprint(got["size"]) != want["size"] {
			t.Fatalf("values %v, want %v", got, want)
		}
	}
	if _, ok := rd.recent.find([]byte("size")); !ok {
		t.Fatal("a data key was not remembered")
	}
}

// TestReaderRecordsOutliveBuffer: a line is read as a view of the
// reader's buffer (readLine), so no record Next returns may point into
// it: records kept over many refills of the buffer still hold their own
// lines' values (ids, endpoints, strings, numbers, CRLF endings).
func TestReaderRecordsOutliveBuffer(t *testing.T) {
	var in strings.Builder
	const n = 20000 // ~1.2 MB: many 64 KiB buffers
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(&in, `{"type": "Company", "data": {"name": "c%d", "size": %d}}`+"\r\n", i, i)
		} else {
			fmt.Fprintf(&in, `{"edge": "Knows", "from": "p%d", "to": "q%d", "data": {"id": "e%d"}}`+"\n", i, i, i)
		}
	}
	recs, err := readJSONL(t, in.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for i, rec := range recs {
		switch r := rec.(type) {
		case *NodeRecord:
			if r.ID != fmt.Sprintf("c%d", i) || r.Values["name"] != r.ID || fmt.Sprint(r.Values["size"]) != strconv.Itoa(i) {
				t.Fatalf("record %d: %+v", i, r)
			}
		case *EdgeRecord:
			if r.From != fmt.Sprintf("p%d", i) || r.To != fmt.Sprintf("q%d", i) || r.ID != fmt.Sprintf("e%d", i) {
				t.Fatalf("record %d: %+v", i, r)
			}
		}
	}
}
