package commit

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestBranches(t *testing.T) {
	ctx := context.Background()
	r, h0 := initGraph(t, storage.NewMem())
	for _, b := range []string{"zeta", "feature/x", "alpha"} {
		if _, err := r.CreateBranch(ctx, b, h0.Commit); err != nil {
			t.Fatalf("create %s: %v", b, err)
		}
	}
	got, err := r.Branches(ctx)
	if err != nil || !slices.Equal(got, []string{"main", "alpha", "feature/x", "zeta"}) {
		t.Fatalf("branches %v err %v", got, err)
	}
	tests := []struct {
		name string
		want error
	}{
		{"main", ErrBranchExists},
		{"alpha", ErrBranchExists},
		{"feature", ErrBranchExists},     // parent of a live branch
		{"alpha/child", ErrBranchExists}, // child of a live branch
		{"feature/x/y", ErrBranchExists}, // grandchild
		{"bad name", ErrInvalidBranch},   // validated before any request
		{"feature/y", nil},               // sibling is fine
		{"alphabet", nil},                // shares a string prefix, not a path prefix
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.CreateBranch(ctx, tt.name, h0.Commit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("create %q: %v, want %v", tt.name, err, tt.want)
			}
		})
	}
	if _, err := r.CreateBranch(ctx, "ghost", newID(fixedClock()())); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("create at missing commit: %v", err)
	}
	if err := r.DeleteBranch(ctx, MainBranch); !errors.Is(err, ErrProtectedBranch) {
		t.Fatalf("delete main: %v", err)
	}
	if err := r.DeleteBranch(ctx, "nope"); !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("delete missing: %v", err)
	}
	if err := r.DeleteBranch(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(ctx, "alpha"); !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("head of deleted branch: %v", err)
	}
	// The name is reusable at once, and the new branch starts fresh.
	h, err := r.CreateBranch(ctx, "alpha", h0.Commit)
	if err != nil || h.Seq != 1 {
		t.Fatalf("recreate: %+v %v", h, err)
	}
	// Branches are independent: deleting the one another was created from
	// leaves the other intact.
	dev, _ := r.CreateBranch(ctx, "dev", h0.Commit)
	dev, _, _ = publishOne(ctx, r, dev, "node:Person", 1)
	sub, err := r.CreateBranch(ctx, "sub", dev.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteBranch(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	publishPerson(t, r, sub, 2)
	linearChain(t, r, "sub")
}
