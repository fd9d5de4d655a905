package commit

import (
	"context"
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestPublishChain: commits built with NextCommit on top of each other (the
// base not yet published) become visible together with one CAS; a lost CAS
// makes none of them visible; a chain that does not follow the head is
// refused before any write.
func TestPublishChain(t *testing.T) {
	ctx := context.Background()
	st := storage.NewCounting(storage.NewMem())
	r, h0 := initGraph(t, st)
	base, err := r.Commit(ctx, h0.Commit)
	if err != nil {
		t.Fatal(err)
	}
	build := func(base *Commit, n int) *Commit {
		t.Helper()
		state, err := writeOneRow(ctx, st, "node:Person", n)
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.NextCommit(ctx, base, PublishRequest{Branch: MainBranch, Tables: map[string]string{"node:Person": state}, Kind: KindMutate, Actor: "w"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var chain []*Commit
	tip := base
	for n := range 3 {
		tip = build(tip, n)
		chain = append(chain, tip)
	}
	// Nothing is visible before the CAS.
	if h, _ := r.Head(ctx, MainBranch); h.Commit != h0.Commit {
		t.Fatalf("head moved before PublishChain: %+v", h)
	}
	before := st.Snapshot()
	h, err := r.PublishChain(ctx, MainBranch, h0, false, chain)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Snapshot().Sub(before)
	if h.Commit != chain[2].ID || h.Seq != h0.Seq+1 || d[storage.OpPutIfMatch].Requests != 1 || d[storage.OpPut].Requests != 3 {
		t.Fatalf("head %+v, requests %v: want the last commit, one CAS, three commit puts", h, d)
	}
	log := linearChain(t, r, MainBranch)
	if len(log) != 4 || log[0].ID != chain[2].ID || log[1].ID != chain[1].ID || log[2].ID != chain[0].ID || chain[2].Height != 3 {
		t.Fatalf("log %v", log)
	}

	// A chain built on the old head loses its CAS and stays invisible.
	stale := build(base, 9)
	if _, err := r.PublishChain(ctx, MainBranch, h0, false, []*Commit{stale}); !errors.Is(err, ErrHeadMoved) {
		t.Fatalf("stale chain: %v", err)
	}
	// A chain that does not follow its head is refused.
	if _, err := r.PublishChain(ctx, MainBranch, h, false, []*Commit{chain[0]}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("broken chain: %v", err)
	}
	if _, err := r.PublishChain(ctx, MainBranch, h, false, nil); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("empty chain: %v", err)
	}
	if got, _ := r.Head(ctx, MainBranch); got.Commit != h.Commit {
		t.Fatalf("refused chains moved the head to %s", got.Commit)
	}
}
