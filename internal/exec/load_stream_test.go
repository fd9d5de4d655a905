package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// streamSchema has every cross-row constraint a chunked load must carry
// across chunks: a @key, a node @unique, an unkeyed type with explicit ids
// and a @unique, an edge @unique(src, dst) and a @card.
const streamSchema = `
node Person { name: String @key  age: I32?  email: String? @unique  bio: String? }
node Doc { title: String  slug: String? @unique }
edge Knows: Person -> Person { since: Date?  @unique(src, dst) }
edge Wrote: Person -> Doc @card(0..1)
`

// streamBase is committed before each streamed load.
const streamBase = `{"type":"Person","data":{"name":"alice","age":30,"email":"alice@x"}}
{"type":"Person","data":{"name":"bob","age":40}}
{"type":"Doc","data":{"id":"d-a","title":"A","slug":"a"}}
{"edge":"Knows","from":"alice","to":"bob","data":{"id":"k-ab"}}
{"edge":"Wrote","from":"alice","to":"d-a","data":{"id":"w-a"}}
`

// recStore records the data objects (fragments) written and deleted.
type recStore struct {
	storage.Store
	mu      sync.Mutex
	frags   []string
	deleted map[string]bool
}

func (s *recStore) Put(ctx context.Context, key string, data []byte) (storage.Info, error) {
	if strings.Contains(key, "/data/") {
		s.mu.Lock()
		s.frags = append(s.frags, key)
		s.mu.Unlock()
	}
	return s.Store.Put(ctx, key, data)
}

func (s *recStore) Delete(ctx context.Context, key string) error {
	s.mu.Lock()
	if s.deleted == nil {
		s.deleted = map[string]bool{}
	}
	s.deleted[key] = true
	s.mu.Unlock()
	return s.Store.Delete(ctx, key)
}

// written returns the fragments written since mark (a len(frags) value).
func (s *recStore) written(mark int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.frags[mark:])
}

func (s *recStore) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.frags)
}

func streamGraph(t testing.TB) (*Graph, *recStore) {
	t.Helper()
	ctx := context.Background()
	st := &recStore{Store: storage.NewMem()}
	// No auto-compaction: the tests look at the fragments a load wrote.
	g, err := Init(ctx, st, "stream.pg", streamSchema, "tester", Options{NoAutoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engCheck(t, st) })
	if _, err := g.Load(ctx, strings.NewReader(streamBase), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	return g, st
}

func streamExport(t testing.TB, g *Graph) string {
	t.Helper()
	var out bytes.Buffer
	if err := g.Export(context.Background(), Target{}, nil, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// headFragments returns every fragment key the head's table states name.
func headFragments(t testing.TB, g *Graph) map[string]bool {
	t.Helper()
	ctx := context.Background()
	snap, err := g.Resolve(ctx, Target{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for tk := range snap.Commit().Tables {
		st, err := snap.State(ctx, tk)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range st.Fragments() {
			out[f.Key] = true
		}
	}
	return out
}

// streamInputs are loads many times the chunk size used below.
func streamInputs() map[LoadMode]string {
	var app, mrg, ovw strings.Builder
	// Append: edges ahead of the nodes they reference (forward references
	// across chunks), uniques spread over chunks.
	for i := range 40 {
		fmt.Fprintf(&app, `{"edge":"Knows","from":"p%02d","to":"alice","data":{"id":"k%02d","since":"2020-01-%02d"}}`+"\n", i, i, i%28+1)
	}
	for i := range 40 {
		fmt.Fprintf(&app, `{"type":"Person","data":{"name":"p%02d","age":%d,"email":"p%02d@x","bio":"%s"}}`+"\n", i, i, i, strings.Repeat("b", i))
		fmt.Fprintf(&app, `{"type":"Doc","data":{"id":"d%02d","title":"T%d","slug":"s%02d"}}`+"\n", i, i, i)
		fmt.Fprintf(&app, `{"edge":"Wrote","from":"p%02d","to":"d%02d","data":{"id":"w%02d"}}`+"\n", i, i, i)
	}
	// Merge: the same unkeyed ids again and again across chunks (the last
	// occurrence wins), two docs swapping slugs (only the final images must
	// be unique), a committed doc and edge replaced, a Wrote edge moved.
	for round := range 4 {
		for i := range 15 {
			fmt.Fprintf(&mrg, `{"type":"Doc","data":{"id":"m%02d","title":"round %d","slug":"m%02d-%d"}}`+"\n", i, round, i, round)
			fmt.Fprintf(&mrg, `{"edge":"Knows","from":"alice","to":"bob","data":{"id":"k-ab","since":"2021-0%d-01"}}`+"\n", round+1)
		}
	}
	mrg.WriteString(`{"type":"Doc","data":{"id":"x1","slug":"swap-1","title":"x1"}}` + "\n")
	mrg.WriteString(`{"type":"Doc","data":{"id":"x2","slug":"swap-2","title":"x2"}}` + "\n")
	for i := range 10 {
		fmt.Fprintf(&mrg, `{"type":"Person","data":{"name":"q%d","age":%d}}`+"\n", i, i)
	}
	mrg.WriteString(`{"type":"Doc","data":{"id":"x1","slug":"swap-2","title":"x1'"}}` + "\n")
	mrg.WriteString(`{"type":"Doc","data":{"id":"x2","slug":"swap-1","title":"x2'"}}` + "\n")
	mrg.WriteString(`{"type":"Doc","data":{"id":"d-a","title":"A'","slug":"a"}}` + "\n")
	mrg.WriteString(`{"type":"Person","data":{"name":"alice","age":31,"email":"alice@x"}}` + "\n")
	mrg.WriteString(`{"edge":"Wrote","from":"q1","to":"d-a","data":{"id":"w-a"}}` + "\n")
	// Overwrite: Person and Knows replaced (alice and bob kept, so the
	// untouched Wrote table stays valid), Doc and Wrote untouched.
	for i := range 30 {
		fmt.Fprintf(&ovw, `{"type":"Person","data":{"name":"o%02d","email":"o%02d@x"}}`+"\n", i, i)
		fmt.Fprintf(&ovw, `{"edge":"Knows","from":"o%02d","to":"bob","data":{"id":"ko%02d"}}`+"\n", i, i)
	}
	ovw.WriteString(`{"type":"Person","data":{"name":"alice","age":1}}` + "\n")
	ovw.WriteString(`{"type":"Person","data":{"name":"bob","age":2}}` + "\n")
	return map[LoadMode]string{LoadAppend: app.String(), LoadMerge: mrg.String(), LoadOverwrite: ovw.String()}
}

// TestLoadStreamChunkedEqualsSingle: a load many times the chunk size
// publishes exactly the graph the same load does in one chunk, in every
// mode, writing one fragment per chunk.
func TestLoadStreamChunkedEqualsSingle(t *testing.T) {
	ctx := context.Background()
	for mode, data := range streamInputs() {
		t.Run(string(mode), func(t *testing.T) {
			one, _ := streamGraph(t)
			if _, err := one.Load(ctx, strings.NewReader(data), LoadRequest{Mode: mode}); err != nil {
				t.Fatalf("single-chunk load: %v", err)
			}
			many, st := streamGraph(t)
			mark := st.mark()
			res, err := many.Load(ctx, strings.NewReader(data), LoadRequest{Mode: mode, ChunkRecords: 7})
			if err != nil {
				t.Fatalf("chunked load: %v", err)
			}
			if want := int(res.Total) / 7; len(st.written(mark)) < want {
				t.Fatalf("chunked load wrote %d fragments, want at least %d", len(st.written(mark)), want)
			}
			if a, b := streamExport(t, one), streamExport(t, many); a != b {
				t.Fatalf("chunked load differs from single-chunk load:\n%s\n---\n%s", a, b)
			}
			// A chunk bound in bytes gives the same graph too.
			bytesG, _ := streamGraph(t)
			if _, err := bytesG.Load(ctx, strings.NewReader(data), LoadRequest{Mode: mode, ChunkBytes: 2000}); err != nil {
				t.Fatal(err)
			}
			if a, b := streamExport(t, one), streamExport(t, bytesG); a != b {
				t.Fatalf("byte-chunked load differs:\n%s\n---\n%s", a, b)
			}
		})
	}
	// The merge's last occurrences won.
	g, _ := streamGraph(t)
	if _, err := g.Load(ctx, strings.NewReader(streamInputs()[LoadMerge]), LoadRequest{Mode: LoadMerge, ChunkRecords: 5}); err != nil {
		t.Fatal(err)
	}
	out := streamExport(t, g)
	for _, want := range []string{
		`{"type":"Doc","data":{"id":"m03","title":"round 3","slug":"m03-3"}}`,
		`{"type":"Doc","data":{"id":"x1","title":"x1'","slug":"swap-2"}}`,
		`{"edge":"Knows","from":"alice","to":"bob","data":{"id":"k-ab","since":"2021-04-01"}}`,
		`{"edge":"Wrote","from":"q1","to":"d-a","data":{"id":"w-a"}}`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("merge result lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"round 0"`) || strings.Count(out, `"id":"k-ab"`) != 1 {
		t.Fatalf("superseded images visible:\n%s", out)
	}
}

// TestLoadStreamLateErrors: an error found in a late chunk, or only after
// the last one, names its line and field, leaves the graph unchanged, and
// the fragments already written for earlier chunks are named by no table
// state (and were deleted).
func TestLoadStreamLateErrors(t *testing.T) {
	var prefix strings.Builder
	for i := range 30 {
		fmt.Fprintf(&prefix, `{"type":"Person","data":{"name":"p%02d","email":"p%02d@x"}}`+"\n", i, i)
		fmt.Fprintf(&prefix, `{"type":"Doc","data":{"id":"d%02d","title":"t","slug":"s%02d"}}`+"\n", i, i)
	}
	fmt.Fprintf(&prefix, `{"edge":"Wrote","from":"p00","to":"d00","data":{"id":"w00"}}`+"\n")
	const n = 62 // the first line after the prefix
	tests := []struct {
		name  string
		mode  LoadMode
		tail  string
		line  int
		field string
		check func(error) bool
	}{
		{"bad value", LoadAppend, `{"type":"Person","data":{"name":"z","age":"old"}}`, n, "data.age", nil},
		{"dangling edge", LoadAppend, `{"edge":"Knows","from":"p03","to":"nobody"}`, n, "to", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Kind == ConstraintReference && ce.Msg == "dst 'nobody' not found in Person"
		}},
		{"duplicate key across chunks", LoadMerge, `{"type":"Person","data":{"name":"p01"}}`, n, "data.name", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Kind == ConstraintUnique
		}},
		{"duplicate explicit id across chunks", LoadAppend, `{"type":"Doc","data":{"id":"d02","title":"again"}}`, n, "data.id", func(err error) bool {
			var kc *KeyConflictError
			return errors.As(err, &kc) && kc.TypeKey == "node:Doc" && kc.EntityID == "d02"
		}},
		{"unique across chunks", LoadAppend, `{"type":"Person","data":{"name":"z","email":"p04@x"}}`, n, "data.email", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Kind == ConstraintUnique && strings.Contains(ce.Msg, "held by 'p04' and 'z'")
		}},
		{"unique against committed", LoadMerge, `{"type":"Doc","data":{"id":"d99","title":"t","slug":"a"}}`, n, "data.slug", nil},
		// @card names the source's first staged edge (line n-1).
		{"card across chunks", LoadAppend, `{"edge":"Wrote","from":"p00","to":"d05","data":{"id":"w01"}}`, n - 1, "from", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Kind == ConstraintCard
		}},
		{"append of a committed id", LoadAppend, `{"type":"Person","data":{"name":"bob"}}`, n, "data.id", func(err error) bool {
			var kc *KeyConflictError
			return errors.As(err, &kc) && kc.EntityID == "bob"
		}},
		{"overwrite orphaning a retained edge", LoadOverwrite, `{"type":"Person","data":{"name":"bob"}}`, 0, "", func(err error) bool {
			var ce *ConstraintError
			return errors.As(err, &ce) && ce.Kind == ConstraintReference && strings.Contains(ce.Msg, "'alice' not found in Person")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g, st := streamGraph(t)
			before := engSnap(t, g, "main")
			mark := st.mark()
			_, err := g.Load(ctx, strings.NewReader(prefix.String()+tc.tail+"\n"), LoadRequest{Mode: tc.mode, ChunkRecords: 8})
			if err == nil {
				t.Fatal("load succeeded")
			}
			var ie *InputError
			if tc.line > 0 && (!errors.As(err, &ie) || ie.Line != tc.line || ie.Field != tc.field) {
				t.Fatalf("err = %v (%T), want line %d field %q", err, err, tc.line, tc.field)
			}
			if tc.check != nil && !tc.check(err) {
				t.Fatalf("err = %v has the wrong type", err)
			}
			if !engSnap(t, g, "main").equal(before) {
				t.Fatal("failed load changed the graph")
			}
			written := st.written(mark)
			if len(written) < 60/8 {
				t.Fatalf("only %d fragments written before the failure", len(written))
			}
			head := headFragments(t, g)
			for _, k := range written {
				if head[k] {
					t.Fatalf("head references fragment %s of a failed load", k)
				}
				if !st.deleted[k] {
					t.Fatalf("fragment %s of a failed load left behind", k)
				}
			}
			if _, err := g.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"after"}}`), LoadRequest{Mode: LoadAppend}); err != nil {
				t.Fatalf("next load: %v", err)
			}
		})
	}
}

// oneShot is an input that can be read once: a rebase must not read it
// again.
type oneShot struct {
	t   *testing.T
	r   io.Reader
	eof bool
}

func (o *oneShot) Read(p []byte) (int, error) {
	if o.eof {
		o.t.Error("input read again after EOF")
		return 0, io.ErrUnexpectedEOF
	}
	n, err := o.r.Read(p)
	if err == io.EOF {
		o.eof = true
	}
	return n, err
}

// TestLoadStreamRebase: a chunked load that loses the publish race
// re-validates against the new head from what it kept, without re-reading
// its input or re-writing its fragments, and publishes; an append whose
// id the racing write inserted fails with KeyConflict naming its line.
func TestLoadStreamRebase(t *testing.T) {
	ctx := context.Background()
	var data strings.Builder
	for i := range 20 {
		fmt.Fprintf(&data, `{"type":"Person","data":{"name":"r%02d","email":"r%02d@x"}}`+"\n", i, i)
		fmt.Fprintf(&data, `{"edge":"Knows","from":"r%02d","to":"racer","data":{"id":"kr%02d"}}`+"\n", i, i)
	}
	// The load stages "racer" last, after the edges that point at it.
	data.WriteString(`{"type":"Person","data":{"name":"racer","age":1}}` + "\n")
	insertRacer := func(h *Graph) error {
		_, err := h.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"racer","age":99}}`), LoadRequest{Mode: LoadAppend})
		return err
	}
	insertOther := func(h *Graph) error {
		_, err := h.Load(ctx, strings.NewReader(`{"type":"Person","data":{"name":"other"}}`), LoadRequest{Mode: LoadAppend})
		return err
	}
	tests := []struct {
		name  string
		mode  LoadMode
		other func(h *Graph) error
		line  int // 0: the load succeeds after a rebase
	}{
		{"merge over a racing insert of its id", LoadMerge, insertRacer, 0},
		{"append vs unrelated insert", LoadAppend, insertOther, 0},
		{"append vs racing insert of its id", LoadAppend, insertRacer, 41},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, st := streamGraph(t)
			attempts, published := 0, 0
			g.testBeforePublish = func(attempt int) {
				attempts++
				if attempt == 0 {
					published = st.mark()
					h, err := Open(ctx, g.st, Options{})
					if err == nil {
						err = tc.other(h)
					}
					if err != nil {
						t.Errorf("racing write: %v", err)
					}
				}
			}
			mark := st.mark()
			_, err := g.Load(ctx, &oneShot{t: t, r: strings.NewReader(data.String())}, LoadRequest{Mode: tc.mode, ChunkRecords: 6})
			g.testBeforePublish = nil
			if tc.line > 0 {
				var kc *KeyConflictError
				var ie *InputError
				if !errors.As(err, &kc) || kc.EntityID != "racer" || !errors.As(err, &ie) || ie.Line != tc.line {
					t.Fatalf("err = %v, want KeyConflict on racer at line %d", err, tc.line)
				}
				if got := engNodes(t, g, "Person", "age"); !slices.Contains(got, "racer=99") || slices.Contains(got, "r00=null") {
					t.Fatalf("persons after the failed rebase: %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("load should rebase: %v", err)
			}
			if attempts != 2 {
				t.Fatalf("%d publish attempts, want 2", attempts)
			}
			// The racing load wrote one fragment; the rebased attempt none.
			ours := st.written(mark)[:published-mark]
			if len(ours) < 41/6 || st.mark() != published+1 {
				t.Fatalf("load wrote %d fragments, then %d more", len(ours), st.mark()-published)
			}
			head := headFragments(t, g)
			for _, k := range ours {
				if !head[k] {
					t.Fatalf("fragment %s of the load not published", k)
				}
			}
			got := engNodes(t, g, "Person", "age")
			if !slices.Contains(got, "r19=null") {
				t.Fatalf("persons %v", got)
			}
			if tc.mode == LoadMerge && !slices.Contains(got, "racer=1") {
				t.Fatalf("merge did not replace the racing row: %v", got)
			}
			if tc.mode == LoadAppend && !slices.Contains(got, "other=null") {
				t.Fatalf("racing write lost: %v", got)
			}
		})
	}
}
