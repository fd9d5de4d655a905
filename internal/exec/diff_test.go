package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/table"
)

// changeLines renders changes as "kind type id op src>dst before→after".
func changeLines(cs []Change) []string {
	img := func(m map[string]any) string {
		if m == nil {
			return "-"
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	var out []string
	for _, c := range cs {
		s := fmt.Sprintf("%s %s %s %s", c.Kind, c.Type, c.ID, c.Op)
		if c.Kind == "edge" {
			s += " " + c.Src + ">" + c.Dst
		} else {
			s += " " + img(c.Before) + " " + img(c.After)
		}
		out = append(out, s)
	}
	return out
}

// TestCommitChanges: scenarios 57–60 at the engine level.
func TestCommitChanges(t *testing.T) {
	h := fixtureBH(t)
	genesis := func() string {
		log, _ := h.g.Log(h.ctx, "main", 0)
		return log[len(log)-1].ID
	}()
	if _, err := h.g.CommitChanges(h.ctx, genesis); !errors.Is(err, ErrCommitHasNoParent) {
		t.Fatalf("genesis: %v", err)
	}
	if _, err := h.g.CommitChanges(h.ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV"); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("missing commit: %v", err)
	}
	steps := []struct {
		name string
		do   func() string // returns the commit id to inspect
		want []string
	}{
		{"insert", func() string {
			return h.mut("main", "add", map[string]any{"name": "Eve", "age": 22}).Commit.ID
		}, []string{`node Person Eve insert - {"age":22,"name":"Eve"}`}},
		{"update", func() string {
			return h.mut("main", "age", map[string]any{"name": "Bob", "age": 99}).Commit.ID
		}, []string{`node Person Bob update {"age":25,"name":"Bob"} {"age":99,"name":"Bob"}`}},
		{"cascading delete, nodes before edges", func() string {
			return h.mut("main", "del", map[string]any{"name": "Alice"}).Commit.ID
		}, []string{`node Person Alice delete {"age":30,"name":"Alice"} -`,
			"edge Knows ? delete Alice>Bob", "edge Knows ? delete Alice>Charlie", "edge WorksAt ? delete Alice>Acme"}},
		{"empty load", func() string {
			res, err := h.g.Load(h.ctx, strings.NewReader(""), LoadRequest{Mode: LoadAppend})
			if err != nil {
				t.Fatal(err)
			}
			return res.Commit.ID
		}, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			id := st.do()
			cs, err := h.g.CommitChanges(h.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			got := changeLines(cs)
			for i := range got {
				if cs[i].Kind == "edge" {
					got[i] = strings.Replace(got[i], cs[i].ID, "?", 1) // generated edge ids
				}
			}
			// Edges of one type are ordered by their (generated) id.
			slices.Sort(got[min(1, len(got)):])
			if !slices.Equal(got, st.want) {
				t.Fatalf("changes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(st.want, "\n"))
			}
			for _, c := range cs {
				if c.Kind == "edge" && c.Op == OpDelete && (c.Before == nil || c.After != nil) {
					t.Fatalf("edge delete images %+v", c)
				}
			}
			// Diff between the parent and the commit has the same entities.
			ci, _ := h.g.CommitByID(h.ctx, id)
			d, err := h.g.Diff(h.ctx, Target{Snapshot: ci.Parent}, Target{Snapshot: id})
			if err != nil || len(d) != len(cs) {
				t.Fatalf("diff %d changes, %v; want %d", len(d), err, len(cs))
			}
			for i := 1; i < len(d); i++ {
				if d[i-1].Kind > d[i].Kind {
					t.Fatalf("diff order: edges before nodes: %v", changeLines(d))
				}
			}
		})
	}
}

// TestDiffBetweenTargets: same snapshot and identical content are empty;
// cross-branch diffs and merge commits report entity changes.
func TestDiffBetweenTargets(t *testing.T) {
	h := fixtureBH(t)
	if d, err := h.g.Diff(h.ctx, Target{}, Target{}); err != nil || len(d) != 0 {
		t.Fatalf("same snapshot: %v %v", d, err)
	}
	h.branch("feature", "")
	h.mut("feature", "add", map[string]any{"name": "Eve", "age": 22})
	h.mut("main", "age", map[string]any{"name": "Bob", "age": 26})
	d, err := h.g.Diff(h.ctx, Target{}, Target{Branch: "feature"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`node Person Bob update {"age":26,"name":"Bob"} {"age":25,"name":"Bob"}`,
		`node Person Eve insert - {"age":22,"name":"Eve"}`,
	}
	if got := changeLines(d); !slices.Equal(got, want) {
		t.Fatalf("main→feature\n%v\nwant\n%v", got, want)
	}
	res := h.merge("feature", "main")
	cs, err := h.g.CommitChanges(h.ctx, res.Commit.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := changeLines(cs); !slices.Equal(got, []string{`node Person Eve insert - {"age":22,"name":"Eve"}`}) {
		t.Fatalf("merge commit changes %v", got)
	}
	// Identical content reached on two branches: no changes.
	h.branch("other", "")
	if d, err := h.g.Diff(h.ctx, Target{}, Target{Branch: "other"}); err != nil || len(d) != 0 {
		t.Fatalf("identical: %v %v", d, err)
	}
}

// TestTableDiffSkipsSharedFragments pins the cost rule of the diff:
// fragments present in both states with the same deletion vector are not
// opened. The states are built with the table API directly, so write-path
// policies (inline compaction) do not change the layout under test.
func TestTableDiffSkipsSharedFragments(t *testing.T) {
	h := fixtureBH(t)
	snap, _ := h.g.Resolve(h.ctx, Target{})
	nt, _ := snap.Catalog().Node("Person")
	const prefix = "tables/node-Person"
	base, err := snap.State(h.ctx, "node:Person") // one fragment, 4 rows
	if err != nil {
		t.Fatal(err)
	}
	frag := func(name string, age int64) table.Fragment {
		f, err := h.g.writeFragment(h.ctx, prefix, base.Schema(), []Row{{ID: name, Values: map[string]any{"name": name, "age": age}}}, nt.Props, false)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	mid := base
	for i := range 5 { // five more fragments, untouched afterwards
		if mid, err = mid.Append(frag(fmt.Sprintf("P%d", i), int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	end, _, err := table.Delete(h.ctx, h.st, prefix, mid, []string{"Bob"}) // a DV on the fixture fragment
	if err != nil {
		t.Fatal(err)
	}
	if end, err = end.Append(frag("Bob", 26)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		a, b            *table.State
		shared, scanned int
		byDV, rowsByDV  int
		changes         int
	}{
		{"inserts only", base, mid, 1, 5, 0, 0, 5},
		{"one update", mid, end, 5, 2, 1, 1, 1},
		{"identical", end, end, 7, 0, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, stats, err := h.g.tableDiff(h.ctx, snap, "node:Person", nt.Props, false, tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if stats.FragmentsShared != tc.shared || stats.FragmentsScanned != tc.scanned || len(d) != tc.changes ||
				stats.FragmentsByDV != tc.byDV || stats.RowsByDV != tc.rowsByDV {
				t.Fatalf("stats %+v, %d changes; want shared %d scanned %d byDV %d/%d rows changes %d",
					stats, len(d), tc.shared, tc.scanned, tc.byDV, tc.rowsByDV, tc.changes)
			}
		})
	}
}

// TestTimeTravel: scenarios 52–55 — pinned snapshots keep showing their
// commit while the branch moves on, traversal data included.
func TestTimeTravel(t *testing.T) {
	h := fixtureBH(t)
	v1 := h.head("main")
	v2 := h.mut("main", "add", map[string]any{"name": "Eve", "age": 22}).Commit.ID
	v3 := h.mut("main", "age", map[string]any{"name": "Eve", "age": 50}).Commit.ID
	h.mut("main", "del", map[string]any{"name": "Eve"})
	h.mut("main", "del", map[string]any{"name": "Bob"})
	eve := func(snap string) string {
		for _, p := range h.nodes(Target{Snapshot: snap}, "Person", "age") {
			if a, ok := strings.CutPrefix(p, "Eve="); ok {
				return a
			}
		}
		return "-"
	}
	if eve(v1) != "-" || eve(v2) != "22" || eve(v3) != "50" || eve(h.head("main")) != "-" {
		t.Fatalf("Eve at v1..v4: %s %s %s %s", eve(v1), eve(v2), eve(v3), eve(h.head("main")))
	}
	if got := h.edges(Target{Snapshot: v1}, "Knows"); !slices.Contains(got, "Alice>Bob") {
		t.Fatalf("historical friends %v", got)
	}
	if got := h.edges(Target{}, "Knows"); !slices.Equal(got, []string{"Alice>Charlie"}) {
		t.Fatalf("current friends %v", got)
	}
	if _, err := h.g.Resolve(h.ctx, Target{Snapshot: "01ARZ3NDEKTSV4RRFFQ69G5FAV"}); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("missing snapshot: %v", err)
	}
}

func TestChangeTypeKey(t *testing.T) {
	cases := []struct {
		name string
		c    Change
		want string
	}{
		{"type id wins", Change{Kind: "node", Type: "Person", TypeID: "t01"}, "t01"},
		{"node without id", Change{Kind: "node", Type: "Person"}, "node:Person"},
		{"edge without id", Change{Kind: "edge", Type: "Knows"}, "edge:Knows"},
	}
	for _, c := range cases {
		if got := c.c.TypeKey(); got != c.want {
			t.Errorf("%s: TypeKey() = %q, want %q", c.name, got, c.want)
		}
	}
}
