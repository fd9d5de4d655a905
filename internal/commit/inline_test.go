package commit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// inlineState returns an inline key for an empty state of a table with
// one column per name in cols (so that sizes can be steered).
func inlineState(t *testing.T, tk string, cols int) string {
	t.Helper()
	schema := table.Schema{Columns: []table.Column{{Name: "id", Type: table.ColumnType{Kind: table.String}}}}
	for i := range cols {
		schema.Columns = append(schema.Columns, table.Column{Name: fmt.Sprintf("c%03d", i), Type: table.ColumnType{Kind: table.I64, Nullable: true}})
	}
	s, err := table.NewState(schema)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return table.InlineStateKey("tables/"+strings.ReplaceAll(tk, ":", "-"), data)
}

// goldenInlineCommit pins a format-2 commit: one table state inline.
const goldenInlineCommit = `{"format":2,"id":"01JGQ5Z8M0CCCCCCCCCCCCCCCC","parents":["01JGQ5Z8M0AAAAAAAAAAAAAAAA"],"height":7,"created_at":1767323045000000,"kind":"mutate","message":"","schema":"schemas/0b1c.pg","tables":{"edge:Knows":"tables/edge:Knows/state/e1.json","node:Person":"tables/node-Person/state/inline:eyJmb3JtYXQiOjEsImNvbHVtbnMiOlt7Im5hbWUiOiJpZCIsInR5cGUiOnsia2luZCI6InN0cmluZyJ9fV0sInJvd3MiOjAsImZyYWdtZW50cyI6W119Cg"},"sum":"b7a48ba3e9313aa20abc6565ba4cdf31602ec7225e0f04fdcd2a9fc0fd97c541"}` + "\n"

func TestInlineCommitGolden(t *testing.T) {
	c := &Commit{
		ID:        mustID(t, idC),
		Parents:   []ID{mustID(t, idA)},
		Height:    7,
		CreatedAt: 1767323045000000,
		Kind:      KindMutate,
		Schema:    "schemas/0b1c.pg",
		Tables:    map[string]string{"node:Person": inlineState(t, "node:Person", 0), "edge:Knows": "tables/edge:Knows/state/e1.json"},
	}
	d := goldenRoundTrip(t, c, goldenInlineCommit)
	st, err := table.ReadState(context.Background(), nil, d.Tables["node:Person"])
	if err != nil || st.Rows() != 0 || len(st.Schema().Columns) != 1 {
		t.Fatalf("inline state: %v", err)
	}
	// A commit without inline states is format 1, byte for byte as before.
	c.Tables["node:Person"] = "tables/node-Person/state/p2.json"
	if b, _ := Encode(c); !strings.HasPrefix(string(b), `{"format":1,`) {
		t.Fatalf("commit without inline states: %.20s", b)
	}
}

// TestInlineCommitFormatRejects: the format field must say whether the
// table map holds an inline state (a legacy, unchecksummed encoding, so that
// the format rule itself is what rejects).
func TestInlineCommitFormatRejects(t *testing.T) {
	inline := inlineState(t, "node:Person", 0)
	enc := func(format int, state string) []byte {
		return fmt.Appendf(nil, `{"format":%d,"id":%q,"parents":[%q],"height":1,"created_at":1,"kind":"mutate","message":"","schema":"schemas/x.pg","tables":{"node:Person":%q}}`,
			format, idC, idA, state)
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		valid bool
	}{
		{"format 2 with an inline state", enc(2, inline), true},
		{"format 1 with a state object", enc(1, "tables/node-Person/state/p.json"), true},
		{"format 1 with an inline state", enc(1, inline), false},
		{"format 2 without an inline state", enc(2, "tables/node-Person/state/p.json"), false},
		{"format 3", enc(3, inline), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(CommitKey(mustID(t, idC)), tc.data)
			switch {
			case tc.valid && err != nil:
				t.Fatalf("rejected: %v", err)
			case !tc.valid && !errors.Is(err, ErrCorrupt):
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestSpillInline: a commit keeps its inline states within
// MaxInlineTableBytes by writing inherited ones as objects first, largest
// first; what it spills reads back as the same state; the ref's hint names
// no inline state.
func TestSpillInline(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	r, h0 := initGraph(t, st)
	base, err := r.Commit(ctx, h0.Commit)
	if err != nil {
		t.Fatal(err)
	}
	// ~6 KiB as a key per 8 KiB of the bound.
	scale := MaxInlineTableBytes / (8 << 10)
	big := inlineState(t, "node:Company", 80*scale)
	small := inlineState(t, "node:Person", 1)
	if len(big) < MaxInlineTableBytes/2 || len(big) > MaxInlineTableBytes {
		t.Fatalf("test state of %d bytes does not straddle the bound", len(big))
	}
	c1, err := r.NextCommit(ctx, base, PublishRequest{Branch: MainBranch, Tables: map[string]string{"node:Company": big}, Kind: KindMutate})
	if err != nil {
		t.Fatal(err)
	}
	if c1.Tables["node:Company"] != big {
		t.Fatal("a state under the bound was spilled")
	}
	// A second large own state pushes the inherited one out.
	big2 := inlineState(t, "node:Person", 70*scale)
	c2, err := r.NextCommit(ctx, c1, PublishRequest{Branch: MainBranch, Tables: map[string]string{"node:Person": big2}, Kind: KindMutate})
	if err != nil {
		t.Fatal(err)
	}
	spilled := c2.Tables["node:Company"]
	if table.IsInlineState(spilled) || c2.Tables["node:Person"] != big2 {
		t.Fatalf("spill chose wrong: company %.60s, person inline %v", spilled, table.IsInlineState(c2.Tables["node:Person"]))
	}
	a, err := table.ReadState(ctx, st, spilled)
	if err != nil {
		t.Fatal(err)
	}
	b, err := table.ReadState(ctx, nil, big)
	if err != nil {
		t.Fatal(err)
	}
	ea, _ := a.Encode()
	eb, _ := b.Encode()
	if string(ea) != string(eb) {
		t.Fatal("the spilled state differs from the inline one")
	}
	// Published, the ref's hint leaves inline states out.
	c3, err := r.NextCommit(ctx, base, PublishRequest{Branch: MainBranch, Tables: map[string]string{"node:Person": small}, Kind: KindMutate})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.PublishChain(ctx, MainBranch, h0, false, []*Commit{c3}); err != nil {
		t.Fatal(err)
	}
	raw, _, err := st.Get(ctx, RefKey(MainBranch))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), table.InlineStateMark) || !strings.Contains(string(raw), `"node:Company"`) {
		t.Fatalf("ref hint: %s", raw)
	}
}
