package exec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
	"github.com/omnigraph-go/omnigraph/internal/table"
)

// TestReadRowsAtMatchesImage pins that the cold path of the diff (rows read
// by offset from the file) decodes every type exactly as the cached image
// does, nulls included, so the two paths find the same changes.
func TestReadRowsAtMatchesImage(t *testing.T) {
	var d strings.Builder
	for i := range 300 {
		if i%3 == 0 {
			fmt.Fprintf(&d, `{"type":"Doc","data":{"id":"d%04d","title":"t%d"}}`+"\n", i, i)
			continue
		}
		fmt.Fprintf(&d, `{"type":"Doc","data":{"id":"d%04d","title":"t%d","slug":"s%d","embedding":[%d,0.5,-1],"tags":["a","b%d"],`+
			`"born":"2024-06-%02d","at":"2024-06-01T12:%02d:00Z","blob":"base64:aGk=","weight":%d.25,"big":%d}}`+"\n",
			i, i, i, i, i, 1+i%28, i%60, i, int64(i)<<40)
	}
	h := newBH(t, storage.NewMem(), testSchema, d.String(), "")
	snap := resolve(t, h.g, Target{})
	nt, _ := snap.Catalog().Node("Doc")
	st, err := snap.State(h.ctx, "node:Doc")
	if err != nil {
		t.Fatal(err)
	}
	f := st.Fragments()[0]
	offs := []int64{f.Rows - 1, 0, 1, 2, 150, 151, 1}
	cold, err := h.g.readRowsAt(h.ctx, st, f, nt.Props, false, offs)
	if err != nil {
		t.Fatal(err)
	}
	img, err := snap.FragmentImage(h.ctx, "node:Doc", st, f, nt.Props, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(cold) != 6 {
		t.Fatalf("got %d rows, want 6", len(cold))
	}
	if n := len(cold[1].Values); n != len(nt.Props) {
		t.Fatalf("row 1 has %d values, want all %d: %+v", n, len(nt.Props), cold[1])
	}
	for _, off := range offs {
		want := fragmentRow(img, int(off), nt.Props, false)
		if !reflect.DeepEqual(cold[off], want) {
			t.Errorf("offset %d: read %+v, image %+v", off, cold[off], want)
		}
	}
	// Once the image is cached the diff takes rows from it, under the key
	// fragmentImage caches it by.
	got, ok := snap.CachedFragmentImage("node:Doc", f)
	if !ok || got != img {
		t.Fatalf("cachedFragmentImage = %p, %v; want the cached image %p", got, ok, img)
	}
}

func TestReadRowsPays(t *testing.T) {
	const rg = table.DefaultRowGroupRows
	tests := []struct {
		name string
		rows int64
		offs []int64
		want bool
	}{
		{"one row group", rg, []int64{0}, false},
		{"one of two", 2 * rg, []int64{5}, false},
		{"one of three", 3 * rg, []int64{5, 6}, true},
		{"two of three", 3 * rg, []int64{5, rg}, false},
		{"two of sixteen", 16 * rg, []int64{1, 7 * rg, 7*rg + 1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := readRowsPays(table.Fragment{Rows: tc.rows}, tc.offs); got != tc.want {
				t.Fatalf("readRowsPays = %v, want %v", got, tc.want)
			}
		})
	}
}
