package exec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// TestSingleRowWriteObjects pins the objects a durable single-row write
// creates on a local directory, where each is a file creation (the
// dominant cost of a small put there: docs/write-path.md): its fragment
// and its commit, then the ref; an automatic compaction in the same batch
// adds its fragment, and its commit shares the writes' commit file. A
// small fragment index rides in the table state (format 5), the state in
// the commit, and compaction writes no key index.
func TestSingleRowWriteObjects(t *testing.T) {
	dir := t.TempDir()
	rec := storage.NewRecording(localStore(t, dir))
	ctx := context.Background()
	g := mustInit(t, storage.NewBatching(rec), "peer.pg", peerSchema, "bench", Options{})
	if _, err := g.Load(ctx, bytes.NewReader(peerJSONL()), LoadRequest{Mode: LoadAppend}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name string
		args func(i int) map[string]any
	}{
		{"upsert", func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("w%d", i), "age": 40} }},
		{"set_age", func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("p%d", i*13), "age": 20 + i} }},
		{"link", func(i int) map[string]any {
			return map[string]any{"a": fmt.Sprintf("p%d", i*13), "b": fmt.Sprintf("p%d", i*7+3)}
		}},
	} {
		p := peerPlan(t, g, w.name)
		compacting := 0
		for i := range 12 {
			rec.Reset()
			if _, err := g.Mutate(ctx, "main", p, w.args(i), MutateOptions{}); err != nil {
				t.Fatal(err)
			}
			var frags, commits, shared, cas, other []string
			for _, q := range rec.Requests() {
				switch {
				case q.Op == storage.OpPutIfMatch:
					cas = append(cas, q.Key)
				case q.Op == storage.OpPutShared:
					shared = append(shared, q.Key)
				case q.Op == storage.OpPut && strings.HasPrefix(q.Key, "commits/"):
					commits = append(commits, q.Key)
				case q.Op == storage.OpPut && strings.Contains(q.Key, "/data/"):
					frags = append(frags, q.Key)
				case q.Op == storage.OpPut, q.Op == storage.OpPutIfAbsent:
					other = append(other, q.Key)
				}
			}
			alone := len(frags) == 1 && len(commits) == 1 && len(shared) == 0
			withCompaction := len(frags) == 2 && len(commits) == 0 && len(shared) == 1
			if withCompaction {
				compacting++
			}
			if len(cas) != 1 || len(other) != 0 || !(alone || withCompaction) {
				t.Errorf("%s %d: fragments %v, commits %v, shared commit objects %v, CAS %v, other objects %v", w.name, i, frags, commits, shared, cas, other)
			}
		}
		if testing.Verbose() {
			_ = filepath.Walk(dir, func(p string, fi os.FileInfo, _ error) error {
				if strings.Contains(p, "/state/") && !fi.IsDir() {
					t.Logf("%s %d", p, fi.Size())
				}
				return nil
			})
		}
		if compacting == 0 {
			t.Errorf("%s: no write compacted: the shared commit object is not exercised", w.name)
		}
	}
}
