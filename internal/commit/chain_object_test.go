package commit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// goldenChainObject pins the bytes of a chain object of two commits
// (docs/format/commit.md, "Chain objects"): the canonical encoding of each,
// one per line, in chain order.
const goldenChainObject = `{"format":1,"id":"01JGQ5Z8M0BBBBBBBBBBBBBBBB","parents":["01JGQ5Z8M0AAAAAAAAAAAAAAAA"],"height":1,"actor":"w1","branch":"main","created_at":1767323045000000,"kind":"mutate","message":"one","schema":"schemas/0b1c.pg","tables":{"node:Person":"tables/node:Person/state/p1.json"},"sum":"7485e990d77adcc89507001f95727fe937bb4b885c4d3f445c500558ac46ad63"}
{"format":1,"id":"01JGQ5Z8M0CCCCCCCCCCCCCCCC","parents":["01JGQ5Z8M0BBBBBBBBBBBBBBBB"],"height":2,"actor":"w2","branch":"main","created_at":1767323045001000,"kind":"mutate","message":"two","schema":"schemas/0b1c.pg","tables":{"node:Person":"tables/node:Person/state/p2.json"},"sum":"ea09cce217fbed07f960fbb65998aad677d861ecc47b0d0bd18f28b9446f9fee"}
`

func chainPair(t *testing.T) []*Commit {
	t.Helper()
	one := &Commit{ID: mustID(t, idB), Parents: []ID{mustID(t, idA)}, Height: 1, Actor: "w1", Branch: "main", CreatedAt: 1767323045000000,
		Kind: KindMutate, Message: "one", Schema: "schemas/0b1c.pg", Tables: map[string]string{"node:Person": "tables/node:Person/state/p1.json"}}
	two := &Commit{ID: mustID(t, idC), Parents: []ID{mustID(t, idB)}, Height: 2, Actor: "w2", Branch: "main", CreatedAt: 1767323045001000,
		Kind: KindMutate, Message: "two", Schema: "schemas/0b1c.pg", Tables: map[string]string{"node:Person": "tables/node:Person/state/p2.json"}}
	return []*Commit{one, two}
}

func encodeChain(t *testing.T, cs []*Commit) []byte {
	t.Helper()
	var b []byte
	for _, c := range cs {
		e, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, e...)
	}
	return b
}

// TestChainObjectGolden: the chain object is exactly the commits'
// canonical encodings (golden bytes); either key decodes its own line with
// its checksum, and the other commit comes back with it; a single-line
// object (every commit written before chain objects, and every commit
// written alone) decodes as before.
func TestChainObjectGolden(t *testing.T) {
	cs := chainPair(t)
	data := encodeChain(t, cs)
	if string(data) != goldenChainObject {
		t.Fatalf("chain object changed:\n got %s\nwant %s", data, goldenChainObject)
	}
	for i, c := range cs {
		got, all, err := decodeObject(CommitKey(c.ID), data)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != c.ID || !got.Checksummed() || len(all) != 2 || all[i] != got {
			t.Fatalf("key %d: %+v, %d commits", i, got, len(all))
		}
		want := c.Clone()
		want.summed = true
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("key %d decoded %+v, want %+v", i, got, want)
		}
	}
	one, all, err := decodeObject(CommitKey(mustID(t, idC)), []byte(goldenCommit))
	if err != nil || one.Height != 7 || all != nil {
		t.Fatalf("single commit object: %+v %v %v", one, all, err)
	}
}

// TestChainObjectCorrupt: every defect of a chain object is a
// *CorruptError naming the key read — a bad line anywhere, even in a
// commit other than the one asked for, fails the whole object.
func TestChainObjectCorrupt(t *testing.T) {
	cs := chainPair(t)
	good := encodeChain(t, cs)
	key := CommitKey(cs[1].ID)
	lines := strings.SplitAfter(string(good), "\n")
	other := cs[1].Clone()
	other.ID = mustID(t, "01JGQ5Z8M0DDDDDDDDDDDDDDDD")
	unrelated := cs[1].Clone()
	unrelated.Parents = []ID{mustID(t, idA)}
	for _, tc := range []struct {
		name string
		data []byte
		key  string
	}{
		{"checksum of the other line", []byte(strings.Replace(string(good), `"message":"one"`, `"message":"0ne"`, 1)), key},
		{"no trailing newline", good[:len(good)-1], key},
		{"garbage line", []byte(lines[0] + "{nope}\n" + lines[1]), key},
		{"line not canonical", []byte(lines[0] + strings.Replace(lines[1], `{"format"`, `{ "format"`, 1)), key},
		{"same commit twice", []byte(lines[0] + lines[0]), CommitKey(cs[0].ID)},
		{"out of chain order", []byte(lines[1] + lines[0]), key},
		{"not following", encodeChain(t, []*Commit{cs[0], unrelated}), CommitKey(unrelated.ID)},
		{"key's commit absent", good, CommitKey(other.ID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeObject(tc.key, tc.data)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Key != tc.key {
				t.Fatalf("err = %v, want a CorruptError naming %s", err, tc.key)
			}
		})
	}
}

// TestChainObjectEveryByteChange changes every byte of a chain object of
// three commits as TestChecksumEverySingleByteChange does: each change,
// read through any key, is rejected or decodes to identical values.
func TestChainObjectEveryByteChange(t *testing.T) {
	cs := chainPair(t)
	three := cs[1].Clone()
	three.ID, three.Parents, three.Height = mustID(t, "01JGQ5Z8M0DDDDDDDDDDDDDDDD"), []ID{cs[1].ID}, 3
	cs = append(cs, three)
	orig := encodeChain(t, cs)
	key := CommitKey(cs[1].ID)
	_, want, err := decodeObject(key, orig)
	if err != nil {
		t.Fatal(err)
	}
	var rejected, same int
	for i := range orig {
		for _, b := range flips(orig[i]) {
			d := append([]byte(nil), orig...)
			d[i] = b
			_, got, err := decodeObject(key, d)
			if err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Key != key {
					t.Fatalf("byte %d → %q: %v is not a CorruptError naming %s", i, b, err, key)
				}
				rejected++
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("byte %d → %q decoded to different values", i, b)
			}
			same++
		}
	}
	t.Logf("%d bytes: %d rejected, %d identical", len(orig), rejected, same)
}

// TestWriteCommitsShared: on a local directory a chain's commits are one
// file under every commit's name (one OpPutShared, no per-commit put), the
// chain publishes with one CAS, a fresh handle reads every commit (log,
// check) and finds the others of the chain cached after reading one; on a
// store without the capability the commits are one object each, as
// before; a long chain of large commits is split at maxChainObjectBytes.
func TestWriteCommitsShared(t *testing.T) {
	for _, tc := range []struct {
		backend  string
		n        int
		bigState bool
	}{{"local", 5, false}, {"mem", 5, false}, {"local", 160, true}} {
		t.Run(fmt.Sprintf("%s/%d", tc.backend, tc.n), func(t *testing.T) {
			ctx := context.Background()
			inner := backendStore(t, tc.backend)
			st := storage.NewCounting(inner)
			r, h0 := initGraph(t, st)
			tip, err := r.Commit(ctx, h0.Commit)
			if err != nil {
				t.Fatal(err)
			}
			var chain []*Commit
			for i := range tc.n {
				msg := fmt.Sprintf("w%d", i)
				if tc.bigState {
					msg += strings.Repeat("x", 4000)
				}
				c, err := r.NextCommit(ctx, tip, PublishRequest{Branch: MainBranch, Kind: KindMutate, Message: msg,
					Tables: map[string]string{"node:Person": fmt.Sprintf("tables/node:Person/state/s%d.json", i)}})
				if err != nil {
					t.Fatal(err)
				}
				chain, tip = append(chain, c), c
			}
			before := st.Snapshot()
			if err := r.WriteCommitsShared(ctx, chain); err != nil {
				t.Fatal(err)
			}
			if _, err := r.PublishWrittenChain(ctx, MainBranch, h0, false, chain, len(chain)); err != nil {
				t.Fatal(err)
			}
			d := st.Snapshot().Sub(before)
			objects := d[storage.OpPutShared].Requests + d[storage.OpPut].Requests
			switch {
			case tc.backend == "mem" && (d[storage.OpPut].Requests != int64(tc.n) || d[storage.OpPutShared].Requests != 0):
				t.Fatalf("without the capability: %v, want %d puts", d, tc.n)
			case tc.backend == "local" && !tc.bigState && (objects != 1 || d[storage.OpPutShared].Requests != 1):
				t.Fatalf("chain of %d: %v, want one shared put", tc.n, d)
			case tc.bigState && (objects < 3 || objects > 4):
				t.Fatalf("chain of %d ~4 KB commits: %d objects, want 3–4 of ≤ %d KiB", tc.n, objects, maxChainObjectBytes>>10)
			}
			if tc.backend == "local" {
				root := inner.(*storage.Local).Root()
				fi, err := os.Stat(filepath.Join(root, CommitKey(chain[0].ID)))
				if err != nil || fi.Size() > maxChainObjectBytes {
					t.Fatalf("chain object: %v, %v", fi, err)
				}
			}
			fresh := openRepo(t, st)
			mid := st.Snapshot()
			if _, err := fresh.Commit(ctx, chain[len(chain)-1].ID); err != nil {
				t.Fatal(err)
			}
			log := linearChain(t, fresh, MainBranch)
			if len(log) != tc.n+1 {
				t.Fatalf("log of %d commits, want %d", len(log), tc.n+1)
			}
			for i, c := range chain {
				if got := log[len(chain)-1-i]; got.ID != c.ID || got.Message != c.Message || !got.Checksummed() {
					t.Fatalf("commit %d reads as %+v", i, got)
				}
			}
			if tc.backend == "local" && !tc.bigState {
				if gets := st.Snapshot().Sub(mid)[storage.OpGet].Requests; gets != 3 { // the chain object, the ref, genesis
					t.Errorf("reading a chain of %d, the ref and genesis took %d gets, want 3", tc.n, gets)
				}
			}
		})
	}
}
