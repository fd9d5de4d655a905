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
			kind, name := snapshot.SplitKey(tk)
			isNode := kind == "node"
			var props []*schema.Property
			if isNode {
				nt, _ := snap.Catalog().Node(name)
				props = nt.Props
			} else {
				et, _ := snap.Catalog().Edge(name)
				props = et.Props
			}
			row := func(id, src, dst string, v func(k int, p string) any) string {
				vals := make([]any, len(props))
				for k, p := range props {
					vals[k] = v(k, p.Name)
				}
				return fmt.Sprintf("%s %s>%s %#v", id, src, dst, vals)
			}
			var got, want []string
			img := liveRows(t, snap, tk) // the image's live rows, in its order
			for i, id := range img.IDs {
				var s, d string
				if !isNode {
					s, d = img.Src[i], img.Dst[i]
				}
				want = append(want, row(id, s, d, func(_ int, p string) any { return cell(img, i, p) }))
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
