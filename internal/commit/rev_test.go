package commit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestResolveRevision(t *testing.T) {
	ctx := context.Background()
	r, h := initGraph(t, storage.NewMem())
	ids := []ID{h.Commit} // ids[i] = the commit of height i on main
	for i := range 4 {
		var err error
		if h, _, err = publishOne(ctx, r, h, "node:Person", i); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, h.Commit)
	}
	top := ids[len(ids)-1]
	if _, err := r.CreateBranch(ctx, "dev", ids[2]); err != nil {
		t.Fatal(err)
	}
	lower := strings.ToLower(top.String()[:22])
	tests := []struct {
		rev  string
		want ID
		err  error // errors.Is target; nil = success
	}{
		{top.String(), top, nil},
		{"main", top, nil},
		{"main^", ids[3], nil},
		{"main~", ids[3], nil},
		{"main~1", ids[3], nil},
		{"main~2", ids[2], nil},
		{"main^^", ids[2], nil},
		{"main~2^", ids[1], nil},
		{"main~4", ids[0], nil},
		{"dev", ids[2], nil},
		{"dev~1", ids[1], nil},
		{ids[2].String() + "~1", ids[1], nil},
		{top.String()[:22], top, nil},
		{lower, top, nil},
		{lower + "^", ids[3], nil},
		{"main~5", ID{}, ErrCommitNotFound},
		{"main~x", ID{}, ErrCommitNotFound},
		{"~1", ID{}, ErrCommitNotFound},
		{"nobranch", ID{}, ErrCommitNotFound},
		{"01M", ID{}, ErrCommitNotFound},                       // too short for a prefix
		{top.String()[:6], ID{}, ErrAmbiguousRevision},         // same millisecond era: every commit shares it
		{"ZZZZZZZZ", ID{}, ErrCommitNotFound},                  // a valid prefix of no commit
		{"main~99999999999999999999", ID{}, ErrCommitNotFound}, // out of range
	}
	for _, tc := range tests {
		t.Run(tc.rev, func(t *testing.T) {
			got, err := r.ResolveRevision(ctx, tc.rev)
			if tc.err == nil {
				if err != nil || got != tc.want {
					t.Fatalf("= %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			var amb *AmbiguousRevisionError
			if errors.As(err, &amb) && (len(amb.Candidates) < 2 || !strings.Contains(err.Error(), amb.Candidates[0])) {
				t.Fatalf("ambiguity lists %v", amb.Candidates)
			}
		})
	}
}
