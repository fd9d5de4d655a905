package commit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// noCopier hides a store's Copier: ForkBranch takes the read + PutIfAbsent
// path, as on Local or an S3 server without conditional copies.
type noCopier struct{ storage.Store }

// forkStores are the two paths of ForkBranch.
var forkStores = []struct {
	name string
	wrap func(storage.Store) storage.Store
}{
	{"copy", func(s storage.Store) storage.Store { return s }},
	{"read", func(s storage.Store) storage.Store { return noCopier{s} }},
}

// TestForkBranchOneRoundTrip pins the cost of forking a branch at history
// depth 10 and 10,000: on a store that copies server-side, one copy and the
// clash listing, side by side (one round trip); otherwise the source ref's
// GET beside the listing, then the PutIfAbsent (two). The new ref is the
// source's: same commit, same seq.
func TestForkBranchOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, depth := range []int{10, 10000} {
		for _, fs := range forkStores {
			t.Run(fmt.Sprintf("%s/depth=%d", fs.name, depth), func(t *testing.T) {
				mem := storage.NewMem()
				w, h := initGraph(t, mem)
				h = deepen(t, w, h, depth)
				// 30 ms per request in a synctest bubble: requests sent side
				// by side overlap exactly, so the recorded depth is the
				// number of round trips.
				var r *Repo
				synctest.Test(t, func(t *testing.T) {
					cnt := storage.NewCounting(storage.NewDelayed(mem, 30*time.Millisecond))
					rec := storage.NewRecording(cnt)
					r = openRepo(t, fs.wrap(rec))
					if _, _, err := r.Resolve(ctx, MainBranch); err != nil { // a warm handle
						t.Fatal(err)
					}
					cnt.Reset()
					rec.Reset()
					if err := r.ForkBranch(ctx, "feature", MainBranch); err != nil {
						t.Fatal(err)
					}
					var parts []string
					for _, op := range storage.Ops() {
						if n := cnt.Snapshot()[op].Requests; n > 0 {
							parts = append(parts, fmt.Sprintf("%s=%d", op, n))
						}
					}
					want, depthWant := "list=1 copy_if_absent=1", 1
					if fs.name == "read" {
						want, depthWant = "get=1 put_if_absent=1 list=1", 2
					}
					if got := strings.Join(parts, " "); got != want {
						t.Errorf("fork cost %q, want %q\n%s", got, want, rec.Trace())
					}
					if d := rec.Depth(); d != depthWant {
						t.Errorf("fork took %d round trips, want %d\n%s", d, depthWant, rec.Trace())
					}
				})
				got, err := r.Head(ctx, "feature")
				if err != nil {
					t.Fatal(err)
				}
				if got.Commit != h.Commit || got.Seq != h.Seq {
					t.Fatalf("fork names %s seq %d, source head %s seq %d", got.Commit, got.Seq, h.Commit, h.Seq)
				}
			})
		}
	}
}

// TestForkBranchSeesLatestSourceHead: a handle that last saw an older head
// of the source still forks from the head as of the request.
func TestForkBranchSeesLatestSourceHead(t *testing.T) {
	ctx := context.Background()
	for _, fs := range forkStores {
		t.Run(fs.name, func(t *testing.T) {
			mem := storage.NewMem()
			w, h := initGraph(t, mem)
			r := openRepo(t, fs.wrap(mem))
			if _, _, err := r.Resolve(ctx, MainBranch); err != nil {
				t.Fatal(err)
			}
			// Another process advances main.
			newer, _ := publishPerson(t, w, h, 1)
			if err := r.ForkBranch(ctx, "feature", MainBranch); err != nil {
				t.Fatal(err)
			}
			got, err := r.Head(ctx, "feature")
			if err != nil {
				t.Fatal(err)
			}
			if got.Commit != newer.Commit {
				t.Fatalf("fork names %s, the source's head is %s (stale: %s)", got.Commit, newer.Commit, h.Commit)
			}
			// The fork advances independently of its source.
			if _, _, err := publishOne(ctx, r, got, "node:Person", 2); err != nil {
				t.Fatalf("write to the fork: %v", err)
			}
			if m, _ := r.Head(ctx, MainBranch); m.Commit != newer.Commit {
				t.Fatalf("writing the fork moved main to %s", m.Commit)
			}
		})
	}
}

// TestForkBranchRefusals: every refusal is typed and leaves no ref behind,
// including a path-prefix clash that the listing reveals after the copy
// landed (the copy is deleted again).
func TestForkBranchRefusals(t *testing.T) {
	ctx := context.Background()
	for _, fs := range forkStores {
		for _, tc := range []struct {
			name, branch, source string
			sentinel             error
			errBranch, reason    string
		}{
			{"missing source", "x", "nope", ErrBranchNotFound, "nope", ""},
			{"existing name", "live", MainBranch, ErrBranchExists, "live", ""},
			{"fork onto its source", "live", "live", ErrBranchExists, "live", ""},
			{"descendant of a live branch", "live/child", MainBranch, ErrBranchExists, "live/child", `conflicts with live branch "live"`},
			{"ancestor of a live branch", "deep", MainBranch, ErrBranchExists, "deep", `conflicts with live branch "deep/er"`},
			{"invalid name", "bad name", MainBranch, ErrInvalidBranch, "", ""},
			{"invalid source", "x", "a..b", ErrInvalidBranch, "", ""},
		} {
			t.Run(fs.name+"/"+tc.name, func(t *testing.T) {
				mem := storage.NewMem()
				w, h := initGraph(t, mem)
				for _, b := range []string{"live", "deep/er"} {
					if _, err := w.CreateBranch(ctx, b, h.Commit); err != nil {
						t.Fatal(err)
					}
				}
				before := refs(t, mem)
				r := openRepo(t, fs.wrap(mem))
				err := r.ForkBranch(ctx, tc.branch, tc.source)
				if !errors.Is(err, tc.sentinel) {
					t.Fatalf("err = %v, want %v", err, tc.sentinel)
				}
				var be *BranchError
				if tc.errBranch != "" && (!errors.As(err, &be) || be.Branch != tc.errBranch) {
					t.Fatalf("err = %#v, want a *BranchError for %q", err, tc.errBranch)
				}
				if tc.reason != "" && !strings.Contains(err.Error(), tc.reason) {
					t.Fatalf("err = %v, want it to say %q", err, tc.reason)
				}
				if after := refs(t, mem); after != before {
					t.Fatalf("refs changed by a refused fork:\n%s\nwant\n%s", after, before)
				}
			})
		}
	}
	t.Run("read-only", func(t *testing.T) {
		mem := storage.NewMem()
		initGraph(t, mem)
		r, err := Open(ctx, mem, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.ForkBranch(ctx, "x", MainBranch); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("err = %v, want ErrReadOnly", err)
		}
	})
}

// TestForkBranchListingFails: when the clash listing fails after the copy
// landed, the copy is removed and the listing's error returned; when the
// removal fails too, both errors are reported.
func TestForkBranchListingFails(t *testing.T) {
	ctx := context.Background()
	for _, alsoDelete := range []bool{false, true} {
		t.Run(fmt.Sprintf("delete fails=%v", alsoDelete), func(t *testing.T) {
			mem := storage.NewMem()
			initGraph(t, mem)
			f := storage.NewFaulty(mem)
			r := openRepo(t, f)
			listErr := errors.New("listing lost")
			f.Inject(storage.Fault{Op: storage.OpList, Err: listErr})
			if alsoDelete {
				f.Inject(storage.Fault{Op: storage.OpDelete, Err: errors.New("delete lost")})
			}
			err := r.ForkBranch(ctx, "feature", MainBranch)
			if !errors.Is(err, listErr) {
				t.Fatalf("err = %v, want the listing's", err)
			}
			_, serr := mem.Stat(ctx, RefKey("feature"))
			if left := serr == nil; left != alsoDelete {
				t.Fatalf("ref left behind = %v (delete fails = %v): %v", left, alsoDelete, err)
			}
			if alsoDelete && !strings.Contains(err.Error(), "created before the clash was seen") {
				t.Fatalf("err = %v, want it to name the ref left behind", err)
			}
		})
	}
}

// TestForkBranchRace: of many handles forking one name at once, exactly one
// succeeds; the others get ErrBranchExists.
func TestForkBranchRace(t *testing.T) {
	ctx := context.Background()
	for _, fs := range forkStores {
		t.Run(fs.name, func(t *testing.T) {
			mem := storage.NewMem()
			initGraph(t, mem)
			const n = 16
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				r := openRepo(t, fs.wrap(mem))
				wg.Go(func() { errs[i] = r.ForkBranch(ctx, "feature", MainBranch) })
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, ErrBranchExists):
					t.Fatalf("racer: %v", err)
				}
			}
			if won != 1 {
				t.Fatalf("%d racers created the branch, want 1", won)
			}
		})
	}
}

// refs lists every ref with its bytes.
func refs(t *testing.T, st storage.Store) string {
	t.Helper()
	var b strings.Builder
	err := st.List(context.Background(), refPrefix, "", func(info storage.Info) error {
		data, _, err := st.Get(context.Background(), info.Key)
		fmt.Fprintf(&b, "%s %s", info.Key, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestForkRefIsTheSourceRef pins what a fork writes: by copy, the source
// ref's exact bytes (commit, seq, hint, sum); by read, a ref naming the
// same commit at the same seq. Either decodes as a ref of the new branch
// and advances to seq + 1; a source ref written before hints (no hint)
// forks too, and the fork then has none.
func TestForkRefIsTheSourceRef(t *testing.T) {
	ctx := context.Background()
	for _, fs := range forkStores {
		for _, hinted := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/hinted=%v", fs.name, hinted), func(t *testing.T) {
				mem := storage.NewMem()
				w, h := initGraph(t, mem)
				h, _ = publishPerson(t, w, h, 1)
				if !hinted {
					old := encodeRef(h.Commit, h.Seq)
					if _, err := mem.Put(ctx, RefKey(MainBranch), old); err != nil {
						t.Fatal(err)
					}
				}
				src, _, _ := mem.Get(ctx, RefKey(MainBranch))
				r := openRepo(t, fs.wrap(mem))
				if err := r.ForkBranch(ctx, "feature", MainBranch); err != nil {
					t.Fatal(err)
				}
				got, _, _ := mem.Get(ctx, RefKey("feature"))
				if fs.name == "copy" && string(got) != string(src) {
					t.Fatalf("forked ref\n%s\nwant the source's bytes\n%s", got, src)
				}
				fh, summed, rh, err := decodeRefHint("feature", got, "")
				if err != nil || !summed {
					t.Fatalf("forked ref: %v (summed %v)", err, summed)
				}
				if fh.Commit != h.Commit || fh.Seq != h.Seq || fh.Seq < 2 {
					t.Fatalf("forked ref names %s seq %d, source %s seq %d", fh.Commit, fh.Seq, h.Commit, h.Seq)
				}
				if fs.name == "copy" && (rh != nil) != hinted {
					t.Fatalf("forked ref hint %v, source hinted %v", rh, hinted)
				}
				head, err := r.Head(ctx, "feature")
				if err != nil {
					t.Fatal(err)
				}
				next, _ := publishPerson(t, r, head, 2)
				if next.Seq != h.Seq+1 {
					t.Fatalf("advanced fork at seq %d, want %d", next.Seq, h.Seq+1)
				}
			})
		}
	}
}
