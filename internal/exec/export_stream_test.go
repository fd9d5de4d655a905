package exec

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

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
			var got, want []string
			row := func(id, src, dst string, vals []any) string {
				return fmt.Sprintf("%s %s>%s %#v", id, src, dst, vals)
			}
			if name, ok := strings.CutPrefix(tk, "node:"); ok {
				nt, _ := snap.Catalog().Node(name)
				img, err := snap.Nodes(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				for i, id := range img.IDs {
					if !img.Alive(i) {
						continue // a row hidden after the image was laid out
					}
					vals := make([]any, len(nt.Props))
					for k, p := range nt.Props {
						vals[k] = img.Value(i, p.Name)
					}
					want = append(want, row(id, "", "", vals))
				}
				err = snap.ScanBatches(ctx, tk, nt.Props, false, func(b *snapshot.Batch) error {
					for i := range b.Len() {
						vals := make([]any, len(nt.Props))
						for k := range nt.Props {
							vals[k] = b.Value(i, k)
						}
						got = append(got, row(b.ID(i), "", "", vals))
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			} else {
				name := strings.TrimPrefix(tk, "edge:")
				et, _ := snap.Catalog().Edge(name)
				img, err := snap.Edges(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				for i, id := range img.IDs {
					if !img.Alive(i) {
						continue // a row hidden after the image was laid out
					}
					vals := make([]any, len(et.Props))
					for k, p := range et.Props {
						vals[k] = img.Value(i, p.Name)
					}
					want = append(want, row(id, img.Src[i], img.Dst[i], vals))
				}
				err = snap.ScanBatches(ctx, tk, et.Props, true, func(b *snapshot.Batch) error {
					for i := range b.Len() {
						vals := make([]any, len(et.Props))
						for k := range et.Props {
							vals[k] = b.Value(i, k)
						}
						got = append(got, row(b.ID(i), b.Src(i), b.Dst(i), vals))
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
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
