package commit

import (
	"context"
	"errors"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		damage func(t *testing.T, mem *storage.Mem, head Head, c *Commit)
		ok     bool
	}{
		{"clean", func(*testing.T, *storage.Mem, Head, *Commit) {}, true},
		{"missing-commit", func(t *testing.T, mem *storage.Mem, _ Head, c *Commit) {
			mem.Delete(ctx, CommitKey(c.Parents[0]))
		}, false},
		{"garbage-commit", func(t *testing.T, mem *storage.Mem, h Head, _ *Commit) {
			mem.Put(ctx, CommitKey(h.Commit), []byte("{"))
		}, false},
		{"wrong-height", func(t *testing.T, mem *storage.Mem, h Head, c *Commit) {
			d := c.Clone()
			d.Height = 9
			b, _ := Encode(d)
			mem.Put(ctx, CommitKey(h.Commit), b)
		}, false},
		{"bad-schema", func(t *testing.T, mem *storage.Mem, _ Head, c *Commit) {
			mem.Put(ctx, c.Schema, []byte("tampered"))
		}, false},
		{"bad-ref", func(t *testing.T, mem *storage.Mem, _ Head, _ *Commit) {
			mem.Put(ctx, RefKey("dev"), []byte(`{"commit":"x","seq":1}`))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := storage.NewMem()
			r, h0, err := Init(ctx, mem, InitRequest{Schema: []byte(testSchema)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			h, c := publishPerson(t, r, h0, 1)
			tt.damage(t, mem, h, c)
			fresh := openRepo(t, mem)
			rep, err := fresh.Check(ctx)
			if tt.ok != (err == nil) {
				t.Fatalf("Check = %+v, %v; want ok=%v", rep, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrCommitNotFound) {
				t.Fatalf("Check error %v is not typed", err)
			}
			if tt.ok && (rep.Commits != 2 || rep.Branches != 1 || rep.Schemas != 1) {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}
