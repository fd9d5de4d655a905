package exec

import (
	"errors"
	"fmt"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// ttOp is one operation of the merge truth table (spec/engine.md §3.6),
// applied on a branch. Eve is inserted aged 22 and Alice set to 31, except
// when both sides run the same op (both says so): then the source inserts
// Eve aged 21 and the target sets Alice to 32.
type ttOp func(h *bh, branch string, source, both bool)

var ttOps = []struct {
	name string
	op   ttOp
}{
	{"noop", func(*bh, string, bool, bool) {}},
	{"addNode", func(h *bh, b string, source, both bool) {
		age := 22
		if source && both {
			age = 21
		}
		h.mut(b, "add", map[string]any{"name": "Eve", "age": age})
	}},
	{"removeNode", func(h *bh, b string, _, _ bool) { h.mut(b, "del", map[string]any{"name": "Alice"}) }},
	{"addEdge", func(h *bh, b string, _, _ bool) { h.mut(b, "link", map[string]any{"from": "Alice", "to": "Carol"}) }},
	{"removeEdge", func(h *bh, b string, _, _ bool) { h.mut(b, "unlink", map[string]any{"from": "Bob"}) }},
	{"setProperty", func(h *bh, b string, source, both bool) {
		age := 31
		if !source && both {
			age = 32
		}
		h.mut(b, "age", map[string]any{"name": "Alice", "age": age})
	}},
	{"netZeroEdge", func(h *bh, b string, _, _ bool) {
		h.mut(b, "link", map[string]any{"from": "Alice", "to": "Carol"})
		h.mut(b, "unlink", map[string]any{"from": "Alice"})
	}},
}

// ttWant is the truth table: row = source op, column = target op, in ttOps
// order. "X kind type id" is a conflict (id empty when generated).
var ttWant = [7][7]string{
	{"UTD", "UTD", "UTD", "UTD", "UTD", "UTD", "UTD"},
	{"FF P5 K1 A30 +E", "X divergent_insert node:Person Eve", "M P4 K1 A– +E", "M P5 K2 A30 +E", "M P5 K0 A30 +E", "M P5 K1 A31 +E", "M P5 K1 A30 +E"},
	{"FF P3 K1 A–", "M P4 K1 A– +E", "M P3 K1 A–", "X orphan_edge edge:Knows", "M P3 K0 A–", "X delete_vs_update node:Person Alice", "M P3 K1 A–"},
	{"FF P4 K2 A30", "M P5 K2 A30 +E", "X orphan_edge edge:Knows", "M P4 K3 A30", "M P4 K1 A30", "M P4 K2 A31", "M P4 K2 A30"},
	{"FF P4 K0 A30", "M P5 K0 A30 +E", "M P3 K0 A–", "M P4 K1 A30", "M P4 K0 A30", "M P4 K0 A31", "M P4 K0 A30"},
	{"FF P4 K1 A31", "M P5 K1 A31 +E", "X delete_vs_update node:Person Alice", "M P4 K2 A31", "M P4 K0 A31", "X divergent_update node:Person Alice", "M P4 K1 A31"},
	{"FF P4 K1 A30", "M P5 K1 A30 +E", "M P3 K1 A–", "M P4 K2 A30", "M P4 K0 A30", "M P4 K1 A31", "M P4 K1 A30"},
}

// TestMergeTruthTable runs all 49 executable cells of spec/engine.md §3.6:
// outcome and resulting state, or exactly one conflict of the listed kind
// with main left exactly as the target op made it.
func TestMergeTruthTable(t *testing.T) {
	for si, src := range ttOps {
		for ti, tgt := range ttOps {
			want := ttWant[si][ti]
			t.Run(src.name+"/"+tgt.name, func(t *testing.T) {
				h := newBH(t, storage.NewMem(), ttSchema, ttData, "")
				h.branch("feature", "")
				src.op(h, "feature", true, si == ti)
				tgt.op(h, "main", false, si == ti)
				before := engSnap(t, h.g, "main")
				featureBefore := engSnap(t, h.g, "feature")
				res, err := h.g.Merge(h.ctx, "feature", "main", "merger")
				var got string
				var mc *MergeConflictsError
				switch {
				case errors.As(err, &mc):
					if len(mc.Conflicts) != 1 {
						t.Fatalf("conflicts %+v, want exactly one", mc.Conflicts)
					}
					c := mc.Conflicts[0]
					got = fmt.Sprintf("X %s %s", c.Kind, c.TypeKey())
					if c.Kind != ConflictOrphanEdge {
						got += " " + c.EntityID
					}
					if after := engSnap(t, h.g, "main"); !after.equal(before) {
						t.Fatalf("a conflicting merge changed main")
					}
				case err != nil:
					t.Fatalf("merge: %v", err)
				case res.Outcome == MergeAlreadyUpToDate:
					got = "UTD"
					if after := engSnap(t, h.g, "main"); !after.equal(before) {
						t.Fatalf("an up-to-date merge changed main")
					}
				default:
					got = outcomeTag(res.Outcome) + " " + h.ttState("main")
					if res.Commit == nil || res.Commit.ID != h.head("main") {
						t.Fatalf("receipt commit %+v is not main's head", res.Commit)
					}
				}
				if got != want {
					t.Fatalf("got %q, want %q", got, want)
				}
				if !engSnap(t, h.g, "feature").equal(featureBefore) {
					t.Fatalf("merge modified the source branch")
				}
				if err == nil && res.Outcome != MergeAlreadyUpToDate {
					again, err := h.g.Merge(h.ctx, "feature", "main", "merger")
					if err != nil || again.Outcome != MergeAlreadyUpToDate {
						t.Fatalf("re-merge: %+v, %v; want already up to date", again, err)
					}
				}
			})
		}
	}
}
