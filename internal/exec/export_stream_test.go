package exec

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/schema"
	"github.com/omnigraph-go/omnigraph/internal/snapshot"
)

// TestScanBatchesMatchImage pins that the streaming scan export uses
// (snapshot.ScanBatches) returns exactly the rows of the table's image, in
// its order and with its values, after random writes leave the tables with
// several fragments and deletion vectors, and after a schema apply adds a
// property the stored tables do not have (it must read as null).
func TestScanBatchesMatchImage(t *testing.T) {
	ctx := context.Background()
	g, _, rng := peopleGraph(t, Options{NoAutoCompact: true}, 7, 25, 40)
	compare := func(step string) {
		t.Helper()
		snap := resolve(t, g, Target{})
		for _, tk := range snapshot.TableKeys(snap.Catalog()) {
			// The image's live rows, as one view over node and edge images.
			var props []*schema.Property
			var ids, src, dst []string
			var alive func(int) bool
			var val func(int, string) any
			name, isNode := strings.CutPrefix(tk, "node:")
			if isNode {
				nt, _ := snap.Catalog().Node(name)
				img, err := snap.Nodes(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				props, ids, alive, val = nt.Props, img.IDs, img.Alive, img.Value
			} else {
				name = strings.TrimPrefix(tk, "edge:")
				et, _ := snap.Catalog().Edge(name)
				img, err := snap.Edges(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				props, ids, src, dst, alive, val = et.Props, img.IDs, img.Src, img.Dst, img.Alive, img.Value
			}
			row := func(id, src, dst string, v func(k int, p string) any) string {
				vals := make([]any, len(props))
				for k, p := range props {
					vals[k] = v(k, p.Name)
				}
				return fmt.Sprintf("%s %s>%s %#v", id, src, dst, vals)
			}
			var got, want []string
			for i, id := range ids {
				if !alive(i) {
					continue // a row hidden after the image was laid out
				}
				var s, d string
				if !isNode {
					s, d = src[i], dst[i]
				}
				want = append(want, row(id, s, d, func(_ int, p string) any { return val(i, p) }))
			}
			err := snap.ScanBatches(ctx, tk, props, !isNode, func(b *snapshot.Batch) error {
				for i := range b.Len() {
					var s, d string
					if !isNode {
						s, d = b.Src(i), b.Dst(i)
					}
					got = append(got, row(b.ID(i), s, d, func(k int, _ string) any { return b.Value(i, k) }))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s: streamed rows differ from the image:\n got %q\nwant %q", step, tk, got, want)
			}
		}
	}
	dvs := 0
	for step := range 40 {
		randomPeopleWrite(t, g, rng)
		snap := resolve(t, g, Target{})
		for _, tk := range snapshot.TableKeys(snap.Catalog()) {
			_, n := stateWithDVs(t, snap, tk)
			dvs += n
		}
		compare(fmt.Sprintf("step %d", step))
	}
	if dvs == 0 {
		t.Fatal("no state had a deletion vector: the test is vacuous")
	}
	added := strings.Replace(engSchema, "age: I32? }", "age: I32?  nick: String? }", 1)
	if _, err := g.ApplySchema(ctx, added, SchemaApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	compare("after adding nick")
}

// TestExportBuildsNoImage pins that an export streams its tables: it
// leaves no table image and no fragment image in the handle's cache (a
// query of the same tables does, which keeps the check honest).
func TestExportBuildsNoImage(t *testing.T) {
	ctx := context.Background()
	g, _, _ := peopleGraph(t, Options{NoAutoCompact: true}, 3, 25, 40)
	images := func() int {
		snap := resolve(t, g, Target{})
		n := 0
		for _, tk := range snapshot.TableKeys(snap.Catalog()) {
			if _, ok := g.cache.Get(snap.ImageKey(tk)); ok {
				n++
			}
			st, err := snap.State(ctx, tk)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range st.Fragments() {
				if _, ok := snap.CachedFragmentImage(tk, f); ok {
					n++
				}
			}
		}
		return n
	}
	var out strings.Builder
	if err := g.Export(ctx, Target{}, nil, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\n"); got != 65 {
		t.Fatalf("export wrote %d lines, want 65", got)
	}
	if n := images(); n != 0 {
		t.Fatalf("export left %d images in the cache", n)
	}
	snap := resolve(t, g, Target{})
	if _, err := snap.Nodes(ctx, "Person"); err != nil {
		t.Fatal(err)
	}
	if images() == 0 {
		t.Fatal("a decoded image is not seen in the cache: the check is vacuous")
	}
}
