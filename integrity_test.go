package omnigraph_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph"
	"github.com/omnigraph-go/omnigraph/internal/commit"
	"github.com/omnigraph-go/omnigraph/internal/index"
	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// The byte-flip test of issue 17 (docs/invariants.md, "Format and
// integrity"): every single-character change of every metadata object a
// reader trusts either fails every read of it with a typed corruption error
// or changes nothing any read can see. Zero silent result changes.

// flipGraph builds a small graph holding every metadata object kind: the
// stamp, two refs, commits (genesis, loads, a mutation, a maintenance
// commit), the schema source, table states, a deletion vector and
// fragment indexes, each kind both as an object and inline.
func flipGraph(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "g")
	// Deletion vectors and table states as objects first, so that the
	// graph holds objects of those kinds; a second handle below writes
	// them inline.
	t.Setenv(omnigraph.EnvInlineDVBytes, "0")
	t.Setenv(omnigraph.EnvInlineStateBytes, "0")
	t.Setenv(omnigraph.EnvInlineIndexBytes, "0")
	src, err := os.ReadFile("examples/social/schema.pg")
	if err != nil {
		t.Fatal(err)
	}
	g, err := omnigraph.Init(ctx, dir, "schema.pg", string(src), "", omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("examples/social/data.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Load(ctx, bytes.NewReader(data), omnigraph.LoadOptions{Mode: omnigraph.Overwrite}); err != nil {
		t.Fatal(err)
	}
	more := `{"type":"Person","data":{"name":"Eve","age":41}}` + "\n" + `{"edge":"Knows","from":"Eve","to":"Alice"}` + "\n"
	if _, err := g.Load(ctx, strings.NewReader(more), omnigraph.LoadOptions{Mode: omnigraph.Append}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Optimize(ctx, ""); err != nil {
		t.Fatal(err)
	}
	muts, err := os.ReadFile("examples/social/mutations.gq")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Mutate(ctx, "", string(muts), "set_age", map[string]any{"name": "Bob", "age": 26}, omnigraph.MutateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(omnigraph.EnvInlineDVBytes, "256")
	t.Setenv(omnigraph.EnvInlineStateBytes, "2048")
	t.Setenv(omnigraph.EnvInlineIndexBytes, "1024")
	h, err := omnigraph.Open(ctx, dir, omnigraph.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Mutate(ctx, "", string(muts), "set_age", map[string]any{"name": "Alice", "age": 31}, omnigraph.MutateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := g.CreateBranch(ctx, "feature", "main", ""); err != nil {
		t.Fatal(err)
	}
	return dir
}

// observe is everything a reader can see of a graph, from a fresh handle:
// every branch's tables, rows (export) and schema, every commit of its log
// and the tables of each of those commits by time travel.
func observe(ctx context.Context, dir string) (string, error) {
	g, err := omnigraph.Open(ctx, dir, omnigraph.Options{})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	branches, err := g.Branches(ctx)
	if err != nil {
		return "", err
	}
	for _, br := range branches {
		fmt.Fprintf(&b, "branch %s\n", br)
		tabs, ci, err := g.Tables(ctx, omnigraph.Target{Branch: br})
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%+v\n%+v\n", ci, tabs)
		src, err := g.SchemaSource(ctx, omnigraph.Target{Branch: br})
		if err != nil {
			return "", err
		}
		b.WriteString(src)
		if err := g.Export(ctx, omnigraph.Target{Branch: br}, nil, &b); err != nil {
			return "", err
		}
		log, err := g.Log(ctx, br, 0)
		if err != nil {
			return "", err
		}
		for _, c := range log {
			tabs, _, err := g.Tables(ctx, omnigraph.Target{Snapshot: c.ID})
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%+v %+v\n", c, tabs)
		}
	}
	return b.String(), nil
}

// typedCorruption reports whether err is one of the corruption errors (a
// version byte changed to an unknown version is the typed version error).
func typedCorruption(err error) bool {
	return errors.Is(err, commit.ErrCorrupt) || errors.Is(err, table.ErrCorrupt) || errors.Is(err, table.ErrUnsupportedVersion)
}

// flipBytes are the single-character changes tried at one byte.
func flipBytes(b byte) []byte {
	cand := []byte{b ^ 0x01, b ^ 0x20, '"', '0', ' ', '}', 0xff}
	switch {
	case b >= '0' && b <= '8', b >= 'a' && b < 'z', b >= 'A' && b < 'Z':
		cand = append(cand, b+1)
	}
	slices.Sort(cand)
	return slices.DeleteFunc(slices.Compact(cand), func(c byte) bool { return c == b })
}

// decodeAlone decodes one object's bytes with the decoder every read of
// that object uses. ok=false means the object kind has no standalone
// decoder here (refs, the stamp): every change is then checked by a full
// read.
func decodeAlone(ctx context.Context, key string, data []byte) (err error, ok bool) {
	switch {
	case strings.HasSuffix(key, ".fidx"):
		f, known := fidxOwners[key]
		if !known {
			return nil, false
		}
		mem := storage.NewMem()
		mem.Put(ctx, key, data)
		err = table.VerifyFragmentIndex(ctx, mem, f)
	case strings.HasPrefix(key, "commits/"):
		_, err = commit.Decode(key, data)
	case strings.HasPrefix(key, "schemas/"):
		if commit.SchemaKey(data) != key {
			err = &commit.CorruptError{Key: key, Offset: -1, Reason: "content hash does not match name"}
		}
	case strings.Contains(key, "/state/"):
		_, err = table.DecodeState(key, data)
	case strings.HasSuffix(key, ".dv"):
		mem := storage.NewMem()
		mem.Put(ctx, key, data)
		_, err = table.ReadDeletionVector(ctx, mem, key)
	case strings.HasSuffix(key, ".idx"):
		_, err = index.DecodeKey(key, data)
	default:
		return nil, false
	}
	return err, true
}

// fidxOwners maps each fragment index object to the fragment entry naming
// it (the index is checked against it).
var fidxOwners = map[string]table.Fragment{}

func TestByteFlipEveryMetadataObject(t *testing.T) {
	ctx := context.Background()
	dir := flipGraph(t)
	inlineDVStates, inlineStates, inlineIndexes := 0, 0, 0
	commits, _ := filepath.Glob(filepath.Join(dir, "commits", "*.json"))
	for _, p := range commits {
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		c, err := commit.Decode(filepath.ToSlash(rel), b)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range c.Tables {
			if !table.IsInlineState(k) {
				continue
			}
			inlineStates++
			s, err := table.ReadState(ctx, nil, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range s.Fragments() {
				if table.IsInlineDV(f.DV) {
					inlineDVStates++
				}
				if table.IsInlineIndex(f.Index) {
					inlineIndexes++
				}
			}
		}
	}
	states, _ := filepath.Glob(filepath.Join(dir, "tables", "*", "state", "*.json"))
	for _, p := range states {
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		if s, err := table.DecodeState(filepath.ToSlash(rel), b); err == nil {
			for _, f := range s.Fragments() {
				if f.Index != "" {
					fidxOwners[f.Index] = f
				}
				if table.IsInlineDV(f.DV) {
					inlineDVStates++
				}
				if table.IsInlineIndex(f.Index) {
					inlineIndexes++
				}
			}
		}
	}
	base, err := observe(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, ".locks/") || strings.HasSuffix(rel, ".parquet") {
			return nil // data files: Parquet structure and zstd checksums, verify --deep
		}
		keys = append(keys, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	kinds := map[string]int{}
	var total, rejected, fullReads, invisible int
	for _, key := range keys {
		p := filepath.Join(dir, filepath.FromSlash(key))
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		kinds[kindOf(key)]++
		checkedRejected := false
		stride := 1
		if testing.Short() {
			stride = 5 // every fifth byte under -short
		}
		for i := 0; i < len(orig); i += stride {
			for _, nb := range flipBytes(orig[i]) {
				d := append([]byte(nil), orig...)
				d[i] = nb
				total++
				decRejected := false
				if err, ok := decodeAlone(ctx, key, d); ok && err != nil {
					if !typedCorruption(err) {
						t.Fatalf("%s byte %d → %q: decoder error %v is not a typed corruption error", key, i, nb, err)
					}
					rejected++
					decRejected = true
					// The decoder is the only way any read sees the object,
					// so its rejection fails every read; one full read per
					// object confirms the error surfaces typed and named.
					// Fragment indexes are read in parts, so a sample of
					// their rejected changes also gets a full read.
					if checkedRejected && !(kindOf(key) == "fragment index" && total%50 == 0) {
						continue
					}
					checkedRejected = true
				}
				// A full read from a fresh handle: must fail typed or see
				// exactly the original graph.
				if err := os.WriteFile(p, d, 0o644); err != nil {
					t.Fatal(err)
				}
				fullReads++
				got, err := observe(ctx, dir)
				switch {
				case err != nil && !typedCorruption(err):
					t.Errorf("%s byte %d → %q: read error %v is not a typed corruption error", key, i, nb, err)
				case err != nil:
					if !strings.Contains(err.Error(), key) {
						t.Errorf("%s byte %d → %q: error %q does not name the object", key, i, nb, err)
					}
					if !decRejected {
						rejected++
					}
				case got != base:
					t.Errorf("%s byte %d → %q: SILENT RESULT CHANGE", key, i, nb)
				case !decRejected:
					invisible++
				}
			}
		}
		if err := os.WriteFile(p, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := observe(ctx, dir); err != nil || got != base {
		t.Fatalf("graph not restored: %v", err)
	}
	// No key index ("index"): this build writes one only over fragments
	// without their own index (graphs from before fragment indexes);
	// internal/index flips every byte of one (TestKeyIndexCorrupt).
	for _, k := range []string{"stamp", "ref", "commit", "schema", "state", "dv", "fragment index"} {
		if kinds[k] == 0 {
			t.Errorf("the graph holds no %s object: the test does not cover that kind", k)
		}
	}
	if inlineDVStates == 0 || inlineStates == 0 || inlineIndexes == 0 {
		t.Errorf("%d inline deletion vectors, %d inline table states, %d inline fragment indexes: the test does not cover them", inlineDVStates, inlineStates, inlineIndexes)
	}
	t.Logf("objects %v; %d single-character changes: %d rejected as corrupt, %d read back identical to the original, %d full reads",
		kinds, total, rejected, invisible, fullReads)
}

func kindOf(key string) string {
	switch {
	case key == commit.StampKey:
		return "stamp"
	case strings.HasPrefix(key, "refs/"):
		return "ref"
	case strings.HasPrefix(key, "commits/"):
		return "commit"
	case strings.HasPrefix(key, "schemas/"):
		return "schema"
	case strings.Contains(key, "/state/"):
		return "state"
	case strings.HasSuffix(key, ".dv"):
		return "dv"
	case strings.HasSuffix(key, ".idx"):
		return "index"
	case strings.HasSuffix(key, ".fidx"):
		return "fragment index"
	}
	return "other:" + key
}
