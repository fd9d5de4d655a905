package exec

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/snapshot"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// leanSchema's Knows has no @unique and no @card: a load keeps no skeleton
// for its generated-id edges between nodes it stages itself.
const leanSchema = `
node Person { name: String @key  age: I32? }
edge Knows: Person -> Person { since: Date? }
`

func leanGraph(t *testing.T) *Graph {
	t.Helper()
	ctx := context.Background()
	st := storage.NewMem()
	g, err := Init(ctx, st, "lean.pg", leanSchema, "tester", Options{NoAutoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engCheck(t, st) })
	base := `{"type":"Person","data":{"name":"alice"}}` + "\n" + `{"type":"Person","data":{"name":"bob"}}` + "\n"
	if _, err := g.Load(ctx, strings.NewReader(base), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLoadLeanEdgesChecked: edges kept out of the skeleton are exactly
// those no later check can reject (generated id, both endpoints staged by
// the load); edges to committed nodes, to nodes staged later in the input,
// to missing nodes, and edges with explicit ids keep theirs and are
// validated as before, with the same line in errors. Chunked and
// single-chunk loads (encoded concurrently) publish the same graph.
//
// INVARIANT: a lean edge's endpoints are in the published result whatever
// the head, so skipping its re-validation on a rebase loses no check.
func TestLoadLeanEdgesChecked(t *testing.T) {
	ctx := context.Background()
	var in strings.Builder
	for i := range 20 {
		fmt.Fprintf(&in, `{"type":"Person","data":{"name":"p%02d","age":%d}}`+"\n", i, i)
	}
	for i := range 20 {
		fmt.Fprintf(&in, `{"edge":"Knows","from":"p%02d","to":"p%02d"}`+"\n", i, (i+7)%20) // lean
	}
	in.WriteString(`{"edge":"Knows","from":"p01","to":"alice"}` + "\n")                  // committed endpoint
	in.WriteString(`{"edge":"Knows","from":"p02","to":"late"}` + "\n")                   // staged later
	in.WriteString(`{"edge":"Knows","from":"p03","to":"p04","data":{"id":"k1"}}` + "\n") // explicit id
	in.WriteString(`{"type":"Person","data":{"name":"late"}}` + "\n")

	g := leanGraph(t)
	snap, err := g.Resolve(ctx, Target{})
	if err != nil {
		t.Fatal(err)
	}
	ledger := storage.NewLedger()
	lctx := storage.WithLedger(ctx, ledger)
	s := newLoadStream(g, snap, LoadRequest{Mode: LoadAppend})
	if err := s.read(lctx, strings.NewReader(in.String()), nil); err != nil {
		t.Fatal(err)
	}
	if n := s.types[snapshot.EdgeKey("Knows")].skel.len(); n != 3 {
		t.Fatalf("edge skeletons = %d, want 3 (the lean 20 need none)", n)
	}
	_ = s.wait()
	g.discard(lctx, ledger) // the read was only inspected: its objects go

	var exports []string
	for _, chunk := range []int{0, 3} {
		g := leanGraph(t)
		res, err := g.Load(ctx, strings.NewReader(in.String()), LoadRequest{Mode: LoadAppend, ChunkRecords: chunk})
		if err != nil {
			t.Fatal(err)
		}
		if res.Edges["Knows"] != 23 || res.Nodes["Person"] != 21 {
			t.Fatalf("chunk %d: loaded %v %v", chunk, res.Nodes, res.Edges)
		}
		exports = append(exports, normalizeIDs(streamExport(t, g)))
	}
	if exports[0] != exports[1] {
		t.Fatalf("chunked load differs from the single-chunk one:\n%s\n---\n%s", exports[0], exports[1])
	}

	// A missing endpoint after many lean edges is still found, at its line.
	bad := in.String() + `{"edge":"Knows","from":"p05","to":"nobody"}` + "\n"
	for _, chunk := range []int{0, 3} {
		g := leanGraph(t)
		_, err := g.Load(ctx, strings.NewReader(bad), LoadRequest{Mode: LoadAppend, ChunkRecords: chunk})
		var ie *InputError
		var ce *ConstraintError
		if !errors.As(err, &ie) || ie.Line != 45 || ie.Field != "to" || !errors.As(err, &ce) || ce.Kind != ConstraintReference {
			t.Fatalf("chunk %d: err = %v, want a reference error on line 45", chunk, err)
		}
	}

	// An overwrite of the nodes drops alice: the edge to her (not lean)
	// fails, the lean ones do not.
	g = leanGraph(t)
	_, err = g.Load(ctx, strings.NewReader(in.String()), LoadRequest{Mode: LoadOverwrite})
	var ce *ConstraintError
	if !errors.As(err, &ce) || ce.Kind != ConstraintReference || !strings.Contains(ce.Msg, "alice") {
		t.Fatalf("overwrite: err = %v, want a reference error on alice", err)
	}
}

var ulidText = regexp.MustCompile(`"[0-9A-HJKMNP-TV-Z]{26}"`)

// normalizeIDs replaces generated ids in an export by a placeholder.
func normalizeIDs(export string) string { return ulidText.ReplaceAllString(export, `"ID"`) }
