package commit

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestPublishBasics(t *testing.T) {
	ctx := context.Background()
	r, h0 := initGraph(t, storage.NewMem())
	g, _ := r.Commit(ctx, h0.Commit)

	h1, c1, err := r.Publish(ctx, PublishRequest{
		Branch: MainBranch, Base: h0, Kind: KindLoad, Actor: "bob", Message: "load",
		Tables: map[string]string{"node:Person": "tables/node:Person/state/s1.json", "edge:Knows": "tables/edge:Knows/state/k1.json"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if h1.Seq != 2 || h1.Commit != c1.ID || h1.ETag == "" || h1.ETag == h0.ETag {
		t.Fatalf("head %+v", h1)
	}
	want := map[string]string{
		"node:Person":  "tables/node:Person/state/s1.json",
		"node:Company": g.Tables["node:Company"], // unchanged table reuses the parent's state
		"edge:Knows":   "tables/edge:Knows/state/k1.json",
	}
	if !maps.Equal(c1.Tables, want) || c1.Schema != g.Schema || c1.Actor != "bob" || c1.Kind != KindLoad {
		t.Fatalf("commit %+v", c1)
	}

	// A fresh handle sees exactly what was published.
	r2 := openRepo(t, r.store)
	got, gc, err := r2.Resolve(ctx, MainBranch)
	if err != nil || got != h1 || !maps.Equal(gc.Tables, want) {
		t.Fatalf("resolve %+v %+v %v", got, gc, err)
	}

	// Schema change and table removal.
	key, err := r.PutSchema(ctx, []byte("node Company { name: String @key }\n"))
	if err != nil {
		t.Fatal(err)
	}
	h2, c2, err := r.Publish(ctx, PublishRequest{Branch: MainBranch, Base: h1, Kind: KindSchema, SchemaKey: key, Removed: []string{"node:Person", "edge:Knows"}})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Schema != key || len(c2.Tables) != 1 || c2.Tables["node:Company"] == "" || h2.Seq != 3 {
		t.Fatalf("schema commit %+v", c2)
	}
}

func TestPublishRejectsBadRequests(t *testing.T) {
	ctx := context.Background()
	r, h0 := initGraph(t, storage.NewMem())
	other := newID(fixedClock()())
	tests := []struct {
		name string
		req  PublishRequest
		want error
	}{
		{"bad-branch", PublishRequest{Branch: "a..b", Base: h0, Kind: KindMutate}, ErrInvalidBranch},
		{"base-of-other-branch", PublishRequest{Branch: "dev", Base: h0, Kind: KindMutate}, ErrInvalidRequest},
		{"no-etag", PublishRequest{Branch: MainBranch, Base: Head{Branch: MainBranch, Commit: h0.Commit, Seq: 1}, Kind: KindMutate}, ErrInvalidRequest},
		{"init-kind", PublishRequest{Branch: MainBranch, Base: h0, Kind: KindInit}, ErrInvalidRequest},
		{"unknown-kind", PublishRequest{Branch: MainBranch, Base: h0, Kind: "x"}, ErrInvalidRequest},
		{"merge-without-parent", PublishRequest{Branch: MainBranch, Base: h0, Kind: KindMerge}, ErrInvalidRequest},
		{"parent-without-merge", PublishRequest{Branch: MainBranch, Base: h0, Kind: KindMutate, MergeParent: &h0.Commit}, ErrInvalidRequest},
		{"merge-self", PublishRequest{Branch: MainBranch, Base: h0, Kind: KindMerge, MergeParent: &h0.Commit}, ErrInvalidRequest},
		{"remove-missing", PublishRequest{Branch: MainBranch, Base: h0, Kind: KindSchema, Removed: []string{"node:Nope"}}, ErrInvalidRequest},
		{"missing-base", PublishRequest{Branch: MainBranch, Base: Head{Branch: MainBranch, Commit: other, Seq: 1, ETag: h0.ETag}, Kind: KindMutate}, ErrCommitNotFound},
		{"missing-merge-parent", PublishRequest{Branch: MainBranch, Base: h0, Kind: KindMerge, MergeParent: &other}, ErrCommitNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := storage.NewCounting(r.store)
			rr := &Repo{store: cs, cache: r.cache, now: r.now}
			if _, _, err := rr.Publish(ctx, tt.req); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if w := writes(cs.Snapshot()); w != 0 {
				t.Fatalf("rejected publish wrote %d objects", w)
			}
		})
	}
}

func TestPublishHeadMoved(t *testing.T) {
	ctx := context.Background()
	r, h0 := initGraph(t, storage.NewMem())
	h1, _ := publishPerson(t, r, h0, 1)
	_, _, err := publishOne(ctx, r, h0, "node:Person", 2)
	var hm *HeadMovedError
	if !errors.As(err, &hm) || !errors.Is(err, ErrHeadMoved) {
		t.Fatalf("err = %v, want HeadMovedError", err)
	}
	if hm.Branch != MainBranch || hm.Expected != h0 || hm.Actual != h1 {
		t.Fatalf("HeadMovedError %+v, want actual %+v", hm, h1)
	}
	// Rebase onto the reported head and publish again.
	h2, c2, err := publishOne(ctx, r, hm.Actual, "node:Person", 2)
	if err != nil || c2.Parents[0] != h1.Commit || h2.Seq != 3 {
		t.Fatalf("rebased publish %+v %v", c2, err)
	}
	linearChain(t, r, MainBranch)
}

// TestPublishAmbiguousCAS: when the CAS outcome is unknown or reported as a
// precondition failure, Publish trusts only the ref: our commit there means
// success, anything else means the write did not happen.
func TestPublishAmbiguousCAS(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		fault   storage.Fault
		wantErr bool
	}{
		{"fail-before", storage.Fault{Op: storage.OpPutIfMatch, Stage: storage.Before, Nth: 1, Err: errors.New("connection reset")}, true},
		{"lost-ack", storage.Fault{Op: storage.OpPutIfMatch, Stage: storage.After, Nth: 1, Err: errors.New("timeout awaiting response")}, false},
		{"412-after-win", storage.Fault{Op: storage.OpPutIfMatch, Stage: storage.After, Nth: 1, Err: storage.ErrPrecondition}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := storage.NewMem()
			_, h0 := initGraph(t, mem)
			faulty := storage.NewFaulty(mem)
			faulty.Inject(tt.fault)
			r := openRepo(t, faulty)
			h, c, err := publishOne(ctx, r, h0, "node:Person", 1)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrHeadMoved) {
				t.Fatalf("ambiguous CAS reported as a conflict: %v", err)
			}
			now, _ := r.Head(ctx, MainBranch)
			if tt.wantErr && now.Commit != h0.Commit || !tt.wantErr && (now != h || now.Commit != c.ID) {
				t.Fatalf("head %+v after publish returned %+v, %v", now, h, err)
			}
			if _, _, err := publishOne(ctx, r, now, "node:Person", 2); err != nil {
				t.Fatalf("next publish: %v", err)
			}
			linearChain(t, r, MainBranch)
		})
	}
}

func TestPublishDeletedBranch(t *testing.T) {
	ctx := context.Background()
	r, h0 := initGraph(t, storage.NewMem())
	b, err := r.CreateBranch(ctx, "dev", h0.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteBranch(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := publishOne(ctx, r, b, "node:Person", 1); !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("err = %v, want ErrBranchNotFound", err)
	}
}

func TestPublishHeights(t *testing.T) {
	ctx := context.Background()
	r, h0 := initGraph(t, storage.NewMem())
	dev, err := r.CreateBranch(ctx, "dev", h0.Commit)
	if err != nil {
		t.Fatal(err)
	}
	main := h0
	for i := range 3 {
		if main, _, err = publishOne(ctx, r, main, "node:Person", i); err != nil {
			t.Fatal(err)
		}
	}
	if dev, _, err = publishOne(ctx, r, dev, "node:Company", 9); err != nil {
		t.Fatal(err)
	}
	// Merge main (height 3) into dev (height 1): height is 1 + max = 4.
	_, m, err := r.Publish(ctx, PublishRequest{Branch: "dev", Base: dev, Kind: KindMerge, MergeParent: &main.Commit})
	if err != nil {
		t.Fatal(err)
	}
	if m.Height != 4 || len(m.Parents) != 2 || m.Parents[0] != dev.Commit || m.Parents[1] != main.Commit {
		t.Fatalf("merge commit %+v", m)
	}
}

// TestPublishOutcomeUnknown: when the CAS fails ambiguously and the ref
// cannot be re-read, Publish says the outcome is unknown instead of
// reporting a plain failure a caller might retry.
func TestPublishOutcomeUnknown(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	_, h0 := initGraph(t, mem)
	faulty := storage.NewFaulty(mem)
	r := openRepo(t, faulty)
	state, err := writeOneRow(ctx, faulty, "node:Person", 1)
	if err != nil {
		t.Fatal(err)
	}
	faulty.Inject(storage.Fault{Op: storage.OpPutIfMatch, Stage: storage.After, Nth: 1, Err: errors.New("timeout")})
	faulty.Inject(storage.Fault{Op: storage.OpGet, Prefix: refPrefix, Nth: 1, Err: errors.New("timeout")})
	_, _, err = r.Publish(ctx, PublishRequest{Branch: MainBranch, Base: h0, Kind: KindMutate, Tables: map[string]string{"node:Person": state}})
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) || !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want OutcomeUnknownError", err)
	}
	// The CAS did land; IsAncestor settles it once the ref is readable.
	h, err := r.Head(ctx, MainBranch)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r.IsAncestor(ctx, ou.Commit, h.Commit); err != nil || !ok {
		t.Fatalf("IsAncestor = %v, %v", ok, err)
	}
}
