package table

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// inlineIndexOf is the inline reference of the index a fragment of ids
// gets (a node table of the id column alone).
func inlineIndexOf(t *testing.T, ids ...string) (string, int64) {
	t.Helper()
	schema := Schema{Columns: []Column{{Name: "id", Type: ColumnType{Kind: String}}}}
	var rows [][]any
	for _, id := range ids {
		rows = append(rows, []any{id})
	}
	rec := buildRecord(t, nil, schema, rows)
	defer rec.Release()
	b := encodeFragmentIndex(schema, rec)
	return inlineIndexRef(b), int64(len(b))
}

// goldenInlineIndexState is goldenState with its first fragment's index
// carried inline.
func goldenInlineIndexState(t *testing.T) *State {
	t.Helper()
	return goldenStateWith(t, func(frags []Fragment) {
		frags[0].Index, frags[0].IndexBytes = inlineIndexOf(t, "a<&>", "b", "c\u00e9")
	})
}

// TestInlineIndexStateGolden pins the bytes of a format-5 state (an inline
// fragment index), that decode→encode is the identity on them, and that
// the index verifies without a store.
func TestInlineIndexStateGolden(t *testing.T) {
	back := checkGoldenState(t, goldenInlineIndexState(t), "state_v5.json", 5)
	if err := VerifyFragmentIndex(context.Background(), nil, back.Fragments()[0]); err != nil {
		t.Fatal(err)
	}
}

func TestInlineIndexStateCorrupt(t *testing.T) {
	good, err := goldenInlineIndexState(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	ref := goldenInlineIndexState(t).Fragments()[0].Index
	b64 := strings.TrimPrefix(ref, InlineIndexPrefix)
	raw, _ := base64.RawURLEncoding.DecodeString(b64)
	flipped := bytes.Clone(raw)
	flipped[9] ^= 1 // the header's row count, under its checksum
	other, otherBytes := inlineIndexOf(t, "x", "y")
	rep := func(old, new string) []byte { return []byte(strings.Replace(string(good), old, new, 1)) }
	checkStatesRejected(t, good, []corruptState{
		{"inline index in a format 1 state", rep(`"format":5`, `"format":1`), false},
		{"inline index in a format 4 state", rep(`"format":5`, `"format":4`), false},
		{"format 5 without inline index", func() []byte {
			old, _ := goldenState(t).Encode()
			return []byte(strings.Replace(string(old), `"format":1`, `"format":5`, 1))
		}(), false},
		{"not base64url", rep(b64, b64[:len(b64)-2]+"+/"), false},
		{"size disagrees", rep(fmt.Sprintf(`"index_bytes":%d`, len(raw)), fmt.Sprintf(`"index_bytes":%d`, len(raw)+1)), false},
		{"truncated index", rep(fmt.Sprintf(`%s","index_bytes":%d`, b64, len(raw)), fmt.Sprintf(`%s","index_bytes":%d`, b64[:len(b64)-8], len(raw)-6)), false},
		{"damaged header", rep(b64, base64.RawURLEncoding.EncodeToString(flipped)), false},
		{"index of another row count", rep(fmt.Sprintf(`%s","index_bytes":%d`, b64, len(raw)), fmt.Sprintf(`%s","index_bytes":%d`, strings.TrimPrefix(other, InlineIndexPrefix), otherBytes)), false},
	})
}

// TestWriteFragmentInlineIndex: under the bound a fragment's index rides in
// its reference (no index object, the same bytes an object would hold);
// over it, and with a bound of 0, it is an object as before.
func TestWriteFragmentInlineIndex(t *testing.T) {
	ctx := context.Background()
	rowsOfN := func(n int) [][]any {
		var rows [][]any
		for i := range n {
			rows = append(rows, []any{fmt.Sprintf("e%04d", i), fmt.Sprintf("n%d", i%7), fmt.Sprintf("n%d", i%5), int64(i)})
		}
		return rows
	}
	indexObjects := func(st storage.Store) int {
		n := 0
		_ = st.List(ctx, testPrefix+"/index/", "", func(storage.Info) error { n++; return nil })
		return n
	}
	for _, tc := range []struct {
		name   string
		rows   int
		bound  int
		inline bool
	}{
		{"small, default bound", 3, DefaultInlineIndexBytes, true},
		{"small, no bound", 3, 0, false},
		{"over the bound", 400, DefaultInlineIndexBytes, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.NewMem()
			f := writeRows(t, st, edgeSchema(), rowsOfN(tc.rows), WriteOptions{InlineIndexBytes: tc.bound})
			if IsInlineIndex(f.Index) != tc.inline || (indexObjects(st) == 0) != tc.inline {
				t.Fatalf("index %.40q inline=%v, %d index objects", f.Index, IsInlineIndex(f.Index), indexObjects(st))
			}
			if err := VerifyFragmentIndex(ctx, st, f); err != nil {
				t.Fatal(err)
			}
			if !tc.inline {
				return
			}
			// The same bytes as the object the same rows get without a bound.
			o := writeRows(t, st, edgeSchema(), rowsOfN(tc.rows), WriteOptions{})
			obj, _, err := st.Get(ctx, o.Index)
			if err != nil {
				t.Fatal(err)
			}
			got, err := inlineIndexBytes(f.Index, f.IndexBytes)
			if err != nil || !bytes.Equal(got, obj) {
				t.Fatalf("inline index differs from the object (%v)", err)
			}
		})
	}
}
