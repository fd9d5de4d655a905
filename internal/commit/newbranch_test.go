package commit

import (
	"context"
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/failpoint"
	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestPublishNewBranch pins that creating a branch and publishing its first
// commit is one atomic step: the ref appears only with the new commit, a
// crash before the create leaves no branch, and a branch created meanwhile
// turns into an ordinary lost race (HeadMovedError with its head).
func TestPublishNewBranch(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMem()
	r, main, err := Init(ctx, st, InitRequest{Schema: []byte("node A { x: String }")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := PublishRequest{Branch: "feature", Base: Head{Commit: main.Commit}, NewBranch: true,
		Kind: KindLoad, Tables: map[string]string{"node:A": "tables/node-A/state/x.json"}}

	// Crash before the ref is created: no branch.
	off := failpoint.Enable(FPBeforeCAS, failpoint.Error)
	if _, _, err := r.Publish(ctx, req); !errors.Is(err, failpoint.ErrInjected) {
		t.Fatalf("publish with failpoint: %v", err)
	}
	off()
	if _, err := r.Head(ctx, "feature"); !errors.Is(err, ErrBranchNotFound) {
		t.Fatalf("branch exists after a failed first publish: %v", err)
	}

	h, c, err := r.Publish(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if h.Commit != c.ID || h.Seq != 1 || c.Parents[0] != main.Commit || c.Branch != "feature" {
		t.Fatalf("new branch head %+v, commit %+v", h, c)
	}
	got, err := r.Head(ctx, "feature")
	if err != nil || got.Commit != c.ID {
		t.Fatalf("head after publish = %+v, %v", got, err)
	}

	// The branch exists now: a second first-publish is a lost race.
	var moved *HeadMovedError
	if _, _, err := r.Publish(ctx, req); !errors.As(err, &moved) || moved.Actual.Commit != c.ID {
		t.Fatalf("second new-branch publish = %v, want HeadMovedError at %s", err, c.ID)
	}
	// Name rules still apply.
	bad := req
	bad.Branch = "feature/x"
	if _, _, err := r.Publish(ctx, bad); !errors.Is(err, ErrBranchExists) {
		t.Fatalf("prefix-related new branch = %v", err)
	}
}
