package commit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// flips returns the single-character changes tried at one byte: its low bit
// flipped, its case flipped, a neighbour of the same class (digit, hex
// letter, letter), and a few structural characters.
func flips(b byte) []byte {
	cand := []byte{b ^ 0x01, b ^ 0x20, '"', '0', ' ', '}'}
	switch {
	case b >= '0' && b <= '8':
		cand = append(cand, b+1)
	case b == '9':
		cand = append(cand, '0')
	case b >= 'a' && b < 'z' || b >= 'A' && b < 'Z':
		cand = append(cand, b+1)
	}
	slices.Sort(cand)
	return slices.DeleteFunc(slices.Compact(cand), func(c byte) bool { return c == b })
}

// TestChecksumEverySingleByteChange changes every byte of a stamp, a ref and
// a commit written by this build to each of several other characters and
// decodes the result. Every change must either fail with a *CorruptError
// naming the object or decode to exactly the same values (JSON field names
// match case-insensitively, so "Format" for "format" is such a change).
func TestChecksumEverySingleByteChange(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	_, h, c := oneWrite(t, mem)
	type object struct {
		key    string
		decode func(data []byte) (any, error)
	}
	objects := []object{
		{StampKey, func(d []byte) (any, error) {
			s, err := decodeStamp(d)
			s.Sum = ""
			return s, err
		}},
		{RefKey(MainBranch), func(d []byte) (any, error) {
			// The ref Publish writes carries a hint: it is covered too.
			h, summed, rh, err := decodeRefHint(MainBranch, d, "")
			if err == nil && !summed {
				return nil, errors.New("ref decoded without its checksum")
			}
			if err == nil && (rh == nil || rh.Tables["node:Person"] != c.Tables["node:Person"] || rh.Schema != c.Schema) {
				return nil, fmt.Errorf("ref hint %+v does not copy the commit's schema and tables", rh)
			}
			return struct {
				Head
				*refHint
			}{h, rh}, err
		}},
		{CommitKey(c.ID), func(d []byte) (any, error) {
			c, err := Decode(CommitKey(c.ID), d)
			if err == nil && !c.summed {
				return nil, errors.New("commit decoded without its checksum")
			}
			return c, err
		}},
	}
	_ = h
	for _, o := range objects {
		t.Run(o.key, func(t *testing.T) {
			orig, _, err := mem.Get(ctx, o.key)
			if err != nil {
				t.Fatal(err)
			}
			want, err := o.decode(orig)
			if err != nil {
				t.Fatalf("intact object: %v", err)
			}
			var tried, rejected, same int
			for i := range orig {
				for _, b := range flips(orig[i]) {
					d := append([]byte(nil), orig...)
					d[i] = b
					tried++
					got, err := o.decode(d)
					if err != nil {
						var ce *CorruptError
						if !errors.As(err, &ce) || ce.Key != o.key {
							t.Fatalf("byte %d → %q: error %v is not a CorruptError naming %s", i, b, err, o.key)
						}
						rejected++
						continue
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("byte %d → %q: silently decoded to different values:\n%s\n%+v\nwant %+v", i, b, d, got, want)
					}
					same++
				}
			}
			t.Logf("%s: %d bytes, %d changes: %d rejected, %d decode to identical values", o.key, len(orig), tried, rejected, same)
		})
	}
}

// TestStrictGraphRequiresChecksums: on a graph created by this build (its
// stamp carries a checksum) a commit or ref without one is corruption; on a
// graph created before checksums such objects are read as before.
func TestStrictGraphRequiresChecksums(t *testing.T) {
	ctx := context.Background()
	for _, strict := range []bool{true, false} {
		t.Run(map[bool]string{true: "strict", false: "legacy"}[strict], func(t *testing.T) {
			mem := storage.NewMem()
			_, h, c := oneWrite(t, mem)
			if !strict {
				mem.Put(ctx, StampKey, []byte(`{"format":"omnigraph","version":1,"created_at":1}`+"\n"))
			}
			// Rewrite the head commit and the ref in the pre-checksum encoding.
			data, _, _ := mem.Get(ctx, CommitKey(c.ID))
			legacy := stripSum(t, data)
			mem.Put(ctx, CommitKey(c.ID), legacy)
			mem.Put(ctx, RefKey(MainBranch), stripSum(t, encodeRef(h.Commit, h.Seq)))

			o, err := Open(ctx, mem, Options{})
			if strict {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Key != RefKey(MainBranch) || !strings.Contains(err.Error(), "no checksum") {
					t.Fatalf("open: %v, want a CorruptError for the unchecksummed ref", err)
				}
				mem.Put(ctx, RefKey(MainBranch), encodeRef(h.Commit, h.Seq))
				o = openRepo(t, mem)
				if _, _, err := o.Resolve(ctx, MainBranch); !errors.As(err, &ce) || ce.Key != CommitKey(c.ID) {
					t.Fatalf("resolve: %v, want a CorruptError for the unchecksummed commit", err)
				}
				mem.Put(ctx, CommitKey(c.ID), data) // for the cleanup check
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := o.Resolve(ctx, MainBranch)
			if err != nil {
				t.Fatal(err)
			}
			if got.Checksummed() || !reflect.DeepEqual(got.Tables, c.Tables) {
				t.Fatalf("legacy commit read as %+v", got)
			}
		})
	}
}

// stripSum removes the ,"sum":"…" field from an encoded object.
func stripSum(t *testing.T, data []byte) []byte {
	t.Helper()
	s := string(data)
	i := strings.Index(s, `,"sum":"`)
	if i < 0 {
		t.Fatalf("no sum in %s", s)
	}
	return []byte(s[:i] + s[i+len(`,"sum":"`)+64+1:])
}

func TestCheckTables(t *testing.T) {
	want := map[string]string{"node:Person": "tables/node-Person/state/", "edge:Knows": "tables/edge-Knows/state/"}
	good := map[string]string{"node:Person": "tables/node-Person/state/a.json", "edge:Knows": "tables/edge-Knows/state/b.json"}
	tests := []struct {
		name   string
		tables map[string]string
		err    string // "" = accepted
	}{
		{"exact", good, ""},
		{"renamed key", map[string]string{"node:Person": good["node:Person"], "edge:Knowt": good["edge:Knows"]}, `names "edge:Knowt"`},
		{"missing table", map[string]string{"node:Person": good["node:Person"]}, "lacks edge:Knows"},
		{"extra table", map[string]string{"node:Person": good["node:Person"], "edge:Knows": good["edge:Knows"], "node:X": "tables/node-X/state/c.json"}, `names "node:X"`},
		{"foreign state", map[string]string{"node:Person": good["edge:Knows"], "edge:Knows": good["edge:Knows"]}, "outside tables/node-Person/state/"},
		{"bare prefix", map[string]string{"node:Person": "tables/node-Person/state/", "edge:Knows": good["edge:Knows"]}, "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Commit{ID: mustID(t, idC), Schema: "schemas/s.pg", Tables: tt.tables}
			err := CheckTables(c, want)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Key != CommitKey(c.ID) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err %v, want a CorruptError naming the commit mentioning %q", err, tt.err)
			}
		})
	}
}

// TestMissingMainWithHistory: with refs/heads/main lost on a graph that has
// history, Open fails with a *MissingRefError pointing to verify and repair
// (never to init), Init refuses the location writing nothing, and
// RestoreRef brings main back with its history.
func TestMissingMainWithHistory(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	_, h, c := oneWrite(t, mem)
	if err := mem.Delete(ctx, RefKey(MainBranch)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, mem, Options{})
	if !errors.Is(err, ErrMissingRef) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open: %v, want ErrMissingRef", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "omnigraph verify") || !strings.Contains(msg, "omnigraph repair") || strings.Contains(msg, "init") {
		t.Fatalf("message %q must point to verify/repair and not to init", msg)
	}
	cs := storage.NewCounting(mem)
	if _, _, err := Init(ctx, cs, InitRequest{Schema: []byte(testSchema)}, Options{}); !errors.Is(err, ErrAlreadyInitialized) || !errors.Is(err, ErrMissingRef) {
		t.Fatalf("init over history: %v", err)
	}
	if w := writes(cs.Snapshot()); w != 0 {
		t.Fatalf("refused init issued %d writes", w)
	}
	u, err := OpenUnchecked(ctx, mem, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.RestoreRef(ctx, MainBranch, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := u.RestoreRef(ctx, MainBranch, c.ID); !errors.Is(err, ErrRefIntact) {
		t.Fatalf("second restore: %v, want ErrRefIntact", err)
	}
	o := openRepo(t, mem)
	log := linearChain(t, o, MainBranch)
	if len(log) != 2 || log[0].ID != c.ID {
		t.Fatalf("history after restore: %d commits, head %s", len(log), log[0].ID)
	}
	// A damaged ref is replaced too (compare-and-swap against its bytes).
	mem.Put(ctx, RefKey(MainBranch), []byte(`{"commit":"garbage"}`))
	if _, err := u.RestoreRef(ctx, MainBranch, h.Commit); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.Resolve(ctx, MainBranch); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedInitStillCompletes: a location holding only genesis commits
// (init stopped before creating main) is not history; Open says so and Init
// completes it.
func TestInterruptedInitStillCompletes(t *testing.T) {
	ctx := context.Background()
	mem := storage.NewMem()
	initGraph(t, mem)
	mem.Delete(ctx, RefKey(MainBranch))
	_, err := Open(ctx, mem, Options{})
	if !errors.Is(err, ErrNotInitialized) || errors.Is(err, ErrMissingRef) {
		t.Fatalf("open: %v", err)
	}
	if _, _, err := Init(ctx, mem, InitRequest{Schema: []byte(testSchema)}, Options{}); err != nil {
		t.Fatalf("re-init: %v", err)
	}
}
