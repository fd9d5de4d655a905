package commit

import (
	"context"
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// dag builds this history (heights in brackets):
//
//	main: g[0] ─ m1[1] ─ m2[2] ─────────── M[4] (merge of f2 into main)
//	                └─ dev: f1[2] ─ f2[3] ─┘
//	other: g ─ o1[1]
//
// and returns the commits by name plus the repo.
func dag(t *testing.T) (*Repo, map[string]ID) {
	t.Helper()
	ctx := context.Background()
	r, g := initGraph(t, storage.NewMem())
	ids := map[string]ID{"g": g.Commit}
	step := func(name string, base Head) Head {
		h, _ := publishPerson(t, r, base, len(ids))
		ids[name] = h.Commit
		return h
	}
	m1 := step("m1", g)
	m2 := step("m2", m1)
	dev, err := r.CreateBranch(ctx, "dev", m1.Commit)
	if err != nil {
		t.Fatal(err)
	}
	f1 := step("f1", dev)
	f2 := step("f2", f1)
	mh, _, err := r.Publish(ctx, PublishRequest{Branch: MainBranch, Base: m2, Kind: KindMerge, MergeParent: &f2.Commit})
	if err != nil {
		t.Fatal(err)
	}
	ids["M"] = mh.Commit
	other, err := r.CreateBranch(ctx, "other", g.Commit)
	if err != nil {
		t.Fatal(err)
	}
	step("o1", other)
	return r, ids
}

func names(ids map[string]ID, cs []*Commit) []string {
	rev := map[ID]string{}
	for n, id := range ids {
		rev[id] = n
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = rev[c.ID]
	}
	return out
}

func TestLog(t *testing.T) {
	ctx := context.Background()
	r, ids := dag(t)
	tests := []struct {
		name string
		from string
		opts LogOptions
		want []string
	}{
		{"full", "M", LogOptions{}, []string{"M", "f2", "m2|f1", "m2|f1", "m1", "g"}},
		{"first-parent", "M", LogOptions{FirstParent: true}, []string{"M", "m2", "m1", "g"}},
		{"limit", "M", LogOptions{Limit: 2}, []string{"M", "f2"}},
		{"first-parent-limit", "f2", LogOptions{FirstParent: true, Limit: 3}, []string{"f2", "f1", "m1"}},
		{"genesis", "g", LogOptions{}, []string{"g"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := r.Log(ctx, ids[tt.from], tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := names(ids, cs)
			if len(got) != len(tt.want) {
				t.Fatalf("log %v, want %v", got, tt.want)
			}
			for i := range got {
				if tt.want[i] == "m2|f1" {
					if got[i] != "m2" && got[i] != "f1" {
						t.Fatalf("log %v, want %v", got, tt.want)
					}
					continue
				}
				if got[i] != tt.want[i] {
					t.Fatalf("log %v, want %v", got, tt.want)
				}
			}
		})
	}
	// Same-height commits come out in one deterministic order.
	a, _ := r.Log(ctx, ids["M"], LogOptions{})
	b, _ := r.Log(ctx, ids["M"], LogOptions{})
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Fatal("log order not deterministic")
		}
	}
}

func TestMergeBaseAndAncestry(t *testing.T) {
	ctx := context.Background()
	r, ids := dag(t)
	tests := []struct {
		a, b, base string
	}{
		{"m2", "f2", "m1"},
		{"f2", "m2", "m1"},
		{"M", "f2", "f2"}, // after the merge, the source head is an ancestor
		{"M", "o1", "g"},
		{"m1", "m1", "m1"},
		{"g", "M", "g"},
		{"f1", "f2", "f1"},
	}
	for _, tt := range tests {
		t.Run(tt.a+"^"+tt.b, func(t *testing.T) {
			c, err := r.MergeBase(ctx, ids[tt.a], ids[tt.b])
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != ids[tt.base] {
				t.Fatalf("merge base %s, want %s", names(ids, []*Commit{c}), tt.base)
			}
		})
	}
	anc := []struct {
		a, b string
		want bool
	}{
		{"g", "M", true}, {"f1", "M", true}, {"m2", "M", true}, {"M", "M", true},
		{"M", "m2", false}, {"f1", "m2", false}, {"m2", "f2", false}, {"o1", "M", false}, {"m1", "o1", false},
	}
	for _, tt := range anc {
		got, err := r.IsAncestor(ctx, ids[tt.a], ids[tt.b])
		if err != nil || got != tt.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
		}
	}
	if _, err := r.MergeBase(ctx, ids["g"], newID(fixedClock()())); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("merge base with missing commit: %v", err)
	}
}

// TestMergeBaseReadsOnlyAboveBase: on a long shared history, finding the merge
// base of two short branches reads only the commits above it.
func TestMergeBaseReadsOnlyAboveBase(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	w, h := initGraph(t, mem)
	var err error
	for range 500 {
		if h, _, err = w.Publish(ctx, PublishRequest{Branch: MainBranch, Base: h, Kind: KindMutate}); err != nil {
			t.Fatal(err)
		}
	}
	fork := h.Commit
	dev, _ := w.CreateBranch(ctx, "dev", fork)
	for range 3 {
		h, _, _ = w.Publish(ctx, PublishRequest{Branch: MainBranch, Base: h, Kind: KindMutate})
		dev, _, _ = w.Publish(ctx, PublishRequest{Branch: "dev", Base: dev, Kind: KindMutate})
	}
	cs := storage.NewCounting(mem)
	r := openRepo(t, cs)
	cs.Reset()
	base, err := r.MergeBase(ctx, h.Commit, dev.Commit)
	if err != nil || base.ID != fork {
		t.Fatalf("base %v err %v", base, err)
	}
	if n := cs.Snapshot().Requests(); n != 7 { // 3+3 branch commits + the base
		t.Fatalf("merge base read %d objects, want 7", n)
	}
}
