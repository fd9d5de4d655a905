package index

import (
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// TestWriteRefs pins the reference each index writer returns: its name,
// kind, columns and covered fragments, and a key under <prefix>/index/
// with the kind's extension that names the object just stored.
func TestWriteRefs(t *testing.T) {
	const frag = prefix + "/data/f1.parquet"
	ctx, st := t.Context(), storage.NewMem()
	tests := []struct {
		name  string
		write func() (table.IndexRef, error)
		want  table.IndexRef
		ext   string
	}{
		{"btree", func() (table.IndexRef, error) {
			return WriteBTree(ctx, st, prefix, frag, "age", table.I64, []any{int64(3), nil, int64(1)})
		}, table.IndexRef{Name: "btree:age", Kind: KindBTree, Columns: []string{"age"}, Fragments: []string{frag}}, ".btr"},
		{"text", func() (table.IndexRef, error) {
			return WriteText(ctx, st, prefix, frag, "bio", BuildText(1, func(int) (string, bool) { return "a b", true }))
		}, table.IndexRef{Name: "fts:bio", Kind: KindText, Columns: []string{"bio"}, Fragments: []string{frag}}, ".fts"},
		{"vector", func() (table.IndexRef, error) {
			return WriteVector(ctx, st, prefix, frag, "emb", [][]float32{{1, 2}, nil})
		}, table.IndexRef{Name: "ivf:emb", Kind: KindVector, Columns: []string{"emb"}, Fragments: []string{frag}}, ".ivf"},
		{"key", func() (table.IndexRef, error) {
			return WriteKey(ctx, st, prefix, []FragmentIDs{{Key: frag, IDs: []string{"a"}, Offsets: []int64{0}}, {Key: frag + "2"}})
		}, table.IndexRef{Name: KeyIndexName, Kind: KindKey, Columns: []string{table.KeyColumn}, Fragments: []string{frag, frag + "2"}}, ".idx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := tc.write()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(ref.Key, prefix+"/index/") || !strings.HasSuffix(ref.Key, tc.ext) {
				t.Errorf("key %q, want %s/index/<ulid>%s", ref.Key, prefix, tc.ext)
			}
			if _, err := st.Stat(ctx, ref.Key); err != nil {
				t.Errorf("stat %s: %v", ref.Key, err)
			}
			key := ref.Key
			ref.Key = ""
			if !reflect.DeepEqual(ref, tc.want) {
				t.Errorf("ref %+v (key %s), want %+v", ref, key, tc.want)
			}
		})
	}
}
